"""SyncGroup (key 14)."""

from wire.schema import BYTES, INT16, INT32, STRING, Array, Field, message

SYNC_GROUP_REQUEST = message(
    "SyncGroupRequest",
    14,
    "0-5",
    "4+",
    [
        Field("group_id", STRING),
        Field("generation_id", INT32),
        Field("member_id", STRING),
        Field("group_instance_id", STRING, "3+", nullable="3+", default=None),
        Field("protocol_type", STRING, "5+", nullable="5+", default=None),
        Field("protocol_name", STRING, "5+", nullable="5+", default=None),
        Field(
            "assignments",
            Array,
            fields=[
                Field("member_id", STRING),
                Field("assignment", BYTES),
            ],
        ),
    ],
)

SYNC_GROUP_RESPONSE = message(
    "SyncGroupResponse",
    14,
    "0-5",
    "4+",
    [
        Field("throttle_time_ms", INT32, "1+"),
        Field("error_code", INT16),
        Field("protocol_type", STRING, "5+", nullable="5+", default=None),
        Field("protocol_name", STRING, "5+", nullable="5+", default=None),
        Field("assignment", BYTES),
    ],
)
