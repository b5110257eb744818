"""AddPartitionsToTxn (key 24)."""

from wire.schema import BOOL, INT16, INT32, INT64, STRING, Array, Field, message

ADD_PARTITIONS_TO_TXN_REQUEST = message(
    "AddPartitionsToTxnRequest",
    24,
    "0-5",
    "3+",
    [
        Field(
            "transactions",
            Array,
            "4+",
            fields=[
                Field("transactional_id", STRING, "4+"),
                Field("producer_id", INT64, "4+"),
                Field("producer_epoch", INT16, "4+"),
                Field("verify_only", BOOL, "4+", default=False),
                Field(
                    "topics",
                    Array,
                    "4+",
                    fields=[
                        Field("name", STRING),
                        Field("partitions", Array(INT32)),
                    ],
                ),
            ],
        ),
        Field("v3_and_below_transactional_id", STRING, "0-3"),
        Field("v3_and_below_producer_id", INT64, "0-3"),
        Field("v3_and_below_producer_epoch", INT16, "0-3"),
        Field(
            "v3_and_below_topics",
            Array,
            "0-3",
            fields=[
                Field("name", STRING),
                Field("partitions", Array(INT32)),
            ],
        ),
    ],
)

ADD_PARTITIONS_TO_TXN_RESPONSE = message(
    "AddPartitionsToTxnResponse",
    24,
    "0-5",
    "3+",
    [
        Field("throttle_time_ms", INT32),
        Field("error_code", INT16, "4+"),
        Field(
            "results_by_transaction",
            Array,
            "4+",
            fields=[
                Field("transactional_id", STRING, "4+"),
                Field(
                    "topic_results",
                    Array,
                    "4+",
                    fields=[
                        Field("name", STRING),
                        Field(
                            "results_by_partition",
                            Array,
                            fields=[
                                Field("partition_index", INT32),
                                Field("partition_error_code", INT16),
                            ],
                        ),
                    ],
                ),
            ],
        ),
        Field(
            "results_by_topic_v3_and_below",
            Array,
            "0-3",
            fields=[
                Field("name", STRING),
                Field(
                    "results_by_partition",
                    Array,
                    fields=[
                        Field("partition_index", INT32),
                        Field("partition_error_code", INT16),
                    ],
                ),
            ],
        ),
    ],
)
