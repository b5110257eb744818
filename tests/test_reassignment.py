"""Partition reassignment as KRaft's controller does it, with a manual clock.

The scenarios of Kafka's ReplicationControlManagerTest, PartitionReassignmentReplicasTest
and PartitionReassignmentRevertTest, on a real
ClusterState whose replicas move data by replication.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from cluster_sim import produce, settle

from emulator.cluster import controller, election
from emulator.cluster.events import (
    DomainEvent,
    LeaderChanged,
    ReassignmentCompleted,
    ReassignmentsAltered,
    ReassignmentStarted,
)
from emulator.cluster.reassignment import (
    ReassignmentReplicas,
    Revert,
    alter_partition_reassignments,
    list_partition_reassignments,
    maybe_complete_reassignment,
    progress,
    start_reassignment,
)
from emulator.cluster.state import ClusterState
from emulator.cluster.state_machines import ReplicaState
from wire.errors import ErrorCode as E
from wire.errors import KafkaError
from wire.records import build_batch

if TYPE_CHECKING:
    from conftest import MakeCluster
    from emulator.cluster.clock import ManualClock
    from emulator.cluster.partition import Partition

LAG = 1000
BROKER_CONFIG = {"replica.lag.time.max.ms": str(LAG)}


def alter(s: ClusterState, request: dict[str, dict[int, list[int] | None]],
          allow_rf_change: bool = True) -> dict[tuple[str, int], tuple[int, str | None]]:
    topics = [(name, list(parts.items())) for name, parts in request.items()]
    out = {}
    for tr in alter_partition_reassignments(s, topics, allow_rf_change):
        for pr in tr.partitions:
            out[(tr.name, pr.index)] = (pr.error_code, pr.error_message)
    return out


def listing(s: ClusterState, topics: list[tuple[str, list[int]]] | None = None) -> dict:
    return {(name, r.index): (r.replicas, r.adding, r.removing)
            for name, rs in list_partition_reassignments(s, topics) for r in rs}


OK = (E.NONE, None)


# ---- PartitionReassignmentReplicasTest / PartitionReassignmentRevertTest ----------------------
def test_replica_lists_of_a_reassignment() -> None:
    r = ReassignmentReplicas.of([3, 2, 1, 0], [7, 3, 1, 9])
    assert (r.replicas, r.adding, r.removing) == ([7, 3, 1, 9, 0, 2], [7, 9], [0, 2])
    r = ReassignmentReplicas.of([0, 1, 2], [2, 1, 0])  # a reorder
    assert (r.replicas, r.adding, r.removing, r.in_progress) == ([2, 1, 0], [], [], False)
    r = ReassignmentReplicas.of([0, 1], [0, 1, 2])
    assert (r.replicas, r.adding, r.removing) == ([0, 1, 2], [2], [])


def test_completion_needs_every_target_replica_in_the_isr() -> None:
    r = ReassignmentReplicas([0, 1, 2, 3], [3], [2])
    assert r.maybe_complete([0, 1, 2]) is None
    assert r.maybe_complete([0, 1, 2, 3]) == ([0, 1, 3], [0, 1, 3])
    assert ReassignmentReplicas([0, 1, 2], [], [2]).maybe_complete([2]) is None  # ISR empty


def test_revert_drops_the_adding_replicas_and_may_be_unclean(make_cluster: MakeCluster) -> None:
    s, clock, f = make_cluster([1, 2, 3, 4, 5])
    s.create_topic("t", assignments={0: [2, 3, 4]})
    p = s.get_partition("t", 0)
    p.replicas, p.adding_replicas, p.removing_replicas, p.isr = [1, 5, 4, 3, 2], [1, 5], [], [2]
    assert Revert.of(p) == Revert([4, 3, 2], [2], False)  # the original order is lost
    p.isr = [1, 5]
    assert Revert.of(p) == Revert([4, 3, 2], [4], True)


# ---- ReplicationControlManagerTest ---------------------------------------------------------
def test_reassign_partitions(make_cluster: MakeCluster) -> None:
    """testReassignPartitions: a reorder completes at once, a move waits for the ISR, a
    cancel reverts it; unknown partitions and topics are named in Kafka's words."""
    s, clock, f = make_cluster([0, 1, 2, 3])
    s.create_topic("foo", assignments={0: [1, 2, 3], 1: [3, 2, 1]})
    s.create_topic("bar", assignments={0: [1, 2, 3]})
    f.apply({"op": "pause_follower", "broker": 0})
    assert listing(s) == {}
    res = alter(s, {"foo": {0: [3, 2, 1], 1: [0, 2, 1], 2: [0, 2, 1]}, "bar": {}})
    assert res == {("foo", 0): OK, ("foo", 1): OK, ("foo", 2): (
        E.UNKNOWN_TOPIC_OR_PARTITION, "Unable to find partition foo:2.")}
    foo0, foo1 = s.get_partition("foo", 0), s.get_partition("foo", 1)
    assert (foo0.replicas, foo0.leader, foo0.leader_epoch) == ([3, 2, 1], 1, 0)
    assert listing(s) == {("foo", 1): ([0, 2, 1, 3], [0], [3])}
    assert listing(s, [("bar", [0, 1, 2])]) == {}
    assert listing(s, [("foo", [0, 1, 2])]) == {("foo", 1): ([0, 2, 1, 3], [0], [3])}
    assert 0 in foo1.logs and foo1.logs[0].log_end_offset == 0  # the new replica starts empty
    res = alter(s, {"foo": {0: None, 1: None, 2: None}, "bar": {0: None}})
    assert res == {("foo", 0): (E.NO_REASSIGNMENT_IN_PROGRESS, None), ("foo", 1): OK,
                   ("foo", 2): (E.UNKNOWN_TOPIC_OR_PARTITION, "Unable to find partition foo:2."),
                   ("bar", 0): (E.NO_REASSIGNMENT_IN_PROGRESS, None)}
    # the replica being added leaves the list: the leader epoch moves, the order is lost
    assert (foo1.replicas, foo1.leader, foo1.leader_epoch) == ([2, 1, 3], 3, 1)
    assert 0 not in foo1.logs and listing(s) == {}


