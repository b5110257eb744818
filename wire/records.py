"""RecordBatch v2: header access, CRC-32C, in-place patching, and a small builder.

The broker stores and serves batches as bytes: it reads the 61-byte batch header,
checks the CRC-32C (which covers attributes to the end of the batch), and patches
baseOffset and partitionLeaderEpoch, which lie outside the CRC, in place. The produce
validator (emulator/log/validator.py) walks the records without decoding them into
objects; decoding records is only for tests and tools, and ListOffsets by timestamp
reads (offset, timestamp) pairs one at a time (``iter_timestamps``). Decompression
is bounded (``decompress_bounded``) everywhere the broker does it.
"""

from __future__ import annotations

import struct
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from wire.codec import read_uvarint, read_varint, write_varint

HEADER_SIZE = 61
LOG_OVERHEAD = 12  # baseOffset + batchLength
MAGIC_OFFSET = 16
CRC_OFFSET = 17
ATTRIBUTES_OFFSET = 21

# Field layout of the v2 header (big-endian).
_HEADER = struct.Struct(">qiibIhiqqqhii")
_BASE_OFFSET = struct.Struct(">q")
_EPOCH = struct.Struct(">i")
_CRC = struct.Struct(">I")
_MAX_TS = struct.Struct(">q")

COMPRESSION_MASK = 0x07
TIMESTAMP_TYPE_BIT = 0x08
TRANSACTIONAL_BIT = 0x10
CONTROL_BIT = 0x20
DELETE_HORIZON_BIT = 0x40  # KIP-534: baseTimestamp holds the delete horizon

NONE, GZIP, SNAPPY, LZ4, ZSTD = range(5)


_crc32c: Callable[[bytes | bytearray | memoryview], int] | None = None


def crc32c(data: bytes | bytearray | memoryview) -> int:
    """CRC-32C (Castagnoli) using the C-accelerated ``crc32c`` package, imported on first
    use: its ``__init__`` reads its own version from the installed distributions
    (importlib.metadata, ~10 ms), a cost a process that never checks a CRC in Python
    (the emulator's compiled core checks produced batches) should not pay at start."""
    global _crc32c
    if _crc32c is None:
        import crc32c as package

        _crc32c = package.crc32c
    return _crc32c(data)


class InvalidRecordError(ValueError):
    """The bytes are not a valid v2 record batch (Kafka's CORRUPT_MESSAGE/INVALID_RECORD)."""

    def __init__(self, message: str, corrupt: bool = False) -> None:
        super().__init__(message)
        self.corrupt = corrupt


@dataclass(slots=True)
class BatchHeader:
    """The fields of a v2 batch header."""

    base_offset: int
    batch_length: int
    partition_leader_epoch: int
    magic: int
    crc: int
    attributes: int
    last_offset_delta: int
    base_timestamp: int
    max_timestamp: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    record_count: int

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.last_offset_delta

    @property
    def size(self) -> int:
        return self.batch_length + LOG_OVERHEAD

    @property
    def compression(self) -> int:
        return self.attributes & COMPRESSION_MASK

    @property
    def is_transactional(self) -> bool:
        return bool(self.attributes & TRANSACTIONAL_BIT)

    @property
    def is_control(self) -> bool:
        return bool(self.attributes & CONTROL_BIT)

    @property
    def last_sequence(self) -> int:
        if self.base_sequence < 0:
            return -1
        return (self.base_sequence + self.last_offset_delta) % (1 << 31)


def read_header(buf: bytes | bytearray | memoryview, pos: int = 0) -> BatchHeader:
    """Parse the v2 header at ``pos``; raises InvalidRecordError if short or not magic 2."""
    if len(buf) - pos < HEADER_SIZE:
        if len(buf) - pos >= MAGIC_OFFSET + 1 and buf[pos + MAGIC_OFFSET] != 2:
            raise InvalidRecordError(f"unsupported record magic {buf[pos + MAGIC_OFFSET]}")
        raise InvalidRecordError("record batch shorter than its header", corrupt=True)
    return BatchHeader(*_HEADER.unpack_from(buf, pos))


