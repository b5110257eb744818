"""ShareGroupHeartbeat (key 76), v1: KIP-932 share group membership.

Version 0 was Kafka 4.0's early access and was removed in 4.1; v1 is the GA version.
"""

from wire.messages.common import heartbeat_response, nstring
from wire.schema import INT32, STRING, Array, Field, message

SHARE_GROUP_HEARTBEAT_REQUEST = message("ShareGroupHeartbeatRequest", 76, "1", "0+", [
    Field("group_id", STRING),
    Field("member_id", STRING),
    Field("member_epoch", INT32),
    nstring("rack_id"),
    Field("subscribed_topic_names", Array(STRING), nullable="0+", default=None),
])

SHARE_GROUP_HEARTBEAT_RESPONSE = message(
    "ShareGroupHeartbeatResponse", 76, "1", "0+", heartbeat_response())
