"""Log compaction, as Kafka's LogCleaner does it, as pure functions.

``cleanable_range`` is LogCleanerManager's choice of what may be cleaned and
whether it is worth it; ``clean`` is one cleaning pass (Cleaner.doClean): build
the offset map (key -> latest offset) over the dirty section, then rewrite every
segment below the end of that section keeping only

- a record whose offset is the latest for its key (keys not in the map are kept:
  the clean section already holds one record per key);
- a tombstone (null value) only until its batch's delete horizon passes
  (KIP-534: the first cleaning that keeps it stamps the batch with
  now + delete.retention.ms in baseTimestamp and sets attribute bit 6);
- no record without a key (Kafka counts it as invalid and drops it);
- no record of an aborted transaction (the aborted-transaction index);
- a COMMIT/ABORT marker while its transaction still has data in this pass, and
  after that until its delete horizon passes.

Batches keep their base offset and last offset delta (offsets and producer
sequences survive, consumers see gaps), their codec (a compressed batch is
decompressed, filtered and recompressed), leader epoch, producer fields and
record headers. A batch left with nothing is dropped. A batch that loses nothing
and needs no horizon is kept as the very same bytes object.

No I/O and no clock: the caller passes the batches and ``now_ms``.
"""

from __future__ import annotations

import struct
from collections.abc import Generator, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from wire.records import (
    DELETE_HORIZON_BIT,
    TIMESTAMP_TYPE_BIT,
    BatchHeader,
    Record,
    decode_records,
    read_header,
    rebuild_batch,
)

if TYPE_CHECKING:
    from emulator.log import Log

# (data, base offset, last offset, leader epoch, max timestamp), as Log.batches_from
Entry = tuple[bytes | memoryview, int, int, int, int]
MAX_LONG = (1 << 63) - 1


@dataclass(frozen=True, slots=True)
class CleanerConfig:
    """The topic configs the cleaner reads, with Kafka's defaults."""

    delete_retention_ms: int = 86_400_000
    min_compaction_lag_ms: int = 0
    max_compaction_lag_ms: int = MAX_LONG
    min_cleanable_dirty_ratio: float = 0.5


@dataclass(slots=True)
class CleanableRange:
    """LogToClean: the dirty section [first_dirty, end) and its ratio."""

    first_dirty: int
    end: int
    clean_bytes: int
    dirty_bytes: int
    must_clean: bool  # max.compaction.lag.ms passed: clean whatever the ratio

    @property
    def ratio(self) -> float:
        total = self.clean_bytes + self.dirty_bytes
        return self.dirty_bytes / total if total else 0.0

    def needs_cleaning(self, cfg: CleanerConfig) -> bool:
        if self.dirty_bytes <= 0 or self.end <= self.first_dirty:
            return False
        return self.must_clean or self.ratio > cfg.min_cleanable_dirty_ratio


@dataclass(slots=True)
class CleanResult:
    """One pass: the rewritten batches of [start, end) and the pass's figures."""

    start: int
    end: int
    batches: list[Entry]
    bytes_read: int = 0
    bytes_written: int = 0
    records_read: int = 0
    records_removed: int = 0
    map_keys: int = 0
    stats: dict[str, int] = field(default_factory=dict)


def _segment_max_ts(log: Log, base: int, end: int) -> int:
    ts = -1
    for data, _b, last, _e, _m in log.batches_from(base, MAX_LONG):
        if last >= end:
            break
        ts = max(ts, read_header(data).max_timestamp)
    return ts


def cleanable_range(log: Log, first_dirty: int, last_stable_offset: int, now_ms: int,
                    cfg: CleanerConfig) -> CleanableRange:
    """LogCleanerManager.cleanableOffsets: where the dirty section starts and ends.

    It ends at the earliest of: the active segment (never cleaned), the segment
    holding the last stable offset (open transactions are not cleaned), and the
    first segment younger than min.compaction.lag.ms; always on a segment boundary.
    """
    first_dirty = max(first_dirty, log.log_start_offset)
    ranges = log.segment_ranges()
    limit = min(log.segments.active_base, last_stable_offset)
    end = first_dirty
    must_clean = False
    for base, seg_end in ranges[:-1]:
        if seg_end > limit:
            break
        if seg_end <= first_dirty:
            continue
        if cfg.min_compaction_lag_ms > 0:
            if _segment_max_ts(log, base, seg_end) > now_ms - cfg.min_compaction_lag_ms:
                break
        if end == first_dirty and cfg.max_compaction_lag_ms < MAX_LONG:
            first = log.batches_from(max(base, first_dirty), 1)
            if first and now_ms - read_header(first[0][0]).max_timestamp \
                    > cfg.max_compaction_lag_ms:
                must_clean = True
        end = seg_end
    return CleanableRange(
        first_dirty, end, log.bytes_between(log.log_start_offset, first_dirty),
        log.bytes_between(first_dirty, end) if end > first_dirty else 0, must_clean)


def _is_aborted(h: BatchHeader, aborted: Iterable[tuple[int, int, int]]) -> bool:
    return any(pid == h.producer_id and first <= h.base_offset <= last
               for pid, first, last in aborted)


def _horizon(h: BatchHeader) -> int | None:
    return h.base_timestamp if h.attributes & DELETE_HORIZON_BIT else None


