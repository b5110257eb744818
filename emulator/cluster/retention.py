"""DeleteRecords and time/size retention: moving the log start offset forward.

Above the cluster's data; the leader's log moves first and every follower follows
(a follower never keeps records below the leader's log start offset).
"""

from __future__ import annotations

import heapq

from emulator.cluster.configs import ConfigDict
from emulator.cluster.metadata import ClusterMetadata
from emulator.cluster.partition import Partition
from emulator.log import Log
from wire.errors import ErrorCode as E
from wire.errors import KafkaError


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


# Where a record batch keeps its largest timestamp (Kafka's v2 batch header).
_MAX_TIMESTAMP = slice(35, 43)


class RetentionSchedule:
    """Which partitions a retention pass looks at: the deadline-driven part of retention.

    A partition's retention can only find something new to delete when its inputs move
    or when time passes its deadline. The inputs - the leader's log, the high watermark,
    the leader, the topic's configs - move through replication (which adds every
    partition it visits to ``ClusterMetadata.retention_marks``: appends, high watermark
    moves, leader changes and DeleteRecords all touch the partition, so a tick visits
    it), the log cleaner (which marks what it cleans) and config changes
    (``ConfigDict.generation``: the next pass is a full one). Time: a log keeps its
    oldest batch until ``now - its max timestamp > retention.ms``, so after each visit a
    partition whose oldest batch could go by time alone is filed under the first
    millisecond it may (``deadlines``); size retention changes only with the log.
    A pass then visits the marked partitions and those whose deadline has come: a
    produce round over 10,000 partitions no longer costs 10,000 log calls a second.
    """

    def __init__(self) -> None:
        self.deadlines: list[tuple[int, int, Partition]] = []  # (deadline, seq, partition)
        self.due_at: dict[Partition, int] = {}  # the live deadline (heap entries go stale)
        self.seq = 0
        self.generation = -1  # ConfigDict.generation at the last full pass
        self.visits = 0  # partitions visited by passes, ever: tests count the work done

    def file(self, state: ClusterMetadata, p: Partition, deadline: int | None) -> None:
        """After a visit: file ``p`` under its time deadline, or under none."""
        if deadline is None:
            self.due_at.pop(p, None)
            return
        if self.due_at.get(p) == deadline:
            return  # the heap already holds this one
        self.due_at[p] = deadline
        self.seq += 1
        heapq.heappush(self.deadlines, (deadline, self.seq, p))
        if len(self.deadlines) > 2 * len(self.due_at) + 64:
            # stale entries (deadlines that moved) would otherwise wait for their time
            self.due_at = {q: d for q, d in self.due_at.items() if state.is_current(q)}
            self.deadlines = [(d, i, q) for i, (q, d) in enumerate(self.due_at.items())]
            heapq.heapify(self.deadlines)

    def due(self, now: int) -> set[Partition]:
        """The partitions whose deadline has come (taken off the schedule)."""
        out: set[Partition] = set()
        heap = self.deadlines
        while heap and heap[0][0] <= now:
            deadline, _, p = heapq.heappop(heap)
            if self.due_at.get(p) == deadline:
                del self.due_at[p]
                out.add(p)
        return out


def apply_retention(state: ClusterMetadata, schedule: RetentionSchedule | None = None,
                    full: bool = True) -> None:
    """Time and size retention. ``full`` (tests, tools: logs changed by hand) looks at
    every partition; otherwise (the server, every second) only at the partitions the
    ``schedule`` says may have something to delete. A config change makes the next pass
    a full one."""
    now = state.now()
    if schedule is None:
        schedule = RetentionSchedule()
    if full or schedule.generation != ConfigDict.generation:
        schedule.generation = ConfigDict.generation
        state.retention_marks = set()
        schedule.deadlines, schedule.due_at = [], {}
        for t in state.topics.values():
            delete, rms, rbytes = state.retention_configs(t)
            if delete and (rms >= 0 or rbytes >= 0):  # compact only: the cleaner's work
                for p in t.partitions:
                    _visit(state, schedule, p, rms, rbytes, now)
        return
    parts = state.retention_marks
    state.retention_marks = set()
    parts |= schedule.due(now)
    # (in no particular order: a visit's effects - touch, changed - are sets)
    for p in parts:
        topic = state.topics.get(p.topic)
        if topic is None or p.index >= len(topic.partitions) or topic.partitions[p.index] is not p:
            schedule.file(state, p, None)  # its topic was deleted
            continue
        delete, rms, rbytes = state.retention_configs(topic)
        if delete and (rms >= 0 or rbytes >= 0):
            _visit(state, schedule, p, rms, rbytes, now)
        else:
            schedule.file(state, p, None)


def _visit(state: ClusterMetadata, schedule: RetentionSchedule, p: Partition, rms: int,
           rbytes: int, now: int) -> None:
    """Delete what retention allows of ``p``, then file it under its next deadline."""
    schedule.visits += 1
    # A log keeps its last batch and deletes nothing at or above the high watermark:
    # idle and single-batch partitions are passed over without a call.
    hw = p.high_watermark
    if hw <= 0 or p.leader < 0:
        schedule.file(state, p, None)
        return
    log = p.logs[p.leader]
    if hw > log.log_start_offset and log.batch_count >= 2 \
            and log.apply_retention(now, rms, rbytes, hw):
        for b, follower_log in p.logs.items():
            if b != p.leader:
                follower_log.delete_before(log.log_start_offset)
        state.touch(p)
        state.changed(partitions_only=True, keys=(p.key,))
    schedule.file(state, p, _time_deadline(log, rms, now))


def _time_deadline(log: Log, rms: int, now: int) -> int | None:
    """The first millisecond the oldest batch may go by time (``now - max timestamp >
    retention.ms``), if that is still to come and another batch follows it. A batch
    already that old and still here waits for the high watermark or for another batch:
    replication marks the partition when either moves."""
    if rms < 0 or log.batch_count < 2:
        return None
    head = log.batch_at(log.log_start_offset)
    if head is None:
        return None
    ts = log.segments.retention_time(
        int.from_bytes(bytes(head[_MAX_TIMESTAMP]), "big", signed=True), log.log_start_offset)
    if ts < 0:
        return None  # no timestamp and no append time known: never by time
    deadline = ts + rms + 1
    return deadline if deadline > now else None