def split_batches(buf: bytes | bytearray | memoryview) -> list[tuple[int, int]]:
    """Return (start, end) of each batch in a records blob; validates sizes only."""
    out = []
    pos = 0
    n = len(buf)
    while pos < n:
        if n - pos < LOG_OVERHEAD:
            raise InvalidRecordError("truncated record batch", corrupt=True)
        length = _EPOCH.unpack_from(buf, pos + 8)[0]
        end = pos + LOG_OVERHEAD + length
        if length < HEADER_SIZE - LOG_OVERHEAD or end > n:
            raise InvalidRecordError("record batch length does not match the data", corrupt=True)
        out.append((pos, end))
        pos = end
    return out


def validate_batch(buf: bytes | bytearray | memoryview, check_crc: bool = True) -> BatchHeader:
    """Check magic, length, record count and CRC of exactly one batch.

    ``check_crc=False`` leaves out the CRC only, for a caller that has just checked it
    on the same bytes (a batch's CRC covers all of it: computing it twice doubles the
    one cost that grows with the batch)."""
    h = read_header(buf)
    if h.magic != 2:
        raise InvalidRecordError(f"unsupported record magic {h.magic}")
    if h.size != len(buf):
        raise InvalidRecordError("record batch length does not match the data", corrupt=True)
    if check_crc and crc32c(memoryview(buf)[ATTRIBUTES_OFFSET:]) != h.crc:
        raise InvalidRecordError("record batch CRC-32C mismatch", corrupt=True)
    if h.record_count <= 0 or h.last_offset_delta != h.record_count - 1:
        raise InvalidRecordError(
            f"record count {h.record_count} does not match last offset delta "
            f"{h.last_offset_delta}"
        )
    return h


def patch_offsets(buf: bytearray, base_offset: int, leader_epoch: int) -> None:
    """Rewrite baseOffset and partitionLeaderEpoch in place (outside the CRC)."""
    _BASE_OFFSET.pack_into(buf, 0, base_offset)
    _EPOCH.pack_into(buf, 12, leader_epoch)


def set_log_append_time(buf: bytearray, ts: int) -> None:
    """Mark the batch LogAppendTime with ``ts`` and recompute the CRC, as Kafka does."""
    attrs = struct.unpack_from(">h", buf, ATTRIBUTES_OFFSET)[0] | TIMESTAMP_TYPE_BIT
    struct.pack_into(">h", buf, ATTRIBUTES_OFFSET, attrs)
    _MAX_TS.pack_into(buf, 35, ts)
    _CRC.pack_into(buf, CRC_OFFSET, crc32c(memoryview(buf)[ATTRIBUTES_OFFSET:]))


# ---- record decoding and building (tools, tests, timestamp lookups) ----------


@dataclass(slots=True)
class Record:
    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: list[tuple[str, bytes | None]] = field(default_factory=list)


# The most a batch's records section may inflate to here. Kafka streams a compressed
# batch record by record and has no such bound; the emulator holds one decompressed
# batch at a time (the event loop is single-threaded, so this bounds the memory of
# decompression for the whole process) and refuses more with RECORD_LIST_TOO_LARGE.
MAX_DECOMPRESSED_BYTES = 64 << 20


class DecompressionError(InvalidRecordError):
    """A compressed payload that does not decompress (Kafka: UNKNOWN_SERVER_ERROR)."""


class DecompressedTooLargeError(InvalidRecordError):
    """A compressed payload that inflates past MAX_DECOMPRESSED_BYTES."""


def _too_small(e: Exception) -> bool:
    msg = str(e)
    return "failed to write whole buffer" in msg or "smaller than required" in msg


def _inflate(fn: Callable[[bytes | memoryview, bytearray], int], data: bytes | memoryview, first: int,
             limit: int) -> memoryview:
    """Decompress with ``fn(data, out)`` into a buffer that doubles up to ``limit``:
    memory never exceeds the limit, whatever the payload claims."""
    size = min(max(first, 1 << 16), limit)
    while True:
        out = bytearray(size + 1)  # one spare byte: filling it means "more than size"
        try:
            n = fn(data, out)
        except Exception as e:  # noqa: BLE001 - cramjam raises its own error type
            if not _too_small(e):
                raise DecompressionError(f"cannot decompress the batch: {e}") from e
            n = size + 1
        if n <= size:
            return memoryview(out)[:n]
        if size >= limit:
            raise DecompressedTooLargeError(
                f"the batch decompresses to more than {limit} bytes")
        size = min(size * 4, limit)