def test_unknown_topic_message(make_cluster: MakeCluster) -> None:
    s, clock, f = make_cluster([1, 2])
    assert alter(s, {"nope": {0: [1]}}) == {
        ("nope", 0): (E.UNKNOWN_TOPIC_OR_PARTITION, "Unable to find a topic named nope.")}
    s.create_topic("t", assignments={0: [1]})
    assert alter(s, {"t": {-1: [1]}}) == {
        ("t", -1): (E.UNKNOWN_TOPIC_OR_PARTITION, "Unable to find partition t:-1.")}


def test_cancel_reassign_partitions(make_cluster: MakeCluster) -> None:
    """testCancelReassignPartitions: invalid targets are refused per partition, a
    shrink completes at once, fenced brokers stay valid targets, a cancel reverts."""
    s, clock, f = make_cluster([0, 1, 2, 3, 4])
    s.create_topic("foo", assignments={0: [1, 2, 3, 4], 1: [0, 1, 2, 3], 2: [4, 3, 1, 0],
                                       3: [2, 3, 4, 1]})
    s.create_topic("bar", assignments={0: [4, 3, 2]})
    foo0, foo1 = s.get_partition("foo", 0), s.get_partition("foo", 1)
    bar0 = s.get_partition("bar", 0)
    controller.broker_stopped(s, 3)  # fenced
    assert (foo0.replicas, foo0.isr, foo0.leader, foo0.leader_epoch, foo0.partition_epoch) == \
        ([1, 2, 3, 4], [1, 2, 4], 1, 0, 1)
    f.apply({"op": "pause_follower", "broker": 0})
    f.apply({"op": "pause_follower", "broker": 1})
    res = alter(s, {"foo": {0: [1, 2, 4], 1: [1, 2, 3, 0], 2: [5, 6, 7], 3: []},
                    "bar": {0: [1, 2, 3, 4, 0]}})
    assert res == {
        ("foo", 0): OK, ("foo", 1): OK,
        ("foo", 2): (E.INVALID_REPLICA_ASSIGNMENT, "The manual partition assignment includes "
                     "broker 5, but no such broker is registered."),
        ("foo", 3): (E.INVALID_REPLICA_ASSIGNMENT, "The manual partition assignment includes "
                     "an empty replica list."),
        ("bar", 0): OK}
    assert (foo0.replicas, foo0.isr, foo0.leader, foo0.leader_epoch, foo0.partition_epoch) == \
        ([1, 2, 4], [1, 2, 4], 1, 1, 2)
    assert (foo1.replicas, foo1.isr, foo1.leader, foo1.leader_epoch, foo1.partition_epoch) == \
        ([1, 2, 3, 0], [0, 1, 2], 0, 0, 2)
    assert (bar0.replicas, bar0.isr, bar0.adding_replicas, bar0.leader, bar0.leader_epoch,
            bar0.partition_epoch) == ([1, 2, 3, 4, 0], [4, 2], [0, 1], 4, 0, 2)
    assert listing(s) == {("bar", 0): ([1, 2, 3, 4, 0], [0, 1], [])}
    assert listing(s, [("foo", [0, 1, 2])]) == {}
    res = alter(s, {"foo": {0: None}, "bar": {0: None}})
    assert res == {("foo", 0): (E.NO_REASSIGNMENT_IN_PROGRESS, None), ("bar", 0): OK}
    assert (bar0.replicas, bar0.isr, bar0.leader, bar0.leader_epoch, bar0.partition_epoch) == \
        ([2, 3, 4], [4, 2], 4, 1, 3)
    assert listing(s) == {} and set(bar0.logs) == {2, 3, 4}


def test_new_reassignment_that_removes_previously_adding_replicas(
        make_cluster: MakeCluster) -> None:
    """testReassignPartitionsHandlesNewReassignmentThatRemovesPreviouslyAddingReplicas."""
    s, clock, f = make_cluster([0, 1, 2, 3, 4, 5])
    s.create_topic("topic-1", assignments={0: [0, 1]})
    p = s.get_partition("topic-1", 0)
    produce(s, p, 5)
    settle(s, clock)
    f.apply({"op": "pause_follower", "broker": 3})
    assert alter(s, {"topic-1": {0: [2, 3]}}) == {("topic-1", 0): OK}
    assert listing(s) == {("topic-1", 0): ([2, 3, 0, 1], [2, 3], [0, 1])}
    settle(s, clock)  # 2 catches up and joins the ISR; 3 cannot fetch
    assert p.isr == [0, 1, 2]
    from emulator.cluster.election import elect_leaders

    assert elect_leaders(s, 0, [("topic-1", [0])]) == [("topic-1", [(0, E.NONE, None)])]
    assert p.leader == 2
    f.apply({"op": "pause_follower", "broker": 4})
    f.apply({"op": "pause_follower", "broker": 5})
    assert alter(s, {"topic-1": {0: [4, 5]}}) == {("topic-1", 0): OK}
    assert listing(s) == {("topic-1", 0): ([4, 5, 0, 1, 2, 3], [4, 5], [0, 1, 2, 3])}
    assert p.leader == 2 and p.leader in p.replicas
    f.apply({"op": "clear"})
    settle(s, clock)
    assert (p.replicas, p.leader, listing(s)) == ([4, 5], 4, {})
    assert set(p.logs) == {4, 5} and p.logs[4].log_end_offset == 5 and p.high_watermark == 5


def test_disallowed_replication_factor_change(make_cluster: MakeCluster) -> None:
    """testAlterPartitionDisallowReplicationFactorChange (KIP-860, v1)."""
    s, clock, f = make_cluster([0, 1, 2, 3])
    s.create_topic("foo", assignments={0: [0, 1, 2], 1: [0, 1, 2], 2: [0, 1, 2]})
    f.apply({"op": "pause_follower", "broker": 3})
    res = alter(s, {"foo": {0: [1, 2, 3], 1: [0, 1], 2: [0, 1, 2, 3]}}, allow_rf_change=False)
    assert res == {
        ("foo", 0): OK,
        ("foo", 1): (E.INVALID_REPLICATION_FACTOR, "The replication factor is changed from 3 to 2"),
        ("foo", 2): (E.INVALID_REPLICATION_FACTOR, "The replication factor is changed from 3 to 4")}
    assert listing(s, [("foo", [0, 1, 2])]) == {("foo", 0): ([1, 2, 3, 0], [3], [0])}
    # while it runs, the RF is |(replicas + adding) - removing| = 3
    assert alter(s, {"foo": {0: [0, 1]}}, allow_rf_change=False) == {
        ("foo", 0): (E.INVALID_REPLICATION_FACTOR, "The replication factor is changed from 3 to 2")}
    assert alter(s, {"foo": {0: [0, 2, 3]}}, allow_rf_change=False) == {("foo", 0): OK}
    # cancels are exempt
    assert alter(s, {"foo": {0: None}}, allow_rf_change=False) == {("foo", 0): OK}


