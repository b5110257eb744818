"""Produce (key 0). Declared from v0 because we advertise v0 (as Kafka 4.0 does)."""

from wire.messages.common import current_leader, node_endpoints, nstring, topic_name_or_id
from wire.schema import INT16, INT32, INT64, RECORDS, STRING, Array, Field, message

PRODUCE_REQUEST = message("ProduceRequest", 0, "0-13", "9+", [
    nstring("transactional_id", "3+"),
    Field("acks", INT16),
    Field("timeout_ms", INT32),
    Field("topic_data", Array, fields=[
        *topic_name_or_id(13),
        Field("partition_data", Array, fields=[
            Field("index", INT32),
            Field("records", RECORDS, nullable="0+"),
        ]),
    ]),
])

PRODUCE_RESPONSE = message("ProduceResponse", 0, "0-13", "9+", [
    Field("responses", Array, fields=[
        *topic_name_or_id(13),
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
            nstring("error_message", "8+"),
            current_leader("10+", tag=0, unknown=-1),
        ]),
    ]),
    Field("throttle_time_ms", INT32, "1+"),
    node_endpoints("10+", tag=0),
])
