"""DeleteAcls (key 31)."""

from wire.schema import INT8, INT16, INT32, STRING, Array, Field, message

DELETE_ACLS_REQUEST = message(
    "DeleteAclsRequest",
    31,
    "1-3",
    "2+",
    [
        Field("filters", Array, fields=[
            Field("resource_type_filter", INT8),
            Field("resource_name_filter", STRING, nullable="0+"),
            Field("pattern_type_filter", INT8, "1+", default=3),
            Field("principal_filter", STRING, nullable="0+"),
            Field("host_filter", STRING, nullable="0+"),
            Field("operation", INT8),
            Field("permission_type", INT8),
        ]),
    ],
)

DELETE_ACLS_RESPONSE = message(
    "DeleteAclsResponse",
    31,
    "1-3",
    "2+",
    [
        Field("throttle_time_ms", INT32),
        Field("filter_results", Array, fields=[
            Field("error_code", INT16),
            Field("error_message", STRING, nullable="0+"),
            Field("matching_acls", Array, fields=[
                Field("error_code", INT16),
                Field("error_message", STRING, nullable="0+"),
                Field("resource_type", INT8),
                Field("resource_name", STRING),
                Field("pattern_type", INT8, "1+", default=3),
                Field("principal", STRING),
                Field("host", STRING),
                Field("operation", INT8),
                Field("permission_type", INT8),
            ]),
        ]),
    ],
)
