"""TxnOffsetCommit (key 28)."""

from wire.schema import INT16, INT32, INT64, STRING, UUID, Array, Field, message

TXN_OFFSET_COMMIT_REQUEST = message(
    "TxnOffsetCommitRequest",
    28,
    "0-6",
    "3+",
    [
        Field("transactional_id", STRING),
        Field("group_id", STRING),
        Field("producer_id", INT64),
        Field("producer_epoch", INT16),
        Field("generation_id_or_member_epoch", INT32, "3+", default=-1),
        Field("member_id", STRING, "3+"),
        Field("group_instance_id", STRING, "3+", nullable="3+", default=None),
        Field(
            "topics",
            Array,
            fields=[
                Field("name", STRING, "0-5"),
                Field("topic_id", UUID, "6+"),
                Field(
                    "partitions",
                    Array,
                    fields=[
                        Field("partition_index", INT32),
                        Field("committed_offset", INT64),
                        Field("committed_leader_epoch", INT32, "2+", default=-1),
                        Field("committed_metadata", STRING, nullable="0+"),
                    ],
                ),
            ],
        ),
    ],
)

TXN_OFFSET_COMMIT_RESPONSE = message(
    "TxnOffsetCommitResponse",
    28,
    "0-6",
    "3+",
    [
        Field("throttle_time_ms", INT32),
        Field(
            "topics",
            Array,
            fields=[
                Field("name", STRING, "0-5"),
                Field("topic_id", UUID, "6+"),
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
