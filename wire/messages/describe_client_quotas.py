"""DescribeClientQuotas (key 48)."""

from wire.schema import BOOL, FLOAT64, INT8, INT16, INT32, STRING, Array, Field, message

DESCRIBE_CLIENT_QUOTAS_REQUEST = message(
    "DescribeClientQuotasRequest",
    48,
    "0-1",
    "1+",
    [
        Field(
            "components",
            Array,
            fields=[
                Field("entity_type", STRING),
                Field("match_type", INT8),
                Field("match", STRING, nullable="0+"),
            ],
        ),
        Field("strict", BOOL),
    ],
)

DESCRIBE_CLIENT_QUOTAS_RESPONSE = message(
    "DescribeClientQuotasResponse",
    48,
    "0-1",
    "1+",
    [
        Field("throttle_time_ms", INT32),
        Field("error_code", INT16),
        Field("error_message", STRING, nullable="0+"),
        Field(
            "entries",
            Array,
            nullable="0+",
            fields=[
                Field(
                    "entity",
                    Array,
                    fields=[
                        Field("entity_type", STRING),
                        Field("entity_name", STRING, nullable="0+"),
                    ],
                ),
                Field(
                    "values",
                    Array,
                    fields=[
                        Field("key", STRING),
                        Field("value", FLOAT64),
                    ],
                ),
            ],
        ),
    ],
)
