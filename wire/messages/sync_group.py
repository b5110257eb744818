"""SyncGroup (key 14)."""

from wire.messages.common import nstring
from wire.schema import BYTES, INT16, INT32, STRING, Array, Field, message

SYNC_GROUP_REQUEST = message("SyncGroupRequest", 14, "0-5", "4+", [
    Field("group_id", STRING),
    Field("generation_id", INT32),
    Field("member_id", STRING),
    nstring("group_instance_id", "3+"),
    nstring("protocol_type", "5+"),
    nstring("protocol_name", "5+"),
    Field("assignments", Array, fields=[Field("member_id", STRING), Field("assignment", BYTES)]),
])

SYNC_GROUP_RESPONSE = message("SyncGroupResponse", 14, "0-5", "4+", [
    Field("throttle_time_ms", INT32, "1+"),
    Field("error_code", INT16),
    nstring("protocol_type", "5+"),
    nstring("protocol_name", "5+"),
    Field("assignment", BYTES),
])
