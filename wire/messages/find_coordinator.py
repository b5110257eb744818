"""FindCoordinator (key 10). v4 looks up many keys at once (in an array); v0-3 one."""

from wire.messages.common import error_fields
from wire.schema import INT8, INT16, INT32, STRING, Array, Field, message

FIND_COORDINATOR_REQUEST = message("FindCoordinatorRequest", 10, "0-6", "3+", [
    Field("key", STRING, "0-3"),
    Field("key_type", INT8, "1+"),
    Field("coordinator_keys", Array(STRING), "4+"),
])

FIND_COORDINATOR_RESPONSE = message("FindCoordinatorResponse", 10, "0-6", "3+", [
    Field("throttle_time_ms", INT32, "1+"),
    Field("error_code", INT16, "0-3"),
    Field("error_message", STRING, "1-3", nullable="1-3"),
    Field("node_id", INT32, "0-3"),
    Field("host", STRING, "0-3"),
    Field("port", INT32, "0-3"),
    Field("coordinators", Array, "4+", fields=[
        Field("key", STRING, "4+"),
        Field("node_id", INT32, "4+"),
        Field("host", STRING, "4+"),
        Field("port", INT32, "4+"),
        *error_fields("4+", null_message=False),
    ]),
])
