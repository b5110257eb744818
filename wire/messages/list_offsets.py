"""ListOffsets (key 2). Declared from v0; Kafka 4.x accepts v1+. v11 adds the
EARLIEST_PENDING_UPLOAD (-6) timestamp (KIP-1023), no field."""

from wire.schema import INT8, INT16, INT32, INT64, STRING, Array, Field, message

LIST_OFFSETS_REQUEST = message("ListOffsetsRequest", 2, "0-11", "6+", [
    Field("replica_id", INT32),
    Field("isolation_level", INT8, "2+"),
    Field("topics", Array, fields=[
        Field("name", STRING),
        Field("partitions", Array, fields=[
            Field("partition_index", INT32),
            Field("current_leader_epoch", INT32, "4+", default=-1),
            Field("timestamp", INT64),
            Field("max_num_offsets", INT32, "0", default=1),
        ]),
    ]),
    Field("timeout_ms", INT32, "10+"),
])

LIST_OFFSETS_RESPONSE = message("ListOffsetsResponse", 2, "0-11", "6+", [
    Field("throttle_time_ms", INT32, "2+"),
    Field("topics", Array, fields=[
        Field("name", STRING),
        Field("partitions", Array, fields=[
            Field("partition_index", INT32),
            Field("error_code", INT16),
            Field("old_style_offsets", Array(INT64), "0"),
            Field("timestamp", INT64, "1+", default=-1),
            Field("offset", INT64, "1+", default=-1),
            Field("leader_epoch", INT32, "4+", default=-1),
        ]),
    ]),
])
