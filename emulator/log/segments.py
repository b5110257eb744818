"""Segment bookkeeping shared by both log twins (``pure.Log`` and ``_core.Log``).

A Kafka log is a sequence of segments, each starting at a base offset; only the
last one (the *active* segment) takes appends, and a segment is rolled when it
would grow past ``segment.bytes`` or has been open longer than ``segment.ms``.
The cleaner never touches the active segment, retention deletes whole segments,
and an on-disk store keeps one file per segment.

Here the batches stay in the log's own arrays; a segment is only its base offset,
the time its first batch was appended (the roll clock, as Kafka's
``rollingBasedTimestamp`` falls back to the segment's creation time) and the time of its
last append (what time retention reads for records without a timestamp, as Kafka's
``LogSegment.largestTimestamp`` falls back to the file's last-modified time). Keeping it
in one small Python class means both twins roll at exactly the same points.
"""

from __future__ import annotations

from bisect import bisect_right


class Segments:
    """Base offsets of a log's segments, oldest first; the last one is active."""

    __slots__ = ("bases", "created_ms", "written_ms")

    def __init__(self, start_offset: int = 0) -> None:
        self.bases: list[int] = [start_offset]
        self.created_ms: list[int] = [-1]  # -1: no batch appended yet
        self.written_ms: list[int] = [-1]  # the last append's time; -1: none seen

    @property
    def active_base(self) -> int:
        return self.bases[-1]

    def on_append(self, now_ms: int) -> None:
        if self.created_ms[-1] < 0:
            self.created_ms[-1] = now_ms
        self.written_ms[-1] = now_ms

    def should_roll(self, active_bytes: int, incoming: int, segment_bytes: int,
                    segment_ms: int, now_ms: int) -> bool:
        """Kafka's LogSegment.shouldRoll, minus the index-full conditions."""
        if active_bytes <= 0:
            return False  # an empty segment is never rolled
        if active_bytes + incoming > segment_bytes:
            return True
        created = self.created_ms[-1]
        return created >= 0 and now_ms - created >= segment_ms

    def roll(self, log_end_offset: int, now_ms: int = -1) -> bool:
        """Start a new active segment at ``log_end_offset`` (no-op if already there)."""
        if log_end_offset <= self.bases[-1]:
            return False
        self.bases.append(log_end_offset)
        self.created_ms.append(now_ms)
        self.written_ms.append(-1)
        return True

    def truncate_to(self, log_end_offset: int) -> None:
        """Drop segments that start above the new log end (Log.truncateTo)."""
        while len(self.bases) > 1 and self.bases[-1] > log_end_offset:
            self.bases.pop()
            self.created_ms.pop()
            self.written_ms.pop()
        if self.bases[-1] > log_end_offset:
            self.bases[-1] = log_end_offset
            self.created_ms[-1] = -1
            self.written_ms[-1] = -1

    def delete_before(self, log_start_offset: int) -> None:
        """Forget segments wholly below the log start offset."""
        i = bisect_right(self.bases, log_start_offset) - 1
        if i > 0:
            del self.bases[:i], self.created_ms[:i], self.written_ms[:i]
        if self.bases[0] < log_start_offset and len(self.bases) == 1:
            pass  # the active segment may start below the log start (DeleteRecords)

    def reset(self, offset: int) -> None:
        self.bases[:] = [offset]
        self.created_ms[:] = [-1]
        self.written_ms[:] = [-1]

    def retention_time(self, max_timestamp: int, offset: int) -> int:
        """The time a batch at ``offset`` with this max timestamp counts for time
        retention: its own, or, when no record of it carries one (-1), the last append
        to its segment (Kafka's LogSegment.largestTimestamp falls back to the segment
        file's last-modified time, so such records live retention.ms after it, not 0
        ms). -1 when that is unknown too (a segment read back after a restart): no
        time retention then."""
        if max_timestamp >= 0:
            return max_timestamp
        return self.written_ms[max(0, bisect_right(self.bases, offset) - 1)]

    def ranges(self, log_end_offset: int) -> list[tuple[int, int]]:
        """(base offset, next segment's base or the log end) of every segment."""
        ends = self.bases[1:] + [log_end_offset]
        return list(zip(self.bases, ends, strict=True))


__all__ = ["Segments"]
