"""CreateAcls (key 30)."""

from wire.schema import INT8, INT16, INT32, STRING, Array, Field, message

CREATE_ACLS_REQUEST = message(
    "CreateAclsRequest",
    30,
    "1-3",
    "2+",
    [
        Field("creations", Array, fields=[
            Field("resource_type", INT8),
            Field("resource_name", STRING),
            Field("resource_pattern_type", INT8, "1+", default=3),
            Field("principal", STRING),
            Field("host", STRING),
            Field("operation", INT8),
            Field("permission_type", INT8),
        ]),
    ],
)

CREATE_ACLS_RESPONSE = message(
    "CreateAclsResponse",
    30,
    "1-3",
    "2+",
    [
        Field("throttle_time_ms", INT32),
        Field("results", Array, fields=[
            Field("error_code", INT16),
            Field("error_message", STRING, nullable="0+"),
        ]),
    ],
)
