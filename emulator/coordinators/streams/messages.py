"""The streams group's wire messages as the coordinator reads and writes them, typed.

The codec decodes a request into a plain dict and encodes a response from one
(wire/messages/streams_group.py declares both). The coordinator does not take the
codec's untyped dicts: it names here exactly the fields it reads of a request and
writes of a response, so that mypy checks each one. The handler hands the decoded
request over as a ``StreamsGroupHeartbeatRequest`` (the codec built it from the same
schema); tests/test_coordinator_messages.py holds every shape here to the wire's
declaration, field by field, so a renamed or dropped field fails there.
"""

from __future__ import annotations

from typing import NotRequired, TypedDict


class KeyValue(TypedDict):
    key: str
    value: str


class TopicInfoWire(TypedDict):
    """An internal topic of a subtopology (0 partitions: the broker decides)."""

    name: str
    partitions: int
    replication_factor: int
    topic_configs: list[KeyValue]


class CopartitionGroupWire(TypedDict):
    """Indexes into the subtopology's source and repartition source topics."""

    source_topics: list[int]
    repartition_source_topics: list[int]


class SubtopologyWire(TypedDict):
    subtopology_id: str
    source_topics: list[str]
    source_topic_regex: list[str]
    state_changelog_topics: list[TopicInfoWire]
    repartition_sink_topics: list[str]
    repartition_source_topics: list[TopicInfoWire]
    copartition_groups: list[CopartitionGroupWire]


class TopologyWire(TypedDict):
    epoch: int
    subtopologies: list[SubtopologyWire]


class TaskIds(TypedDict):
    """One subtopology's tasks: the partitions (task numbers) of it."""

    subtopology_id: str
    partitions: list[int]


class TaskOffset(TypedDict):
    subtopology_id: str
    partition: int
    offset: int


class Endpoint(TypedDict):
    host: str
    port: int


class StreamsGroupHeartbeatRequest(TypedDict):
    """StreamsGroupHeartbeat (88) as the coordinator reads it."""

    group_id: str
    member_id: str
    member_epoch: int
    endpoint_information_epoch: int
    instance_id: str | None
    rack_id: str | None
    rebalance_timeout_ms: int
    topology: TopologyWire | None
    active_tasks: list[TaskIds] | None
    standby_tasks: list[TaskIds] | None
    warmup_tasks: list[TaskIds] | None
    process_id: str | None
    user_endpoint: Endpoint | None
    client_tags: list[KeyValue] | None
    task_offsets: list[TaskOffset] | None
    task_end_offsets: list[TaskOffset] | None
    shutdown_application: bool


class Status(TypedDict):
    status_code: int
    status_detail: str


class TopicPartitions(TypedDict):
    topic: str
    partitions: list[int]


class EndpointToPartitions(TypedDict):
    user_endpoint: Endpoint
    active_partitions: list[TopicPartitions]
    standby_partitions: list[TopicPartitions]


class StreamsGroupHeartbeatResponse(TypedDict):
    """StreamsGroupHeartbeat's answer, but its throttle time (the handler's)."""

    error_code: int
    error_message: str | None
    member_id: str
    member_epoch: int
    heartbeat_interval_ms: int
    task_offset_interval_ms: int
    acceptable_recovery_lag: int
    acceptable_recovery_lag_legacy: int
    status: list[Status] | None
    active_tasks: list[TaskIds] | None
    standby_tasks: list[TaskIds] | None
    warmup_tasks: list[TaskIds] | None
    endpoint_information_epoch: int
    partitions_by_user_endpoint: list[EndpointToPartitions] | None


class DescribedSubtopology(TypedDict):
    subtopology_id: str
    source_topics: list[str]
    repartition_sink_topics: list[str]
    state_changelog_topics: list[TopicInfoWire]
    repartition_source_topics: list[TopicInfoWire]


class DescribedTopology(TypedDict):
    epoch: int
    subtopologies: list[DescribedSubtopology]


class Assignment(TypedDict):
    active_tasks: list[TaskIds]
    standby_tasks: list[TaskIds]
    warmup_tasks: list[TaskIds]


class DescribedMember(TypedDict):
    member_id: str
    member_epoch: int
    instance_id: str | None
    rack_id: str | None
    client_id: str
    client_host: str
    topology_epoch: int
    process_id: str
    user_endpoint: Endpoint | None
    client_tags: list[KeyValue]
    task_offsets: list[TaskOffset]
    task_end_offsets: list[TaskOffset]
    assignment: Assignment
    target_assignment: Assignment
    is_classic: bool


class DescribedStreamsGroup(TypedDict):
    """One group of StreamsGroupDescribe's answer (an unknown group: its error and the
    head only); the handler adds what depends on the request."""

    error_code: int
    error_message: str | None
    group_id: str
    group_state: str
    group_epoch: NotRequired[int]
    assignment_epoch: NotRequired[int]
    topology: DescribedTopology | None
    members: list[DescribedMember]
    topology_description: NotRequired[None]
    topology_description_status: NotRequired[int]
    assignor_name: NotRequired[str | None]


__all__ = [
    "Assignment", "CopartitionGroupWire", "DescribedMember", "DescribedStreamsGroup",
    "DescribedSubtopology", "DescribedTopology", "Endpoint", "EndpointToPartitions",
    "KeyValue", "Status", "StreamsGroupHeartbeatRequest", "StreamsGroupHeartbeatResponse",
    "SubtopologyWire", "TaskIds", "TaskOffset", "TopicInfoWire", "TopicPartitions",
    "TopologyWire",
]
