"""ConsumerGroupHeartbeat (key 68)."""

from wire.messages.common import heartbeat_response, nstring, topic_partitions
from wire.schema import INT32, STRING, UUID, Array, Field, message

CONSUMER_GROUP_HEARTBEAT_REQUEST = message("ConsumerGroupHeartbeatRequest", 68, "0-1", "0+", [
    Field("group_id", STRING),
    Field("member_id", STRING),
    Field("member_epoch", INT32),
    nstring("instance_id"),
    nstring("rack_id"),
    Field("rebalance_timeout_ms", INT32, default=-1),
    Field("subscribed_topic_names", Array(STRING), nullable="0+", default=None),
    nstring("subscribed_topic_regex", "1+"),
    nstring("server_assignor"),
    topic_partitions("topic_partitions", topic="topic_id", topic_type=UUID, nullable="0+",
                     default=None),
])

CONSUMER_GROUP_HEARTBEAT_RESPONSE = message(
    "ConsumerGroupHeartbeatResponse", 68, "0-1", "0+", heartbeat_response())