def test_validation_order_and_messages(make_cluster: MakeCluster) -> None:
    s, clock, f = make_cluster([1, 2, 3])
    s.create_topic("t", assignments={0: [1, 2, 3]})
    msg = "The manual partition assignment includes "
    assert alter(s, {"t": {0: [2, 2, 9]}}) == {("t", 0): (
        E.INVALID_REPLICA_ASSIGNMENT, msg + "the broker 2 more than once.")}  # 2 sorts before 9
    assert alter(s, {"t": {0: [3, -1, 3]}}) == {("t", 0): (
        E.INVALID_REPLICA_ASSIGNMENT, msg + "broker -1, but no such broker is registered.")}
    assert alter(s, {"t": {0: []}}, allow_rf_change=False) == {("t", 0): (
        E.INVALID_REPLICA_ASSIGNMENT, msg + "an empty replica list.")}  # before the RF check
    assert s.get_partition("t", 0).replicas == [1, 2, 3]


def test_one_request_is_applied_atomically_against_the_state_it_found(
        make_cluster: MakeCluster) -> None:
    """Every partition's change is computed before any is applied; good ones proceed."""
    s, clock, f = make_cluster([1, 2, 3, 4])
    s.create_topic("t", assignments={0: [1, 2], 1: [2, 3]})
    f.apply({"op": "pause_follower", "broker": 4})
    seen = []
    s.hooks.append(lambda ev, data: seen.append(ev))
    res = alter(s, {"t": {0: [1, 4], 1: [9], 2: [1]}})
    assert res[("t", 0)] == OK and res[("t", 1)][0] == E.INVALID_REPLICA_ASSIGNMENT
    assert seen.count("reassignment_started") == 1
    assert listing(s) == {("t", 0): ([1, 4, 2], [4], [2])}


def test_alter_during_reassignment_keeps_the_stored_lists_when_a_result_is_empty(
        make_cluster: MakeCluster) -> None:
    """PCB writes only what changes: a new target with no adding (or no removing)
    leaves the running reassignment's list as it was (Kafka's own behaviour)."""
    s, clock, f = make_cluster([0, 1, 2, 3])
    s.create_topic("t", assignments={0: [0, 1]})
    p = s.get_partition("t", 0)
    f.apply({"op": "pause_follower", "broker": 2})
    f.apply({"op": "pause_follower", "broker": 3})
    alter(s, {"t": {0: [2, 3]}})
    assert listing(s) == {("t", 0): ([2, 3, 0, 1], [2, 3], [0, 1])}
    alter(s, {"t": {0: [0, 1, 2, 3]}})  # nothing to add or remove against [2,3,0,1]
    assert listing(s) == {("t", 0): ([0, 1, 2, 3], [2, 3], [0, 1])}
    f.apply({"op": "clear"})
    settle(s, clock)
    assert p.replicas == [2, 3] and listing(s) == {}


def test_leader_stays_when_it_is_a_target_and_moves_when_removed(make_cluster: MakeCluster) -> None:
    s, clock, f = make_cluster([1, 2, 3, 4])
    s.create_topic("a", assignments={0: [1, 2, 3]})
    s.create_topic("b", assignments={0: [1, 2, 3]})
    a, b = s.get_partition("a", 0), s.get_partition("b", 0)
    for p in (a, b):
        produce(s, p, 3)
    settle(s, clock)
    alter(s, {"a": {0: [4, 2, 1]}, "b": {0: [4, 2, 3]}})
    settle(s, clock)
    assert (a.replicas, a.leader) == ([4, 2, 1], 1)  # never moved just to be preferred
    assert (b.replicas, b.leader) == ([4, 2, 3], 4)  # removed: first target replica in sync
    assert a.leader_epoch == 1 and b.leader_epoch == 1
    assert a.high_watermark == b.high_watermark == 3
    # the old leader answers NOT_LEADER_OR_FOLLOWER; clients follow the metadata
    r = s.append(1, "b", 0, build_batch([(None, b"x")]), 1)
    assert r.error == E.NOT_LEADER_OR_FOLLOWER


def test_data_moves_to_new_replicas_and_removed_logs_are_deleted(make_cluster: MakeCluster) -> None:
    """foo-0 -> [0,1,3] and bar-0 -> [3,2,0] (ReassignPartitionsCommandTest): the high
    watermark is kept and the removed replicas' logs are gone."""
    s, clock, f = make_cluster([0, 1, 2, 3, 4])
    s.create_topic("foo", assignments={0: [0, 1, 2], 1: [1, 2, 3]})
    s.create_topic("bar", assignments={0: [3, 2, 1]})
    foo0, bar0 = s.get_partition("foo", 0), s.get_partition("bar", 0)
    for p in (foo0, bar0):
        produce(s, p, 100)
    settle(s, clock)
    assert foo0.high_watermark == bar0.high_watermark == 100
    f.apply({"op": "pause_follower", "broker": 3, "topic": "foo"})
    f.apply({"op": "pause_follower", "broker": 0, "topic": "bar"})
    alter(s, {"foo": {0: [0, 1, 3]}, "bar": {0: [3, 2, 0]}})
    assert listing(s) == {("foo", 0): ([0, 1, 3, 2], [3], [2]), ("bar", 0): ([3, 2, 0, 1], [0], [1])}
    assert [(r.broker, r.bytes) for r in progress(foo0)] == [(3, 0)]
    f.apply({"op": "clear"})
    settle(s, clock)
    assert listing(s) == {}
    assert (foo0.replicas, bar0.replicas) == ([0, 1, 3], [3, 2, 0])
    assert set(foo0.logs) == {0, 1, 3} and set(bar0.logs) == {3, 2, 0}
    assert foo0.high_watermark == bar0.high_watermark == 100
    assert foo0.logs[3].size_bytes == foo0.logs[0].size_bytes


