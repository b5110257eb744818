"""ShareGroupDescribe (key 77), v1 (v0 was Kafka 4.0's early access).

A share group describes like a consumer group (wire.messages.common), with fewer
fields per member: no instance id, no regex subscription, no target assignment.
"""

from wire.messages.common import (
    group_describe_request,
    group_describe_response,
    member_assignment,
    nstring,
)
from wire.schema import INT32, STRING, Array, Field, message

SHARE_GROUP_DESCRIBE_REQUEST = message(
    "ShareGroupDescribeRequest", 77, "1", "0+", group_describe_request())

SHARE_GROUP_DESCRIBE_RESPONSE = message(
    "ShareGroupDescribeResponse", 77, "1", "0+", group_describe_response([
        Field("member_id", STRING),
        nstring("rack_id"),
        Field("member_epoch", INT32),
        Field("client_id", STRING),
        Field("client_host", STRING),
        Field("subscribed_topic_names", Array(STRING)),
        member_assignment("assignment"),
    ]))
