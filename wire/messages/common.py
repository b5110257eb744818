"""Structures that many messages share, declared once.

Kafka's message JSON spells these shapes out again in every message that has them: a
topic with its partitions, an error code with its message, a partition's leader, the
brokers' endpoints, an ACL binding, a config resource, a group member's assignment.
Here each is a function that builds fresh Fields, with parameters only for what really
differs between the messages (the names Kafka gives the fields and the versions they
live in), and the message modules compose them with their own fields. What a message
declares this way is exactly the layout Kafka's own definition gives it, version by
version (tests/test_kafka_schemas.py compares every field with kafka-clients' JSON).
"""

from __future__ import annotations

from typing import Any

from wire.schema import BOOL, INT8, INT16, INT32, INT64, STRING, UUID, Array, Field, Type

NO_AUTHORIZED_OPERATIONS = -(2**31)  # Kafka's "authorized operations not asked for"


def nstring(name: str, versions: str = "0+") -> Field:
    """A string that is nullable wherever it exists and null when left out."""
    return Field(name, STRING, versions, nullable=versions, default=None)


def error_fields(versions: str = "0+", *, null_message: bool = True) -> list[Field]:
    """ErrorCode and ErrorMessage. ``null_message=False``: a message left out is sent
    as "" rather than null (those messages declare no default for it)."""
    if null_message:
        return [Field("error_code", INT16, versions), nstring("error_message", versions)]
    return [Field("error_code", INT16, versions),
            Field("error_message", STRING, versions, nullable=versions)]


def response_head(*, null_message: bool = True) -> list[Field]:
    """ThrottleTimeMs, ErrorCode and ErrorMessage, the start of most newer responses."""
    return [Field("throttle_time_ms", INT32), *error_fields(null_message=null_message)]


def authorized_operations(name: str = "authorized_operations", versions: str = "0+") -> Field:
    """A bit field of ACL operations, INT32_MIN when the client did not ask for it."""
    return Field(name, INT32, versions, default=NO_AUTHORIZED_OPERATIONS)


def topic_name_or_id(id_from: int, *, name: str = "name", name_from: int = 0) -> list[Field]:
    """A topic named up to version ``id_from - 1`` and identified by id from ``id_from``."""
    return [Field(name, STRING, f"{name_from}-{id_from - 1}"),
            Field("topic_id", UUID, f"{id_from}+")]


def topic_partitions(
    name: str = "topics",
    *,
    topic: str = "name",
    partitions: str = "partitions",
    topic_type: Type = STRING,
    versions: str = "0+",
    **kw: Any,
) -> Field:
    """An array of topics, each with the indexes of some of its partitions."""
    return Field(name, Array, versions, **kw,
                 fields=[Field(topic, topic_type), Field(partitions, Array(INT32))])


def by_topic(
    name: str,
    partition_fields: list[Field],
    *,
    topic: list[Field] | None = None,
    partitions: str = "partitions",
    versions: str = "0+",
    **kw: Any,
) -> Field:
    """An array of topics (by default identified by ``name``), each with an array of
    partitions: the nesting of nearly every partition-level request and response."""
    topic_fields = [Field("name", STRING)] if topic is None else topic
    return Field(name, Array, versions, **kw,
                 fields=[*topic_fields, Field(partitions, Array, fields=partition_fields)])


def partition_error(index: str = "partition_index", code: str = "error_code") -> list[Field]:
    """A partition's index and the error code of what was asked of it."""
    return [Field(index, INT32), Field(code, INT16)]


def current_leader(versions: str = "0+", *, tag: int | None = None,
                   unknown: int | None = None) -> Field:
    """The leader a client should turn to (KIP-951); ``unknown`` is the default of both
    fields where Kafka declares one (-1)."""
    kw: dict[str, Any] = {} if unknown is None else {"default": unknown}
    return Field("current_leader", None, versions, tag=tag, fields=[
        Field("leader_id", INT32, **kw), Field("leader_epoch", INT32, **kw)])


def node_endpoints(versions: str = "0+", *, tag: int | None = None) -> Field:
    """The endpoints of the brokers a response names as new leaders (KIP-951)."""
    return Field("node_endpoints", Array, versions, tag=tag, fields=[
        Field("node_id", INT32), Field("host", STRING), Field("port", INT32),
        Field("rack", STRING, nullable=versions, default=None)])


# ACLs (CreateAcls, DescribeAcls, DeleteAcls).