# ---- faults ---------------------------------------------------------------------------------
def test_a_target_broker_down_makes_the_reassignment_wait(make_cluster: MakeCluster) -> None:
    s, clock, f = make_cluster([1, 2, 3, 4])
    s.create_topic("t", assignments={0: [1, 2, 3]})
    p = s.get_partition("t", 0)
    produce(s, p, 10)
    settle(s, clock)
    controller.broker_stopped(s, 4)
    alter(s, {"t": {0: [1, 2, 4]}})  # a registered, fenced broker is a valid target
    # its new replica: NewReplica, then Offline (its broker is down), not Online
    assert s.controller.machines.replicas.state(("t", 0, 4)) is ReplicaState.OfflineReplica
    settle(s, clock, 50)
    assert listing(s) == {("t", 0): ([1, 2, 4, 3], [4], [3])}
    produce(s, p, 5)
    controller.broker_started(s, 4)
    settle(s, clock)
    assert listing(s) == {} and p.replicas == [1, 2, 4] and p.logs[4].log_end_offset == 15


def test_the_leader_among_the_removed_replicas_is_moved_at_completion(
        make_cluster: MakeCluster) -> None:
    s, clock, f = make_cluster([1, 2, 3, 4, 5, 6])
    s.create_topic("t", assignments={0: [1, 2, 3]})
    p = s.get_partition("t", 0)
    produce(s, p, 7)
    settle(s, clock)
    f.apply({"op": "pause_follower", "broker": 6})
    alter(s, {"t": {0: [4, 5, 6]}})
    settle(s, clock)
    assert p.leader == 1 and p.adding_replicas == [4, 5, 6]  # 6 is not in sync yet
    produce(s, p, 1)  # the old leader still serves
    f.apply({"op": "clear"})
    settle(s, clock)
    assert (p.replicas, p.isr, p.leader) == ([4, 5, 6], [4, 5, 6], 4)
    assert p.high_watermark == 8 and p.logs[6].log_end_offset == 8
    assert s.append(1, "t", 0, build_batch([(None, b"x")]), 1).error == E.NOT_LEADER_OR_FOLLOWER


def test_controller_failover_at_each_step_of_a_reassignment(make_cluster: MakeCluster) -> None:
    """KAFKA-42's failure cases: the controller (also the leader and a replica being
    removed) fails right after the request, while replicas catch up, and after the
    reassignment completed; the reassignment ends where Kafka's would."""
    for step in ("after_start", "catching_up", "after_completion"):
        s, clock, f = make_cluster([1, 2, 3, 4, 5])
        s.create_topic("t", assignments={0: [1, 2, 3]})
        p = s.get_partition("t", 0)
        produce(s, p, 20)
        settle(s, clock)
        assert s.controller_id == 1 and p.leader == 1
        f.apply({"op": "pause_follower", "broker": 5})
        alter(s, {"t": {0: [4, 5, 2]}})
        if step == "catching_up":
            settle(s, clock)
            assert p.isr == [1, 2, 3, 4] and p.adding_replicas == [4, 5]
        if step == "after_completion":
            f.apply({"op": "clear"})
            settle(s, clock)
            assert p.replicas == [4, 5, 2] and p.leader == 4
        epoch = s.controller.epoch
        controller.broker_stopped(s, 1)  # the controller
        assert s.controller_id == 2 and s.controller.epoch == epoch + 1
        if step != "after_completion":
            assert p.leader in (2, 3, 4) and p.adding_replicas == [4, 5]
        f.apply({"op": "clear"})
        produce(s, p, 3)
        settle(s, clock)
        assert (p.replicas, p.adding_replicas, p.removing_replicas) == ([4, 5, 2], [], [])
        assert p.leader in (4, 5, 2) and p.high_watermark == 23
        assert p.logs[5].log_end_offset == 23 and set(p.logs) == {4, 5, 2}
        controller.broker_started(s, 1)
        settle(s, clock)
        assert 1 not in p.logs and p.replicas == [4, 5, 2]


def _moved_to_an_unclean_leader(make_cluster: MakeCluster, **config: str
                                ) -> tuple[ClusterState, ManualClock, Partition]:
    """t-0 reassigned from [2] to [3] while 3 was down, 2 fenced, then 3 back and
    elected uncleanly: its ISR [3] holds every target, yet the move is still running,
    as in Kafka (PartitionChangeBuilder checks completion on the ISR before the
    election, [2] then). Broker 1 is the controller, in no replica set."""
    s, clock, f = make_cluster([1, 2, 3], **config)
    s.create_topic("t", assignments={0: [2]},
                   configs={"unclean.leader.election.enable": "true"})
    p = s.get_partition("t", 0)
    produce(s, p, 2)
    controller.broker_stopped(s, 3)
    start_reassignment(s, p, [3])  # 3 is down: it waits
    controller.broker_stopped(s, 2)
    assert (p.leader, p.isr) == (-1, [2])
    controller.broker_started(s, 3)
    assert (p.leader, p.isr, p.replicas, p.adding_replicas, p.removing_replicas) == (
        3, [3], [3, 2], [3], [2])
    return s, clock, p


def test_a_new_controller_completes_no_reassignment_itself(make_cluster: MakeCluster) -> None:
    """A KRaft controller taking over replays the metadata log: a move whose ISR
    already holds every target (after an unclean election of the adding replica) stays
    as it was; the removed replica back in the ISR (the leader's AlterPartition)
    completes it."""
    s, clock, p = _moved_to_an_unclean_leader(make_cluster)
    controller.broker_stopped(s, 1)
    assert s.controller_id == 3
    assert (p.leader, p.isr, p.replicas, p.adding_replicas, p.removing_replicas) == (
        3, [3], [3, 2], [3], [2])
    controller.broker_started(s, 2)
    settle(s, clock)
    assert (p.leader, p.isr, p.replicas, p.adding_replicas, p.removing_replicas) == (
        3, [3], [3], [], [])
    assert 2 not in p.logs


