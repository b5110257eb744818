"""The in-memory partition log, pure-Python twin of ``_core.pyx``.

A log is a list of immutable v2 record batches kept as bytes (or read-only
memoryviews of a segment file, once emulator/storage/store.py maps one back in place
of the copies in memory), with parallel
arrays of their base offsets, last offsets, max timestamps and positions for
binary search (the offset and time indexes). Replicas on other brokers share the
same bytes objects: replication appends references, not copies.

It also keeps the leader-epoch cache (epoch -> start offset), the thing Kafka
uses to answer OffsetForLeaderEpoch and to find where a diverged follower must
truncate.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right

from emulator.log.segments import Segments
from wire.records import (
    HEADER_SIZE,
    InvalidRecordError,
    patch_offsets,
    set_log_append_time,
    validate_batch,
)

UNDEFINED_EPOCH = -1


class Log:
    """One replica's log."""

    __slots__ = (
        "_bases", "_lasts", "_max_ts", "_epochs", "_batches", "_cum_bytes",
        "log_start_offset", "log_end_offset", "_epoch_starts", "_epoch_ids",
        "max_timestamp", "max_timestamp_offset", "segments", "_held", "_held_base",
        "_held_ts",
    )

    def __init__(self, start_offset: int = 0) -> None:
        self._bases: list[int] = []
        self._lasts: list[int] = []
        self._max_ts: list[int] = []  # running maximum, so bisect finds a time
        self._epochs: list[int] = []
        self._batches: list[bytes | memoryview] = []
        self._cum_bytes: list[int] = []  # bytes up to and including batch i
        self.log_start_offset = start_offset
        self.log_end_offset = start_offset
        self._epoch_ids: list[int] = []
        self._epoch_starts: list[int] = []
        self.max_timestamp = -1
        self.max_timestamp_offset = -1
        self.segments = Segments(start_offset)
        # The batch carrying the largest timestamp of those DeleteRecords put below the
        # log start while their segment is kept (its base offset, its max timestamp):
        # Kafka's MAX_TIMESTAMP looks at every segment, not only from the log start on.
        self._held: bytes | memoryview | None = None
        self._held_base = -1
        self._held_ts = -1

    # ---- segments -------------------------------------------------------------
    def maybe_roll(self, incoming: int, segment_bytes: int, segment_ms: int,
                   now_ms: int) -> bool:
        """Before an append of ``incoming`` bytes: roll the active segment if it is
        full or old (segment.bytes, segment.ms); the append then dates the segment."""
        segs = self.segments
        rolled = segs.should_roll(self.bytes_between(segs.active_base, self.log_end_offset),
                                  incoming, segment_bytes, segment_ms, now_ms)
        if rolled:
            segs.roll(self.log_end_offset)  # on_append dates the new segment
        segs.on_append(now_ms)
        return rolled

    def roll(self, now_ms: int = -1) -> bool:
        """Close the active segment now (a forced roll); False if it is empty."""
        return self.segments.roll(self.log_end_offset, now_ms)

    def segment_ranges(self) -> list[tuple[int, int]]:
        """(base offset, end offset) of every segment, the active one last."""
        return self.segments.ranges(self.log_end_offset)

    def replace_batches(self, start: int, end: int,
                        batches: list[tuple[bytes | memoryview, int, int, int, int]]) -> None:
        """Swap the batches lying wholly in [start, end) for ``batches`` (the cleaner's
        output, or the same records read back from disk); offsets are kept, so the
        log end, log start and leader-epoch cache do not move."""
        keep = [e for e in self.batches_from(-(1 << 62), 1 << 62)  # every batch, even below 0
                if e[2] < start or e[1] >= end]
        limit = self.log_end_offset
        merged = sorted(keep + [b for b in batches if b[2] < limit], key=lambda e: e[1])
        lso, leo = self.log_start_offset, self.log_end_offset
        ids, starts = self._epoch_ids, self._epoch_starts
        del self._bases[:], self._lasts[:], self._max_ts[:], self._epochs[:]
        del self._batches[:], self._cum_bytes[:]
        self.max_timestamp = self.max_timestamp_offset = -1
        for data, base, last, epoch, max_ts in merged:
            self._store(data, base, last, epoch, max_ts)
        if self._max_ts and self._max_ts[0] != self._batch_max_ts(0):
            self._rescan_max()  # batches_from's running maximum counted dropped batches
        self._epoch_ids, self._epoch_starts = ids, starts
        self.log_start_offset, self.log_end_offset = lso, leo

    # ---- appends --------------------------------------------------------------
    def append_as_leader(
        self, data: bytes | bytearray | memoryview, leader_epoch: int, append_time: int = -1,
        crc_checked: bool = False,
    ) -> tuple[int, int, int]:
        """Validate one batch, assign offsets and epoch, store it.

        Returns (base offset, last offset, max timestamp). ``append_time`` >= 0
        stamps the batch with LogAppendTime. ``crc_checked``: the caller has just
        checked these very bytes' CRC-32C (the produce validator's validate_batch), so
        it is not computed a second time; the other checks (magic, length, record
        count) are kept, they cost nothing and keep the log safe from any caller.
        """
        buf = bytearray(data)
        h = validate_batch(buf, check_crc=not crc_checked)
        base = self.log_end_offset
        patch_offsets(buf, base, leader_epoch)
        max_ts = h.max_timestamp
        if append_time >= 0:
            set_log_append_time(buf, append_time)
            max_ts = append_time
        self._store(bytes(buf), base, base + h.last_offset_delta, leader_epoch, max_ts)
        return base, base + h.last_offset_delta, max_ts

    def append_as_follower(
        self, data: bytes | memoryview, base: int, last: int, epoch: int, max_ts: int
    ) -> None:
        """Append a batch already validated by the leader (shared bytes)."""
        if base < self.log_end_offset:  # a gap is fine: a compacted leader has them
            raise InvalidRecordError(f"follower append at {base} but LEO is {self.log_end_offset}")
        self._store(data, base, last, epoch, max_ts)

    def _store(self, data: bytes | memoryview, base: int, last: int, epoch: int, max_ts: int) -> None:
        if not self._epoch_ids or epoch > self._epoch_ids[-1]:
            self._push_epoch(epoch, base)
        self._bases.append(base)
        self._lasts.append(last)
        prev = self._max_ts[-1] if self._max_ts else -1
        self._max_ts.append(max(prev, max_ts))
        self._epochs.append(epoch)
        self._batches.append(data)
        self._cum_bytes.append((self._cum_bytes[-1] if self._cum_bytes else 0) + len(data))
        if max_ts > self.max_timestamp:
            self.max_timestamp = max_ts
            self.max_timestamp_offset = last
        self.log_end_offset = last + 1

    # ---- reads ----------------------------------------------------------------
    def _index_of(self, offset: int) -> int:
        """Index of the batch containing ``offset`` (or the first after it)."""
        return bisect_left(self._lasts, offset)

    def read(
        self, offset: int, max_bytes: int, max_offset: int, min_one: bool = True
    ) -> list[bytes | memoryview]:
        """Whole batches from the one containing ``offset``, below ``max_offset``.

        At most ``max_bytes``, except that the first batch is returned whole when
        ``min_one`` (KIP-74) so a consumer can always make progress.
        """
        i = self._index_of(offset)
        out: list[bytes | memoryview] = []
        size = 0
        n = len(self._batches)
        while i < n and self._lasts[i] < max_offset:
            b = self._batches[i]
            if size + len(b) > max_bytes and (out or not min_one):
                break
            out.append(b)
            size += len(b)
            i += 1
        return out

    def read_bytes(self, offset: int, max_bytes: int, max_offset: int,
                   min_one: bool = True) -> bytes:
        """``b"".join(self.read(...))``: the batches' bytes in one object."""
        batches = self.read(offset, max_bytes, max_offset, min_one)
        if len(batches) == 1 and type(batches[0]) is bytes:
            return batches[0]
        return b"".join(batches)

    def batches_from(self, offset: int, max_bytes: int) -> list[tuple[bytes | memoryview, int, int, int, int]]:
        """Batches for a follower fetch: (data, base, last, epoch, max_ts)."""
        i = self._index_of(offset)
        out: list[tuple[bytes | memoryview, int, int, int, int]] = []
        size = 0
        while i < len(self._batches):
            b = self._batches[i]
            if out and size + len(b) > max_bytes:
                break
            out.append((b, self._bases[i], self._lasts[i], self._epochs[i], self._max_ts[i]))
            size += len(b)
            i += 1
        return out

    def bytes_between(self, start: int, end: int) -> int:
        """Stored bytes of the batches covering offsets [start, end)."""
        i = self._index_of(start)
        j = self._index_of(end)  # start past every batch: i == j, 0 bytes
        before = self._cum_bytes[i - 1] if i > 0 else 0
        upto = self._cum_bytes[j - 1] if j > 0 else 0
        return max(0, upto - before)

    @property
    def size_bytes(self) -> int:
        if not self._cum_bytes:
            return 0
        return self._cum_bytes[-1]

    @property
    def batch_count(self) -> int:
        return len(self._batches)

    def offset_for_timestamp(self, ts: int) -> tuple[int, int] | None:
        """First batch whose max timestamp >= ts: (base offset, timestamp) or None.

        The caller refines within the batch (records decoded) when it needs the
        exact record, as Kafka's time index does.
        """
        i = bisect_left(self._max_ts, ts)
        if i >= len(self._batches):
            return None
        return self._bases[i], self._max_ts[i]

    def batch_at(self, offset: int) -> bytes | memoryview | None:
        i = self._index_of(offset)
        return self._batches[i] if i < len(self._batches) else None

    def max_timestamp_batch(self) -> bytes | memoryview | None:
        """The batch of the log's first record carrying its largest timestamp (MAX_TIMESTAMP).

        As Kafka's UnifiedLog, over every kept segment: a batch DeleteRecords put below
        the log start still counts until its segment is deleted, and wins a tie (it lies
        at lower offsets). With no timestamps at all (every one -1) the first batch.
        """
        if self._held is not None and self._held_ts >= self.max_timestamp:
            return self._held
        return self.batch_at(self.max_timestamp_offset)

    # ---- epochs -----------------------------------------------------------------
    @property
    def latest_epoch(self) -> int:
        return self._epoch_ids[-1] if self._epoch_ids else UNDEFINED_EPOCH

    def epoch_entries(self) -> list[tuple[int, int]]:
        return list(zip(self._epoch_ids, self._epoch_starts, strict=True))

    def assign_epoch(self, epoch: int, start_offset: int) -> None:
        """Record a new leader epoch starting at ``start_offset`` (becoming leader)."""
        if not self._epoch_ids or epoch > self._epoch_ids[-1]:
            self._push_epoch(epoch, start_offset)

    def _push_epoch(self, epoch: int, start: int) -> None:
        """Add a newer epoch's entry; entries starting at or after ``start`` go first
        (Kafka's LeaderEpochFileCache.assign drops the entries a new one contradicts:
        one a leader recorded when elected, before any append, at the same offset)."""
        while self._epoch_starts and self._epoch_starts[-1] >= start:
            self._epoch_ids.pop()
            self._epoch_starts.pop()
        self._epoch_ids.append(epoch)
        self._epoch_starts.append(start)

    def _epochs_from_start(self) -> None:
        """Kafka's LeaderEpochFileCache.truncateFromStart at the log start, which every
        move of the log start runs (DeleteRecords, retention): the entries starting at
        or before it go, and the last of them comes back starting at it. So an epoch
        older than every entry is answered with the log start (the partition's
        ``epoch_end_offset``), never an offset below it.
        """
        start = self.log_start_offset
        k = bisect_right(self._epoch_starts, start)
        if k:
            epoch = self._epoch_ids[k - 1]
            del self._epoch_ids[:k], self._epoch_starts[:k]
            self._epoch_ids.insert(0, epoch)
            self._epoch_starts.insert(0, start)

    # ---- truncation and retention ----------------------------------------------
    def truncate_to(self, offset: int) -> None:
        """Remove every record at or above ``offset`` (follower divergence)."""
        if offset >= self.log_end_offset:
            # nothing to remove, but Kafka's truncateTo still drops the epoch entries
            # from the log end on (truncateFromEnd): one this replica recorded as a
            # leader elected at its log end that appended nothing
            while self._epoch_starts and self._epoch_starts[-1] >= self.log_end_offset:
                self._epoch_ids.pop()
                self._epoch_starts.pop()
            return
        if self._held is not None and self._held_base >= offset:
            self._held = None
        i = self._index_of(offset)
        if i < len(self._bases) and self._bases[i] < offset:
            i += 1  # keep a batch that straddles (Kafka truncates at batch boundaries)
        del self._bases[i:], self._lasts[i:], self._max_ts[i:], self._epochs[i:]
        del self._batches[i:], self._cum_bytes[i:]
        self.log_end_offset = max(self._lasts[-1] + 1 if self._lasts else offset,
                                  self.log_start_offset)
        if not self._lasts:
            self.log_end_offset = max(offset, self.log_start_offset)
        self.segments.truncate_to(self.log_end_offset)
        while self._epoch_starts and self._epoch_starts[-1] >= self.log_end_offset:
            self._epoch_ids.pop()  # Kafka's truncateFromEnd: every entry from the new end on
            self._epoch_starts.pop()
        self.max_timestamp = self._max_ts[-1] if self._max_ts else -1
        self.max_timestamp_offset = -1
        if self._max_ts:
            j = bisect_left(self._max_ts, self.max_timestamp)
            self.max_timestamp_offset = self._lasts[j]
        if self._max_ts and self._max_ts[0] != self._batch_max_ts(0):
            self._rescan_max()  # the running maximum counts batches dropped before

    def truncate_fully_and_start_at(self, offset: int) -> None:
        """Drop everything; the log restarts empty at ``offset``."""
        for column in (self._bases, self._lasts, self._max_ts, self._epochs, self._batches,
                       self._cum_bytes, self._epoch_ids, self._epoch_starts):
            column.clear()
        self.log_start_offset = self.log_end_offset = offset
        self.max_timestamp = self.max_timestamp_offset = -1
        self.segments.reset(offset)
        self._held = None

    def delete_before(self, offset: int) -> int:
        """Advance the log start offset (DeleteRecords); drops whole batches below it."""
        offset = min(offset, self.log_end_offset)
        if offset <= self.log_start_offset:
            return self.log_start_offset
        self.log_start_offset = offset
        i = bisect_right(self._lasts, offset - 1)
        self.segments.delete_before(offset)
        self._hold(i)
        if i:
            self._drop_head(i)
        self.segments.delete_before(self.log_start_offset)
        self._epochs_from_start()
        return offset

    def _hold(self, i: int) -> None:
        """Before DeleteRecords drops the first ``i`` batches: keep the one carrying the
        largest timestamp among those whose segment stays (every kept segment starts at
        or after the first one's base, and only the segment holding the new log start
        can have batches below it), the one held before if it still wins."""
        kept = self.segments.bases[0]
        if self._held is not None and self._held_base < kept:
            self._held = None
        for k in range(i):
            if self._bases[k] < kept:
                continue
            ts = self._batch_max_ts(k)
            if self._held is None or ts > self._held_ts:
                self._held, self._held_base, self._held_ts = self._batches[k], self._bases[k], ts

    def _drop_head(self, i: int) -> None:
        dropped = self._cum_bytes[i - 1]
        del self._bases[:i], self._lasts[:i], self._max_ts[:i], self._epochs[:i]
        del self._batches[:i], self._cum_bytes[:i]
        self._cum_bytes = [c - dropped for c in self._cum_bytes]
        if self._bases:
            self.log_start_offset = max(self.log_start_offset, self._bases[0])
        else:
            self.log_start_offset = max(self.log_start_offset, self.log_end_offset)
        if self.max_timestamp >= 0 and (not self._bases
                                        or self.max_timestamp_offset < self._bases[0]):
            self._rescan_max()

    def apply_retention(self, now_ms: int, retention_ms: int, retention_bytes: int,
                        max_offset: int) -> int:
        """Delete old batches below ``max_offset`` (the high watermark); returns count."""
        n = 0
        while self._batches and self._lasts[0] < max_offset and len(self._batches) > 1:
            ts = self.segments.retention_time(self._batch_max_ts(0), self._bases[0])
            too_old = retention_ms >= 0 and ts >= 0 and now_ms - ts > retention_ms
            too_big = retention_bytes >= 0 and self.size_bytes - len(self._batches[0]) >= retention_bytes
            if not (too_old or too_big):
                break
            self._drop_head(1)  # the log start moves to the next batch's base
            n += 1
        if n:
            self.segments.delete_before(self.log_start_offset)
            if self._held is not None and self._held_base < self.segments.bases[0]:
                self._held = None
            self._epochs_from_start()
        return n

    def _rescan_max(self) -> None:
        """The batch carrying the largest timestamp was dropped: find the first of those
        left carrying theirs (the running maximum still counts the dropped ones)."""
        self.max_timestamp = self.max_timestamp_offset = -1
        for k in range(len(self._batches)):
            ts = self._batch_max_ts(k)
            if ts > self.max_timestamp:
                self.max_timestamp, self.max_timestamp_offset = ts, self._lasts[k]

    def _batch_max_ts(self, i: int) -> int:
        from wire.records import read_header

        return read_header(self._batches[i]).max_timestamp


__all__ = ["HEADER_SIZE", "Log", "UNDEFINED_EPOCH"]
