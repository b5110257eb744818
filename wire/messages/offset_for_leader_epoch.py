"""OffsetForLeaderEpoch (key 23)."""

from wire.schema import INT16, INT32, INT64, STRING, Array, Field, message

OFFSET_FOR_LEADER_EPOCH_REQUEST = message(
    "OffsetForLeaderEpochRequest",
    23,
    "2-4",
    "4+",
    [
        Field("replica_id", INT32, "3+", default=-2),
        Field(
            "topics",
            Array,
            fields=[
                Field("topic", STRING),
                Field(
                    "partitions",
                    Array,
                    fields=[
                        Field("partition", INT32),
                        Field("current_leader_epoch", INT32, "2+", default=-1),
                        Field("leader_epoch", INT32),
                    ],
                ),
            ],
        ),
    ],
)

OFFSET_FOR_LEADER_EPOCH_RESPONSE = message(
    "OffsetForLeaderEpochResponse",
    23,
    "2-4",
    "4+",
    [
        Field("throttle_time_ms", INT32, "2+"),
        Field(
            "topics",
            Array,
            fields=[
                Field("topic", STRING),
                Field(
                    "partitions",
                    Array,
                    fields=[
                        Field("error_code", INT16),
                        Field("partition", INT32),
                        Field("leader_epoch", INT32, "1+", default=-1),
                        Field("end_offset", INT64, default=-1),
                    ],
                ),
            ],
        ),
    ],
)