def test_a_failed_log_dir_of_the_removed_replica_completes_the_reassignment(
        make_cluster: MakeCluster) -> None:
    """handleDirectoriesOffline builds a change for every partition with a replica in
    the directory, the removed replica's too (though not in the ISR): the build
    completes the reassignment the ISR [3] allows, and deletes that replica. No other
    change of broker 2's (its fence, a controlled shutdown: partitions whose ISR holds
    it) touches the partition."""
    from emulator.cluster.log_dirs import alter_replica_log_dir

    s, _, p = _moved_to_an_unclean_leader(make_cluster, **{"log.dirs": "/d/a,/d/b"})
    controller.broker_started(s, 2)
    assert alter_replica_log_dir(s, 2, "/d/b", "t", 0) == E.NONE
    assert controller.controlled_shutdown(s, 2) == []
    controller.broker_stopped(s, 2)
    assert (p.replicas, p.adding_replicas, p.removing_replicas) == ([3, 2], [3], [2])
    controller.broker_started(s, 2)
    assert controller.log_dir_failed(s, 2, "/d/b", "test") is False
    assert (p.leader, p.isr, p.replicas, p.adding_replicas, p.removing_replicas) == (
        3, [3], [3], [], [])
    assert 2 not in p.logs


def _fenced_with_its_isr_on_the_target(make_cluster: MakeCluster, removed_back: bool
                                       ) -> tuple[ClusterState, Partition]:
    """Then 3 fenced too: t-0 leaderless, its ISR [3] (the last member stays) holding
    every target. With ``removed_back`` broker 2 is back first (outside the ISR), the
    topic no longer allowing unclean elections when 3 is fenced."""
    s, _, p = _moved_to_an_unclean_leader(make_cluster)
    if removed_back:
        s.topics["t"].configs["unclean.leader.election.enable"] = "false"
        controller.broker_started(s, 2)  # a led partition: nothing to elect
    controller.broker_stopped(s, 3)
    assert (p.leader, p.isr, p.replicas, p.adding_replicas, p.removing_replicas) == (
        -1, [3], [3, 2], [3], [2])
    return s, p


def test_a_broker_return_completes_a_reassignment_its_isr_allows_before_electing(
        make_cluster: MakeCluster) -> None:
    """handleBrokerUnfenced builds a change for every leaderless partition, and each
    build first completes the reassignment its ISR allows: broker 2's return removes
    its replica, so it is no candidate of the unclean election that follows (none:
    3 is down) and t-0 stays leaderless until 3 returns."""
    s, p = _fenced_with_its_isr_on_the_target(make_cluster, removed_back=False)
    seen: list[DomainEvent] = []
    s.hooks.append(lambda kind, ev: seen.append(ev) if kind.startswith("reassignment_") else None)
    controller.broker_started(s, 2)
    assert (p.leader, p.isr, p.replicas, p.adding_replicas, p.removing_replicas) == (
        -1, [3], [3], [], [])
    assert 2 not in p.logs
    assert seen == [ReassignmentCompleted(topic="t", partition=0, replicas=[3])]
    controller.broker_started(s, 3)
    assert (p.leader, p.isr) == (3, [3])


def test_the_unclean_check_completes_a_reassignment_its_isr_allows_before_electing(
        make_cluster: MakeCluster) -> None:
    """The periodic unclean election builds the change as any other: completion
    first, so the removed replica, live, is not elected; nothing is (3 is down). It
    looks only at topics allowing unclean elections: before, it leaves the move."""
    s, p = _fenced_with_its_isr_on_the_target(make_cluster, removed_back=True)
    assert not s.controller.elect_unclean_leaders()
    assert (p.replicas, p.adding_replicas, p.removing_replicas) == ([3, 2], [3], [2])
    s.topics["t"].configs["unclean.leader.election.enable"] = "true"
    assert s.controller.elect_unclean_leaders()
    assert (p.leader, p.isr, p.replicas, p.adding_replicas, p.removing_replicas) == (
        -1, [3], [3], [], [])
    assert 2 not in p.logs


@pytest.mark.parametrize("election_type", [election.PREFERRED, election.UNCLEAN])
def test_elect_leaders_completes_a_reassignment_its_isr_allows_and_answers_none(
        make_cluster: MakeCluster, election_type: int) -> None:
    """RCM.electLeader answers NONE whenever its build writes a record: here the
    reassignment's completion, with no leader to elect (3 is down, 2 is no replica
    any more). Without the completion a preferred election had nothing to change
    (PREFERRED_LEADER_NOT_AVAILABLE) and an unclean one took live broker 2."""
    s, p = _fenced_with_its_isr_on_the_target(make_cluster, removed_back=True)
    assert election.elect_leader(s, "t", 0, election_type) == OK
    assert (p.leader, p.isr, p.replicas, p.adding_replicas, p.removing_replicas) == (
        -1, [3], [3], [], [])


def test_cancel_that_would_need_an_unclean_election(make_cluster: MakeCluster) -> None:
    s, clock, f = make_cluster([1, 2, 3])
    s.create_topic("t", assignments={0: [1]})
    p = s.get_partition("t", 0)
    alter(s, {"t": {0: [1, 2]}})
    settle(s, clock)
    assert p.replicas == [1, 2]
    f.apply({"op": "pause_follower", "broker": 3})
    alter(s, {"t": {0: [3]}})  # replicas [3,1,2], 3 adding
    p.isr = [3]  # only the adding replica is in sync
    msg = ("Unable to revert partition assignment for t:0 because it would require an "
           "unclean leader election.")
    assert alter(s, {"t": {0: None}}) == {("t", 0): (E.INVALID_REPLICA_ASSIGNMENT, msg)}
    s.topics["t"].configs["unclean.leader.election.enable"] = "true"
    assert alter(s, {"t": {0: None}}) == {("t", 0): OK}
    assert (p.replicas, p.isr, p.leader) == ([1, 2], [1], 1)


def _throttle_replica_4(s: ClusterState, topic: str) -> None:
    """setReplicationThrottleForPartitions: 1 B/s on broker 4, partition 0 throttled there."""
    s.broker_overrides[4].update({"leader.replication.throttled.rate": "1",
                                  "follower.replication.throttled.rate": "1"})
    s.topics[topic].configs.update({"leader.replication.throttled.replicas": "0:4",
                                    "follower.replication.throttled.replicas": "0:4"})


