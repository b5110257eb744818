"""CreateTopics (key 19)."""

from wire.messages.common import config_value
from wire.schema import BOOL, INT8, INT16, INT32, STRING, UUID, Array, Field, message

CREATE_TOPICS_REQUEST = message("CreateTopicsRequest", 19, "2-7", "5+", [
    Field("topics", Array, fields=[
        Field("name", STRING),
        Field("num_partitions", INT32),
        Field("replication_factor", INT16),
        Field("assignments", Array, fields=[
            Field("partition_index", INT32), Field("broker_ids", Array(INT32))]),
        Field("configs", Array, fields=config_value()),
    ]),
    Field("timeout_ms", INT32, default=60000),
    Field("validate_only", BOOL, "1+", default=False),
])

CREATE_TOPICS_RESPONSE = message("CreateTopicsResponse", 19, "2-7", "5+", [
    Field("throttle_time_ms", INT32, "2+"),
    Field("topics", Array, fields=[
        Field("name", STRING),
        Field("topic_id", UUID, "7+"),
        Field("error_code", INT16),
        Field("error_message", STRING, "1+", nullable="0+"),
        Field("topic_config_error_code", INT16, "5+", tag=0),
        Field("num_partitions", INT32, "5+", default=-1),
        Field("replication_factor", INT16, "5+", default=-1),
        Field("configs", Array, "5+", nullable="5+", fields=[
            *config_value("5+"),
            Field("read_only", BOOL, "5+"),
            Field("config_source", INT8, "5+", default=-1),
            Field("is_sensitive", BOOL, "5+"),
        ]),
    ]),
])
