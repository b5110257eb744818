"""OffsetDelete (key 47)."""

from wire.schema import INT16, INT32, STRING, Array, Field, message

OFFSET_DELETE_REQUEST = message(
    "OffsetDeleteRequest",
    47,
    "0",
    "none",
    [
        Field("group_id", STRING),
        Field(
            "topics",
            Array,
            fields=[
                Field("name", STRING),
                Field(
                    "partitions",
                    Array,
                    fields=[
                        Field("partition_index", INT32),
                    ],
                ),
            ],
        ),
    ],
)

OFFSET_DELETE_RESPONSE = message(
    "OffsetDeleteResponse",
    47,
    "0",
    "none",
    [
        Field("error_code", INT16),
        Field("throttle_time_ms", INT32),
        Field(
            "topics",
            Array,
            fields=[
                Field("name", STRING),
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
