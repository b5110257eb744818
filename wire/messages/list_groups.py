"""ListGroups (key 16)."""

from wire.schema import INT16, INT32, STRING, Array, Field, message

LIST_GROUPS_REQUEST = message("ListGroupsRequest", 16, "0-5", "3+", [
    Field("states_filter", Array(STRING), "4+"),
    Field("types_filter", Array(STRING), "5+"),
])

LIST_GROUPS_RESPONSE = message("ListGroupsResponse", 16, "0-5", "3+", [
    Field("throttle_time_ms", INT32, "1+"),
    Field("error_code", INT16),
    Field("groups", Array, fields=[
        Field("group_id", STRING),
        Field("protocol_type", STRING),
        Field("group_state", STRING, "4+"),
        Field("group_type", STRING, "5+"),
    ]),
])
