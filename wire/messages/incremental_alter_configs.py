"""IncrementalAlterConfigs (key 44)."""

from wire.schema import BOOL, INT8, INT16, INT32, STRING, Array, Field, message

INCREMENTAL_ALTER_CONFIGS_REQUEST = message(
    "IncrementalAlterConfigsRequest",
    44,
    "0-1",
    "1+",
    [
        Field(
            "resources",
            Array,
            fields=[
                Field("resource_type", INT8),
                Field("resource_name", STRING),
                Field(
                    "configs",
                    Array,
                    fields=[
                        Field("name", STRING),
                        Field("config_operation", INT8),
                        Field("value", STRING, nullable="0+"),
                    ],
                ),
            ],
        ),
        Field("validate_only", BOOL),
    ],
)

INCREMENTAL_ALTER_CONFIGS_RESPONSE = message(
    "IncrementalAlterConfigsResponse",
    44,
    "0-1",
    "1+",
    [
        Field("throttle_time_ms", INT32),
        Field(
            "responses",
            Array,
            fields=[
                Field("error_code", INT16),
                Field("error_message", STRING, nullable="0+"),
                Field("resource_type", INT8),
                Field("resource_name", STRING),
            ],
        ),
    ],
)
