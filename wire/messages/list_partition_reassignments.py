"""ListPartitionReassignments (key 46)."""

from wire.schema import INT16, INT32, STRING, Array, Field, message

LIST_PARTITION_REASSIGNMENTS_REQUEST = message(
    "ListPartitionReassignmentsRequest",
    46,
    "0",
    "0+",
    [
        Field("timeout_ms", INT32, default=60000),
        Field(
            "topics",
            Array,
            nullable="0+",
            default=None,
            fields=[
                Field("name", STRING),
                Field("partition_indexes", Array(INT32)),
            ],
        ),
    ],
)

LIST_PARTITION_REASSIGNMENTS_RESPONSE = message(
    "ListPartitionReassignmentsResponse",
    46,
    "0",
    "0+",
    [
        Field("throttle_time_ms", INT32),
        Field("error_code", INT16),
        Field("error_message", STRING, nullable="0+"),
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
                        Field("replicas", Array(INT32)),
                        Field("adding_replicas", Array(INT32)),
                        Field("removing_replicas", Array(INT32)),
                    ],
                ),
            ],
        ),
    ],
)
