"""The core the group coordinator's parts share: the one table of groups (every type,
one namespace of ids), placement on ``__consumer_offsets``, time, ids, and waking the
requests parked on groups.

``GroupCoordinator`` (emulator/coordinators/groups/coordinator.py) is this core plus
committed offsets, the tick and the administrative APIs; it composes the protocols
(``classic``, ``consumer``, ``migration``, ``streams``), each built on this core.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, TypeVar

from emulator.cluster.configs import segment_size_configs
from emulator.coordinators.classic.group import ClassicGroup
from emulator.coordinators.consumer.group import ConsumerGroup
from emulator.coordinators.groups.parts import ClassicPart, ConsumerPart
from emulator.coordinators.runtime.deadlines import Deadlines, TouchedTable
from emulator.coordinators.runtime.host import ClusterHost
from emulator.coordinators.runtime.placement import InternalTopic
from wire.errors import ErrorCode as E
from wire.errors import KafkaError

if TYPE_CHECKING:
    # The streams part imports it when a StreamsGroupHeartbeat first comes
    # (groups/coordinator.py): a start without streams clients never loads streams.
    from emulator.coordinators.streams.group import StreamsGroup

OFFSETS_TOPIC = "__consumer_offsets"
OFFSET_METADATA_MAX_BYTES = 4096  # offset.metadata.max.bytes

# A group's check of one committed partition (topic, partition): its error code, or NONE.
OffsetCheck = Callable[[str, int], int]


def group_key(group_id: str) -> tuple[str, str]:
    """The change key of a group: a ``Delayed`` waiting on a group (a parked JoinGroup
    or SyncGroup) names it in ``keys``; it cannot equal a partition's (topic, index)."""
    return ("group", group_id)


class LoadedGroup(Protocol):
    """A group of any kind, as the core creates and reloads it: its id, its kind, and
    the coordinator (leader, epoch) it was last loaded under."""

    group_id: str
    loaded_epoch: tuple[int, int] | None

    def __init__(self, group_id: str) -> None: ...

    @property
    def type(self) -> str: ...


# A group of the table: one namespace of ids for every kind, told apart by ``type`` (a
# literal per class, so that comparing it narrows the union as isinstance does).
if TYPE_CHECKING:
    Group = ClassicGroup | ConsumerGroup | StreamsGroup
# A KIP-848-style group, as the parts look theirs up (``typed_group``).
NewGroup = TypeVar("NewGroup", ConsumerGroup, "StreamsGroup")


class GroupTable(TouchedTable[str, "Group"]):
    """The group coordinator's groups (``TouchedTable``), also noting for parked
    requests which groups changed (``news``, drained by ``mark_changed``): a lookup that
    changed nothing costs at most one needless re-check of the group's parked requests."""

    __slots__ = ("news",)

    def __init__(self) -> None:
        super().__init__()
        self.news: set[str] = set()

    def _note(self, key: str) -> None:
        self.touched.add(key)
        self.news.add(key)


@dataclass(slots=True)
class OffsetAndMetadata:
    offset: int
    leader_epoch: int
    metadata: str | None
    commit_ms: int


class GroupsBase:
    """What every part of the group coordinator reaches: ``state``, ``groups``, the
    placement of group ids (``topic``), ``timers``, and the other parts."""

    # The parts (set by GroupCoordinator): each names the parts below it through the core,
    # by what it calls of them (groups/parts.py): migration calls the classic and the
    # consumer protocol; migration and the streams part are called by no other part.
    classic: ClassicPart
    consumer: ConsumerPart

    def __init__(self, state: ClusterHost) -> None:
        self.state = state
        self.topic = InternalTopic(
            state, OFFSETS_TOPIC, lambda: self.cfg("offsets.topic.num.partitions", 50),
            lambda: self.cfg("offsets.topic.replication.factor", 3),
            lambda: {"cleanup.policy": "compact", "compression.type": "producer",
                     **segment_size_configs(self.cfg("offsets.topic.segment.bytes",
                                                     104857600))})
        self.groups: GroupTable = GroupTable()  # id -> ClassicGroup | ConsumerGroup | ...
        # When each group's next timer is due (docs/architecture.md): a tick visits only those.
        self.timers = Deadlines()

    # ---- plumbing ------------------------------------------------------------------
    def now(self) -> int:
        now: int = self.state.now()
        return now

    def cfg(self, key: str, default: int) -> int:
        v = self.state.config.get(key)
        return default if v is None else int(v)

    def new_member_uuid(self) -> str:
        import uuid  # here: uuid imports platform, ~2 ms of every start (docs/scale.md)

        return str(uuid.UUID(int=self.state.rng.getrandbits(128), version=4))

    def new_kafka_uuid(self) -> str:
        """Kafka's Uuid.toString: URL-safe base64 of 16 bytes, unpadded."""
        raw = self.state.rng.getrandbits(128).to_bytes(16, "big")
        return base64.urlsafe_b64encode(raw).decode().rstrip("=")

    def mark_changed(self) -> None:
        """Wake the requests parked on the groups touched since the last call."""
        news = self.groups.news
        keys = [group_key(g) for g in news]
        news.clear()
        self.state.changed(partitions_only=True, keys=keys)  # nothing replication uses

    def typed_group(self, group_id: str, create: bool, cls: type[NewGroup],
                    label: str) -> NewGroup:
        """The KIP-848-style group ``group_id`` of ``cls`` (ConsumerGroup, StreamsGroup):
        GROUP_ID_NOT_FOUND when absent or of another type; with ``create``, a new one
        (also in place of an empty classic group)."""
        group = self.groups.get(group_id)
        if group is None or (create and group.type == "classic" and group.is_empty):
            if not create:
                raise KafkaError(E.GROUP_ID_NOT_FOUND, f"{label} {group_id} not found.")
            new = self.groups[group_id] = cls(group_id)
            self.group_created(new)
            return new
        if not isinstance(group, cls):  # a group of another type
            raise KafkaError(E.GROUP_ID_NOT_FOUND,
                             f"Group {group_id} is not a {label.lower()}.")
        return group

    def group_created(self, group: LoadedGroup) -> None:
        group.loaded_epoch = self.topic.epoch(group.group_id)

    # ---- placement (emulator/coordinators/runtime/placement.py) ----------------------
    def num_partitions(self) -> int:
        return self.topic.num_partitions()

    def partition_for(self, group_id: str) -> int:
        return self.topic.partition_for(group_id)

    def ensure_offsets_topic(self) -> None:
        self.topic.ensure()

    def coordinator_for(self, group_id: str, create: bool = True) -> int:
        """The broker id coordinating ``group_id``; raises COORDINATOR_NOT_AVAILABLE."""
        return self.topic.coordinator_for(group_id, create)

    def check_coordinator(self, broker_id: int, group_id: str) -> None:
        """Raise NOT_COORDINATOR unless ``broker_id`` coordinates ``group_id``."""
        self.topic.check(broker_id, group_id)

    def coordinator_error(self, broker_id: int, group_id: str) -> int:
        """The error code of ``check_coordinator`` (0 when this broker coordinates)."""
        return self.topic.error(broker_id, group_id)


class GroupPart:
    """A part of the group coordinator (one group protocol's operations): it reaches the
    core and the other parts through ``gc``."""

    def __init__(self, gc: GroupsBase) -> None:
        self.gc = gc
        self.state = gc.state
        self.groups = gc.groups
