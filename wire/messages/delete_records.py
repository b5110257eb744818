"""DeleteRecords (key 21)."""

from wire.messages.common import by_topic
from wire.schema import INT16, INT32, INT64, Field, message

DELETE_RECORDS_REQUEST = message("DeleteRecordsRequest", 21, "0-2", "2+", [
    by_topic("topics", [Field("partition_index", INT32), Field("offset", INT64)]),
    Field("timeout_ms", INT32),
])

DELETE_RECORDS_RESPONSE = message("DeleteRecordsResponse", 21, "0-2", "2+", [
    Field("throttle_time_ms", INT32),
    by_topic("topics", [
        Field("partition_index", INT32), Field("low_watermark", INT64), Field("error_code", INT16),
    ]),
])
