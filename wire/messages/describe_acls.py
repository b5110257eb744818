"""DescribeAcls (key 29)."""

from wire.schema import INT8, INT16, INT32, STRING, Array, Field, message

DESCRIBE_ACLS_REQUEST = message(
    "DescribeAclsRequest",
    29,
    "1-3",
    "2+",
    [
        Field("resource_type_filter", INT8),
        Field("resource_name_filter", STRING, nullable="0+"),
        Field("pattern_type_filter", INT8, "1+", default=3),
        Field("principal_filter", STRING, nullable="0+"),
        Field("host_filter", STRING, nullable="0+"),
        Field("operation", INT8),
        Field("permission_type", INT8),
    ],
)

DESCRIBE_ACLS_RESPONSE = message(
    "DescribeAclsResponse",
    29,
    "1-3",
    "2+",
    [
        Field("throttle_time_ms", INT32),
        Field("error_code", INT16),
        Field("error_message", STRING, nullable="0+"),
        Field(
            "resources",
            Array,
            fields=[
                Field("resource_type", INT8),
                Field("resource_name", STRING),
                Field("pattern_type", INT8, "1+", default=3),
                Field(
                    "acls",
                    Array,
                    fields=[
                        Field("principal", STRING),
                        Field("host", STRING),
                        Field("operation", INT8),
                        Field("permission_type", INT8),
                    ],
                ),
            ],
        ),
    ],
)
