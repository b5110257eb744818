"""DescribeGroups (key 15)."""

from wire.schema import BOOL, BYTES, INT16, INT32, STRING, Array, Field, message

DESCRIBE_GROUPS_REQUEST = message(
    "DescribeGroupsRequest",
    15,
    "0-6",
    "5+",
    [
        Field("groups", Array(STRING)),
        Field("include_authorized_operations", BOOL, "3+"),
    ],
)

DESCRIBE_GROUPS_RESPONSE = message(
    "DescribeGroupsResponse",
    15,
    "0-6",
    "5+",
    [
        Field("throttle_time_ms", INT32, "1+"),
        Field(
            "groups",
            Array,
            fields=[
                Field("error_code", INT16),
                Field("error_message", STRING, "6+", nullable="6+", default=None),
                Field("group_id", STRING),
                Field("group_state", STRING),
                Field("protocol_type", STRING),
                Field("protocol_data", STRING),
                Field(
                    "members",
                    Array,
                    fields=[
                        Field("member_id", STRING),
                        Field("group_instance_id", STRING, "4+", nullable="4+", default=None),
                        Field("client_id", STRING),
                        Field("client_host", STRING),
                        Field("member_metadata", BYTES),
                        Field("member_assignment", BYTES),
                    ],
                ),
                Field("authorized_operations", INT32, "3+", default=-2147483648),
            ],
        ),
    ],
)
