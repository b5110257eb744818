"""Streams groups (KIP-1071): StreamsGroupHeartbeat (88), StreamsGroupDescribe (89) and
StreamsGroupTopologyDescriptionUpdate (93, KIP-1331).

Field layouts as Kafka 4.4's message definitions give them (tests/test_kafka_schemas.py
holds them to kafka-clients' JSON field by field).
"""

from typing import Any

from wire.messages.common import (
    authorized_operations,
    described_group_head,
    group_describe_request,
    nstring,
    response_head,
    topic_partitions,
)
from wire.schema import BOOL, INT8, INT16, INT32, INT64, STRING, UINT16, Array, Field, message


def _key_value() -> list[Field]:
    return [Field("key", STRING), Field("value", STRING)]


def _topic_info() -> list[Field]:
    return [
        Field("name", STRING),
        Field("partitions", INT32),
        Field("replication_factor", INT16),
        Field("topic_configs", Array, fields=_key_value()),
    ]


def _endpoint() -> list[Field]:
    return [Field("host", STRING), Field("port", UINT16)]


def _task_offset() -> list[Field]:
    return [Field("subtopology_id", STRING), Field("partition", INT32), Field("offset", INT64)]


def _tasks(name: str, **kw: Any) -> Field:
    """Tasks by subtopology: the partitions of each that are the member's tasks."""
    return topic_partitions(name, topic="subtopology_id", **kw)


def _nullable_tasks(name: str) -> Field:
    return _tasks(name, nullable="0+", default=None)


STREAMS_GROUP_HEARTBEAT_REQUEST = message("StreamsGroupHeartbeatRequest", 88, "0-1", "0+", [
    Field("group_id", STRING),
    Field("member_id", STRING),
    Field("member_epoch", INT32),
    Field("endpoint_information_epoch", INT32),
    nstring("instance_id"),
    nstring("rack_id"),
    Field("rebalance_timeout_ms", INT32, default=-1),
    Field("topology", None, nullable="0+", default=None, fields=[
        Field("epoch", INT32),
        Field("subtopologies", Array, fields=[
            Field("subtopology_id", STRING),
            Field("source_topics", Array(STRING)),
            Field("source_topic_regex", Array(STRING)),
            Field("state_changelog_topics", Array, fields=_topic_info()),
            Field("repartition_sink_topics", Array(STRING)),
            Field("repartition_source_topics", Array, fields=_topic_info()),
            Field("copartition_groups", Array, fields=[
                Field("source_topics", Array(INT16)),
                Field("source_topic_regex", Array(INT16)),
                Field("repartition_source_topics", Array(INT16)),
            ]),
        ]),
    ]),
    _nullable_tasks("active_tasks"),
    _nullable_tasks("standby_tasks"),
    _nullable_tasks("warmup_tasks"),
    nstring("process_id"),
    Field("user_endpoint", None, nullable="0+", default=None, fields=_endpoint()),
    Field("client_tags", Array, nullable="0+", default=None, fields=_key_value()),
    Field("task_offsets", Array, nullable="0+", default=None, fields=_task_offset()),
    Field("task_end_offsets", Array, nullable="0+", default=None, fields=_task_offset()),
    Field("shutdown_application", BOOL, default=False),
])

STREAMS_GROUP_HEARTBEAT_RESPONSE = message("StreamsGroupHeartbeatResponse", 88, "0-1", "0+", [
    *response_head(),
    Field("member_id", STRING),
    Field("member_epoch", INT32),
    Field("heartbeat_interval_ms", INT32),
    Field("acceptable_recovery_lag_legacy", INT32, "0"),
    Field("task_offset_interval_ms", INT32),
    Field("acceptable_recovery_lag", INT64, "1+", default=-1),
    Field("status", Array, nullable="0+",
          fields=[Field("status_code", INT8), Field("status_detail", STRING)]),
    _nullable_tasks("active_tasks"),
    _nullable_tasks("standby_tasks"),
    _nullable_tasks("warmup_tasks"),
    Field("topology_description_required", BOOL, "1+", default=False),
    Field("endpoint_information_epoch", INT32),
    Field("partitions_by_user_endpoint", Array, nullable="0+", default=None, fields=[
        Field("user_endpoint", None, fields=_endpoint()),
        topic_partitions("active_partitions", topic="topic"),
        topic_partitions("standby_partitions", topic="topic"),
    ]),
])

