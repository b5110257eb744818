"""The log cleaner's scheduling: which partition to clean, and applying the result.

Kafka's LogCleanerManager picks the compacted log with the highest dirty ratio
(or one past max.compaction.lag.ms) and a cleaner thread cleans it. Here the
server calls ``LogCleaner.step`` between requests: a pass covers one partition
and at most ``log.cleaner.io.max.bytes.per.pass`` dirty bytes (rounded to whole
segments), and runs in steps of ``step_records`` records, so a produce or fetch
waits at most one step (bench/storage.py measures the stall). The pass is the
pure ``emulator.log.cleaner.cleaning``, fed a snapshot of the leader's batches;
if the partition moved on meanwhile (new leader, truncation) the result is
dropped and the next step starts afresh. This module feeds it a leader's batches and puts
the cleaned batches into every replica's log at the same offsets, so followers
and reassignment targets see the same compacted log. ``log_cleaned`` events
tell an on-disk store which offsets were rewritten.

Above the cluster's data; reads configs and time from it, does no I/O.
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass, field

from emulator.cluster.events import LogCleaned
from emulator.cluster.metadata import ClusterMetadata, Topic
from emulator.cluster.partition import Partition
from emulator.log import Log
from emulator.log.cleaner import (
    CleanableRange,
    CleanerConfig,
    CleanResult,
    cleanable_range,
    cleaning,
)

# A partition to clean: (must clean, dirty ratio, topic, partition, (range, config)).
Candidate = tuple[bool, float, Topic, Partition, tuple[CleanableRange, CleanerConfig]]

MAX_LONG = (1 << 63) - 1
DEFAULT_PASS_BYTES = 16 * 1024 * 1024
STEP_RECORDS = 500  # records decoded per step: about 10 ms of pure Python


def is_compacted(state: ClusterMetadata, t: Topic) -> bool:
    return "compact" in state.topic_config(t, "cleanup.policy").replace(" ", "").split(",")


def cleaner_config(state: ClusterMetadata, t: Topic) -> CleanerConfig:
    return CleanerConfig(
        delete_retention_ms=int(state.topic_config(t, "delete.retention.ms")),
        min_compaction_lag_ms=int(state.topic_config(t, "min.compaction.lag.ms")),
        max_compaction_lag_ms=int(state.topic_config(t, "max.compaction.lag.ms")),
        min_cleanable_dirty_ratio=float(state.topic_config(t, "min.cleanable.dirty.ratio")),
    )


@dataclass(slots=True)
class CleanerStats:
    """What Kafka's LogCleaner and LogCleanerManager report (their metric names)."""

    passes: int = 0
    bytes_read: int = 0
    bytes_written: int = 0
    records_removed: int = 0
    last_run_ms: int = -1
    max_clean_time_ms: int = 0          # max-clean-time-secs (of the last pass)
    recopy_percent: float = 0.0         # cleaner-recopy-percent (of the last pass)
    max_buffer_utilization: float = 0.0  # max-buffer-utilization-percent
    max_dirty_percent: float = 0.0      # max-dirty-percent
    max_compaction_delay_ms: int = 0    # max-compaction-delay-secs
    uncleanable_partitions: set[tuple[bytes, int]] = field(default_factory=set)


@dataclass(slots=True)
class CleaningJob:
    """A pass under way: the partition as it was when the pass began, and the steps."""

    partition: Partition
    leader: int
    leader_epoch: int
    first_dirty: int
    end: int
    dirty: int
    started_ms: int
    steps: Generator[None, None, CleanResult]


