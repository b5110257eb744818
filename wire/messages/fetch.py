"""Fetch (key 1). Declared from v0; Kafka 4.x accepts v4+."""

from wire.messages.common import current_leader, node_endpoints, topic_name_or_id
from wire.schema import INT8, INT16, INT32, INT64, RECORDS, STRING, UUID, Array, Field, message

FETCH_REQUEST = message("FetchRequest", 1, "0-18", "12+", [
    Field("cluster_id", STRING, "12+", nullable="12+", tag=0, default=None),
    Field("replica_id", INT32, "0-14", default=-1),
    Field("replica_state", None, "15+", tag=1, fields=[
        Field("replica_id", INT32, default=-1),
        Field("replica_epoch", INT64, default=-1),
    ]),
    Field("max_wait_ms", INT32),
    Field("min_bytes", INT32),
    Field("max_bytes", INT32, "3+", default=0x7FFFFFFF),
    Field("isolation_level", INT8, "4+"),
    Field("session_id", INT32, "7+"),
    Field("session_epoch", INT32, "7+", default=-1),
    Field("topics", Array, fields=[
        *topic_name_or_id(13, name="topic"),
        Field("partitions", Array, fields=[
            Field("partition", INT32),
            Field("current_leader_epoch", INT32, "9+", default=-1),
            Field("fetch_offset", INT64),
            Field("last_fetched_epoch", INT32, "12+", default=-1),
            Field("log_start_offset", INT64, "5+", default=-1),
            Field("partition_max_bytes", INT32),
            Field("replica_directory_id", UUID, "17+", tag=0),
            Field("high_watermark", INT64, "18+", tag=1, default=0x7FFFFFFFFFFFFFFF),
        ]),
    ]),
    Field("forgotten_topics_data", Array, "7+", fields=[
        *topic_name_or_id(13, name="topic", name_from=7),
        Field("partitions", Array(INT32)),
    ]),
    Field("rack_id", STRING, "11+"),
])

FETCH_RESPONSE = message("FetchResponse", 1, "0-18", "12+", [
    Field("throttle_time_ms", INT32, "1+"),
    Field("error_code", INT16, "7+"),
    Field("session_id", INT32, "7+"),
    Field("responses", Array, fields=[
        *topic_name_or_id(13, name="topic"),
        Field("partitions", Array, fields=[
            Field("partition_index", INT32),
            Field("error_code", INT16),
            Field("high_watermark", INT64),
            Field("last_stable_offset", INT64, "4+", default=-1),
            Field("log_start_offset", INT64, "5+", default=-1),
            Field("diverging_epoch", None, "12+", tag=0, fields=[
                Field("epoch", INT32, default=-1),
                Field("end_offset", INT64, default=-1),
            ]),
            current_leader("12+", tag=1, unknown=-1),
            Field("snapshot_id", None, "12+", tag=2, fields=[
                Field("end_offset", INT64, default=-1),
                Field("epoch", INT32, default=-1),
            ]),
            Field("aborted_transactions", Array, "4+", nullable="4+", fields=[
                Field("producer_id", INT64),
                Field("first_offset", INT64),
            ]),
            Field("preferred_read_replica", INT32, "11+", default=-1),
            Field("records", RECORDS, nullable="0+"),
        ]),
    ]),
    node_endpoints("16+", tag=0),
])
