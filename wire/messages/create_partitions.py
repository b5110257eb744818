"""CreatePartitions (key 37)."""

from wire.messages.common import error_fields
from wire.schema import BOOL, INT32, STRING, Array, Field, message

CREATE_PARTITIONS_REQUEST = message("CreatePartitionsRequest", 37, "0-3", "2+", [
    Field("topics", Array, fields=[
        Field("name", STRING),
        Field("count", INT32),
        Field("assignments", Array, nullable="0+", fields=[Field("broker_ids", Array(INT32))]),
    ]),
    Field("timeout_ms", INT32),
    Field("validate_only", BOOL),
])

CREATE_PARTITIONS_RESPONSE = message("CreatePartitionsResponse", 37, "0-3", "2+", [
    Field("throttle_time_ms", INT32),
    Field("results", Array, fields=[Field("name", STRING), *error_fields()]),
])
