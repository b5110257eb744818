"""DescribeProducers (key 61)."""

from wire.messages.common import by_topic, error_fields, topic_partitions
from wire.schema import INT32, INT64, Array, Field, message

DESCRIBE_PRODUCERS_REQUEST = message("DescribeProducersRequest", 61, "0", "0+", [
    topic_partitions(partitions="partition_indexes")])

DESCRIBE_PRODUCERS_RESPONSE = message("DescribeProducersResponse", 61, "0", "0+", [
    Field("throttle_time_ms", INT32),
    by_topic("topics", [
        Field("partition_index", INT32),
        *error_fields(),
        Field("active_producers", Array, fields=[
            Field("producer_id", INT64),
            Field("producer_epoch", INT32),
            Field("last_sequence", INT32, default=-1),
            Field("last_timestamp", INT64, default=-1),
            Field("coordinator_epoch", INT32),
            Field("current_txn_start_offset", INT64, default=-1),
        ]),
    ]),
])
