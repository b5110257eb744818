"""DescribeTopicPartitions (key 75)."""

from wire.messages.common import authorized_operations
from wire.schema import BOOL, INT16, INT32, STRING, UUID, Array, Field, message


def _cursor(name: str) -> Field:
    """Where a paged answer goes on: a topic and the first partition not yet answered."""
    return Field(name, None, nullable="0+", default=None, fields=[
        Field("topic_name", STRING), Field("partition_index", INT32)])


DESCRIBE_TOPIC_PARTITIONS_REQUEST = message("DescribeTopicPartitionsRequest", 75, "0", "0+", [
    Field("topics", Array, fields=[Field("name", STRING)]),
    Field("response_partition_limit", INT32, default=2000),
    _cursor("cursor"),
])

DESCRIBE_TOPIC_PARTITIONS_RESPONSE = message("DescribeTopicPartitionsResponse", 75, "0", "0+", [
    Field("throttle_time_ms", INT32),
    Field("topics", Array, fields=[
        Field("error_code", INT16),
        Field("name", STRING, nullable="0+"),
        Field("topic_id", UUID),
        Field("is_internal", BOOL, default=False),
        Field("partitions", Array, fields=[
            Field("error_code", INT16),
            Field("partition_index", INT32),
            Field("leader_id", INT32),
            Field("leader_epoch", INT32, default=-1),
            Field("replica_nodes", Array(INT32)),
            Field("isr_nodes", Array(INT32)),
            Field("eligible_leader_replicas", Array(INT32), nullable="0+", default=None),
            Field("last_known_elr", Array(INT32), nullable="0+", default=None),
            Field("offline_replicas", Array(INT32)),
        ]),
        authorized_operations("topic_authorized_operations"),
    ]),
    _cursor("next_cursor"),
])
