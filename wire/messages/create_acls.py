"""CreateAcls (key 30)."""

from wire.messages.common import acl_entry, error_fields, resource
from wire.schema import INT32, Array, Field, message

CREATE_ACLS_REQUEST = message("CreateAclsRequest", 30, "1-3", "2+", [
    Field("creations", Array, fields=[*resource(pattern="resource_pattern_type"), *acl_entry()]),
])

CREATE_ACLS_RESPONSE = message("CreateAclsResponse", 30, "1-3", "2+", [
    Field("throttle_time_ms", INT32),
    Field("results", Array, fields=error_fields(null_message=False)),
])