def acl_filter() -> list[Field]:
    """The ACL binding filter DescribeAcls asks with and DeleteAcls deletes by."""
    return [
        Field("resource_type_filter", INT8),
        Field("resource_name_filter", STRING, nullable="0+"),
        Field("pattern_type_filter", INT8, "1+", default=3),
        Field("principal_filter", STRING, nullable="0+"),
        Field("host_filter", STRING, nullable="0+"),
        Field("operation", INT8),
        Field("permission_type", INT8),
    ]


def acl_entry() -> list[Field]:
    """Who may do what from where: the access-control half of an ACL binding."""
    return [Field("principal", STRING), Field("host", STRING), Field("operation", INT8),
            Field("permission_type", INT8)]


def resource(pattern: str | None = None) -> list[Field]:
    """ResourceType and ResourceName, and the pattern type field named ``pattern`` (v1+,
    LITERAL by default) where the message has one."""
    head = [Field("resource_type", INT8), Field("resource_name", STRING)]
    return head if pattern is None else [*head, Field(pattern, INT8, "1+", default=3)]


# Configs (DescribeConfigs, AlterConfigs, IncrementalAlterConfigs, CreateTopics).

def config_change_request(config_fields: list[Field]) -> list[Field]:
    """The body of AlterConfigs and IncrementalAlterConfigs: resources, each with the
    config entries to change, and ValidateOnly."""
    return [
        Field("resources", Array, fields=[
            *resource(), Field("configs", Array, fields=config_fields)]),
        Field("validate_only", BOOL),
    ]


def config_change_response() -> list[Field]:
    """The answer to AlterConfigs and IncrementalAlterConfigs: one result per resource."""
    return [
        Field("throttle_time_ms", INT32),
        Field("responses", Array, fields=[*error_fields(null_message=False), *resource()]),
    ]


def config_value(versions: str = "0+") -> list[Field]:
    """A config's name and value (null for a deleted or sensitive one)."""
    return [Field("name", STRING, versions), Field("value", STRING, versions, nullable=versions)]


# Groups.

def group_describe_request(*extra: Field) -> list[Field]:
    """The body of ConsumerGroupDescribe, ShareGroupDescribe and StreamsGroupDescribe."""
    return [Field("group_ids", Array(STRING)), Field("include_authorized_operations", BOOL),
            *extra]


def described_group_head() -> list[Field]:
    """The fields every KIP-848-style group description starts with."""
    return [*error_fields(), Field("group_id", STRING), Field("group_state", STRING),
            Field("group_epoch", INT32), Field("assignment_epoch", INT32)]


def group_describe_response(member_fields: list[Field]) -> list[Field]:
    """The answer to ConsumerGroupDescribe and ShareGroupDescribe: the groups, each with
    its members described by ``member_fields``."""
    return [
        Field("throttle_time_ms", INT32),
        Field("groups", Array, fields=[
            *described_group_head(),
            Field("assignor_name", STRING),
            Field("members", Array, fields=member_fields),
            authorized_operations(),
        ]),
    ]


def member_assignment(name: str) -> Field:
    """A described member's (current or target) assignment, with topic names and ids."""
    return Field(name, None, fields=[Field("topic_partitions", Array, fields=[
        Field("topic_id", UUID), Field("topic_name", STRING), Field("partitions", Array(INT32)),
    ])])


def heartbeat_response() -> list[Field]:
    """The answer to ConsumerGroupHeartbeat and ShareGroupHeartbeat: the member's id
    and epoch, and its assignment (null when unchanged)."""
    return [
        *response_head(),
        nstring("member_id"),
        Field("member_epoch", INT32),
        Field("heartbeat_interval_ms", INT32),
        Field("assignment", None, nullable="0+", default=None, fields=[
            topic_partitions("topic_partitions", topic="topic_id", topic_type=UUID)]),
    ]


# Offsets (OffsetCommit, TxnOffsetCommit).

def committed_offsets(id_from: int, leader_epoch_from: int) -> Field:
    """The topics of an offset commit: names until ``id_from``, topic ids from it."""
    return by_topic("topics", [
        Field("partition_index", INT32),
        Field("committed_offset", INT64),
        Field("committed_leader_epoch", INT32, f"{leader_epoch_from}+", default=-1),
        Field("committed_metadata", STRING, nullable="0+"),
    ], topic=topic_name_or_id(id_from))


def commit_results(id_from: int) -> Field:
    """An offset commit's result, an error code per partition."""
    return by_topic("topics", partition_error(), topic=topic_name_or_id(id_from))
