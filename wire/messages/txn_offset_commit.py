"""TxnOffsetCommit (key 28)."""

from wire.messages.common import commit_results, committed_offsets, nstring
from wire.schema import INT16, INT32, INT64, STRING, Field, message

TXN_OFFSET_COMMIT_REQUEST = message("TxnOffsetCommitRequest", 28, "0-6", "3+", [
    Field("transactional_id", STRING),
    Field("group_id", STRING),
    Field("producer_id", INT64),
    Field("producer_epoch", INT16),
    Field("generation_id_or_member_epoch", INT32, "3+", default=-1),
    Field("member_id", STRING, "3+"),
    nstring("group_instance_id", "3+"),
    committed_offsets(id_from=6, leader_epoch_from=2),
])

TXN_OFFSET_COMMIT_RESPONSE = message("TxnOffsetCommitResponse", 28, "0-6", "3+", [
    Field("throttle_time_ms", INT32),
    commit_results(id_from=6),
])
