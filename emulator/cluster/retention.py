"""DeleteRecords and time/size retention: moving the log start offset forward.

Above the cluster's data; the leader's log moves first and every follower follows
(a follower never keeps records below the leader's log start offset).
"""

from __future__ import annotations

from emulator.cluster.metadata import ClusterMetadata
from emulator.cluster.partition import KafkaError
from wire.errors import ErrorCode as E


def delete_records(state: ClusterMetadata, topic: str, index: int, offset: int) -> int:
    p = state.get_partition(topic, index)
    if p.leader < 0:
        raise KafkaError(E.LEADER_NOT_AVAILABLE)
    if offset == -1:
        offset = p.high_watermark
    if offset < 0 or offset > p.high_watermark:
        raise KafkaError(E.OFFSET_OUT_OF_RANGE)
    low = p.leader_log.delete_before(offset)
    for b, log in p.logs.items():
        if b != p.leader:
            log.delete_before(min(low, log.log_end_offset))
    state.touch(p)
    state.changed(partitions_only=True, keys=(p.key,))
    return low


def apply_retention(state: ClusterMetadata) -> None:
    now = state.now()
    for t in state.topics.values():
        policy = state.topic_config(t, "cleanup.policy").replace(" ", "").split(",")
        if "delete" not in policy:
            continue  # compact only: the cleaner, not retention, removes records
        rms = int(state.topic_config(t, "retention.ms"))
        rbytes = int(state.topic_config(t, "retention.bytes"))
        if rms < 0 and rbytes < 0:
            continue
        for p in t.partitions:
            # A log keeps its last batch and deletes nothing at or above the high
            # watermark: idle and single-batch partitions are passed over without a call
            # (this runs every second over every partition).
            hw = p.high_watermark
            if hw <= 0 or p.leader < 0:
                continue
            log = p.logs[p.leader]
            if hw <= log.log_start_offset or log.batch_count < 2:
                continue
            if log.apply_retention(now, rms, rbytes, hw):
                for b, log in p.logs.items():
                    if b != p.leader:
                        log.delete_before(p.leader_log.log_start_offset)
                state.touch(p)
                state.changed(partitions_only=True, keys=(p.key,))
