"""OffsetCommit (key 8)."""

from wire.messages.common import commit_results, committed_offsets, nstring
from wire.schema import INT32, INT64, STRING, Field, message

OFFSET_COMMIT_REQUEST = message("OffsetCommitRequest", 8, "2-10", "8+", [
    Field("group_id", STRING),
    Field("generation_id_or_member_epoch", INT32, "1+", default=-1),
    Field("member_id", STRING, "1+"),
    nstring("group_instance_id", "7+"),
    Field("retention_time_ms", INT64, "2-4", default=-1),
    committed_offsets(id_from=10, leader_epoch_from=6),
])

OFFSET_COMMIT_RESPONSE = message("OffsetCommitResponse", 8, "2-10", "8+", [
    Field("throttle_time_ms", INT32, "3+"),
    commit_results(id_from=10),
])
