"""KIP-848 target assignments wait for group.consumer.assignment.interval.ms (1000).

Kafka 4.3+ recomputes a consumer group's target assignment at most once per
group.consumer.assignment.interval.ms (consumer.assignment.interval.ms per group): a
member that joins right after the last computation waits for the interval before it is
given partitions, and the members that must give some up are not told to until then.
The emulator does the same under ``--fidelity kafka`` (docs/fidelity.md,
consumer-assignment-interval); ``fast`` computes the target in the joining heartbeat.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from rawkafka import Conn, find_coordinator

from client_tests.targets import KafkaTarget
from emulator import Cluster
from emulator.testing import wait_for
from wire.errors import ErrorCode as E

LOADING = (E.COORDINATOR_LOAD_IN_PROGRESS, E.COORDINATOR_NOT_AVAILABLE, E.NOT_COORDINATOR)


class Member:
    """One KIP-848 member driven by hand over a raw connection."""

    def __init__(self, conn: Conn, group: str, topic: str) -> None:
        self.conn, self.group, self.topic = conn, group, topic
        self.member_id = uuid.uuid4().hex[:22]
        self.epoch = 0
        self.owned: list[dict[str, Any]] = []
        self.trace: list[tuple[float, int, int]] = []  # (time, epoch, partitions)

    def heartbeat(self) -> dict[str, Any]:
        joining = self.epoch == 0
        r = self.conn.call(68, 1, {
            "group_id": self.group, "member_id": self.member_id, "member_epoch": self.epoch,
            "instance_id": None, "rack_id": None,
            "rebalance_timeout_ms": 30000 if joining else -1,
            "subscribed_topic_names": [self.topic] if joining else None,
            "subscribed_topic_regex": None, "server_assignor": "uniform" if joining else None,
            "topic_partitions": self.owned})
        if r["error_code"] == E.NONE:
            self.epoch = r["member_epoch"]
            if r["assignment"] is not None:
                self.owned = r["assignment"]["topic_partitions"]
            self.trace.append((time.monotonic(), self.epoch, self.count))
        return r

    @property
    def count(self) -> int:
        return sum(len(tp["partitions"]) for tp in self.owned)

    def leave(self) -> None:
        self.conn.call(68, 1, {
            "group_id": self.group, "member_id": self.member_id, "member_epoch": -1,
            "instance_id": None, "rack_id": None, "rebalance_timeout_ms": -1,
            "subscribed_topic_names": None, "subscribed_topic_regex": None,
            "server_assignor": None, "topic_partitions": None})


@contextmanager
def first_member(cluster: Cluster | KafkaTarget, topic: str,
                 partitions: int) -> Iterator[Member]:
    """The topic made (RF 3) and the first member of group ``g-<topic>``, joined at the
    group's coordinator (asked again while it loads or moves) and heartbeating until it
    owns every partition; the connections closed after."""
    group = f"g-{topic}"
    cluster.create_topic(topic, partitions, 3)
    conns: list[Conn] = []

    def coordinator() -> Conn:
        node = find_coordinator(cluster, group)
        conns.append(Conn(cluster, sorted(cluster.broker_ids).index(node)))
        return conns[-1]

    a = Member(coordinator(), group, topic)
    try:
        def joined() -> bool:
            r = a.heartbeat()
            if r["error_code"] in LOADING:
                a.conn = coordinator()
                return False
            assert r["error_code"] == E.NONE, r
            return True
        wait_for(joined, "a joined", 60, interval=0.1)
        wait_for(lambda: a.heartbeat() and a.count == partitions,
                 f"a owns the {partitions} partitions", 30, interval=0.05)
        yield a
    finally:
        for c in conns:
            c.close()


def test_a_joining_member_waits_for_the_assignment_interval(
        kafka_timing_cluster: Cluster | KafkaTarget) -> None:
    cluster = kafka_timing_cluster
    topic = f"interval-{uuid.uuid4().hex[:8]}"
    group = f"g-{topic}"
    with first_member(cluster, topic, 4) as a:
        b = Member(a.conn, group, topic)
        start = time.monotonic()
        r = b.heartbeat()
        assert r["error_code"] == E.NONE, r
        # the newcomer is at the assignment epoch, with nothing, until the next target.
        # On Kafka 4.4 the newcomer was once (a Kafka pass on a quiet machine, seed
        # 912959812) given the next epoch at once, still with nothing: what Kafka does when
        # the group's last target is already an interval old at the join (a had reached
        # epoch 2; when Kafka computed that target is not visible to a client). Both are
        # Kafka's answers there. The emulator's timing is its own and stays strict, and
        # the revoke's bound below still tells an interval from none.
        at_once = r["member_epoch"] == a.epoch + 1  # Kafka computed b's target at once
        if isinstance(cluster, KafkaTarget):
            assert r["member_epoch"] in (a.epoch, a.epoch + 1) and b.count == 0, (r, a.epoch)
        else:
            assert (r["member_epoch"], b.count) == (a.epoch, 0)
        # both heartbeat every 50 ms until b owns 2 partitions
        def balanced() -> bool:
            a.heartbeat()
            b.heartbeat()
            return b.count == 2 and a.count == 2
        wait_for(balanced, "b owns 2 partitions", 30, interval=0.05)
        revoked_at = next(t for t, _, n in a.trace if t >= start and n < 4)
        first_revoke = revoked_at - start
        first_b = next(t for t, _, n in b.trace if n > 0) - start
        # the interval runs from the last target (a's own assignment), not from b's join:
        # on Kafka a revoke came 0.26 s after a join that was late in that interval (CI)
        since_a_assigned = revoked_at - next(t for t, _, n in a.trace if n == 4)
        # Kafka 4.4.0: a told to give up 2 partitions 0.92 s after b joined (1 s after
        # a's own assignment), b given them 1.04 s after; fast: in the next heartbeats
        # (when Kafka computed b's target at once, a is told to revoke at its next
        # heartbeat: seen 0.012 s after a's assignment, seed 892923704)
        assert (at_once or 0.5 <= since_a_assigned) and first_revoke <= first_b, (
            since_a_assigned, first_revoke, first_b)
        b.leave()


def test_a_member_revoking_twice_keeps_its_epoch(
        kafka_timing_cluster: Cluster | KafkaTarget) -> None:
    """Kafka 4.2+ (CurrentAssignmentBuilder, KAFKA-19974): a member that has revoked what
    it was told to, when the target has moved on and it must revoke more, stays at its
    member epoch (UNREVOKED_PARTITIONS to UNREVOKED_PARTITIONS); it used to be bumped
    by one. Here a owns all 6 partitions, b joins and a is told to keep 3 but does not
    report the revocation until c has joined and the target has counted c; then a's
    revocation of the 3 leaves it at its epoch, told to keep 2, and its next revocation
    takes it to the target's epoch."""
    cluster = kafka_timing_cluster
    topic = f"revoke-twice-{uuid.uuid4().hex[:8]}"
    group = f"g-{topic}"
    with first_member(cluster, topic, 6) as a:
        epoch, everything = a.epoch, a.owned
        b = Member(a.conn, group, topic)
        assert b.heartbeat()["error_code"] == E.NONE

        def told_to_revoke() -> bool:
            b.heartbeat()
            a.owned = everything  # a has not revoked anything yet
            r = a.heartbeat()
            assert r["error_code"] == E.NONE and r["member_epoch"] == epoch, r
            return a.count == 3
        wait_for(told_to_revoke, "a told to keep 3", 30, interval=0.05)
        kept = a.owned
        c = Member(a.conn, group, topic)
        assert c.heartbeat()["error_code"] == E.NONE

        def target_counts_c() -> bool:
            b.heartbeat()
            c.heartbeat()
            a.owned = everything  # still not revoked: a stays as it is
            r = a.heartbeat()
            assert r["error_code"] == E.NONE and r["member_epoch"] == epoch, r
            return c.epoch >= epoch + 2
        wait_for(target_counts_c, "the target counts c", 30, interval=0.05)
        target_epoch = c.epoch
        a.owned = kept  # the first revocation done
        r = a.heartbeat()
        assert r["error_code"] == E.NONE, r
        assert r["member_epoch"] == epoch, (r, epoch, target_epoch)  # not epoch + 1
        assert a.count == 2
        r = a.heartbeat()  # the second revocation done
        assert r["member_epoch"] == target_epoch, (r, target_epoch)
        for m in (a, b, c):
            m.leave()
