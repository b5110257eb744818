"""Produce (key 0). Declared from v0 because we advertise v0 (as Kafka 4.0 does)."""

from wire.schema import INT16, INT32, INT64, RECORDS, STRING, UUID, Array, Field, message

PRODUCE_REQUEST = message("ProduceRequest", 0, "0-13", "9+", [
    Field("transactional_id", STRING, "3+", nullable="3+", default=None),
    Field("acks", INT16),
    Field("timeout_ms", INT32),
    Field("topic_data", Array, fields=[
        Field("name", STRING, "0-12"),
        Field("topic_id", UUID, "13+"),
        Field("partition_data", Array, fields=[
            Field("index", INT32),
            Field("records", RECORDS, nullable="0+"),
        ]),
    ]),
])

PRODUCE_RESPONSE = message("ProduceResponse", 0, "0-13", "9+", [
    Field("responses", Array, fields=[
        Field("name", STRING, "0-12"),
        Field("topic_id", UUID, "13+"),
        Field("partition_responses", Array, fields=[
            Field("index", INT32),
            Field("error_code", INT16),
            Field("base_offset", INT64),
            Field("log_append_time_ms", INT64, "2+", default=-1),
            Field("log_start_offset", INT64, "5+", default=-1),
            Field("record_errors", Array, "8+", fields=[
                Field("batch_index", INT32),
                Field("batch_index_error_message", STRING, nullable="8+", default=None),
            ]),
            Field("error_message", STRING, "8+", nullable="8+", default=None),
            Field("current_leader", None, "10+", tag=0, fields=[
                Field("leader_id", INT32, default=-1),
                Field("leader_epoch", INT32, default=-1),
            ]),
        ]),
    ]),
    Field("throttle_time_ms", INT32, "1+"),
    Field("node_endpoints", Array, "10+", tag=0, fields=[
        Field("node_id", INT32),
        Field("host", STRING),
        Field("port", INT32),
        Field("rack", STRING, nullable="10+", default=None),
    ]),
])
