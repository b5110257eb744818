"""DescribeShareGroupOffsets (90, v0-1), AlterShareGroupOffsets (91, v0) and
DeleteShareGroupOffsets (92, v0): the admin view of share-partition start offsets.

DescribeShareGroupOffsets v1 adds Lag (KIP-1226).
"""

from wire.messages.common import by_topic, error_fields, response_head, topic_partitions
from wire.schema import INT32, INT64, STRING, UUID, Array, Field, message


def _topic() -> list[Field]:
    """A topic in these answers: its name and its id."""
    return [Field("topic_name", STRING), Field("topic_id", UUID)]


DESCRIBE_SHARE_GROUP_OFFSETS_REQUEST = message(
    "DescribeShareGroupOffsetsRequest", 90, "0-1", "0+", [
        Field("groups", Array, fields=[
            Field("group_id", STRING),
            topic_partitions(topic="topic_name", nullable="0+"),
        ]),
    ])

DESCRIBE_SHARE_GROUP_OFFSETS_RESPONSE = message(
    "DescribeShareGroupOffsetsResponse", 90, "0-1", "0+", [
        Field("throttle_time_ms", INT32),
        Field("groups", Array, fields=[
            Field("group_id", STRING),
            by_topic("topics", [
                Field("partition_index", INT32),
                Field("start_offset", INT64),
                Field("leader_epoch", INT32),
                Field("lag", INT64, "1+", default=-1),
                *error_fields(),
            ], topic=_topic()),
            *error_fields(),
        ]),
    ])

ALTER_SHARE_GROUP_OFFSETS_REQUEST = message("AlterShareGroupOffsetsRequest", 91, "0", "0+", [
    Field("group_id", STRING),
    by_topic("topics", [Field("partition_index", INT32), Field("start_offset", INT64)],
             topic=[Field("topic_name", STRING)]),
])

ALTER_SHARE_GROUP_OFFSETS_RESPONSE = message("AlterShareGroupOffsetsResponse", 91, "0", "0+", [
    *response_head(),
    by_topic("responses", [Field("partition_index", INT32), *error_fields()], topic=_topic()),
])

DELETE_SHARE_GROUP_OFFSETS_REQUEST = message("DeleteShareGroupOffsetsRequest", 92, "0", "0+", [
    Field("group_id", STRING),
    Field("topics", Array, fields=[Field("topic_name", STRING)]),
])

DELETE_SHARE_GROUP_OFFSETS_RESPONSE = message(
    "DeleteShareGroupOffsetsResponse", 92, "0", "0+", [
        *response_head(),
        Field("responses", Array, fields=[*_topic(), *error_fields()]),
    ])
