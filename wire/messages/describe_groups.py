"""DescribeGroups (key 15): classic groups."""

from wire.messages.common import authorized_operations, nstring
from wire.schema import BOOL, BYTES, INT16, INT32, STRING, Array, Field, message

DESCRIBE_GROUPS_REQUEST = message("DescribeGroupsRequest", 15, "0-6", "5+", [
    Field("groups", Array(STRING)),
    Field("include_authorized_operations", BOOL, "3+"),
])

DESCRIBE_GROUPS_RESPONSE = message("DescribeGroupsResponse", 15, "0-6", "5+", [
    Field("throttle_time_ms", INT32, "1+"),
    Field("groups", Array, fields=[
        Field("error_code", INT16),
        nstring("error_message", "6+"),
        Field("group_id", STRING),
        Field("group_state", STRING),
        Field("protocol_type", STRING),
        Field("protocol_data", STRING),
        Field("members", Array, fields=[
            Field("member_id", STRING),
            nstring("group_instance_id", "4+"),
            Field("client_id", STRING),
            Field("client_host", STRING),
            Field("member_metadata", BYTES),
            Field("member_assignment", BYTES),
        ]),
        authorized_operations(versions="3+"),
    ]),
])