def test_cancel_with_adding_replica_in_isr(make_cluster: MakeCluster) -> None:
    """ReassignPartitionsCommandTest.testCancellationWithAddingReplicaInIsr: 3 joins the
    ISR, throttled 4 cannot; the cancel deletes both new replicas."""
    s, clock, f = make_cluster([0, 1, 2, 3, 4])
    s.create_topic("foo", assignments={0: [0, 1, 2]})
    p = s.get_partition("foo", 0)
    produce(s, p, 200, b"x" * 100)
    settle(s, clock)
    _throttle_replica_4(s, "foo")
    alter(s, {"foo": {0: [0, 1, 2, 3, 4]}})
    settle(s, clock, 20)
    assert p.isr == [0, 1, 2, 3] and listing(s) == {("foo", 0): ([0, 1, 2, 3, 4], [3, 4], [])}
    assert p.logs[4].log_end_offset == 200  # it got one fetch, then its quota stopped it
    assert alter(s, {"foo": {0: None}}) == {("foo", 0): OK}
    assert (p.replicas, p.isr, listing(s)) == ([0, 1, 2], [0, 1, 2], {})
    assert 3 not in p.logs and 4 not in p.logs


def test_cancel_with_adding_and_removing_replica_in_isr(make_cluster: MakeCluster) -> None:
    """testCancellationWithAddingAndRemovingReplicaInIsr: [0,1,2] -> [0,3,4]."""
    s, clock, f = make_cluster([0, 1, 2, 3, 4])
    s.create_topic("foo", assignments={0: [0, 1, 2]})
    p = s.get_partition("foo", 0)
    produce(s, p, 200, b"x" * 100)
    settle(s, clock)
    _throttle_replica_4(s, "foo")
    alter(s, {"foo": {0: [0, 3, 4]}})
    settle(s, clock, 20)
    assert listing(s) == {("foo", 0): ([0, 3, 4, 1, 2], [3, 4], [1, 2])}
    assert set(p.isr) == {0, 1, 2, 3}
    assert alter(s, {"foo": {0: None}}) == {("foo", 0): OK}
    assert (p.replicas, p.isr, p.leader) == ([0, 1, 2], [0, 1, 2], 0)
    assert set(p.logs) == {0, 1, 2}


def test_listing_shows_the_union_list(make_cluster: MakeCluster) -> None:
    s, clock, f = make_cluster([0, 1, 2, 3])
    s.create_topic("foo", assignments={0: [0, 1, 2], 1: [1, 2, 3]})
    f.apply({"op": "pause_follower", "broker": 3})
    f.apply({"op": "pause_follower", "broker": 0})
    alter(s, {"foo": {0: [0, 1, 3], 1: [0, 2, 3]}})
    assert listing(s) == {("foo", 0): ([0, 1, 3, 2], [3], [2]),
                          ("foo", 1): ([0, 2, 3, 1], [0], [1])}
    assert listing(s, [("foo", [1, 7]), ("nope", [0])]) == {("foo", 1): ([0, 2, 3, 1], [0], [1])}
    alter(s, {"foo": {0: None, 1: None}})
    assert alter(s, {"foo": {0: None, 1: None}}) == {
        ("foo", 0): (E.NO_REASSIGNMENT_IN_PROGRESS, None),
        ("foo", 1): (E.NO_REASSIGNMENT_IN_PROGRESS, None)}


def test_over_10000_changes_in_one_request_fail_past_the_controllers_cap(
        make_cluster: MakeCluster) -> None:
    """QuorumController.MAX_RECORDS_PER_USER_OP on AlterPartitionReassignments: a real
    Kafka 4.4 asked to move 10,001 partitions moves the first 10,000 and answers the last
    UNKNOWN_SERVER_ERROR without a message."""
    s, clock, _ = make_cluster([1, 2])
    s.create_topic("big-a", 5001, 1)
    s.create_topic("big-b", 5000, 1)
    request = {name: {p.index: [2 if p.replicas == [1] else 1] for p in s.topics[name].partitions}
               for name in ("big-a", "big-b")}
    before = {(n, p.index): list(p.replicas) for n in request for p in s.topics[n].partitions}
    out = alter(s, request)
    settle(s, clock)
    refused = [k for k, v in out.items() if v != (E.NONE, None)]
    assert refused == [("big-b", 4999)]
    assert out[("big-b", 4999)] == (E.UNKNOWN_SERVER_ERROR, None)
    moved = [k for k in before if s.topics[k[0]].partitions[k[1]].replicas != before[k]]
    assert len(moved) == 10_000 and ("big-b", 4999) not in moved


# ---- the states a reassignment moves to, one rule each --------------------------------------
def test_a_reassignment_that_only_adds_completes_when_the_new_replica_is_in_sync(
        make_cluster: MakeCluster) -> None:
    """Nothing to remove: completion needs only the adding replica in the ISR
    (PartitionReassignmentReplicas.maybeCompleteReassignment with removing empty); the
    replica list stays, the adding list is cleared and the listing is empty again."""
    s, clock, f = make_cluster([1, 2, 3])
    s.create_topic("t", assignments={0: [1, 2]})
    p = s.get_partition("t", 0)
    produce(s, p, 4)
    settle(s, clock)
    f.apply({"op": "pause_follower", "broker": 3})
    assert alter(s, {"t": {0: [1, 2, 3]}}) == {("t", 0): OK}
    settle(s, clock)
    assert listing(s) == {("t", 0): ([1, 2, 3], [3], [])}  # 3 cannot fetch: still adding
    f.apply({"op": "clear"})
    settle(s, clock)
    assert (p.replicas, p.adding_replicas, p.removing_replicas, p.isr, p.leader) == \
        ([1, 2, 3], [], [], [1, 2, 3], 1)
    assert listing(s) == {} and p.logs[3].log_end_offset == 4


