"""OffsetForLeaderEpoch (key 23)."""

from wire.messages.common import by_topic
from wire.schema import INT16, INT32, INT64, STRING, Field, message

OFFSET_FOR_LEADER_EPOCH_REQUEST = message("OffsetForLeaderEpochRequest", 23, "2-4", "4+", [
    Field("replica_id", INT32, "3+", default=-2),
    by_topic("topics", [
        Field("partition", INT32),
        Field("current_leader_epoch", INT32, "2+", default=-1),
        Field("leader_epoch", INT32),
    ], topic=[Field("topic", STRING)]),
])

OFFSET_FOR_LEADER_EPOCH_RESPONSE = message("OffsetForLeaderEpochResponse", 23, "2-4", "4+", [
    Field("throttle_time_ms", INT32, "2+"),
    by_topic("topics", [
        Field("error_code", INT16),
        Field("partition", INT32),
        Field("leader_epoch", INT32, "1+", default=-1),
        Field("end_offset", INT64, default=-1),
    ], topic=[Field("topic", STRING)]),
])