def _map_steps(entries: list[Entry], first_dirty: int, end: int,
               aborted: list[tuple[int, int, int]], offsets: dict[bytes, int],
               step_records: int) -> Iterator[None]:
    """Cleaner.buildOffsetMap: key -> its latest offset in [first_dirty, end),
    skipping control batches and aborted transactions; yields every ~step_records."""
    done = 0
    for data, base, last, _e, _m in entries:
        if last < first_dirty or base >= end:
            continue
        h = read_header(data)
        if h.is_control or (h.is_transactional and _is_aborted(h, aborted)):
            continue
        for r in decode_records(data):
            if r.key is not None and first_dirty <= r.offset < end:
                offsets[r.key] = r.offset
        done += h.record_count
        if done >= step_records:
            done = 0
            yield


def build_offset_map(entries: list[Entry], first_dirty: int, end: int,
                     aborted: list[tuple[int, int, int]]) -> dict[bytes, int]:
    offsets: dict[bytes, int] = {}
    for _ in _map_steps(entries, first_dirty, end, aborted, offsets, 1 << 62):
        pass
    return offsets


def clean(entries: list[Entry], first_dirty: int, end: int,
          aborted: list[tuple[int, int, int]], now_ms: int,
          cfg: CleanerConfig) -> CleanResult:
    """One cleaning pass over ``entries`` (the log's batches below ``end``).

    ``aborted`` holds (producer id, first offset, marker offset) of aborted
    transactions. Returns the batches that replace [entries' start, end).
    """
    steps = cleaning(entries, first_dirty, end, aborted, now_ms, cfg, 1 << 62)
    while True:
        try:
            next(steps)
        except StopIteration as done:
            result: CleanResult = done.value
            return result


def cleaning(entries: list[Entry], first_dirty: int, end: int,
             aborted: list[tuple[int, int, int]], now_ms: int, cfg: CleanerConfig,
             step_records: int) -> Generator[None, None, CleanResult]:
    """``clean`` in steps: yields after about ``step_records`` records, so a caller
    can interleave other work (the server serves requests between steps)."""
    offsets: dict[bytes, int] = {}
    yield from _map_steps(entries, first_dirty, end, aborted, offsets, step_records)
    start = entries[0][1] if entries else end
    res = CleanResult(start, end, [], map_keys=len(offsets))
    txn_has_data: set[int] = set()  # producers whose open txn had batches in this pass
    done = 0
    for entry in entries:
        data, base, last, epoch, _max_ts = entry
        if last >= end:
            break
        h = read_header(data)
        res.bytes_read += len(data)
        res.records_read += h.record_count
        done += h.record_count
        if done >= step_records:
            done = 0
            yield
        horizon = _horizon(h)
        if h.is_control:
            had_data = h.producer_id in txn_has_data
            txn_has_data.discard(h.producer_id)
            if not had_data and horizon is not None and now_ms >= horizon:
                res.records_removed += h.record_count
                continue
            if horizon is None:
                data = _restamp(h, decode_records(data), now_ms + cfg.delete_retention_ms)
        elif h.is_transactional and _is_aborted(h, aborted):
            txn_has_data.add(h.producer_id)
            res.records_removed += h.record_count
            continue
        else:
            if h.is_transactional:
                txn_has_data.add(h.producer_id)
            records = decode_records(data)
            kept: list[Record] = []
            tombstones = False
            for r in records:
                if r.key is None or r.offset < offsets.get(r.key, -1):
                    continue
                if r.value is None:
                    if horizon is not None and now_ms >= horizon:
                        continue
                    tombstones = True
                kept.append(r)
            res.records_removed += len(records) - len(kept)
            if not kept:
                continue
            stamp = tombstones and horizon is None
            if stamp:
                data = _restamp(h, kept, now_ms + cfg.delete_retention_ms)
            elif len(kept) != len(records):
                data = _rewrite(h, kept, horizon)
        res.bytes_written += len(data)
        res.batches.append((data, base, last, epoch, read_header(data).max_timestamp))
    return res


def _max_ts(h: BatchHeader, records: list[Record]) -> int:
    if h.attributes & TIMESTAMP_TYPE_BIT:
        return h.max_timestamp  # LogAppendTime: the broker's stamp stays
    return max(r.timestamp for r in records)


def _rewrite(h: BatchHeader, records: list[Record], horizon: int | None) -> bytes:
    base_ts = horizon if horizon is not None else min(r.timestamp for r in records)
    return rebuild_batch(h, records, attributes=h.attributes & 0xFFFF, base_timestamp=base_ts,
                         max_timestamp=_max_ts(h, records))


def _restamp(h: BatchHeader, records: list[Record], horizon: int) -> bytes:
    """Rewrite with the delete horizon in baseTimestamp (record deltas follow it)."""
    return rebuild_batch(h, records, attributes=(h.attributes | DELETE_HORIZON_BIT) & 0xFFFF,
                         base_timestamp=horizon, max_timestamp=_max_ts(h, records))


def control_type(data: bytes) -> int:
    """0 = ABORT, 1 = COMMIT: the control record key's type field."""
    key = decode_records(data)[0].key or b"\0\0\0\0"
    kind: int = struct.unpack(">hh", key[:4])[1]
    return kind


__all__ = [
    "CleanResult", "CleanableRange", "CleanerConfig", "build_offset_map", "clean",
    "cleanable_range", "cleaning", "control_type",
]
