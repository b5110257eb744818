"""Walking the records of a v2 batch, as Kafka's LogValidator does: the pure twin.

``scan_records`` reads every record of a batch's (decompressed) records section the way
DefaultRecord.readFrom does, without building record objects: the size varint, then
attributes, timestamp delta, offset delta, key, value and headers, and checks that what
it read is what the size said. It raises InvalidRecordError (Kafka's INVALID_RECORD)
for a batch Kafka's reader would refuse, and returns the per-record errors Kafka's
validator reports one by one (KIP-467): a record without a key on a compacted topic,
a timestamp out of the message.timestamp.before/after.max.ms window. The compiled twin
in _core.pyx (_core_scan.pxi) does the same in C; tests/test_validator.py holds them to each other.
"""

from __future__ import annotations

from wire.records import InvalidRecordError

NO_KEY = 0
BAD_TIMESTAMP = 1
_MIN64 = -(1 << 63)
_MAX64 = (1 << 63) - 1


class InnerOffsetError(InvalidRecordError):
    """A compressed batch whose inner offset deltas are not 0, 1, 2, ... (Kafka answers
    UNKNOWN_SERVER_ERROR for it, as for a payload it cannot decompress)."""


def _varint(buf: bytes | bytearray | memoryview, pos: int, end: int,
            max_bytes: int) -> tuple[int, int]:
    """A zigzag varint (ByteUtils.readVarint: at most 5 bytes; readVarlong: 10)."""
    value = 0
    shift = 0
    for _ in range(max_bytes):
        if pos >= end:
            raise InvalidRecordError("record ends inside a varint")
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return (value >> 1) ^ -(value & 1), pos
        shift += 7
    raise InvalidRecordError("Varint is too long" if max_bytes == 5 else "Varlong is too long")


def scan_records(
    buf: bytes | bytearray | memoryview,
    count: int,
    base_timestamp: int,
    ts_low: int,
    ts_high: int,
    check_timestamps: bool,
    need_key: bool,
    check_offsets: bool,
    offset: int = 0,
) -> tuple[int, list[tuple[int, int, int]]]:
    """Walk ``count`` records filling ``buf`` exactly from ``offset`` (a whole batch and
    HEADER_SIZE: the records section read in place, with no view made of it).

    Returns (max timestamp, errors): each error is (record index, NO_KEY or
    BAD_TIMESTAMP, timestamp). Timestamps outside [ts_low, ts_high] are errors when
    ``check_timestamps`` (CreateTime topics; -1, no timestamp, is never checked).
    ``check_offsets`` (compressed batches) requires offset deltas 0, 1, 2, ...
    """
    end = len(buf)
    if not 0 <= offset <= end:
        raise ValueError(f"records offset {offset} outside a buffer of {end} bytes")
    pos = offset
    max_ts = -1
    errors: list[tuple[int, int, int]] = []
    for i in range(count):
        if pos >= end:
            raise InvalidRecordError(
                f"Incorrect declared batch size, found {i} records but {count} were declared")
        size, pos = _varint(buf, pos, end, 5)
        start = pos
        if size < 0 or end - pos < size:
            raise InvalidRecordError(f"Invalid record size: expected {size} bytes in record "
                                     f"payload, but instead the buffer has only {end - pos} "
                                     "remaining bytes.")
        rend = pos + size
        pos += 1  # attributes
        ts_delta, pos = _varint(buf, pos, rend, 10)
        off_delta, pos = _varint(buf, pos, rend, 5)
        if check_offsets and off_delta != i:
            raise InnerOffsetError(f"Inner record with offset delta {off_delta} inside the "
                                   f"compressed record batch does not have incremental "
                                   f"offsets, expected offset delta is {i}")
        key_size, pos = _varint(buf, pos, rend, 5)
        if key_size >= 0:
            pos += key_size
        value_size, pos = _varint(buf, pos, rend, 5)
        if value_size >= 0:
            pos += value_size
        headers, pos = _varint(buf, pos, rend, 5)
        if headers < 0:
            raise InvalidRecordError(f"Found invalid number of record headers {headers}")
        for _ in range(headers):
            hk, pos = _varint(buf, pos, rend, 5)
            if hk < 0:
                raise InvalidRecordError("Invalid negative header key size " + str(hk))
            pos += hk
            hv, pos = _varint(buf, pos, rend, 5)
            if hv >= 0:
                pos += hv
        if pos != rend:
            raise InvalidRecordError(f"Invalid record size: expected to read {size} bytes in "
                                     f"record payload, but instead read {pos - start}")
        ts = base_timestamp + ts_delta
        if not _MIN64 <= ts <= _MAX64:  # Java's long arithmetic wraps
            ts = (ts - _MIN64) % (1 << 64) + _MIN64
        if ts > max_ts:
            max_ts = ts
        if need_key and key_size < 0:
            errors.append((i, NO_KEY, ts))
        elif check_timestamps and ts != -1 and not ts_low <= ts <= ts_high:
            errors.append((i, BAD_TIMESTAMP, ts))
    if pos != end:
        raise InvalidRecordError("Incorrect declared batch size, records still remaining in file")
    return max_ts, errors