def decompress_bounded(codec: int, data: bytes | memoryview,
                       limit: int = MAX_DECOMPRESSED_BYTES) -> bytes | memoryview:
    """A batch's records section decompressed, refusing to grow past ``limit``.

    Raises DecompressionError for a payload the codec cannot read and
    DecompressedTooLargeError past the limit (a compression bomb).
    """
    import cramjam

    if codec == NONE:
        return data
    first = 4 * len(data)
    if codec == GZIP:
        return _inflate(cramjam.gzip.decompress_into, bytes(data), first, limit)
    if codec == SNAPPY:
        return _snappy_bounded(bytes(data), limit)
    if codec == LZ4:
        return _inflate(cramjam.lz4.decompress_into, bytes(data), first, limit)
    if codec == ZSTD:
        return _inflate(cramjam.zstd.decompress_into, bytes(data), first, limit)
    raise DecompressionError(f"Unknown compression type id: {codec}")


def _snappy_bounded(data: bytes, limit: int) -> bytes | memoryview:
    """Raw snappy, or the xerial framing Java clients write; every block states its
    length, which is checked before anything is inflated."""
    import cramjam

    def block(raw: bytes, room: int) -> bytes:
        try:
            n = cramjam.snappy.decompress_raw_len(raw)
        except Exception as e:  # noqa: BLE001
            raise DecompressionError(f"cannot decompress the batch: {e}") from e
        if n > room:
            raise DecompressedTooLargeError(f"the batch decompresses to more than {limit} bytes")
        try:
            return bytes(cramjam.snappy.decompress_raw(raw))
        except Exception as e:  # noqa: BLE001
            raise DecompressionError(f"cannot decompress the batch: {e}") from e

    if data[:8] != b"\x82SNAPPY\x00":
        return block(data, limit)
    out = bytearray()
    pos = 16
    while pos < len(data):
        if pos + 4 > len(data):
            raise DecompressionError("truncated xerial snappy block")
        n = struct.unpack_from(">i", data, pos)[0]
        if n < 0 or pos + 4 + n > len(data):
            raise DecompressionError("xerial snappy block overruns the payload")
        out += block(data[pos + 4 : pos + 4 + n], limit - len(out))
        pos += 4 + n
    return bytes(out)


def decompress(codec: int, data: bytes) -> bytes:
    """Decompress a batch's records section (gzip, snappy, lz4, zstd via cramjam),
    within MAX_DECOMPRESSED_BYTES like every decompression the broker does."""
    if codec == NONE:
        return data
    return bytes(decompress_bounded(codec, data))


_XERIAL_HEADER = b"\x82SNAPPY\x00" + struct.pack(">ii", 1, 1)
_XERIAL_BLOCK = 32 * 1024


def compress(codec: int, data: bytes) -> bytes:
    """Compress a batch's records section the way Kafka's Java producer frames it:
    gzip, snappy in xerial blocks, the LZ4 frame format with independent blocks, zstd."""
    import cramjam

    if codec == NONE:
        return data
    if codec == GZIP:
        return bytes(cramjam.gzip.compress(data))
    if codec == SNAPPY:
        out = bytearray(_XERIAL_HEADER)
        for pos in range(0, len(data), _XERIAL_BLOCK):
            block = bytes(cramjam.snappy.compress_raw(data[pos : pos + _XERIAL_BLOCK]))
            out += struct.pack(">i", len(block)) + block
        return bytes(out)
    if codec == LZ4:
        # Independent blocks: Kafka's Lz4BlockInputStream refuses a dependent block
        # stream ("Dependent block stream is unsupported"), cramjam's default.
        lz4 = cramjam.lz4.Compressor(content_checksum=False, block_linked=False)
        lz4.compress(data)
        return bytes(lz4.finish())
    if codec == ZSTD:
        return bytes(cramjam.zstd.compress(data))
    raise InvalidRecordError(f"unknown compression codec {codec}")


def recompress(batch: bytes | bytearray | memoryview, codec: int,
               body: bytes | memoryview | None = None) -> bytes:
    """One v2 batch with its records section in ``codec``: what Kafka's LogValidator
    writes when a topic's compression.type differs from the producer's codec
    (buildRecordsAndAssignOffsets). The records, their offset and timestamp deltas and
    every header field but the codec bits stay; length and CRC are recomputed.
    ``body``: the records section already decompressed, when the caller has it."""
    h = read_header(batch)
    if body is None:
        body = decompress_bounded(h.compression, memoryview(batch)[HEADER_SIZE : h.size])
    packed = compress(codec, bytes(body))
    attributes = (h.attributes & ~COMPRESSION_MASK) | codec
    tail = struct.pack(
        ">hiqqqhii", attributes, h.last_offset_delta, h.base_timestamp, h.max_timestamp,
        h.producer_id, h.producer_epoch, h.base_sequence, h.record_count,
    ) + packed
    head = struct.pack(">qiibI", h.base_offset, len(tail) + 9, h.partition_leader_epoch, 2,
                       crc32c(tail))
    return head + tail


