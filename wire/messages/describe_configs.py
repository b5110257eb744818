"""DescribeConfigs (key 32)."""

from wire.messages.common import config_value, error_fields, resource
from wire.schema import BOOL, INT8, INT32, STRING, Array, Field, message

DESCRIBE_CONFIGS_REQUEST = message("DescribeConfigsRequest", 32, "1-4", "4+", [
    Field("resources", Array, fields=[
        *resource(), Field("configuration_keys", Array(STRING), nullable="0+")]),
    Field("include_synonyms", BOOL, "1+", default=False),
    Field("include_documentation", BOOL, "3+", default=False),
])

DESCRIBE_CONFIGS_RESPONSE = message("DescribeConfigsResponse", 32, "1-4", "4+", [
    Field("throttle_time_ms", INT32),
    Field("results", Array, fields=[
        *error_fields(null_message=False),
        *resource(),
        Field("configs", Array, fields=[
            *config_value(),
            Field("read_only", BOOL),
            Field("config_source", INT8, "1+", default=-1),
            Field("is_sensitive", BOOL),
            Field("synonyms", Array, "1+", fields=[
                Field("name", STRING, "1+"),
                Field("value", STRING, "1+", nullable="0+"),
                Field("source", INT8, "1+"),
            ]),
            Field("config_type", INT8, "3+"),
            Field("documentation", STRING, "3+", nullable="0+"),
        ]),
    ]),
])
