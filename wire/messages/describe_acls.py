"""DescribeAcls (key 29)."""

from wire.messages.common import acl_entry, acl_filter, resource, response_head
from wire.schema import Array, Field, message

DESCRIBE_ACLS_REQUEST = message("DescribeAclsRequest", 29, "1-3", "2+", acl_filter())

DESCRIBE_ACLS_RESPONSE = message("DescribeAclsResponse", 29, "1-3", "2+", [
    *response_head(null_message=False),
    Field("resources", Array, fields=[
        *resource(pattern="pattern_type"), Field("acls", Array, fields=acl_entry())]),
])
