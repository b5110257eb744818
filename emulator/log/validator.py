"""Kafka's LogValidator for one produced v2 batch: what the leader checks before it
assigns offsets.

The design first said "never decode records on the produce path". Kafka's validator does
walk every record (and decompresses compressed batches to do it): that is how it refuses
a record count the bytes do not hold, records whose sizes lie, a payload that does not
decompress, keyless records on a compacted topic and timestamps outside
message.timestamp.before/after.max.ms. A broker that skips the walk stores batches that
break every consumer reading them (docs/hostile-input.md), so the emulator walks too. The
walk builds no record objects and runs in C (scan_records in _core.pyx's
_core_scan.pxi, with its pure twin), so a produce pays a pass over bytes it already
holds; the batch is still stored as the bytes the client sent.

Codes and messages are what a real Kafka 4.4.0 answered to the same batches:
INVALID_RECORD (87, no message) for a count/size/header the bytes do not hold,
UNKNOWN_SERVER_ERROR for a compressed payload that does not decompress or whose inner
offsets are not 0, 1, 2 ..., and KIP-467 per-record errors for keys and timestamps.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from emulator.log import scan_records, validate_batch
from emulator.log.scan import NO_KEY, InnerOffsetError
from wire.errors import ErrorCode as E
from wire.records import (
    HEADER_SIZE,
    MAX_DECOMPRESSED_BYTES,
    NONE,
    TIMESTAMP_TYPE_BIT,
    BatchHeader,
    DecompressedTooLargeError,
    DecompressionError,
    InvalidRecordError,
    decompress_bounded,
)

_MIN64 = -(1 << 63)


@dataclass
class RecordValidationError(Exception):
    """The batch is refused: Kafka's code, its message (often none) and, for per-record
    failures (KIP-467), the (batch index, message) of every bad record."""

    code: int
    message: str | None = None
    record_errors: list[tuple[int, str]] = field(default_factory=list)
    reason: str = ""  # what was wrong, for the broker's log line when Kafka says nothing

    def __str__(self) -> str:
        return self.message or self.reason or E(self.code).name


@dataclass(frozen=True, slots=True)
class TopicRules:
    """The topic configs the validator applies (LogConfig's share of LogValidator)."""

    compacted: bool = False
    create_time: bool = True
    before_max_ms: int = (1 << 63) - 1
    after_max_ms: int = 3_600_000


def _wrap(n: int) -> int:
    """Java long arithmetic: Kafka prints now - Long.MAX_VALUE as the wrapped value."""
    return (n - _MIN64) % (1 << 64) + _MIN64


# validate_produce_batch's outcome as plain data (it crosses to another process):
# ("ok", header), ("invalid", message, corrupt) or ("record", code, message,
# record_errors, reason)
Outcome = (tuple[Literal["ok"], BatchHeader] | tuple[Literal["invalid"], str, bool]
           | tuple[Literal["record"], int, str | None, tuple[tuple[int, str], ...], str])


@dataclass(frozen=True, slots=True)
class Checked:
    """What the server found out about a batch before the domain appends it (emulator/
    server/dispatch.py): the records section already inflated (``inflated``), or, for a batch
    inflating past INLINE_INFLATE, the whole validation's outcome computed off the event
    loop (``outcome``, see ``check_outcome``)."""

    inflated: bytes | memoryview | None = None
    outcome: Outcome | None = None

    def result(self) -> BatchHeader:
        """The outcome as validate_produce_batch would have returned or raised it."""
        outcome = self.outcome
        assert outcome is not None
        if outcome[0] == "ok":
            return outcome[1]
        if outcome[0] == "invalid":
            raise InvalidRecordError(outcome[1], corrupt=outcome[2])
        _, code, message, record_errors, reason = outcome
        raise RecordValidationError(code, message, list(record_errors), reason)


# A compressed batch inflating past this is validated off the event loop (it can take
# 64 MiB and half a second); up to it, inflating costs a few milliseconds at most.
INLINE_INFLATE = 1 << 20


def inflate_inline(batch: bytes | bytearray | memoryview) -> Checked | None:
    """The records section of a compressed v2 batch, inflated if it fits INLINE_INFLATE;
    None when it does not (validate it with ``check_outcome`` elsewhere) or when the
    batch is not a compressed v2 one (nothing to save: the validator does the rest)."""
    if len(batch) < HEADER_SIZE or batch[16] != 2:
        return None
    codec = batch[22] & 0x07
    if codec == NONE:
        return None
    try:
        return Checked(inflated=decompress_bounded(codec, memoryview(batch)[HEADER_SIZE:],
                                                   INLINE_INFLATE))
    except InvalidRecordError:  # too large, or does not decompress: the validator says
        return None


def needs_offline_check(batch: bytes | bytearray | memoryview) -> bool:
    """A compressed v2 batch (the caller found it inflates past INLINE_INFLATE)."""
    return len(batch) >= HEADER_SIZE and batch[16] == 2 and batch[22] & 0x07 != NONE


def check_outcome(batch: bytes, rules: TopicRules, now: int, topic_partition: str
                  ) -> Outcome:
    """validate_produce_batch's outcome as plain data (it crosses to another process):
    ("ok", header), ("invalid", message, corrupt) or ("record", code, message,
    record_errors, reason). ``Checked(outcome=...).result()`` turns it back."""
    try:
        return ("ok", validate_produce_batch(batch, rules, now, topic_partition))
    except RecordValidationError as e:
        return ("record", e.code, e.message, tuple(e.record_errors), e.reason)
    except InvalidRecordError as e:
        return ("invalid", str(e), e.corrupt)


def validate_produce_batch(batch: bytes | bytearray | memoryview, rules: TopicRules, now: int,
                           topic_partition: str,
                           max_decompressed: int = MAX_DECOMPRESSED_BYTES,
                           checked: Checked | None = None) -> BatchHeader:
    """Check one client batch as Kafka's leader does; returns its header or raises
    InvalidRecordError (header, CRC: the caller's codes) or RecordValidationError.
    ``checked``: what the server already did (an inflated body, or the outcome)."""
    if checked is not None and checked.outcome is not None:
        return checked.result()
    return validate_in_window(batch, rules, _wrap(now - rules.before_max_ms),
                              _wrap(now + rules.after_max_ms), topic_partition,
                              max_decompressed, checked)


def timestamp_window(rules: TopicRules, now: int) -> tuple[int, int]:
    """The (low, high) bounds of a record's CreateTime at ``now`` (Java long arithmetic):
    what validate_in_window takes, computed once for the partitions of one topic."""
    return _wrap(now - rules.before_max_ms), _wrap(now + rules.after_max_ms)


def validate_in_window(batch: bytes | bytearray | memoryview, rules: TopicRules, low: int,
                       high: int, topic_partition: str | tuple[str, int],
                       max_decompressed: int = MAX_DECOMPRESSED_BYTES,
                       checked: Checked | None = None) -> BatchHeader:
    """validate_produce_batch with the timestamp window already computed
    (``timestamp_window``) and no ``checked.outcome``; ``topic_partition`` may be a
    (topic, partition) pair, written out only in an error's message."""
    if checked is not None and checked.outcome is not None:
        return checked.result()
    h = validate_batch(batch)
    if h.producer_id >= 0 and h.base_sequence < 0:
        raise RecordValidationError(E.INVALID_RECORD, reason=(
            f"Invalid sequence number {h.base_sequence} in record batch with producerId "
            f"{h.producer_id}"))
    # An uncompressed batch's records are walked in place (from HEADER_SIZE): no view.
    body: bytes | bytearray | memoryview = batch
    start = HEADER_SIZE
    compressed = h.compression != NONE
    if compressed and checked is not None and checked.inflated is not None:
        body, start = checked.inflated, 0
    elif compressed:
        start = 0
        try:
            body = decompress_bounded(h.compression, memoryview(batch)[HEADER_SIZE:],
                                      max_decompressed)
        except DecompressedTooLargeError as e:
            raise RecordValidationError(E.RECORD_LIST_TOO_LARGE, str(e), reason=str(e)) from e
        except DecompressionError as e:
            raise RecordValidationError(E.UNKNOWN_SERVER_ERROR, reason=str(e)) from e
    lat_batch = bool(h.attributes & TIMESTAMP_TYPE_BIT)
    try:
        _, errors = scan_records(body, h.record_count, h.base_timestamp, low, high,
                                 rules.create_time and not lat_batch, rules.compacted,
                                 compressed, start)
    except InnerOffsetError as e:
        raise RecordValidationError(E.UNKNOWN_SERVER_ERROR, reason=str(e)) from e
    except InvalidRecordError as e:
        raise RecordValidationError(E.INVALID_RECORD, reason=str(e)) from e
    if rules.create_time and lat_batch and h.max_timestamp != -1 \
            and not low <= h.max_timestamp <= high:  # every record reads the batch's time
        errors = [(i, 1, h.max_timestamp) for i in range(h.record_count)]
    if errors:
        if not isinstance(topic_partition, str):
            topic_partition = f"{topic_partition[0]}-{topic_partition[1]}"
        raise _record_errors(errors, h, rules, low, high, topic_partition)
    return h


def _record_errors(errors: list[tuple[int, int, int]], h: BatchHeader, rules: TopicRules,
                   low: int, high: int, topic_partition: str) -> RecordValidationError:
    """LogValidator.processRecordErrors: INVALID_TIMESTAMP if any timestamp was bad,
    else INVALID_RECORD listing the first three."""
    listed: list[tuple[int, str]] = []
    any_ts = False
    for index, kind, ts in errors:
        if kind == NO_KEY:
            msg = ("Compacted topic cannot accept message without key in topic partition "
                   f"{topic_partition}")
        else:
            any_ts = True
            msg = (f"Timestamp {ts} of message with offset {h.base_offset + index} is out of "
                   f"range. The timestamp should be within [{low}, {high}]")
        listed.append((index, msg))
    if any_ts:
        return RecordValidationError(
            E.INVALID_TIMESTAMP, "One or more records have been rejected due to invalid "
            "timestamp", listed)
    shown = ", ".join(f"RecordError(batchIndex={i}, message='{m}')" for i, m in listed[:3])
    return RecordValidationError(
        E.INVALID_RECORD, f"One or more records have been rejected due to {len(listed)} record "
        f"errors in total, and only showing the first three errors at most: [{shown}]", listed)
