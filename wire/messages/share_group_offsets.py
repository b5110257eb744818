"""DescribeShareGroupOffsets (90, v0-1), AlterShareGroupOffsets (91, v0) and
DeleteShareGroupOffsets (92, v0): the admin view of share-partition start offsets.

DescribeShareGroupOffsets v1 adds Lag (KIP-1226).
"""

from wire.schema import INT16, INT32, INT64, STRING, UUID, Array, Field, message

DESCRIBE_SHARE_GROUP_OFFSETS_REQUEST = message(
    "DescribeShareGroupOffsetsRequest",
    90,
    "0-1",
    "0+",
    [
        Field(
            "groups",
            Array,
            fields=[
                Field("group_id", STRING),
                Field(
                    "topics",
                    Array,
                    nullable="0+",
                    fields=[Field("topic_name", STRING), Field("partitions", Array(INT32))],
                ),
            ],
        ),
    ],
)

DESCRIBE_SHARE_GROUP_OFFSETS_RESPONSE = message(
    "DescribeShareGroupOffsetsResponse",
    90,
    "0-1",
    "0+",
    [
        Field("throttle_time_ms", INT32),
        Field(
            "groups",
            Array,
            fields=[
                Field("group_id", STRING),
                Field(
                    "topics",
                    Array,
                    fields=[
                        Field("topic_name", STRING),
                        Field("topic_id", UUID),
                        Field(
                            "partitions",
                            Array,
                            fields=[
                                Field("partition_index", INT32),
                                Field("start_offset", INT64),
                                Field("leader_epoch", INT32),
                                Field("lag", INT64, "1+", default=-1),
                                Field("error_code", INT16),
                                Field("error_message", STRING, nullable="0+", default=None),
                            ],
                        ),
                    ],
                ),
                Field("error_code", INT16),
                Field("error_message", STRING, nullable="0+", default=None),
            ],
        ),
    ],
)

ALTER_SHARE_GROUP_OFFSETS_REQUEST = message(
    "AlterShareGroupOffsetsRequest",
    91,
    "0",
    "0+",
    [
        Field("group_id", STRING),
        Field(
            "topics",
            Array,
            fields=[
                Field("topic_name", STRING),
                Field(
                    "partitions",
                    Array,
                    fields=[Field("partition_index", INT32), Field("start_offset", INT64)],
                ),
            ],
        ),
    ],
)

ALTER_SHARE_GROUP_OFFSETS_RESPONSE = message(
    "AlterShareGroupOffsetsResponse",
    91,
    "0",
    "0+",
    [
        Field("throttle_time_ms", INT32),
        Field("error_code", INT16),
        Field("error_message", STRING, nullable="0+", default=None),
        Field(
            "responses",
            Array,
            fields=[
                Field("topic_name", STRING),
                Field("topic_id", UUID),
                Field(
                    "partitions",
                    Array,
                    fields=[
                        Field("partition_index", INT32),
                        Field("error_code", INT16),
                        Field("error_message", STRING, nullable="0+", default=None),
                    ],
                ),
            ],
        ),
    ],
)

DELETE_SHARE_GROUP_OFFSETS_REQUEST = message(
    "DeleteShareGroupOffsetsRequest",
    92,
    "0",
    "0+",
    [
        Field("group_id", STRING),
        Field("topics", Array, fields=[Field("topic_name", STRING)]),
    ],
)

DELETE_SHARE_GROUP_OFFSETS_RESPONSE = message(
    "DeleteShareGroupOffsetsResponse",
    92,
    "0",
    "0+",
    [
        Field("throttle_time_ms", INT32),
        Field("error_code", INT16),
        Field("error_message", STRING, nullable="0+", default=None),
        Field(
            "responses",
            Array,
            fields=[
                Field("topic_name", STRING),
                Field("topic_id", UUID),
                Field("error_code", INT16),
                Field("error_message", STRING, nullable="0+", default=None),
            ],
        ),
    ],
)
