"""DescribeConfigs (key 32)."""

from wire.schema import BOOL, INT8, INT16, INT32, STRING, Array, Field, message

DESCRIBE_CONFIGS_REQUEST = message(
    "DescribeConfigsRequest",
    32,
    "1-4",
    "4+",
    [
        Field(
            "resources",
            Array,
            fields=[
                Field("resource_type", INT8),
                Field("resource_name", STRING),
                Field("configuration_keys", Array(STRING), nullable="0+"),
            ],
        ),
        Field("include_synonyms", BOOL, "1+", default=False),
        Field("include_documentation", BOOL, "3+", default=False),
    ],
)

DESCRIBE_CONFIGS_RESPONSE = message(
    "DescribeConfigsResponse",
    32,
    "1-4",
    "4+",
    [
        Field("throttle_time_ms", INT32),
        Field(
            "results",
            Array,
            fields=[
                Field("error_code", INT16),
                Field("error_message", STRING, nullable="0+"),
                Field("resource_type", INT8),
                Field("resource_name", STRING),
                Field(
                    "configs",
                    Array,
                    fields=[
                        Field("name", STRING),
                        Field("value", STRING, nullable="0+"),
                        Field("read_only", BOOL),
                        Field("config_source", INT8, "1+", default=-1),
                        Field("is_sensitive", BOOL),
                        Field(
                            "synonyms",
                            Array,
                            "1+",
                            fields=[
                                Field("name", STRING, "1+"),
                                Field("value", STRING, "1+", nullable="0+"),
                                Field("source", INT8, "1+"),
                            ],
                        ),
                        Field("config_type", INT8, "3+"),
                        Field("documentation", STRING, "3+", nullable="0+"),
                    ],
                ),
            ],
        ),
    ],
)
