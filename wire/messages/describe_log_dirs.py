"""DescribeLogDirs (key 35)."""

from wire.messages.common import by_topic, topic_partitions
from wire.schema import BOOL, INT16, INT32, INT64, STRING, Array, Field, message

DESCRIBE_LOG_DIRS_REQUEST = message("DescribeLogDirsRequest", 35, "1-5", "2+", [
    topic_partitions(topic="topic", nullable="0+"),  # null: every topic
])

DESCRIBE_LOG_DIRS_RESPONSE = message("DescribeLogDirsResponse", 35, "1-5", "2+", [
    Field("throttle_time_ms", INT32),
    Field("error_code", INT16, "3+"),
    Field("results", Array, fields=[
        Field("error_code", INT16),
        Field("log_dir", STRING),
        by_topic("topics", [
            Field("partition_index", INT32),
            Field("partition_size", INT64),
            Field("offset_lag", INT64),
            Field("is_future_key", BOOL),
        ]),
        Field("total_bytes", INT64, "4+", default=-1),
        Field("usable_bytes", INT64, "4+", default=-1),
        Field("is_cordoned", BOOL, "5+"),
    ]),
])
