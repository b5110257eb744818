"""DeleteRecords (key 21)."""

from wire.schema import INT16, INT32, INT64, STRING, Array, Field, message

DELETE_RECORDS_REQUEST = message(
    "DeleteRecordsRequest",
    21,
    "0-2",
    "2+",
    [
        Field(
            "topics",
            Array,
            fields=[
                Field("name", STRING),
                Field(
                    "partitions",
                    Array,
                    fields=[
                        Field("partition_index", INT32),
                        Field("offset", INT64),
                    ],
                ),
            ],
        ),
        Field("timeout_ms", INT32),
    ],
)

DELETE_RECORDS_RESPONSE = message(
    "DeleteRecordsResponse",
    21,
    "0-2",
    "2+",
    [
        Field("throttle_time_ms", INT32),
        Field(
            "topics",
            Array,
            fields=[
                Field("name", STRING),
                Field(
                    "partitions",
                    Array,
                    fields=[
                        Field("partition_index", INT32),
                        Field("low_watermark", INT64),
                        Field("error_code", INT16),
                    ],
                ),
            ],
        ),
    ],
)
