"""State machines as tables: the controller's partition and replica state machines
(Kafka's PartitionStateMachine and ReplicaStateMachine), and
``TransitionTable``, the same rule for the coordinators' state machines (classic
groups, KIP-848 members, transactions).

The rules are the two tables just below: for each target state, the states it may
be entered from. Everything else is bookkeeping. A transition not in the table
raises ``IllegalStateTransition``, as Kafka's controller refuses it (it logs
"Invalid state transition" and leaves the state alone; here the caller learns of it
at once, because in the emulator it can only be our own bug or a test asking).

The active controller owns one instance of each (``ControllerStateMachines``); a new
controller rebuilds them from the cluster's metadata on failover
(``Controller.on_controller_failover``), exactly as Kafka's
``partitionStateMachine.startup()`` does. The pair lives here, below everything that
moves it (leadership, reassignment, the controller), so that those call down into it
rather than up into the controller role that owns it.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping
from enum import Enum
from typing import Generic, TypeVar, cast

from emulator.cluster.events import DomainEvent, PartitionStateChanged, ReplicaStateChanged
from emulator.cluster.partition import Partition
from wire.errors import KafkaError


class PartitionState(Enum):
    NonExistentPartition = "NonExistentPartition"  # never created, or deleted
    NewPartition = "NewPartition"  # replicas assigned, no leader or ISR yet
    OnlinePartition = "OnlinePartition"  # a leader is elected
    OfflinePartition = "OfflinePartition"  # the leader died and none could replace it


class ReplicaState(Enum):
    NewReplica = "NewReplica"  # created by topic creation or reassignment
    OnlineReplica = "OnlineReplica"  # started, part of the assigned replicas
    OfflineReplica = "OfflineReplica"  # its broker is down (or it is being removed)
    NonExistentReplica = "NonExistentReplica"  # deleted


P, R = PartitionState, ReplicaState

# target state -> the states it may be entered from (Kafka's valid state transitions)
PARTITION_TRANSITIONS: dict[PartitionState, frozenset[PartitionState]] = {
    P.NewPartition: frozenset({P.NonExistentPartition}),
    P.OnlinePartition: frozenset({P.NewPartition, P.OnlinePartition, P.OfflinePartition}),
    P.OfflinePartition: frozenset({P.NewPartition, P.OnlinePartition}),
    P.NonExistentPartition: frozenset({P.OfflinePartition}),
}

REPLICA_TRANSITIONS: dict[ReplicaState, frozenset[ReplicaState]] = {
    R.NewReplica: frozenset({R.NonExistentReplica}),
    R.OnlineReplica: frozenset({R.NewReplica, R.OnlineReplica, R.OfflineReplica}),
    R.OfflineReplica: frozenset({R.NewReplica, R.OnlineReplica}),
    R.NonExistentReplica: frozenset({R.OfflineReplica}),
}


class IllegalStateTransition(Exception):
    """A transition the table does not allow."""

    def __init__(self, key: Hashable, current: Enum, target: Enum,
                 valid: Iterable[Enum]) -> None:
        super().__init__(f"Invalid state transition for {key}: {current.value} -> "
                         f"{target.value} (valid previous states of {target.value}: "
                         f"{sorted(s.value for s in valid)})")
        self.key = key
        self.current = current
        self.target = target


S = TypeVar("S", bound=Enum)  # a machine's own state enum


class StateMachine(Generic[S]):
    """States of many keys under one transition table; absent keys are NonExistent."""

    def __init__(self, table: Mapping[S, frozenset[S]], nonexistent: S,
                 on_transition: Callable[[Hashable, S, S], None] | None = None) -> None:
        self.table = table
        self.nonexistent = nonexistent
        self.states: dict[Hashable, S] = {}
        self.on_transition = on_transition

    def state(self, key: Hashable) -> S:
        return self.states.get(key, self.nonexistent)

    def can_transition(self, key: Hashable, target: S) -> bool:
        return self.state(key) in self.table[target]

    def transition(self, key: Hashable, target: S) -> S:
        """Move ``key`` to ``target``; returns the previous state. Raises when invalid."""
        current = self.state(key)
        if current not in self.table[target]:
            raise IllegalStateTransition(key, current, target, self.table[target])
        if target is self.nonexistent:
            self.states.pop(key, None)
        else:
            self.states[key] = target
        if self.on_transition is not None:
            self.on_transition(key, current, target)
        return current

    def set_initial(self, key: Hashable, state: S) -> None:
        """Initialize a key's state on controller failover (no transition is made)."""
        if state is self.nonexistent:
            self.states.pop(key, None)
        else:
            self.states[key] = state

    def keys_in(self, *states: S) -> list[Hashable]:
        return [k for k, s in self.states.items() if s in states]

    def __iter__(self) -> Iterator[tuple[Hashable, S]]:
        return iter(list(self.states.items()))

    def __len__(self) -> int:
        return len(self.states)

    def clear(self) -> None:
        self.states.clear()


