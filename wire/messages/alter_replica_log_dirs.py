"""AlterReplicaLogDirs (key 34)."""

from wire.schema import INT16, INT32, STRING, Array, Field, message

ALTER_REPLICA_LOG_DIRS_REQUEST = message(
    "AlterReplicaLogDirsRequest",
    34,
    "1-2",
    "2+",
    [
        Field(
            "dirs",
            Array,
            fields=[
                Field("path", STRING),
                Field(
                    "topics",
                    Array,
                    fields=[
                        Field("name", STRING),
                        Field("partitions", Array(INT32)),
                    ],
                ),
            ],
        ),
    ],
)

ALTER_REPLICA_LOG_DIRS_RESPONSE = message(
    "AlterReplicaLogDirsResponse",
    34,
    "1-2",
    "2+",
    [
        Field("throttle_time_ms", INT32),
        Field(
            "results",
            Array,
            fields=[
                Field("topic_name", STRING),
                Field(
                    "partitions",
                    Array,
                    fields=[
                        Field("partition_index", INT32),
                        Field("error_code", INT16),
                    ],
                ),
            ],
        ),
    ],
)