def encode_records(records: list[Record], base_offset: int, base_timestamp: int) -> bytes:
    """The records section of a v2 batch (uncompressed), deltas from the given bases."""
    body = bytearray()
    for r in records:
        rec = bytearray(b"\x00")
        rec += write_varint(r.timestamp - base_timestamp)
        rec += write_varint(r.offset - base_offset)
        for b in (r.key, r.value):
            rec += write_varint(-1) if b is None else write_varint(len(b)) + b
        rec += write_varint(len(r.headers))
        for hk, hv in r.headers:
            kb = hk.encode()
            rec += write_varint(len(kb)) + kb
            rec += write_varint(-1) if hv is None else write_varint(len(hv)) + hv
        body += write_varint(len(rec)) + rec
    return bytes(body)


def rebuild_batch(h: BatchHeader, records: list[Record], *, attributes: int,
                  base_timestamp: int, max_timestamp: int) -> bytes:
    """A batch with ``h``'s offsets, epoch and producer fields but other records.

    The cleaner's MemoryRecords.filterTo: the base offset and last offset delta
    stay (so offsets and producer sequences are preserved), records keep their own
    offsets and timestamps, the codec is the original's, the CRC is recomputed.
    """
    body = compress(attributes & COMPRESSION_MASK,
                    encode_records(records, h.base_offset, base_timestamp))
    tail = struct.pack(
        ">hiqqqhii", attributes, h.last_offset_delta, base_timestamp, max_timestamp,
        h.producer_id, h.producer_epoch, h.base_sequence, len(records),
    ) + body
    head = struct.pack(">qiibI", h.base_offset, len(tail) + 9, h.partition_leader_epoch, 2,
                       crc32c(tail))
    return head + tail


def _read_bytes(buf: bytes, pos: int) -> tuple[bytes | None, int]:
    n, pos = read_varint(buf, pos)
    if n < 0:
        return None, pos
    return bytes(buf[pos : pos + n]), pos + n


def decode_records(batch: bytes | bytearray | memoryview) -> list[Record]:
    """Decode every record of one v2 batch (decompressing if needed)."""
    h = read_header(batch)
    body = decompress(h.compression, bytes(batch[HEADER_SIZE : h.size]))
    out = []
    pos = 0
    for _ in range(h.record_count):
        length, pos = read_varint(body, pos)
        end = pos + length
        pos += 1  # attributes
        ts_delta, pos = read_varint(body, pos)
        off_delta, pos = read_varint(body, pos)
        key, pos = _read_bytes(body, pos)
        value, pos = _read_bytes(body, pos)
        nh, pos = read_varint(body, pos)
        headers = []
        for _ in range(nh):
            hk, pos = _read_bytes(body, pos)
            hv, pos = _read_bytes(body, pos)
            headers.append(((hk or b"").decode(), hv))
        ts = h.max_timestamp if h.attributes & TIMESTAMP_TYPE_BIT else h.base_timestamp + ts_delta
        out.append(Record(h.base_offset + off_delta, ts, key, value, headers))
        pos = end
    return out


def iter_timestamps(batch: bytes | bytearray | memoryview,
                    limit: int = MAX_DECOMPRESSED_BYTES) -> Iterator[tuple[int, int]]:
    """(offset, timestamp) of each record of one v2 batch, one at a time: what a
    timestamp lookup needs, decompressed within ``limit`` and without record objects,
    so a lookup costs at most one bounded buffer whatever was stored."""
    h = read_header(batch)
    body = decompress_bounded(h.compression, memoryview(batch)[HEADER_SIZE : h.size], limit)
    lat = h.attributes & TIMESTAMP_TYPE_BIT
    pos = 0
    for _ in range(h.record_count):
        length, pos = read_varint(body, pos)
        end = pos + length
        ts_delta, p2 = read_varint(body, pos + 1)
        off_delta, _ = read_varint(body, p2)
        yield h.base_offset + off_delta, h.max_timestamp if lat else h.base_timestamp + ts_delta
        pos = end


