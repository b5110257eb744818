"""OffsetCommit (key 8)."""

from wire.schema import INT16, INT32, INT64, STRING, UUID, Array, Field, message

OFFSET_COMMIT_REQUEST = message(
    "OffsetCommitRequest",
    8,
    "2-10",
    "8+",
    [
        Field("group_id", STRING),
        Field("generation_id_or_member_epoch", INT32, "1+", default=-1),
        Field("member_id", STRING, "1+"),
        Field("group_instance_id", STRING, "7+", nullable="7+", default=None),
        Field("retention_time_ms", INT64, "2-4", default=-1),
        Field(
            "topics",
            Array,
            fields=[
                Field("name", STRING, "0-9"),
                Field("topic_id", UUID, "10+"),
                Field(
                    "partitions",
                    Array,
                    fields=[
                        Field("partition_index", INT32),
                        Field("committed_offset", INT64),
                        Field("committed_leader_epoch", INT32, "6+", default=-1),
                        Field("committed_metadata", STRING, nullable="0+"),
                    ],
                ),
            ],
        ),
    ],
)

OFFSET_COMMIT_RESPONSE = message(
    "OffsetCommitResponse",
    8,
    "2-10",
    "8+",
    [
        Field("throttle_time_ms", INT32, "3+"),
        Field(
            "topics",
            Array,
            fields=[
                Field("name", STRING, "0-9"),
                Field("topic_id", UUID, "10+"),
                Field(
                    "partitions",
                    Array,
                    fields=[
                        Field("partition_index", INT32),
                        Field("error_code", INT16),
                    ],
                ),
            ],
        ),
    ],
)
