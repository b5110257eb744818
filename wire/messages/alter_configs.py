"""AlterConfigs (key 33)."""

from wire.schema import BOOL, INT8, INT16, INT32, STRING, Array, Field, message

ALTER_CONFIGS_REQUEST = message(
    "AlterConfigsRequest",
    33,
    "0-2",
    "2+",
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
                        Field("value", STRING, nullable="0+"),
                    ],
                ),
            ],
        ),
        Field("validate_only", BOOL),
    ],
)

ALTER_CONFIGS_RESPONSE = message(
    "AlterConfigsResponse",
    33,
    "0-2",
    "2+",
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