def test_maybe_complete_reassignment_says_whether_it_completed(make_cluster: MakeCluster) -> None:
    """The entry point's answer: False while a target replica is out of the ISR (and
    nothing is written), True once the reassignment is complete."""
    s, clock, f = make_cluster([1, 2, 3])
    s.create_topic("t", assignments={0: [1, 2]})
    p = s.get_partition("t", 0)
    f.apply({"op": "pause_follower", "broker": 3})
    alter(s, {"t": {0: [1, 3]}})
    epoch = p.partition_epoch
    assert maybe_complete_reassignment(s, p) is False
    assert (p.replicas, p.adding_replicas, p.removing_replicas, p.partition_epoch) == \
        ([1, 3, 2], [3], [2], epoch)
    p.isr = [1, 2, 3]  # the AlterPartition that adds 3, without its listener
    assert maybe_complete_reassignment(s, p) is True
    assert (p.replicas, p.adding_replicas, p.removing_replicas, p.isr) == ([1, 3], [], [], [1, 3])


def test_reverting_when_every_replica_was_being_added_is_refused(make_cluster: MakeCluster) -> None:
    """PartitionReassignmentRevert's guard: with every replica among the adding ones
    nothing is left to revert to (Kafka says the state is unreachable, and refuses it)."""
    s, clock, f = make_cluster([1, 2, 3])
    s.create_topic("t", assignments={0: [1, 2]})
    p = s.get_partition("t", 0)
    p.adding_replicas = [1, 2]
    with pytest.raises(KafkaError) as e:
        Revert.of(p)
    assert (e.value.code, e.value.message) == (
        E.INVALID_REPLICA_ASSIGNMENT, "Invalid replica assignment: addingReplicas contains all "
        "replicas.")


def _leaderless_while_moving(make_cluster: MakeCluster) -> tuple[ClusterState, Partition]:
    """t-0 on [1, 2] moving to [3] (3 cannot fetch), 2 out of the ISR, then 1 stopped: no
    leader, ISR [1] (ELR off: the last member stays), 2 alive but not in sync."""
    s, clock, f = make_cluster([1, 2, 3])
    s.create_topic("t", assignments={0: [1, 2]})
    p = s.get_partition("t", 0)
    f.apply({"op": "pause_follower", "broker": 2})
    f.apply({"op": "pause_follower", "broker": 3})
    produce(s, p, 3)
    clock.advance(2 * LAG)
    s.tick()
    assert p.isr == [1]
    assert alter(s, {"t": {0: [3]}}) == {("t", 0): OK}
    controller.broker_stopped(s, 1)
    assert (p.leader, p.isr, p.replicas, p.adding_replicas) == (-1, [1], [3, 1, 2], [3])
    return s, p


def test_cancel_elects_uncleanly_only_when_the_topic_allows_it(make_cluster: MakeCluster) -> None:
    """cancelPartitionReassignment sets Election.UNCLEAN when the topic has
    unclean.leader.election.enable: the revert's ISR (1) cannot lead, so the first
    acceptable original replica (2) is elected with the ISR reset to it. Without the
    config the election is ONLINE and the partition stays leaderless."""
    s, p = _leaderless_while_moving(make_cluster)
    assert alter(s, {"t": {0: None}}) == {("t", 0): OK}
    assert (p.replicas, p.adding_replicas, p.leader, p.isr) == ([1, 2], [], -1, [1])
    s, p = _leaderless_while_moving(make_cluster)
    s.topics["t"].configs["unclean.leader.election.enable"] = "true"
    seen: list[LeaderChanged] = []
    s.hooks.append(lambda kind, ev: seen.append(ev) if isinstance(ev, LeaderChanged) else None)
    assert alter(s, {"t": {0: None}}) == {("t", 0): OK}
    assert (p.replicas, p.adding_replicas, p.leader, p.isr) == ([1, 2], [], 2, [2])
    assert [(e.old, e.new, e.unclean) for e in seen] == [(-1, 2, True)]  # news of it


def test_an_unclean_revert_keeps_the_isr_its_election_set(make_cluster: MakeCluster) -> None:
    """t-0 on [1, 2] moving to [3, 4]: 3 joined the ISR and leads after 1 stopped, 2 and
    4 cannot fetch. Reverting drops 3, which leaves the ISR empty: the revert takes [1]
    (unclean), 1 is down, so the topic's unclean election elects 2 and the record's ISR
    is [2] (PCB.build writes the target ISR only when the election did not set one)."""
    s, clock, f = make_cluster([1, 2, 3, 4])
    s.create_topic("t", assignments={0: [1, 2]})
    p = s.get_partition("t", 0)
    f.apply({"op": "pause_follower", "broker": 2})
    f.apply({"op": "pause_follower", "broker": 4})
    produce(s, p, 3)
    clock.advance(2 * LAG)
    s.tick()
    assert alter(s, {"t": {0: [3, 4]}}) == {("t", 0): OK}
    settle(s, clock)
    assert p.isr == [1, 3]
    controller.broker_stopped(s, 1)
    assert (p.leader, p.isr, p.adding_replicas) == (3, [3], [3, 4])
    s.topics["t"].configs["unclean.leader.election.enable"] = "true"
    assert alter(s, {"t": {0: None}}) == {("t", 0): OK}
    assert (p.replicas, p.adding_replicas, p.removing_replicas, p.leader, p.isr) == \
        ([1, 2], [], [], 2, [2])


def test_a_target_equal_to_the_replicas_writes_no_record(make_cluster: MakeCluster) -> None:
    """changePartitionReassignment to the current list: PCB.build finds nothing changed and
    returns no record, so the partition epoch stays and nothing is announced."""
    s, clock, f = make_cluster([1, 2, 3])
    s.create_topic("t", assignments={0: [1, 2]})
    p = s.get_partition("t", 0)
    before = (p.partition_epoch, p.leader_epoch)
    seen = []
    s.hooks.append(lambda kind, ev: seen.append(kind))
    assert alter(s, {"t": {0: [1, 2]}}) == {("t", 0): OK}
    assert (p.partition_epoch, p.leader_epoch, p.replicas) == (*before, [1, 2])
    assert "reassignments_altered" not in seen and listing(s) == {}


