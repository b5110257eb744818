"""ConsumerGroupHeartbeat (key 68)."""

from wire.schema import INT16, INT32, STRING, UUID, Array, Field, message

CONSUMER_GROUP_HEARTBEAT_REQUEST = message(
    "ConsumerGroupHeartbeatRequest",
    68,
    "0-1",
    "0+",
    [
        Field("group_id", STRING),
        Field("member_id", STRING),
        Field("member_epoch", INT32),
        Field("instance_id", STRING, nullable="0+", default=None),
        Field("rack_id", STRING, nullable="0+", default=None),
        Field("rebalance_timeout_ms", INT32, default=-1),
        Field("subscribed_topic_names", Array(STRING), nullable="0+", default=None),
        Field("subscribed_topic_regex", STRING, "1+", nullable="1+", default=None),
        Field("server_assignor", STRING, nullable="0+", default=None),
        Field(
            "topic_partitions",
            Array,
            nullable="0+",
            default=None,
            fields=[
                Field("topic_id", UUID),
                Field("partitions", Array(INT32)),
            ],
        ),
    ],
)

CONSUMER_GROUP_HEARTBEAT_RESPONSE = message(
    "ConsumerGroupHeartbeatResponse",
    68,
    "0-1",
    "0+",
    [
        Field("throttle_time_ms", INT32),
        Field("error_code", INT16),
        Field("error_message", STRING, nullable="0+", default=None),
        Field("member_id", STRING, nullable="0+", default=None),
        Field("member_epoch", INT32),
        Field("heartbeat_interval_ms", INT32),
        Field(
            "assignment",
            None,
            nullable="0+",
            default=None,
            fields=[
                Field(
                    "topic_partitions",
                    Array,
                    fields=[
                        Field("topic_id", UUID),
                        Field("partitions", Array(INT32)),
                    ],
                ),
            ],
        ),
    ],
)
