"""ConsumerGroupDescribe (key 69)."""

from wire.messages.common import (
    group_describe_request,
    group_describe_response,
    member_assignment,
    nstring,
)
from wire.schema import INT8, INT32, STRING, Array, Field, message

CONSUMER_GROUP_DESCRIBE_REQUEST = message(
    "ConsumerGroupDescribeRequest", 69, "0-1", "0+", group_describe_request())

CONSUMER_GROUP_DESCRIBE_RESPONSE = message(
    "ConsumerGroupDescribeResponse", 69, "0-1", "0+", group_describe_response([
        Field("member_id", STRING),
        nstring("instance_id"),
        nstring("rack_id"),
        Field("member_epoch", INT32),
        Field("client_id", STRING),
        Field("client_host", STRING),
        Field("subscribed_topic_names", Array(STRING)),
        nstring("subscribed_topic_regex"),
        member_assignment("assignment"),
        member_assignment("target_assignment"),
        Field("member_type", INT8, "1+", default=-1),
    ]))
