"""OffsetFetch (key 9)."""

from wire.schema import BOOL, INT16, INT32, INT64, STRING, UUID, Array, Field, message

OFFSET_FETCH_REQUEST = message(
    "OffsetFetchRequest",
    9,
    "1-10",
    "6+",
    [
        Field("group_id", STRING, "0-7"),
        Field(
            "topics",
            Array,
            "0-7",
            nullable="2-7",
            default=[],
            fields=[
                Field("name", STRING, "0-7"),
                Field("partition_indexes", Array(INT32), "0-7"),
            ],
        ),
        Field(
            "groups",
            Array,
            "8+",
            fields=[
                Field("group_id", STRING, "8+"),
                Field("member_id", STRING, "9+", nullable="9+", default=None),
                Field("member_epoch", INT32, "9+", default=-1),
                Field(
                    "topics",
                    Array,
                    "8+",
                    nullable="8+",
                    default=[],
                    fields=[
                        Field("name", STRING, "8-9"),
                        Field("topic_id", UUID, "10+"),
                        Field("partition_indexes", Array(INT32), "8+"),
                    ],
                ),
            ],
        ),
        Field("require_stable", BOOL, "7+", default=False),
    ],
)

OFFSET_FETCH_RESPONSE = message(
    "OffsetFetchResponse",
    9,
    "1-10",
    "6+",
    [
        Field("throttle_time_ms", INT32, "3+"),
        Field(
            "topics",
            Array,
            "0-7",
            fields=[
                Field("name", STRING, "0-7"),
                Field(
                    "partitions",
                    Array,
                    "0-7",
                    fields=[
                        Field("partition_index", INT32, "0-7"),
                        Field("committed_offset", INT64, "0-7"),
                        Field("committed_leader_epoch", INT32, "5-7", default=-1),
                        Field("metadata", STRING, "0-7", nullable="0-7"),
                        Field("error_code", INT16, "0-7"),
                    ],
                ),
            ],
        ),
        Field("error_code", INT16, "2-7"),
        Field(
            "groups",
            Array,
            "8+",
            fields=[
                Field("group_id", STRING, "8+"),
                Field(
                    "topics",
                    Array,
                    "8+",
                    fields=[
                        Field("name", STRING, "8-9"),
                        Field("topic_id", UUID, "10+"),
                        Field(
                            "partitions",
                            Array,
                            "8+",
                            fields=[
                                Field("partition_index", INT32, "8+"),
                                Field("committed_offset", INT64, "8+"),
                                Field("committed_leader_epoch", INT32, "8+", default=-1),
                                Field("metadata", STRING, "8+", nullable="8+"),
                                Field("error_code", INT16, "8+"),
                            ],
                        ),
                    ],
                ),
                Field("error_code", INT16, "8+"),
            ],
        ),
    ],
)
