"""kafka-python 3 consumer groups: balanced assignment over 6 partitions, a member
leaving, and a new member resuming from the committed offsets without loss."""

from __future__ import annotations

import threading

import pytest

from client_tests import group_members
from client_tests.group_members import (
    PARTITIONS,
    KafkaPythonMember,
    balanced,
    check_no_loss,
    produce,
)
from client_tests.rawkafka import find_coordinator
from emulator import Cluster
from emulator.testing import wait_for


def test_three_members_balance_leave_and_resume(group_cluster: Cluster,
                                                topic_name: str) -> None:
    c = group_cluster
    c.create_topic(topic_name, PARTITIONS, 3)
    produced = produce(c.bootstrap_servers, topic_name, 60)
    members = [KafkaPythonMember(f"kp-{i}", c.bootstrap_servers, topic_name, "kp-grp")
               for i in range(3)]
    for m in members:
        m.start()
    wait_for(balanced(members, [2, 2, 2]), "three members with two partitions each")
    wait_for(lambda: sum(len(m.values) for m in members) >= 60, "the first 60 records")

    members[2].stop()  # close() sends LeaveGroup
    wait_for(balanced(members[:2], [3, 3]), "the two remaining members with three each")
    produced += produce(c.bootstrap_servers, topic_name, 30, start=60)
    wait_for(lambda: sum(len(m.values) for m in members) >= 90, "90 records")
    for m in members[:2]:
        m.stop()

    # Records produced while nobody consumes are read by a newcomer from the commits.
    produced += produce(c.bootstrap_servers, topic_name, 30, start=90)
    late = KafkaPythonMember("kp-late", c.bootstrap_servers, topic_name, "kp-grp")
    late.start()
    wait_for(lambda: len(late.values) >= 30, "the newcomer to read the last 30 records")
    late.stop()
    check_no_loss(produced, [*members, late])
    assert set(produced[90:]) <= set(late.values)


@pytest.mark.kafka_slow  # a crash: fencing, restart and rebalance on Kafka
def test_committed_offsets_survive_the_coordinator_moving(group_cluster: Cluster,
                                                          topic_name: str) -> None:
    c = group_cluster
    c.create_topic(topic_name, PARTITIONS, 3)
    produced = produce(c.bootstrap_servers, topic_name, 30)
    first = KafkaPythonMember("kp-a", c.bootstrap_servers, topic_name, "kp-move")
    first.start()
    wait_for(lambda: len(first.values) >= 30, "the first 30 records")
    first.stop()
    old = find_coordinator(c, "kp-move")
    c.stop_broker(old)
    # A new coordinator once the crashed broker is fenced (at once on the emulator, after
    # broker.session.timeout.ms on Kafka) and the offsets partition has a new leader.
    wait_for(lambda: find_coordinator(c, "kp-move") != old, "a new group coordinator", 60)
    produced += produce(c.bootstrap_servers, topic_name, 30, start=30)
    second = KafkaPythonMember("kp-b", c.bootstrap_servers, topic_name, "kp-move")
    second.start()
    wait_for(lambda: len(second.values) >= 30, "the newcomer to read the last 30 records")
    second.stop()
    check_no_loss(produced, [first, second])
    assert set(second.values) == set(produced[30:])


# The harness, not a broker answer: one target is enough.
@pytest.mark.emulator_only
def test_a_member_whose_poll_hangs_is_freed_and_reads_on(group_cluster: Cluster,
                                                        topic_name: str,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """kafka-python 3.0.12's lost cross-thread call, planted: the member's watchdog frees
    its poll() and the member keeps its partitions and reads on (group_members._watch)."""
    from kafka.consumer.fetcher import Fetcher

    c = group_cluster
    c.create_topic(topic_name, PARTITIONS, 1)
    produced = produce(c.bootstrap_servers, topic_name, 30)
    members = [KafkaPythonMember(f"kp-hang-{i}", c.bootstrap_servers, topic_name,
                                 "kp-hang") for i in range(2)]
    for m in members:
        m.start()
    wait_for(balanced(members, [3, 3]), "two members with three partitions each")
    monkeypatch.setattr(group_members, "POLL_STALL_S", 3.0)
    send_fetches = Fetcher.send_fetches
    planted = threading.Event()

    def lost_call(self: Fetcher) -> object:
        if threading.current_thread() is members[1] and not planted.is_set():
            planted.set()

            async def never() -> None:  # a call the IO thread takes and never finishes
                await self._manager._net.sleep(3600)

            return self._manager.run(never)
        return send_fetches(self)

    monkeypatch.setattr(Fetcher, "send_fetches", lost_call)
    wait_for(lambda: members[1].stalls == 1, "the watchdog to free the stuck poll()", 20)
    produced += produce(c.bootstrap_servers, topic_name, 30, start=30)
    wait_for(lambda: sum(len(m.values) for m in members) >= 60, "60 records")
    assert balanced(members, [3, 3])(), [m.partitions() for m in members]
    assert members[0].stalls == 0
    for m in members:
        m.stop()
    check_no_loss(produced, members)
