"""KIP-848 target assignments and group.consumer.assignment.interval.ms under each
fidelity (docs/fidelity.md, consumer-assignment-interval), on a manual clock.

Kafka 4.3+ computes a consumer group's target assignment at most once per
consumer.assignment.interval.ms (1000 ms): ``--fidelity kafka`` waits as Kafka does,
``fast`` (the default) computes it in the heartbeat that moved the group epoch.
client_tests/test_consumer_assignment_interval.py checks it on both targets.
"""

from __future__ import annotations

from cluster_sim import new_cluster

from emulator.cluster.clock import ManualClock
from emulator.coordinators.groups.coordinator import GroupCoordinator
from wire.errors import ErrorCode as E

G = "cg"


class Harness:
    def __init__(self, mode: str, **config: str) -> None:
        self.clock = ManualClock()
        self.state = new_cluster(3, self.clock, fidelity=mode,
                                 **{"offsets.topic.num.partitions": "3", **config}).state
        self.gc = GroupCoordinator(self.state)
        self.tid = self.state.create_topic("t", 4, 1).id
        self.owned: dict[str, set[int]] = {}
        self.epochs: dict[str, int] = {}
        self.clock.advance(200)  # past the coordinator's loading (--fidelity kafka)

    def hb(self, member: str) -> dict:
        epoch = self.epochs.get(member, 0)
        owned = self.owned.get(member, set())
        r = self.gc.consumer_group_heartbeat(
            G, member, epoch, rebalance_timeout_ms=60_000 if epoch == 0 else -1,
            subscribed_topic_names=["t"] if epoch == 0 else None,
            topic_partitions=[{"topic_id": self.tid, "partitions": sorted(owned)}]
            if owned else [], client_id="c")
        assert r["error_code"] == E.NONE, r
        self.epochs[member] = r["member_epoch"]
        if r["assignment"] is not None:
            self.owned[member] = {p for tp in r["assignment"]["topic_partitions"]
                                  for p in tp["partitions"]}
        return r

    def round(self) -> None:
        for m in sorted(self.epochs):
            self.hb(m)

    def count(self, member: str) -> int:
        return len(self.owned.get(member, set()))


def joined_pair(mode: str, **config: str) -> Harness:
    """m1 owns the 4 partitions; m2 joins 10 ms later."""
    h = Harness(mode, **config)
    h.hb("m1")
    assert h.count("m1") == 4
    h.clock.advance(10)
    h.hb("m2")
    return h


def test_kafka_fidelity_waits_for_the_interval() -> None:
    h = joined_pair("kafka")
    group = h.gc.groups[G]
    assert (h.epochs["m2"], h.count("m2")) == (h.epochs["m1"], 0)
    assert group.state == "Assigning"
    for _ in range(9):  # 10 .. 910 ms after m1's assignment: nothing moves
        h.clock.advance(100)
        h.round()
        assert (h.count("m1"), h.count("m2")) == (4, 0)
    h.clock.advance(90)  # 1000 ms: the coordinator's timer computes the target
    h.gc.tick()
    assert group.assignment_epoch == group.group_epoch
    for _ in range(3):
        h.round()
    assert (h.count("m1"), h.count("m2")) == (2, 2)


def test_fast_assigns_in_the_next_heartbeats() -> None:
    h = joined_pair("fast")
    group = h.gc.groups[G]
    assert group.assignment_epoch == group.group_epoch
    assert h.epochs["m2"] == group.group_epoch
    for _ in range(3):
        h.round()
    assert (h.count("m1"), h.count("m2")) == (2, 2)


def test_the_groups_override_and_zero_assign_at_once() -> None:
    """consumer.assignment.interval.ms 0 (the broker's key here) is Kafka's old
    behaviour: every new group epoch gets its target at once, under kafka too."""
    h = joined_pair("kafka", **{"group.consumer.assignment.interval.ms": "0"})
    group = h.gc.groups[G]
    assert group.assignment_epoch == group.group_epoch
    for _ in range(3):
        h.round()
    assert (h.count("m1"), h.count("m2")) == (2, 2)


def test_a_leaving_member_s_partitions_wait_for_the_interval_too() -> None:
    h = Harness("kafka")
    h.hb("m1")
    h.clock.advance(1000)
    h.hb("m2")  # the interval has passed: assigned at once
    for _ in range(3):
        h.round()
    assert (h.count("m1"), h.count("m2")) == (2, 2)
    h.clock.advance(100)
    r = h.gc.consumer_group_heartbeat(G, "m2", -1, client_id="c")
    assert r["error_code"] == E.NONE
    del h.epochs["m2"]
    h.hb("m1")
    assert h.count("m1") == 2  # the old target still stands
    h.clock.advance(900)
    h.gc.tick()
    h.hb("m1")
    assert h.count("m1") == 4
