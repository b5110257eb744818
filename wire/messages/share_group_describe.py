"""ShareGroupDescribe (key 77), v1 (v0 was Kafka 4.0's early access)."""

from wire.schema import BOOL, INT16, INT32, STRING, UUID, Array, Field, message

SHARE_GROUP_DESCRIBE_REQUEST = message(
    "ShareGroupDescribeRequest",
    77,
    "1",
    "0+",
    [
        Field("group_ids", Array(STRING)),
        Field("include_authorized_operations", BOOL),
    ],
)

SHARE_GROUP_DESCRIBE_RESPONSE = message(
    "ShareGroupDescribeResponse",
    77,
    "1",
    "0+",
    [
        Field("throttle_time_ms", INT32),
        Field(
            "groups",
            Array,
            fields=[
                Field("error_code", INT16),
                Field("error_message", STRING, nullable="0+", default=None),
                Field("group_id", STRING),
                Field("group_state", STRING),
                Field("group_epoch", INT32),
                Field("assignment_epoch", INT32),
                Field("assignor_name", STRING),
                Field(
                    "members",
                    Array,
                    fields=[
                        Field("member_id", STRING),
                        Field("rack_id", STRING, nullable="0+", default=None),
                        Field("member_epoch", INT32),
                        Field("client_id", STRING),
                        Field("client_host", STRING),
                        Field("subscribed_topic_names", Array(STRING)),
                        Field(
                            "assignment",
                            None,
                            fields=[
                                Field(
                                    "topic_partitions",
                                    Array,
                                    fields=[
                                        Field("topic_id", UUID),
                                        Field("topic_name", STRING),
                                        Field("partitions", Array(INT32)),
                                    ],
                                ),
                            ],
                        ),
                    ],
                ),
                Field("authorized_operations", INT32, default=-2147483648),
            ],
        ),
    ],
)
