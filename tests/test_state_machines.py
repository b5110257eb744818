"""The controller's partition and replica state machines (Kafka's PartitionStateMachine
and ReplicaStateMachine): every valid transition is taken, every invalid one refused,
and the controller's operations walk them in Kafka's order."""

from __future__ import annotations

import itertools

import pytest
from cluster_sim import new_cluster

from emulator.cluster import controller, reassignment
from emulator.cluster.state import ClusterState
from emulator.cluster.state_machines import (
    PARTITION_TRANSITIONS,
    REPLICA_TRANSITIONS,
    IllegalStateTransition,
    PartitionState,
    PartitionStateMachine,
    ReplicaState,
    ReplicaStateMachine,
)

PS, RS = PartitionState, ReplicaState


def _valid_pairs(table):
    # Sorted: the table holds frozensets, whose order differs between processes (string
    # hashing is salted), and pytest-xdist workers must collect the same test ids.
    return [(src, dst) for dst, srcs in table.items()
            for src in sorted(srcs, key=lambda s: s.name)]


def _invalid_pairs(table, states):
    valid = set(_valid_pairs(table))
    return [(a, b) for a, b in itertools.product(states, states) if (a, b) not in valid]


def _put(machine, key, state) -> None:
    machine.set_initial(key, state)


def test_tables_are_seed_002() -> None:
    assert set(_valid_pairs(PARTITION_TRANSITIONS)) == {
        (PS.NonExistentPartition, PS.NewPartition),
        (PS.NewPartition, PS.OnlinePartition),
        (PS.OnlinePartition, PS.OnlinePartition),
        (PS.OfflinePartition, PS.OnlinePartition),
        (PS.NewPartition, PS.OfflinePartition),
        (PS.OnlinePartition, PS.OfflinePartition),
        (PS.OfflinePartition, PS.NonExistentPartition),
    }
    assert set(_valid_pairs(REPLICA_TRANSITIONS)) == {
        (RS.NonExistentReplica, RS.NewReplica),
        (RS.NewReplica, RS.OnlineReplica),
        (RS.OnlineReplica, RS.OnlineReplica),
        (RS.OfflineReplica, RS.OnlineReplica),
        (RS.NewReplica, RS.OfflineReplica),
        (RS.OnlineReplica, RS.OfflineReplica),
        (RS.OfflineReplica, RS.NonExistentReplica),
    }


@pytest.mark.parametrize(("src", "dst"), _valid_pairs(PARTITION_TRANSITIONS))
def test_every_valid_partition_transition(src: PS, dst: PS) -> None:
    m = PartitionStateMachine()
    _put(m, ("t", 0), src)
    assert m.transition(("t", 0), dst) is src
    assert m.state(("t", 0)) is dst


@pytest.mark.parametrize(("src", "dst"), _invalid_pairs(PARTITION_TRANSITIONS, list(PS)))
def test_every_invalid_partition_transition_is_refused(src: PS, dst: PS) -> None:
    m = PartitionStateMachine()
    _put(m, ("t", 0), src)
    with pytest.raises(IllegalStateTransition) as e:
        m.transition(("t", 0), dst)
    assert m.state(("t", 0)) is src  # left alone
    assert src.value in str(e.value) and dst.value in str(e.value)


@pytest.mark.parametrize(("src", "dst"), _valid_pairs(REPLICA_TRANSITIONS))
def test_every_valid_replica_transition(src: RS, dst: RS) -> None:
    m = ReplicaStateMachine()
    _put(m, ("t", 0, 1), src)
    assert m.transition(("t", 0, 1), dst) is src
    assert m.state(("t", 0, 1)) is dst


@pytest.mark.parametrize(("src", "dst"), _invalid_pairs(REPLICA_TRANSITIONS, list(RS)))
def test_every_invalid_replica_transition_is_refused(src: RS, dst: RS) -> None:
    m = ReplicaStateMachine()
    _put(m, ("t", 0, 1), src)
    with pytest.raises(IllegalStateTransition):
        m.transition(("t", 0, 1), dst)
    assert m.state(("t", 0, 1)) is src


