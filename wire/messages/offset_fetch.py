"""OffsetFetch (key 9).

v8 moved everything into a per-group array (fetching for many groups at once); the
partition layout is the same before and after, only the versions differ.
"""

from wire.messages.common import nstring, topic_name_or_id
from wire.schema import BOOL, INT16, INT32, INT64, STRING, Array, Field, message


def _partitions(v: str, leader_epoch: str) -> Field:
    """A topic's committed offsets, for versions ``v`` (CommittedLeaderEpoch from
    ``leader_epoch``)."""
    return Field("partitions", Array, v, fields=[
        Field("partition_index", INT32, v),
        Field("committed_offset", INT64, v),
        Field("committed_leader_epoch", INT32, leader_epoch, default=-1),
        Field("metadata", STRING, v, nullable=v),
        Field("error_code", INT16, v),
    ])


OFFSET_FETCH_REQUEST = message("OffsetFetchRequest", 9, "1-10", "6+", [
    Field("group_id", STRING, "0-7"),
    Field("topics", Array, "0-7", nullable="2-7", default=[], fields=[
        Field("name", STRING, "0-7"),
        Field("partition_indexes", Array(INT32), "0-7"),
    ]),
    Field("groups", Array, "8+", fields=[
        Field("group_id", STRING, "8+"),
        nstring("member_id", "9+"),
        Field("member_epoch", INT32, "9+", default=-1),
        Field("topics", Array, "8+", nullable="8+", default=[], fields=[
            *topic_name_or_id(10, name_from=8),
            Field("partition_indexes", Array(INT32), "8+"),
        ]),
    ]),
    Field("require_stable", BOOL, "7+", default=False),
])

OFFSET_FETCH_RESPONSE = message("OffsetFetchResponse", 9, "1-10", "6+", [
    Field("throttle_time_ms", INT32, "3+"),
    Field("topics", Array, "0-7", fields=[
        Field("name", STRING, "0-7"),
        _partitions("0-7", leader_epoch="5-7"),
    ]),
    Field("error_code", INT16, "2-7"),
    Field("groups", Array, "8+", fields=[
        Field("group_id", STRING, "8+"),
        Field("topics", Array, "8+", fields=[
            *topic_name_or_id(10, name_from=8),
            _partitions("8+", leader_epoch="8+"),
        ]),
        Field("error_code", INT16, "8+"),
    ]),
])
