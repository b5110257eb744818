"""LeaveGroup (key 13). v3 batches members (for static members leaving together)."""

from wire.messages.common import nstring
from wire.schema import INT16, INT32, STRING, Array, Field, message

LEAVE_GROUP_REQUEST = message("LeaveGroupRequest", 13, "0-5", "4+", [
    Field("group_id", STRING),
    Field("member_id", STRING, "0-2"),
    Field("members", Array, "3+", fields=[
        Field("member_id", STRING, "3+"),
        nstring("group_instance_id", "3+"),
        nstring("reason", "5+"),
    ]),
])

LEAVE_GROUP_RESPONSE = message("LeaveGroupResponse", 13, "0-5", "4+", [
    Field("throttle_time_ms", INT32, "1+"),
    Field("error_code", INT16),
    Field("members", Array, "3+", fields=[
        Field("member_id", STRING, "3+"),
        Field("group_instance_id", STRING, "3+", nullable="3+"),
        Field("error_code", INT16, "3+"),
    ]),
])
