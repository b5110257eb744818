"""DeleteAcls (key 31)."""

from wire.messages.common import acl_entry, acl_filter, error_fields, resource
from wire.schema import INT32, Array, Field, message

DELETE_ACLS_REQUEST = message("DeleteAclsRequest", 31, "1-3", "2+", [
    Field("filters", Array, fields=acl_filter()),
])

DELETE_ACLS_RESPONSE = message("DeleteAclsResponse", 31, "1-3", "2+", [
    Field("throttle_time_ms", INT32),
    Field("filter_results", Array, fields=[
        *error_fields(null_message=False),
        Field("matching_acls", Array, fields=[
            *error_fields(null_message=False), *resource(pattern="pattern_type"), *acl_entry(),
        ]),
    ]),
])
