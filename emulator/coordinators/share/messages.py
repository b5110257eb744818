"""The share groups' wire messages as the share coordinator reads and writes them, typed.

As emulator/coordinators/groups/messages.py does for the group coordinator (whose
heartbeat answer, described assignment and listed group ShareGroupHeartbeat,
ShareGroupDescribe and ListGroups share): exactly the fields the coordinator reads or
writes, so that mypy checks each one; tests/test_coordinator_messages.py holds every
shape to the wire's declaration.
"""

from __future__ import annotations

from typing import NotRequired, TypedDict

from emulator.coordinators.groups.messages import DescribedAssignment


class DescribedShareMember(TypedDict):
    member_id: str
    rack_id: str | None
    member_epoch: int
    client_id: str
    client_host: str
    subscribed_topic_names: list[str]
    assignment: DescribedAssignment


class DescribedShareGroup(TypedDict):
    """One group of ShareGroupDescribe's answer (an unknown or invalid group: its error
    and id, a dead state where Kafka gives one)."""

    group_id: str
    error_code: int
    error_message: NotRequired[str | None]
    group_state: NotRequired[str]
    group_epoch: NotRequired[int]
    assignment_epoch: NotRequired[int]
    assignor_name: NotRequired[str]
    members: NotRequired[list[DescribedShareMember]]
    authorized_operations: NotRequired[int]




# ---- the offsets admin APIs (90-92) --------------------------------------------------------


class SharePartitionOffset(TypedDict):
    """A partition of DescribeShareGroupOffsets' answer: its share-partition start
    offset (SPSO), leader epoch and lag."""

    partition_index: int
    start_offset: int
    leader_epoch: int
    lag: int
    error_code: int
    error_message: NotRequired[str | None]


class ShareTopicOffsets(TypedDict):
    topic_name: str
    topic_id: bytes
    partitions: list[SharePartitionOffset]


class AlteredSharePartition(TypedDict):
    partition_index: int
    error_code: int
    error_message: NotRequired[str | None]


class AlteredShareTopic(TypedDict):
    topic_name: str
    topic_id: bytes
    partitions: list[AlteredSharePartition]


class DeletedShareTopic(TypedDict):
    topic_name: str
    topic_id: bytes
    error_code: int
    error_message: NotRequired[str | None]



# ---- the share coordinator's state (ShareGroupState RPCs 83-87, __share_group_state) ------


class StateBatch(TypedDict):
    """A run of offsets with one delivery state and count, as WriteShareGroupState and
    ReadShareGroupState carry it and the ShareSnapshot/ShareUpdate records store it."""

    first_offset: int
    last_offset: int
    delivery_state: int
    delivery_count: int


class StateSummary(TypedDict):
    """A partition of ReadShareGroupStateSummary's answer, but its error and index."""

    state_epoch: int
    leader_epoch: int
    start_offset: int
    delivery_complete_count: int


__all__ = [
    "AlteredSharePartition", "AlteredShareTopic", "DeletedShareTopic", "DescribedShareGroup",
    "DescribedShareMember", "SharePartitionOffset", "ShareTopicOffsets", "StateBatch", "StateSummary",
]
