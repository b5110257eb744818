"""The group coordinator's wire messages as it writes them, typed: the answers of the
classic protocol (JoinGroup, SyncGroup, DescribeGroups, ListGroups), of KIP-848's
ConsumerGroupHeartbeat and ConsumerGroupDescribe (ShareGroupHeartbeat answers in the
same shape), and OffsetFetch's partitions.

The codec encodes a response from a plain dict (wire/messages/). The coordinator names
here exactly the fields it writes, so that mypy checks each one; the handler adds what
depends on the request (its throttle time, authorized operations) to a copy.
tests/test_coordinator_messages.py holds every shape here to the wire's declaration,
field by field, so a renamed or dropped field fails there.
"""

from __future__ import annotations

from typing import NotRequired, TypedDict

# ---- the classic protocol -------------------------------------------------------------


class JoinGroupMember(TypedDict):
    member_id: str
    group_instance_id: str | None
    metadata: bytes


class JoinGroupResponse(TypedDict):
    """JoinGroup's answer, but its throttle time (the handler's)."""

    error_code: int
    member_id: str
    generation_id: int
    protocol_type: str | None
    protocol_name: str | None
    leader: str
    skip_assignment: bool
    members: list[JoinGroupMember]


class SyncGroupResponse(TypedDict):
    """SyncGroup's answer, but its throttle time (the handler's)."""

    error_code: int
    protocol_type: str | None
    protocol_name: str | None
    assignment: bytes


class DescribedClassicMember(TypedDict):
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    member_metadata: bytes
    member_assignment: bytes


class DescribedClassicGroup(TypedDict):
    """One group of DescribeGroups' answer (an unknown group: a dead one, with an error
    message from version 6)."""

    error_code: int
    error_message: NotRequired[str | None]
    group_id: str
    group_state: str
    protocol_type: str
    protocol_data: str
    members: list[DescribedClassicMember]
    authorized_operations: NotRequired[int]


class ListedGroup(TypedDict):
    group_id: str
    protocol_type: str
    group_state: str
    group_type: str


# ---- KIP-848 consumer groups (and share groups' heartbeat) ------------------------------


class TopicPartitionsById(TypedDict):
    topic_id: bytes
    partitions: list[int]


class HeartbeatAssignment(TypedDict):
    topic_partitions: list[TopicPartitionsById]


class GroupHeartbeatResponse(TypedDict):
    """ConsumerGroupHeartbeat's and ShareGroupHeartbeat's answer, but the throttle time
    (the handler's); a leaving member's carries no message."""

    error_code: int
    error_message: NotRequired[str | None]
    member_id: str | None
    member_epoch: int
    heartbeat_interval_ms: int
    assignment: HeartbeatAssignment | None


class DescribedTopicPartitions(TypedDict):
    topic_id: bytes
    topic_name: str
    partitions: list[int]


class DescribedAssignment(TypedDict):
    topic_partitions: list[DescribedTopicPartitions]


class DescribedConsumerMember(TypedDict):
    member_id: str
    instance_id: str | None
    rack_id: str | None
    member_epoch: int
    client_id: str
    client_host: str
    subscribed_topic_names: list[str]
    subscribed_topic_regex: str | None
    assignment: DescribedAssignment
    target_assignment: DescribedAssignment
    member_type: int


class DescribedConsumerGroup(TypedDict):
    """One group of ConsumerGroupDescribe's answer (an unknown or invalid group: its
    error and id, Kafka's described error the state too)."""

    error_code: int
    error_message: NotRequired[str | None]
    group_id: str
    group_state: NotRequired[str]
    group_epoch: NotRequired[int]
    assignment_epoch: NotRequired[int]
    assignor_name: NotRequired[str]
    members: NotRequired[list[DescribedConsumerMember]]
    authorized_operations: NotRequired[int]


# ---- offsets ------------------------------------------------------------------------------


class FetchedOffset(TypedDict):
    """One partition of OffsetFetch's answer."""

    partition_index: int
    committed_offset: int
    committed_leader_epoch: int
    metadata: str | None
    error_code: int


__all__ = [
    "DescribedAssignment", "DescribedClassicGroup", "DescribedClassicMember",
    "DescribedConsumerGroup", "DescribedConsumerMember", "DescribedTopicPartitions",
    "FetchedOffset", "GroupHeartbeatResponse", "HeartbeatAssignment", "JoinGroupMember",
    "JoinGroupResponse", "ListedGroup", "SyncGroupResponse", "TopicPartitionsById",
]