def test_the_replication_factor_may_change_unless_the_request_forbids_it(
        make_cluster: MakeCluster) -> None:
    """AllowReplicationFactorChange defaults to true (v0 has no such field): a caller that
    does not say, such as the control plane's reassign operation, may change it."""
    s, clock, f = make_cluster([1, 2, 3])
    s.create_topic("t", assignments={0: [1, 2]})
    out = alter_partition_reassignments(s, [("t", [(0, [1])])])
    assert [(tr.name, [(pr.index, pr.error_code) for pr in tr.partitions]) for tr in out] == \
        [("t", [(0, E.NONE)])]
    assert s.get_partition("t", 0).replicas == [1]


def test_listing_skips_unknown_names_wherever_they_are(make_cluster: MakeCluster) -> None:
    """ListPartitionReassignments: an unknown topic (or index) is skipped, and the topics
    after it are still listed."""
    s, clock, f = make_cluster([0, 1, 2, 3])
    s.create_topic("foo", assignments={0: [0, 1, 2]})
    f.apply({"op": "pause_follower", "broker": 3})
    alter(s, {"foo": {0: [0, 1, 3]}})
    assert listing(s, [("nope", [0]), ("foo", [9, 0])]) == {("foo", 0): ([0, 1, 3, 2], [3], [2])}


def test_progress_reports_each_adding_replica_against_the_leader(make_cluster: MakeCluster) -> None:
    """What ``kafka-emulator reassign`` shows: each adding replica's bytes and log end
    beside the leader's."""
    s, clock, f = make_cluster([1, 2, 3, 4])
    s.create_topic("t", assignments={0: [1, 2]})
    p = s.get_partition("t", 0)
    produce(s, p, 6)
    settle(s, clock)
    f.apply({"op": "pause_follower", "broker": 3})
    f.apply({"op": "pause_follower", "broker": 4})
    alter(s, {"t": {0: [1, 2, 3, 4]}})
    size = p.logs[1].size_bytes
    assert size > 0
    assert [(r.broker, r.bytes, r.target_bytes, r.log_end_offset, r.leader_log_end_offset)
            for r in progress(p)] == [(3, 0, size, 0, 6), (4, 0, size, 0, 6)]


def test_a_reassignment_is_announced_once_when_it_starts_and_once_when_it_ends(
        make_cluster: MakeCluster) -> None:
    """The news listeners get (the console, metrics): started when a partition begins
    reassigning, not again when a new target replaces the running one; completed once."""
    s, clock, f = make_cluster([1, 2, 3, 4])
    s.create_topic("t", assignments={0: [1, 2]})
    seen: list[DomainEvent] = []
    s.hooks.append(lambda kind, ev: seen.append(ev) if kind.startswith("reassignment_") else None)
    alter(s, {"t": {0: [2, 1]}})  # a reorder completes at once: nothing to announce
    assert seen == []
    f.apply({"op": "pause_follower", "broker": 3})
    f.apply({"op": "pause_follower", "broker": 4})
    alter(s, {"t": {0: [2, 3]}})
    alter(s, {"t": {0: [2, 4]}})  # a new target while the first runs
    f.apply({"op": "clear"})
    settle(s, clock)
    assert s.get_partition("t", 0).replicas == [2, 4]
    assert seen == [
        ReassignmentStarted(topic="t", partition=0, replicas=[2, 3, 1], adding=[3], removing=[1]),
        ReassignmentCompleted(topic="t", partition=0, replicas=[2, 4])]


def test_one_request_announces_how_many_changes_it_applied(make_cluster: MakeCluster) -> None:
    """One ReassignmentsAltered per request that changed something, counting the
    records written: not the refused partitions, nor a target equal to the replicas."""
    s, clock, f = make_cluster([1, 2, 3, 4])
    s.create_topic("t", assignments={0: [1, 2], 1: [2, 3], 2: [3, 4], 3: [1, 3]})
    f.apply({"op": "pause_follower", "broker": 4})
    seen: list[DomainEvent] = []
    s.hooks.append(lambda kind, ev: seen.append(ev) if kind == "reassignments_altered" else None)
    res = alter(s, {"t": {0: [1, 4], 1: [9], 2: [3, 4], 3: [3, 1]}})
    assert [res[("t", i)][0] for i in range(4)] == \
        [E.NONE, E.INVALID_REPLICA_ASSIGNMENT, E.NONE, E.NONE]
    assert seen == [ReassignmentsAltered(count=2)]  # t-0 starts, t-3's reorder completes
    alter(s, {"t": {2: [3, 4]}})
    assert seen == [ReassignmentsAltered(count=2)]  # nothing changed: no news


def test_a_replica_being_removed_may_still_be_elected(make_cluster: MakeCluster) -> None:
    """While a reassignment runs the replica list is target + removing, and an election
    (PCB's ONLINE) looks at all of it: t-0 moving from [1, 2] to [3] (3 cannot fetch)
    loses its leader 1, and 2, being removed but in sync, leads until the move ends."""
    s, clock, f = make_cluster([1, 2, 3])
    s.create_topic("t", assignments={0: [1, 2]})
    p = s.get_partition("t", 0)
    produce(s, p, 2)
    settle(s, clock)
    f.apply({"op": "pause_follower", "broker": 3})
    alter(s, {"t": {0: [3]}})
    controller.broker_stopped(s, 1)
    assert (p.replicas, p.removing_replicas, p.leader, p.isr) == ([3, 1, 2], [1, 2], 2, [2])


def test_a_broker_unregistered_while_it_runs_is_no_target(make_cluster: MakeCluster) -> None:
    """Under Kafka's timing an UnregisterBroker takes a running broker out until it
    restarts: Kafka's controller dropped its registration, so a reassignment naming it is
    INVALID_REPLICA_ASSIGNMENT (validateManualPartitionAssignment), as for a broker that
    never was; a broker that is down but registered (fenced) is still a valid target."""
    s, clock, f = make_cluster([1, 2, 3, 4], fidelity="kafka")
    s.create_topic("t", assignments={0: [1, 2], 1: [1, 2]})
    controller.broker_unregistered(s, 3)
    controller.broker_stopped(s, 4)
    assert alter(s, {"t": {0: [1, 3], 1: [1, 4]}}) == {
        ("t", 0): (E.INVALID_REPLICA_ASSIGNMENT, "The manual partition assignment includes "
                   "broker 3, but no such broker is registered."),
        ("t", 1): OK}
