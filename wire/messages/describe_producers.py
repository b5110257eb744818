"""DescribeProducers (key 61)."""

from wire.schema import INT16, INT32, INT64, STRING, Array, Field, message

DESCRIBE_PRODUCERS_REQUEST = message(
    "DescribeProducersRequest",
    61,
    "0",
    "0+",
    [
        Field(
            "topics",
            Array,
            fields=[
                Field("name", STRING),
                Field("partition_indexes", Array(INT32)),
            ],
        ),
    ],
)

DESCRIBE_PRODUCERS_RESPONSE = message(
    "DescribeProducersResponse",
    61,
    "0",
    "0+",
    [
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
                        Field("error_message", STRING, nullable="0+", default=None),
                        Field(
                            "active_producers",
                            Array,
                            fields=[
                                Field("producer_id", INT64),
                                Field("producer_epoch", INT32),
                                Field("last_sequence", INT32, default=-1),
                                Field("last_timestamp", INT64, default=-1),
                                Field("coordinator_epoch", INT32),
                                Field("current_txn_start_offset", INT64, default=-1),
                            ],
                        ),
                    ],
                ),
            ],
        ),
    ],
)