class LogCleaner:
    """Per-partition cleaner checkpoints (first dirty offset) and one-pass runs."""

    def __init__(self, state: ClusterMetadata) -> None:
        self.state = state
        # Kafka's cleaner-offset-checkpoint: where the dirty section starts
        # keyed by topic id: a topic deleted and created again starts dirty
        self.checkpoints: dict[tuple[bytes, int], int] = {}
        self.stats = CleanerStats()
        self.job: CleaningJob | None = None
        self.last_result: CleanResult | None = None
        self.step_records = STEP_RECORDS

    def pass_bytes(self) -> int:
        v = self.state.config.get("log.cleaner.io.max.bytes.per.pass")
        return int(v) if v else DEFAULT_PASS_BYTES

    def candidates(self, now: int) -> list[Candidate]:
        """Compacted leaders that need cleaning, the most urgent first."""
        out: list[Candidate] = []
        max_dirty = 0.0
        delay = 0
        for t in self.state.topics.values():
            if not is_compacted(self.state, t):
                continue
            cfg = cleaner_config(self.state, t)
            for p in t.partitions:
                if p.leader < 0 or p.leader not in p.logs or \
                        (p.topic_id, p.index) in self.stats.uncleanable_partitions:
                    continue
                log = p.leader_log
                first_dirty = min(self.checkpoints.get((p.topic_id, p.index), 0),
                                  log.log_end_offset)
                rng = cleanable_range(log, first_dirty, p.last_stable_offset(), now, cfg)
                max_dirty = max(max_dirty, rng.ratio)
                if rng.must_clean:
                    first = log.batches_from(rng.first_dirty, 1)
                    if first:
                        delay = max(delay, now - first[0][4] - cfg.max_compaction_lag_ms)
                if rng.needs_cleaning(cfg):
                    out.append((rng.must_clean, rng.ratio, t, p, (rng, cfg)))
        self.stats.max_dirty_percent = 100.0 * max_dirty
        self.stats.max_compaction_delay_ms = max(0, delay)
        out.sort(key=lambda c: (not c[0], -c[1]))
        return out

    def run(self) -> CleanResult | None:
        """One whole pass over the most urgent partition; None when nothing needs it."""
        result = None
        while self.step():
            if self.last_result is not None:
                result, self.last_result = self.last_result, None
                break
        return result

    def step(self) -> bool:
        """Advance the current pass by about ``step_records`` records (starting one if
        a partition needs it); False when there is nothing to do. The server calls this
        between requests, so produce and fetch wait at most one step."""
        now = self.state.now()
        if self.job is None:
            self.stats.last_run_ms = now
            todo = self.candidates(now)
            if not todo:
                return False
            _, _, _t, p, (rng, cfg) = todo[0]
            try:
                self.job = self._start(p, rng.first_dirty, rng.end, cfg, now)
            except Exception:
                self.stats.uncleanable_partitions.add((p.topic_id, p.index))
                raise
        job = self.job
        try:
            next(job.steps)
        except StopIteration as done:
            self.job = None
            self.last_result = self._finish(job, done.value)
        return True

    def mark_uncleanable(self) -> None:
        """The pass under way failed (our bug, or a batch it cannot read): like Kafka's
        LogCleanerManager.markPartitionUncleanable, leave that partition alone from now
        on (uncleanable_partitions_count) instead of failing on it forever."""
        if self.job is not None:
            p = self.job.partition
            self.stats.uncleanable_partitions.add((p.topic_id, p.index))
        self.job = None

    def _start(self, p: Partition, first_dirty: int, end: int, cfg: CleanerConfig,
               now: int) -> CleaningJob:
        leader_log = p.leader_log
        end = self._bounded_end(leader_log, first_dirty, end)
        entries = [e for e in leader_log.batches_from(leader_log.log_start_offset, MAX_LONG)
                   if e[2] < end]
        aborted = [(a.producer_id, a.first_offset, a.last_offset) for a in p.aborted]
        return CleaningJob(p, p.leader, p.leader_epoch, first_dirty, end,
                           leader_log.bytes_between(first_dirty, end), now,
                           cleaning(entries, first_dirty, end, aborted, now, cfg,
                                    self.step_records))

    def clean_partition(self, p: Partition, first_dirty: int, end: int, cfg: CleanerConfig,
                        now: int) -> CleanResult | None:
        """A whole pass over ``p`` at once (tests, tools)."""
        job = self._start(p, first_dirty, end, cfg, now)
        while True:
            try:
                next(job.steps)
            except StopIteration as done:
                return self._finish(job, done.value)

    def _finish(self, job: CleaningJob, res: CleanResult) -> CleanResult | None:
        """Swap the cleaned batches in, unless the partition moved on meanwhile (a new
        leader, a truncation below the cleaned range, the topic gone)."""
        p = job.partition
        t = self.state.topics.get(p.topic)
        if (t is None or t.id != p.topic_id or p.leader != job.leader
                or p.leader_epoch != job.leader_epoch or p.leader not in p.logs
                or p.leader_log.log_end_offset < job.end):
            return None
        for log in p.logs.values():
            cleaned = [b for b in res.batches if b[2] >= log.log_start_offset]
            log.replace_batches(res.start, res.end, cleaned)
        self.checkpoints[(p.topic_id, p.index)] = job.end
        self.state.retention_marks.add(p)  # its oldest batch may have changed
        self._account(res, job.dirty, job.started_ms)
        self.state.emit(LogCleaned(topic=p.topic, partition=p.index, start=res.start,
                        end=res.end))
        self.state.changed(partitions_only=True)
        return res

    def _bounded_end(self, log: Log, first_dirty: int, end: int) -> int:
        """Stop after the first segment past the per-pass byte budget (at least one)."""
        budget = self.pass_bytes()
        for _base, seg_end in log.segment_ranges():
            if seg_end <= first_dirty:
                continue
            if seg_end >= end:
                break
            if log.bytes_between(first_dirty, seg_end) >= budget:
                return seg_end
        return end

    def _account(self, res: CleanResult, dirty: int, now: int) -> None:
        s = self.stats
        s.passes += 1
        s.bytes_read += res.bytes_read
        s.bytes_written += res.bytes_written
        s.records_removed += res.records_removed
        s.recopy_percent = 100.0 * res.bytes_written / res.bytes_read if res.bytes_read else 0.0
        s.max_buffer_utilization = 100.0 * dirty / max(1, self.pass_bytes())
        s.max_clean_time_ms = max(0, self.state.now() - now)  # the pass, steps included


__all__ = ["CleanerStats", "LogCleaner", "cleaner_config", "is_compacted"]