def test_nonexistent_keys_are_forgotten() -> None:
    m = ReplicaStateMachine()
    m.transition(("t", 0, 1), RS.NewReplica)
    m.transition(("t", 0, 1), RS.OfflineReplica)
    m.transition(("t", 0, 1), RS.NonExistentReplica)
    assert len(m) == 0 and m.state(("t", 0, 1)) is RS.NonExistentReplica


# ---- the controller walks the machines --------------------------------------------------
class Recorder:
    def __init__(self, state: ClusterState) -> None:
        self.events: list[tuple[str, object, str, str]] = []
        state.hooks.append(self)

    def __call__(self, event: str, data: dict) -> None:
        if event in ("partition_state", "replica_state"):
            self.events.append((event, data["key"], data["old"], data["new"]))

    def take(self) -> list[tuple[str, object, str, str]]:
        out, self.events = self.events, []
        return out


def cluster() -> tuple[ClusterState, Recorder]:
    s = new_cluster(3).state
    return s, Recorder(s)


def test_topic_creation_is_new_then_online() -> None:
    s, rec = cluster()
    s.create_topic("t", 1, 3, assignments=None)
    p = s.get_partition("t", 0)
    ev = rec.take()
    assert ev[0] == ("partition_state", ("t", 0), "NonExistentPartition", "NewPartition")
    assert [e[1:] for e in ev[1:4]] == [(("t", 0, b), "NonExistentReplica", "NewReplica")
                                         for b in p.replicas]
    assert ev[4] == ("partition_state", ("t", 0), "NewPartition", "OnlinePartition")
    assert [e[1:] for e in ev[5:]] == [(("t", 0, b), "NewReplica", "OnlineReplica")
                                        for b in p.replicas]


def test_creation_with_every_replica_down_stays_new_until_one_starts() -> None:
    s, rec = cluster()
    controller.broker_stopped(s, 3)
    s.create_topic("solo", assignments={0: [3]})
    c = s.controller.machines
    assert c.partitions.state(("solo", 0)) is PS.NewPartition
    assert c.replicas.state(("solo", 0, 3)) is RS.OfflineReplica
    rec.take()
    controller.broker_started(s, 3)
    assert ("partition_state", ("solo", 0), "NewPartition", "OnlinePartition") in rec.take()
    assert s.get_partition("solo", 0).leader == 3


def test_broker_failure_walks_offline_then_online() -> None:
    s, rec = cluster()
    s.create_topic("t", assignments={0: [2, 3, 1]})
    rec.take()
    controller.broker_stopped(s, 2)
    assert rec.take() == [
        ("partition_state", ("t", 0), "OnlinePartition", "OfflinePartition"),
        ("replica_state", ("t", 0, 2), "OnlineReplica", "OfflineReplica"),
        ("partition_state", ("t", 0), "OfflinePartition", "OnlinePartition"),
    ]
    p = s.get_partition("t", 0)
    assert (p.leader, p.isr) == (3, [3, 1])


def test_follower_failure_only_moves_its_replica() -> None:
    s, rec = cluster()
    s.create_topic("t", assignments={0: [2, 3, 1]})
    rec.take()
    controller.broker_stopped(s, 1)  # 1 is the controller and a follower
    c = s.controller.machines
    assert s.controller_id == 2
    assert c.partitions.state(("t", 0)) is PS.OnlinePartition
    assert c.replicas.state(("t", 0, 1)) is RS.OfflineReplica
    assert s.get_partition("t", 0).isr == [2, 3]