class PartitionStateMachine(StateMachine[PartitionState]):
    """Keys are (topic, partition)."""

    def __init__(self, on_transition: Callable[[Hashable, PartitionState, PartitionState],
                                               None] | None = None) -> None:
        super().__init__(PARTITION_TRANSITIONS, P.NonExistentPartition, on_transition)


class ReplicaStateMachine(StateMachine[ReplicaState]):
    """Keys are (topic, partition, broker id)."""

    def __init__(self, on_transition: Callable[[Hashable, ReplicaState, ReplicaState],
                                               None] | None = None) -> None:
        super().__init__(REPLICA_TRANSITIONS, R.NonExistentReplica, on_transition)

    def replicas_on(self, broker_id: int, keys: Iterable[tuple[str, int, int]] | None = None
                    ) -> list[tuple[str, int, int]]:
        if keys is None:
            keys = cast("list[tuple[str, int, int]]", list(self.states))
        return [k for k in keys if k[2] == broker_id]


class ControllerStateMachines:
    """The active controller's partition and replica state machines, with the moves its
    drivers make (leadership's elections, reassignment's new and removed replicas, the
    controller's broker changes). Each transition is told as a domain event."""

    def __init__(self, emit: Callable[[DomainEvent], None]) -> None:
        self._emit = emit
        self.partitions = PartitionStateMachine(self._on_partition_transition)
        self.replicas = ReplicaStateMachine(self._on_replica_transition)

    def _on_partition_transition(self, key: Hashable, old: Enum, new: Enum) -> None:
        self._emit(PartitionStateChanged(key=key, old=old.value, new=new.value))

    def _on_replica_transition(self, key: Hashable, old: Enum, new: Enum) -> None:
        self._emit(ReplicaStateChanged(key=key, old=old.value, new=new.value))

    def move_replica(self, p: Partition, broker_id: int, target: ReplicaState) -> None:
        """Transition one replica unless it is there already (Online -> Online is a
        real transition in the table, used to force a resend; others are not).

        A replica the metadata has but this controller has not seen (added behind
        its back) is first registered as New, as Kafka's controller does on
        discovering it."""
        key = (p.topic, p.index, broker_id)
        current = self.replicas.state(key)
        if current is target and target is not R.OnlineReplica:
            return
        if current is R.NonExistentReplica and target is not R.NewReplica:
            self.replicas.transition(key, R.NewReplica)
        self.replicas.transition(key, target)

    def move_partition(self, p: Partition, target: PartitionState) -> None:
        """Transition one partition unless it is there already (as ``move_replica``)."""
        key = p.key
        current = self.partitions.state(key)
        if current is target and target is not P.OnlinePartition:
            return
        if current is P.NonExistentPartition and target is not P.NewPartition:
            self.partitions.transition(key, P.NewPartition)
        self.partitions.transition(key, target)

    def clear(self) -> None:
        self.partitions.clear()
        self.replicas.clear()


class TransitionTable:
    """One coordinator state machine's rules: for each target state, the states it may
    be entered from (h11's way: the table is the machine, the code only asks it).

    An illegal transition raises the domain error ``KafkaError(error, message)``, so
    the handler answers with a Kafka error code instead of an assertion escaping.
    ``message`` formats (subject, current, target, valid previous states).
    """

    def __init__(self, machine: str, table: Mapping[str, frozenset[str]], error: int,
                 message: Callable[[str, str, str, list[str]], str] | None = None) -> None:
        self.machine = machine
        self.table = table
        self.error = error
        self.message = message

    def allowed(self, current: str, target: str) -> bool:
        return current in self.table.get(target, ())

    def check(self, subject: str, current: str, target: str) -> None:
        """Raise the table's domain error unless ``current -> target`` is allowed."""
        if self.allowed(current, target):
            return
        valid = sorted(self.table.get(target, ()))
        if self.message is not None:
            text = self.message(subject, current, target, valid)
        else:
            text = (f"{self.machine} {subject}: invalid state transition {current} -> "
                    f"{target} (valid previous states of {target}: {valid})")
        raise KafkaError(self.error, text)


__all__ = [
    "PARTITION_TRANSITIONS", "REPLICA_TRANSITIONS", "ControllerStateMachines",
    "IllegalStateTransition", "PartitionState",
    "PartitionStateMachine", "ReplicaState", "ReplicaStateMachine", "StateMachine",
    "TransitionTable",
]
