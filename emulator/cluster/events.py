"""Domain events: the news the cluster tells its observers, one type each.

``ClusterMetadata.emit(event)`` hands every observer in ``hooks`` the event's ``kind``
(Kafka's word for what happened, e.g. ``"topic_deleted"``) and the event itself, a
frozen dataclass whose fields are its payload. An observer picks what it needs by
type (``isinstance(event, TopicDeleted)``) and reads typed fields (``event.topic``);
``event["topic"]`` reads a field by name too, for observers that go by the kind.

Who tells what: the controller (broker and controller changes, the partition and
replica state machines), leadership, replication (appends, ISR changes), reassignment,
topics, configs and the log cleaner in emulator.cluster; the coordinators (committed
offsets, transactions, share-partition state); the faults (``FaultApplied``). Who
listens: the data directory (emulator.storage), the coordinator log, the coordinators
themselves and tests.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, fields
from typing import ClassVar, ParamSpec, Protocol, TypeVar

_P = ParamSpec("_P")  # an observer's parameters (a function's, or a method's with self)
_R = TypeVar("_R")


def observes(*types: type[DomainEvent]) -> Callable[[Callable[_P, _R]], Callable[_P, _R]]:
    """Mark an observer as caring only for events of ``types``: ``emit`` passes it
    nothing else. An append tells ``Appended`` for every partition of every Produce
    request, and an observer that looks only for ``TopicDeleted`` should not cost
    each of them a call (docs/scale.md, the per-broker client)."""

    def mark(fn: Callable[_P, _R]) -> Callable[_P, _R]:
        fn.observed_events = types  # type: ignore[attr-defined]
        return fn

    return mark


@dataclass(frozen=True, slots=True)
class DomainEvent:
    kind: ClassVar[str] = ""

    def __getitem__(self, name: str) -> object:
        """A field by name (``event["topic"]``), for observers that go by the kind (an
        observer that reads a field's type picks the event by its class instead)."""
        if name not in {f.name for f in fields(self)}:
            raise KeyError(name)
        return getattr(self, name)


# ---- the controller -----------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class StateChanged(DomainEvent):
    """A state machine transition (states by Kafka's names)."""

    key: object  # (topic, partition), or (topic, partition, broker) for a replica
    old: str
    new: str


class PartitionStateChanged(StateChanged):
    kind: ClassVar[str] = "partition_state"


class ReplicaStateChanged(StateChanged):
    kind: ClassVar[str] = "replica_state"


@dataclass(frozen=True, slots=True)
class ControllerEvent(DomainEvent):
    controller: int  # -1: none, every broker is down
    epoch: int | None = None


class ControllerChanged(ControllerEvent):
    """The active controller is now ``controller``."""

    kind: ClassVar[str] = "controller_change"


class ControllerFailover(ControllerEvent):
    """A new controller took over and ran onControllerFailover."""

    kind: ClassVar[str] = "controller_failover"


@dataclass(frozen=True, slots=True)
class BrokerEvent(DomainEvent):
    broker: int


class BrokerStopped(BrokerEvent):
    kind: ClassVar[str] = "broker_stopped"


class ControlledShutdown(BrokerEvent):
    kind: ClassVar[str] = "controlled_shutdown"


class BrokerStarted(BrokerEvent):
    kind: ClassVar[str] = "broker_started"


@dataclass(frozen=True, slots=True)
class BrokerCrashed(BrokerEvent):
    """A broker died; the controller fences it at once or after ``fence_after_ms``."""

    kind: ClassVar[str] = "broker_crashed"
    fence_after_ms: int | None


@dataclass(frozen=True, slots=True)
class LogDirFailed(BrokerEvent):
    """One of a broker's log directories failed (a storage fault): its replicas there
    went offline (emulator.cluster.controller.log_dir_failed)."""

    kind: ClassVar[str] = "log_dir_failed"
    log_dir: str
    reason: str


@dataclass(frozen=True, slots=True)
class BrokerHalted(BrokerEvent):
    """A broker stopped itself (Kafka's Exit.halt): all its log directories, or the one
    holding the metadata log, failed. The domain treats it as a crash; the server
    closes the broker's listeners."""

    kind: ClassVar[str] = "broker_halted"
    reason: str


# ---- partitions -----------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class PartitionEvent(DomainEvent):
    topic: str
    partition: int


@dataclass(frozen=True, slots=True)
class Appended(PartitionEvent):
    """Records were appended to a partition's leader log (offsets ``base``..``last``;
    -1 both when a coordinator wrote its own records)."""

    kind: ClassVar[str] = "append"
    base: int
    last: int


@dataclass(frozen=True, slots=True)
class LeaderChanged(PartitionEvent):
    kind: ClassVar[str] = "leader_change"
    old: int
    new: int
    epoch: int
    unclean: bool


@dataclass(frozen=True, slots=True)
class IsrExpanded(PartitionEvent):
    kind: ClassVar[str] = "isr_expand"
    broker: int


@dataclass(frozen=True, slots=True)
class IsrShrunk(PartitionEvent):
    kind: ClassVar[str] = "isr_shrink"
    brokers: list[int]


@dataclass(frozen=True, slots=True)
class ReassignmentEvent(PartitionEvent):
    replicas: list[int]


@dataclass(frozen=True, slots=True)
class ReassignmentStarted(ReassignmentEvent):
    kind: ClassVar[str] = "reassignment_started"
    adding: list[int]
    removing: list[int]


class ReassignmentCompleted(ReassignmentEvent):
    kind: ClassVar[str] = "reassignment_completed"


@dataclass(frozen=True, slots=True)
class ReassignmentsAltered(DomainEvent):
    """One AlterPartitionReassignments applied ``count`` changes."""

    kind: ClassVar[str] = "reassignments_altered"
    count: int


@dataclass(frozen=True, slots=True)
class LogCleaned(PartitionEvent):
    """The cleaner rewrote offsets ``start``..``end`` of a partition's log."""

    kind: ClassVar[str] = "log_cleaned"
    start: int
    end: int


# ---- topics and configs -----------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class TopicEvent(DomainEvent):
    topic: str


class TopicCreated(TopicEvent):
    kind: ClassVar[str] = "topic_created"


class TopicDeleted(TopicEvent):
    kind: ClassVar[str] = "topic_deleted"


@dataclass(frozen=True, slots=True)
class ConfigsChanged(DomainEvent):
    kind: ClassVar[str] = "configs_changed"
    resource_type: int
    name: str


# ---- coordinators ----------------------------------------------------------------------------
# The coordinators (above this module) tell their state changes with their own objects.
# What the news says of them is declared here, as what their records are written from
# (the coordinator log's OffsetCommitValue and TransactionLogValue): the coordinators'
# OffsetAndMetadata and TxnMetadata have these members, and an observer reads no other.
class CommittedOffset(Protocol):
    """A group's committed offset of one partition (Kafka's OffsetAndMetadata)."""

    @property
    def offset(self) -> int: ...
    @property
    def leader_epoch(self) -> int: ...
    @property
    def metadata(self) -> str | None: ...
    @property
    def commit_ms(self) -> int: ...


class TxnRecord(Protocol):
    """A transactional id's state as its TransactionLogValue records it (Kafka's
    TransactionMetadata)."""

    @property
    def transactional_id(self) -> str: ...
    @property
    def producer_id(self) -> int: ...
    @property
    def producer_epoch(self) -> int: ...
    @property
    def timeout_ms(self) -> int: ...
    @property
    def state(self) -> str: ...  # Kafka's TransactionState name, e.g. "Ongoing"
    @property
    def partitions(self) -> Collection[tuple[str, int]]: ...
    @property
    def last_update_ms(self) -> int: ...
    @property
    def start_ms(self) -> int: ...


@dataclass(frozen=True, slots=True)
class OffsetsChanged(DomainEvent):
    """A group's committed offsets changed: (topic, partition) -> its committed offset,
    or None where an offset is gone."""

    kind: ClassVar[str] = "offsets_changed"
    group: str
    offsets: Mapping[tuple[str, int], CommittedOffset | None]


@dataclass(frozen=True, slots=True)
class TxnChanged(DomainEvent):
    """A transaction's metadata changed (``removed``: it expired and is gone)."""

    kind: ClassVar[str] = "txn_changed"
    txn: TxnRecord  # the coordinators' TxnMetadata
    removed: bool = False


@dataclass(frozen=True, slots=True)
class ShareStateChanged(DomainEvent):
    """A share-partition's state changed (``sp`` None: it is gone); ``key`` is (group,
    topic id, partition)."""

    kind: ClassVar[str] = "share_state_changed"
    key: tuple[str, bytes, int]
    # The coordinators' SharePartition, or None. Opaque here: the share state's records
    # are written from its whole in-flight state, which only the share coordinator's
    # own log (coordinators/share/state_log.py) reads, narrowing it to its type.
    sp: object


# ---- faults ------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class FaultApplied(DomainEvent):
    """A fault operation (emulator.faults' vocabulary) was applied, as applied."""

    kind: ClassVar[str] = "fault"
    op: Mapping[str, object]  # emulator.faults' operation: "op" and its fields


__all__ = [
    "Appended", "BrokerCrashed", "BrokerEvent", "BrokerHalted", "LogDirFailed", "BrokerStarted", "BrokerStopped",
    "CommittedOffset", "TxnRecord",
    "ConfigsChanged", "ControllerEvent", "PartitionEvent", "ReassignmentEvent",
    "StateChanged", "TopicEvent",
    "ControlledShutdown", "ControllerChanged", "ControllerFailover", "DomainEvent",
    "FaultApplied", "IsrExpanded", "IsrShrunk", "LeaderChanged", "LogCleaned",
    "OffsetsChanged", "PartitionStateChanged", "ReassignmentCompleted",
    "ReassignmentStarted", "ReassignmentsAltered", "ReplicaStateChanged",
    "ShareStateChanged", "TopicCreated", "TopicDeleted", "TxnChanged",
]
