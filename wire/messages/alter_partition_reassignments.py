"""AlterPartitionReassignments (key 45)."""

from wire.messages.common import by_topic, error_fields
from wire.schema import BOOL, INT32, Array, Field, message

ALTER_PARTITION_REASSIGNMENTS_REQUEST = message(
    "AlterPartitionReassignmentsRequest", 45, "0-1", "0+", [
        Field("timeout_ms", INT32, default=60000),
        Field("allow_replication_factor_change", BOOL, "1+", default=True),
        by_topic("topics", [
            Field("partition_index", INT32),
            Field("replicas", Array(INT32), nullable="0+", default=None),  # null: cancel
        ]),
    ])

ALTER_PARTITION_REASSIGNMENTS_RESPONSE = message(
    "AlterPartitionReassignmentsResponse", 45, "0-1", "0+", [
        Field("throttle_time_ms", INT32),
        Field("allow_replication_factor_change", BOOL, "1+", default=True),
        *error_fields(null_message=False),
        by_topic("responses",
                 [Field("partition_index", INT32), *error_fields(null_message=False)]),
    ])
