"""ListOffsets on a leader's log: special timestamps, time lookups, KIP-207.

Reads only; above the cluster's data (``emulator.cluster.metadata``), beside
replication. Records are decoded only for a timestamp lookup, never on the
produce or fetch path.
"""

from __future__ import annotations

from emulator.cluster.metadata import ClusterMetadata
from emulator.log import Log
from wire.errors import ErrorCode as E
from wire.errors import KafkaError
from wire.records import InvalidRecordError, iter_timestamps, read_header


def list_offset(state: ClusterMetadata, broker_id: int, topic: str, index: int, timestamp: int,
                isolation: int, current_leader_epoch: int = -1,
                client: bool = True) -> tuple[int, int, int]:
    """(offset, timestamp, leader epoch) for ListOffsets' special and real timestamps.

    A newly elected leader's high watermark is its last one as a follower, which
    can lag the offsets clients already saw. Like Kafka (KIP-207), a client's
    LATEST, or a timestamp lookup that finds nothing below the high watermark,
    gets the retriable OFFSET_NOT_AVAILABLE until the high watermark reaches the
    start of the leader's epoch; otherwise offsets seen by a consumer could go
    backwards, which Spark's connector reports as data loss. Without that lag, what a
    lookup finds at or above the high watermark (MAX_TIMESTAMP's record) is nothing,
    as Kafka's ReplicaManager answers.
    """
    p = state.get_partition(topic, index)
    p.check_leader(broker_id, current_leader_epoch)
    log = p.leader_log
    if client:
        limit = p.last_stable_offset() if isolation == 1 else p.high_watermark
    else:  # a replica's request reads up to the log end (isolation level undefined)
        limit = log.log_end_offset
    if timestamp in (-2, -4):  # EARLIEST, EARLIEST_LOCAL
        return log.log_start_offset, -1, p.leader_epoch
    if timestamp in (-5, -6):  # LATEST_TIERED, EARLIEST_PENDING_UPLOAD: no tiered storage
        return -1, -1, -1
    lagging = client and p.leader_epoch_start() > p.high_watermark
    if timestamp == -1:  # LATEST
        if lagging:
            raise KafkaError(E.OFFSET_NOT_AVAILABLE)
        return limit, -1, p.leader_epoch
    if timestamp == -3:  # MAX_TIMESTAMP
        found = _exact_max_timestamp(log)
    else:
        found = _offset_for_time(log, timestamp, limit)
    if found is None or found[0] >= limit:  # nothing, or nothing a client may read yet
        if lagging:
            raise KafkaError(E.OFFSET_NOT_AVAILABLE)
        return -1, -1, -1
    return found


def _exact_max_timestamp(log: Log) -> tuple[int, int, int] | None:
    """The first record carrying the log's largest timestamp, over every kept segment:
    after DeleteRecords, Kafka 4.4 still answers a record below the log start offset
    until retention deletes its segment. When no record carries one (every timestamp
    -1), Kafka 4.4 answers the first record with timestamp -1; an empty log nothing."""
    batch = log.max_timestamp_batch()
    if batch is None:
        return None
    h = read_header(batch)
    try:
        offset, ts = max(iter_timestamps(batch), key=lambda r: (r[1], -r[0]))
    except (InvalidRecordError, IndexError):  # unreadable or past the bound: the header
        return h.last_offset, h.max_timestamp, h.partition_leader_epoch
    return offset, ts, h.partition_leader_epoch


def _offset_for_time(log: Log, ts: int, limit: int) -> tuple[int, int, int] | None:
    """The first record at or after ``ts`` from the log start on and below ``limit``, as
    (offset, timestamp, its batch's leader epoch); None when there is none."""
    found = log.offset_for_timestamp(ts)
    while found is not None:
        base, _ = found
        if base >= limit:  # this batch and those after it: nothing below the limit
            return None
        batch = log.batch_at(base)
        # offset_for_timestamp named a batch of this log, and nothing ran since
        assert batch is not None
        h = read_header(batch)
        try:
            for offset, rts in iter_timestamps(batch):
                if rts >= ts and log.log_start_offset <= offset < limit:
                    return offset, rts, h.partition_leader_epoch
        except (InvalidRecordError, IndexError):  # unreadable: the batch, as its header says
            if h.max_timestamp >= ts and log.log_start_offset <= h.base_offset < limit:
                return max(h.base_offset, log.log_start_offset), h.max_timestamp, \
                    h.partition_leader_epoch
        found = _next_batch(log, h.last_offset + 1)
    return None


def _next_batch(log: Log, offset: int) -> tuple[int, int] | None:
    batch = log.batch_at(offset)
    if batch is None:
        return None
    h = read_header(batch)
    return h.base_offset, h.max_timestamp
