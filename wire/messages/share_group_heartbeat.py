"""ShareGroupHeartbeat (key 76), v1: KIP-932 share group membership.

Version 0 was Kafka 4.0's early access and was removed in 4.1; v1 is the GA version.
"""

from wire.schema import INT16, INT32, STRING, UUID, Array, Field, message

SHARE_GROUP_HEARTBEAT_REQUEST = message(
    "ShareGroupHeartbeatRequest",
    76,
    "1",
    "0+",
    [
        Field("group_id", STRING),
        Field("member_id", STRING),
        Field("member_epoch", INT32),
        Field("rack_id", STRING, nullable="0+", default=None),
        Field("subscribed_topic_names", Array(STRING), nullable="0+", default=None),
    ],
)

SHARE_GROUP_HEARTBEAT_RESPONSE = message(
    "ShareGroupHeartbeatResponse",
    76,
    "1",
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
                    fields=[Field("topic_id", UUID), Field("partitions", Array(INT32))],
                ),
            ],
        ),
    ],
)
