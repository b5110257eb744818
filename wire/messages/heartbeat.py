"""Heartbeat (key 12): a classic group member's keep-alive."""

from wire.messages.common import nstring
from wire.schema import INT16, INT32, STRING, Field, message

HEARTBEAT_REQUEST = message("HeartbeatRequest", 12, "0-4", "4+", [
    Field("group_id", STRING),
    Field("generation_id", INT32),
    Field("member_id", STRING),
    nstring("group_instance_id", "3+"),
])

HEARTBEAT_RESPONSE = message("HeartbeatResponse", 12, "0-4", "4+", [
    Field("throttle_time_ms", INT32, "1+"), Field("error_code", INT16)])
