"""ElectLeaders (key 43)."""

from wire.schema import INT8, INT16, INT32, STRING, Array, Field, message

ELECT_LEADERS_REQUEST = message(
    "ElectLeadersRequest",
    43,
    "0-2",
    "2+",
    [
        Field("election_type", INT8, "1+"),
        Field(
            "topic_partitions",
            Array,
            nullable="0+",
            fields=[
                Field("topic", STRING),
                Field("partitions", Array(INT32)),
            ],
        ),
        Field("timeout_ms", INT32, default=60000),
    ],
)

ELECT_LEADERS_RESPONSE = message(
    "ElectLeadersResponse",
    43,
    "0-2",
    "2+",
    [
        Field("throttle_time_ms", INT32),
        Field("error_code", INT16, "1+"),
        Field(
            "replica_election_results",
            Array,
            fields=[
                Field("topic", STRING),
                Field(
                    "partition_result",
                    Array,
                    fields=[
                        Field("partition_id", INT32),
                        Field("error_code", INT16),
                        Field("error_message", STRING, nullable="0+"),
                    ],
                ),
            ],
        ),
    ],
)
