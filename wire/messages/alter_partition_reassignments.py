"""AlterPartitionReassignments (key 45)."""

from wire.schema import BOOL, INT16, INT32, STRING, Array, Field, message

ALTER_PARTITION_REASSIGNMENTS_REQUEST = message(
    "AlterPartitionReassignmentsRequest",
    45,
    "0-1",
    "0+",
    [
        Field("timeout_ms", INT32, default=60000),
        Field("allow_replication_factor_change", BOOL, "1+", default=True),
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
                        Field("replicas", Array(INT32), nullable="0+", default=None),
                    ],
                ),
            ],
        ),
    ],
)

ALTER_PARTITION_REASSIGNMENTS_RESPONSE = message(
    "AlterPartitionReassignmentsResponse",
    45,
    "0-1",
    "0+",
    [
        Field("throttle_time_ms", INT32),
        Field("allow_replication_factor_change", BOOL, "1+", default=True),
        Field("error_code", INT16),
        Field("error_message", STRING, nullable="0+"),
        Field(
            "responses",
            Array,
            fields=[
                Field("name", STRING),
                Field(
                    "partitions",
                    Array,
                    fields=[
                        Field("partition_index", INT32),
                        Field("error_code", INT16),
                        Field("error_message", STRING, nullable="0+"),
                    ],
                ),
            ],
        ),
    ],
)
