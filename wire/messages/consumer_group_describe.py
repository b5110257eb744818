"""ConsumerGroupDescribe (key 69)."""

from wire.schema import BOOL, INT8, INT16, INT32, STRING, UUID, Array, Field, message

CONSUMER_GROUP_DESCRIBE_REQUEST = message(
    "ConsumerGroupDescribeRequest",
    69,
    "0-1",
    "0+",
    [
        Field("group_ids", Array(STRING)),
        Field("include_authorized_operations", BOOL),
    ],
)

CONSUMER_GROUP_DESCRIBE_RESPONSE = message(
    "ConsumerGroupDescribeResponse",
    69,
    "0-1",
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
                        Field("instance_id", STRING, nullable="0+", default=None),
                        Field("rack_id", STRING, nullable="0+", default=None),
                        Field("member_epoch", INT32),
                        Field("client_id", STRING),
                        Field("client_host", STRING),
                        Field("subscribed_topic_names", Array(STRING)),
                        Field("subscribed_topic_regex", STRING, nullable="0+", default=None),
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
                        Field(
                            "target_assignment",
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
                        Field("member_type", INT8, "1+", default=-1),
                    ],
                ),
                Field("authorized_operations", INT32, default=-2147483648),
            ],
        ),
    ],
)
