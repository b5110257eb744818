"""ListPartitionReassignments (key 46)."""

from wire.messages.common import by_topic, response_head, topic_partitions
from wire.schema import INT32, Array, Field, message

LIST_PARTITION_REASSIGNMENTS_REQUEST = message(
    "ListPartitionReassignmentsRequest", 46, "0", "0+", [
        Field("timeout_ms", INT32, default=60000),
        topic_partitions(partitions="partition_indexes", nullable="0+", default=None),  # null: all
    ])

LIST_PARTITION_REASSIGNMENTS_RESPONSE = message(
    "ListPartitionReassignmentsResponse", 46, "0", "0+", [
        *response_head(null_message=False),
        by_topic("topics", [
            Field("partition_index", INT32),
            Field("replicas", Array(INT32)),
            Field("adding_replicas", Array(INT32)),
            Field("removing_replicas", Array(INT32)),
        ]),
    ])
