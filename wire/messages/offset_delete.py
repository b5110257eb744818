"""OffsetDelete (key 47)."""

from wire.messages.common import by_topic, partition_error
from wire.schema import INT16, INT32, STRING, Field, message

OFFSET_DELETE_REQUEST = message("OffsetDeleteRequest", 47, "0", "none", [
    Field("group_id", STRING),
    by_topic("topics", [Field("partition_index", INT32)]),
])

OFFSET_DELETE_RESPONSE = message("OffsetDeleteResponse", 47, "0", "none", [
    Field("error_code", INT16),
    Field("throttle_time_ms", INT32),
    by_topic("topics", partition_error()),
])
