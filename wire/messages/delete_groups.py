"""DeleteGroups (key 42)."""

from wire.messages.common import nstring
from wire.schema import INT16, INT32, STRING, Array, Field, message

DELETE_GROUPS_REQUEST = message("DeleteGroupsRequest", 42, "0-3", "2+", [
    Field("groups_names", Array(STRING))])

DELETE_GROUPS_RESPONSE = message("DeleteGroupsResponse", 42, "0-3", "2+", [
    Field("throttle_time_ms", INT32),
    Field("results", Array, fields=[
        Field("group_id", STRING), Field("error_code", INT16), nstring("error_message", "3+")]),
])