STREAMS_GROUP_DESCRIBE_REQUEST = message(
    "StreamsGroupDescribeRequest", 89, "0-1", "0+",
    group_describe_request(Field("include_topology_description", BOOL, "1+", default=False)))


def _description_node(versions: str) -> list[Field]:
    return [
        Field("name", STRING, versions),
        Field("node_type", INT8, versions),
        Field("source_topics", Array(STRING), versions),
        nstring("sink_topic", versions),
        Field("stores", Array(STRING), versions),
        Field("successors", Array(STRING), versions),
    ]


def _topology_description(versions: str) -> list[Field]:
    return [
        Field("subtopologies", Array, versions, fields=[
            Field("subtopology_id", STRING, versions),
            Field("nodes", Array, versions, fields=_description_node(versions)),
        ]),
        Field("global_stores", Array, versions, fields=[
            Field("source", None, versions, fields=_description_node(versions)),
            Field("processor", None, versions, fields=_description_node(versions)),
        ]),
    ]


def _assignment() -> list[Field]:
    return [
        _tasks("active_tasks"),
        _tasks("standby_tasks"),
        _tasks("warmup_tasks"),
    ]


STREAMS_GROUP_DESCRIBE_RESPONSE = message("StreamsGroupDescribeResponse", 89, "0-1", "0+", [
    Field("throttle_time_ms", INT32),
    Field("groups", Array, fields=[
        *described_group_head(),
        Field("topology", None, nullable="0+", default=None, fields=[
            Field("epoch", INT32),
            Field("subtopologies", Array, nullable="0+", default=None, fields=[
                Field("subtopology_id", STRING),
                Field("source_topics", Array(STRING)),
                Field("repartition_sink_topics", Array(STRING)),
                Field("state_changelog_topics", Array, fields=_topic_info()),
                Field("repartition_source_topics", Array, fields=_topic_info()),
            ]),
        ]),
        Field("members", Array, fields=[
            Field("member_id", STRING),
            Field("member_epoch", INT32),
            nstring("instance_id"),
            nstring("rack_id"),
            Field("client_id", STRING),
            Field("client_host", STRING),
            Field("topology_epoch", INT32),
            Field("process_id", STRING),
            Field("user_endpoint", None, nullable="0+", default=None, fields=_endpoint()),
            Field("client_tags", Array, fields=_key_value()),
            Field("task_offsets", Array, fields=_task_offset()),
            Field("task_end_offsets", Array, fields=_task_offset()),
            Field("assignment", None, fields=_assignment()),
            Field("target_assignment", None, fields=_assignment()),
            Field("is_classic", BOOL),
        ]),
        authorized_operations(),
        Field("topology_description", None, "1+", nullable="1+", default=None,
              fields=_topology_description("1+")),
        Field("topology_description_status", INT8, "1+", default=0),
        nstring("assignor_name", "1+"),
    ]),
])

STREAMS_GROUP_TOPOLOGY_DESCRIPTION_UPDATE_REQUEST = message(
    "StreamsGroupTopologyDescriptionUpdateRequest", 93, "0", "0+", [
        Field("group_id", STRING),
        Field("member_id", STRING),
        Field("topology_epoch", INT32),
        Field("topology_description", None, fields=_topology_description("0+")),
    ])

STREAMS_GROUP_TOPOLOGY_DESCRIPTION_UPDATE_RESPONSE = message(
    "StreamsGroupTopologyDescriptionUpdateResponse", 93, "0", "0+", response_head())
