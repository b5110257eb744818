"""JoinGroup (key 11)."""

from wire.messages.common import nstring
from wire.schema import BOOL, BYTES, INT16, INT32, STRING, Array, Field, message

JOIN_GROUP_REQUEST = message("JoinGroupRequest", 11, "0-9", "6+", [
    Field("group_id", STRING),
    Field("session_timeout_ms", INT32),
    Field("rebalance_timeout_ms", INT32, "1+", default=-1),
    Field("member_id", STRING),
    nstring("group_instance_id", "5+"),
    Field("protocol_type", STRING),
    Field("protocols", Array, fields=[Field("name", STRING), Field("metadata", BYTES)]),
    nstring("reason", "8+"),
])

JOIN_GROUP_RESPONSE = message("JoinGroupResponse", 11, "0-9", "6+", [
    Field("throttle_time_ms", INT32, "2+"),
    Field("error_code", INT16),
    Field("generation_id", INT32, default=-1),
    nstring("protocol_type", "7+"),
    Field("protocol_name", STRING, nullable="7+"),
    Field("leader", STRING),
    Field("skip_assignment", BOOL, "9+", default=False),
    Field("member_id", STRING),
    Field("members", Array, fields=[
        Field("member_id", STRING), nstring("group_instance_id", "5+"), Field("metadata", BYTES),
    ]),
])