def iter_batches(buf: bytes | bytearray | memoryview) -> list[bytes]:
    """Split a records blob into its batches."""
    return [bytes(buf[s:e]) for s, e in split_batches(buf)]


def wall_clock_ms() -> int:
    """Now, in ms since the epoch: the time a producer stamps its records with."""
    return int(time.time() * 1000)


# What ``build_batch`` stamps a batch with when its caller names no time, looked up at
# each call so that a test suite whose broker runs on a manual clock can replace it
# (tests/conftest.py: a record dated past message.timestamp.after.max.ms of the broker's
# clock is INVALID_TIMESTAMP).
default_timestamp_ms: Callable[[], int] = wall_clock_ms


def build_batch(
    records: Sequence[tuple[bytes | None, bytes | None] | Record],
    *,
    base_offset: int = 0,
    timestamp: int | None = None,
    producer_id: int = -1,
    producer_epoch: int = -1,
    base_sequence: int = -1,
    partition_leader_epoch: int = -1,
    transactional: bool = False,
    control: bool = False,
) -> bytes:
    """Build an uncompressed v2 batch (tests, control markers, tools).

    ``timestamp`` is the batch's base timestamp and the time of each ``(key, value)``
    pair; a ``Record`` keeps its own. Left out, it is now (``default_timestamp_ms``: the
    wall clock, in ms), as a producer stamps what it sends: records dated 1970 are older
    than every topic's retention.ms (Kafka's default is 7 days), so a broker's retention
    check (Kafka's every 5 minutes, the emulator's every second) deletes them on arrival
    and moves the log start offset under a test that never asked for it. A batch whose
    first record is a ``Record`` then takes that record's time as the base, as Kafka's
    producer does, so the max timestamp is the records' own. A caller that wants a given
    time (a by-time lookup, retention itself, exact bytes) passes it.
    """
    if timestamp is None:
        now = default_timestamp_ms()
        first = records[0] if records else None
        timestamp = first.timestamp if isinstance(first, Record) else now
        pair_ts = now
    else:
        pair_ts = timestamp
    body = bytearray()
    max_ts = timestamp
    for i, r in enumerate(records):
        if isinstance(r, Record):
            key, value, headers, ts = r.key, r.value, r.headers, r.timestamp
        else:
            key, value = r
            headers, ts = [], pair_ts
        max_ts = max(max_ts, ts)
        rec = bytearray(b"\x00")
        rec += write_varint(ts - timestamp)
        rec += write_varint(i)
        for b in (key, value):
            if b is None:
                rec += write_varint(-1)
            else:
                rec += write_varint(len(b)) + b
        rec += write_varint(len(headers))
        for hk, hv in headers:
            kb = hk.encode()
            rec += write_varint(len(kb)) + kb
            rec += write_varint(-1) if hv is None else write_varint(len(hv)) + hv
        body += write_varint(len(rec)) + rec
    attrs = (TRANSACTIONAL_BIT if transactional else 0) | (CONTROL_BIT if control else 0)
    n = len(records)
    tail = struct.pack(
        ">hiqqqhii", attrs, n - 1, timestamp, max_ts, producer_id, producer_epoch,
        base_sequence, n,
    ) + bytes(body)
    crc = crc32c(tail)
    head = struct.pack(">qiibI", base_offset, len(tail) + 9, partition_leader_epoch, 2, crc)
    return head + tail


def control_batch(
    commit: bool, producer_id: int, producer_epoch: int, timestamp: int, coordinator_epoch: int = 0
) -> bytes:
    """An end-transaction marker batch (control record type 1 = COMMIT, 0 = ABORT)."""
    key = struct.pack(">hh", 0, 1 if commit else 0)
    value = struct.pack(">hi", 0, coordinator_epoch)
    return build_batch(
        [(key, value)], timestamp=timestamp, producer_id=producer_id,
        producer_epoch=producer_epoch, transactional=True, control=True,
    )


__all__ = [
    "BatchHeader", "InvalidRecordError", "Record", "build_batch", "compress", "control_batch",
    "crc32c", "decode_records", "encode_records", "rebuild_batch", "iter_batches", "patch_offsets", "read_header", "read_uvarint",
    "set_log_append_time", "split_batches", "validate_batch", "default_timestamp_ms",
    "wall_clock_ms",
]