def test_last_replica_down_leaves_the_partition_offline() -> None:
    s, rec = cluster()
    s.create_topic("solo", assignments={0: [2]})
    rec.take()
    controller.broker_stopped(s, 2)
    assert rec.take() == [
        ("partition_state", ("solo", 0), "OnlinePartition", "OfflinePartition"),
        ("replica_state", ("solo", 0, 2), "OnlineReplica", "OfflineReplica"),
    ]
    p = s.get_partition("solo", 0)
    assert (p.leader, p.isr) == (-1, [2])  # the last ISR member is remembered
    controller.broker_started(s, 2)
    assert rec.take() == [
        ("replica_state", ("solo", 0, 2), "OfflineReplica", "OnlineReplica"),
        ("partition_state", ("solo", 0), "OfflinePartition", "OnlinePartition"),
    ]


def test_deletion_walks_offline_then_nonexistent() -> None:
    s, rec = cluster()
    s.create_topic("t", assignments={0: [1, 2]})
    rec.take()
    s.delete_topic("t")
    assert rec.take() == [
        ("partition_state", ("t", 0), "OnlinePartition", "OfflinePartition"),
        ("partition_state", ("t", 0), "OfflinePartition", "NonExistentPartition"),
        ("replica_state", ("t", 0, 1), "OnlineReplica", "OfflineReplica"),
        ("replica_state", ("t", 0, 1), "OfflineReplica", "NonExistentReplica"),
        ("replica_state", ("t", 0, 2), "OnlineReplica", "OfflineReplica"),
        ("replica_state", ("t", 0, 2), "OfflineReplica", "NonExistentReplica"),
    ]
    assert len(s.controller.machines.partitions) == 0 and len(s.controller.machines.replicas) == 0


def test_reassignment_walks_new_online_offline_nonexistent() -> None:
    s, rec = cluster()
    s.create_topic("t", assignments={0: [1, 2]})
    rec.take()
    p = s.get_partition("t", 0)
    reassignment.start_reassignment(s, p, [3, 2])
    assert rec.take() == [
        ("replica_state", ("t", 0, 3), "NonExistentReplica", "NewReplica"),
        ("replica_state", ("t", 0, 3), "NewReplica", "OnlineReplica"),
    ]
    for _ in range(3):
        s.tick()
    ev = rec.take()
    assert ("replica_state", ("t", 0, 1), "OnlineReplica", "OfflineReplica") in ev
    assert ev[-1] == ("replica_state", ("t", 0, 1), "OfflineReplica", "NonExistentReplica")
    assert (p.replicas, p.adding_replicas, p.removing_replicas) == ([3, 2], [], [])


def test_controller_failover_rebuilds_the_machines_from_metadata() -> None:
    s, rec = cluster()
    s.create_topic("a", assignments={0: [2, 3], 1: [3, 2]})
    s.create_topic("solo", assignments={0: [3]})
    controller.broker_stopped(s, 3)
    old = s.controller
    controller.broker_stopped(s, 1)  # the controller
    new = s.controller
    assert (old.broker_id, new.broker_id) == (1, 2) and new.epoch == old.epoch + 1
    assert new.machines.partitions.state(("a", 0)) is PS.OnlinePartition
    assert new.machines.partitions.state(("solo", 0)) is PS.OfflinePartition
    assert new.machines.replicas.state(("a", 1, 3)) is RS.OfflineReplica
    assert new.machines.replicas.state(("a", 1, 2)) is RS.OnlineReplica
    assert s.controller_id == 2


def test_controlled_shutdown_moves_replicas_offline_before_the_stop() -> None:
    s, rec = cluster()
    s.create_topic("t", assignments={0: [2, 3], 1: [3, 2]})
    rec.take()
    stranded = controller.controlled_shutdown(s, 2)
    assert stranded == []
    ev = rec.take()
    assert ("replica_state", ("t", 0, 2), "OnlineReplica", "OfflineReplica") in ev
    assert s.get_partition("t", 0).leader == 3
    controller.broker_stopped(s, 2)
    assert [e for e in rec.take() if e[0] == "replica_state"] == []  # already offline
