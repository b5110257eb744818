"""The on-disk store behind ``--data-dir``: Kafka's log layout, written as the log moves.

Layout (docs/storage.md)::

    DIR/meta.json                        topics: ids, configs, replica sets, epochs
    DIR/<topic>-<partition>/
        00000000000000000000.log         one file per segment, named by base offset,
        00000000000000001234.log         holding the record batches exactly as stored
        partition.json                   log start offset, cleaner checkpoint

The cluster's domain never does I/O: this store watches it. ``sync`` (called by
the server on every append event and every tick) makes each partition's files
equal the *leader's* log: new batches are appended, a leader change that
truncated unacknowledged records truncates the file, a cleaned range rewrites the
partition's files (new files renamed over the old), retention deletes whole
files. Every replica is rebuilt from these files on load (they share bytes in
memory anyway), so what is on disk is what the ISR acknowledged.

Durability: a batch is written to the file (the OS page cache) before the append
returns, so before any acknowledgement: a killed process (SIGKILL, a crash) loses
nothing acknowledged. ``fsync`` follows Kafka's flush.messages / flush.ms
(default: never forced, as Kafka, leaving it to the OS); flush.messages=1 fsyncs
every append and survives power loss too.

On load each file is read batch by batch, checking length and CRC-32C. A torn or
corrupt tail is truncated at the last valid batch with one log line, as Kafka's
log recovery does; later segment files are dropped.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import logging
import mmap
import os
import time
from array import array
from bisect import bisect_left
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import BinaryIO

from wire.records import HEADER_SIZE, LOG_OVERHEAD, InvalidRecordError, read_header
from wire.records import crc32c as _crc32c

log = logging.getLogger("kafka_emulator.storage")

META = "meta.json"
PARTITION_META = "partition.json"
MAX_LONG = (1 << 63) - 1


class StorageError(Exception):
    """The data directory cannot be used (unreadable metadata, a file we cannot write)."""


def segment_name(base: int) -> str:
    return f"{base:020d}.log"


def _atomic_json(path: str, data: object) -> None:
    import json  # with a data dir only: the start without one does not load it

    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(data, f, sort_keys=True)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


@dataclass
class SegmentFile:
    base: int
    path: str
    size: int = 0
    # offset index: base offset of each batch and its position in the file
    bases: array = field(default_factory=lambda: array("q"))
    positions: array = field(default_factory=lambda: array("q"))
    fingerprints: array = field(default_factory=lambda: array("q"))  # crc, epoch
    # closed and below the high watermark: the logs hold views of this file's map,
    # not bytes of their own (bounded memory); the map lives while any view does
    mapped: object = None


@functools.cache
def _libc_malloc_trim() -> Callable[[int], int] | None:
    """glibc's ``malloc_trim``, or None (musl, macOS: nothing to call); ctypes is
    imported at the first trim, not by every start (docs/scale.md, start-up)."""
    import ctypes

    try:
        fn = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_size_t]
    fn.restype = ctypes.c_int
    return fn


def release_freed_heap() -> bool:
    """Give the C heap's free pages back to the OS (glibc ``malloc_trim(0)``).

    Why: with a data directory a closed segment's batches leave the heap together, when
    the segment is mapped (about a segment's worth of bytes per roll). glibc keeps
    freed chunks and gives memory back only from the top of its heap, so after a burst
    (a stalled loop: more batches in flight before the next map) RssAnon holds free
    pages no object uses: one trim in a disk soak gave back 3.9 MB of 40.3 MB.
    ``malloc_trim(0)`` returns every whole free page anywhere in the heap (madvise),
    about 0.2 ms on a fragmented 60 MB heap. Returns whether there was one to call."""
    trim = _libc_malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True


def fingerprint(data: bytes | memoryview) -> int:
    """What identifies a stored batch: its CRC (attributes..end) and leader epoch."""
    h = read_header(data)
    return (h.crc << 31) ^ (h.partition_leader_epoch & 0x7FFFFFFF)


@dataclass(slots=True)
class LoadedBatch:
    data: bytes | memoryview
    base: int
    last: int
    epoch: int
    max_ts: int


def map_file(path: str) -> mmap.mmap | None:
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        return mmap.mmap(f.fileno(), size, access=mmap.ACCESS_READ) if size else None


def scan_segment(
    path: str, expect_base: int, mapped: mmap.mmap | None = None
) -> tuple[list[LoadedBatch], int, str | None]:
    """Read one segment file: its valid batches, the valid length, and why it stopped.

    With ``mapped`` (the file's map) the batches are views of it, not copies."""
    raw: mmap.mmap | bytes
    if mapped is not None:
        raw = mapped
    else:
        with open(path, "rb") as f:
            raw = f.read()
    out: list[LoadedBatch] = []
    pos = 0
    n = len(raw)
    view = memoryview(raw)
    while pos < n:
        if n - pos < LOG_OVERHEAD:
            return out, pos, f"{n - pos} trailing bytes shorter than a batch header"
        length = int.from_bytes(raw[pos + 8 : pos + 12], "big", signed=True)
        end = pos + LOG_OVERHEAD + length
        if length < HEADER_SIZE - LOG_OVERHEAD or end > n:
            return out, pos, f"batch at position {pos} claims {length} bytes, {n - pos} remain"
        try:
            h = read_header(view, pos)
        except InvalidRecordError as e:
            return out, pos, f"batch at position {pos}: {e}"
        if h.magic != 2 or _crc32c(view[pos + 21 : end]) != h.crc:
            return out, pos, f"batch at position {pos} fails its CRC-32C"
        if h.base_offset < expect_base or (out and h.base_offset <= out[-1].last):
            return out, pos, f"batch at position {pos} has out-of-order offset {h.base_offset}"
        chunk = view[pos:end] if mapped is not None else bytes(view[pos:end])
        out.append(
            LoadedBatch(
                chunk, h.base_offset, h.last_offset, h.partition_leader_epoch, h.max_timestamp
            )
        )
        pos = end
    return out, pos, None


def _write_all(fh: BinaryIO, data: bytes | memoryview, size: int) -> None:
    """Write all of ``data`` to the unbuffered file ``fh`` (now ``size`` bytes long), or
    raise OSError with the file cut back to ``size``: a full disk or a failing one
    (ENOSPC, EIO) may take part of a batch, and a torn batch must not stay behind."""
    view = memoryview(data)
    done = 0
    try:
        while done < len(view):
            n = fh.write(view[done:])
            if not n:
                raise OSError(errno.ENOSPC, "No space left on device (short write)")
            done += n
    except OSError:
        if done:
            with contextlib.suppress(OSError):
                fh.truncate(size)
        raise


class PartitionFiles:
    """One partition's directory: its segment files and what has been written."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.segments: list[SegmentFile] = []
        self.fh: BinaryIO | None = None  # the active segment, open for appends
        self.written_end = 0  # the offset after the last written batch
        self.log_start_offset = 0
        self.cleaner_checkpoint = 0
        self.unflushed = 0
        self.last_flush = time.monotonic()
        self.rewrite = False  # a cleaned range: rewrite the files from the log

    # ---- writing -------------------------------------------------------------------
    def _open_segment(self, base: int) -> SegmentFile:
        if self.fh is not None:
            self.fh.close()
        seg = SegmentFile(base, os.path.join(self.path, segment_name(base)))
        fh = self.fh = open(seg.path, "ab", buffering=0)
        seg.size = fh.tell()
        self.segments.append(seg)
        return seg

    def append(self, data: bytes | memoryview, base: int, roll: bool) -> None:
        if not self.segments or (roll and self.segments[-1].size > 0):
            self._open_segment(base)
        seg = self.segments[-1]
        fh = self.fh
        if fh is None:
            fh = self.fh = open(seg.path, "ab", buffering=0)
        _write_all(fh, data, seg.size)
        seg.bases.append(base)
        seg.positions.append(seg.size)
        seg.fingerprints.append(fingerprint(data))
        seg.size += len(data)
        self.unflushed += 1

    def flush(self, fsync: bool) -> None:
        if self.fh is not None:
            self.fh.flush()
            if fsync:
                os.fsync(self.fh.fileno())
        self.unflushed = 0
        self.last_flush = time.monotonic()

    def truncate_to(self, offset: int) -> None:
        """Drop every batch at or above ``offset`` (a new leader's shorter log)."""
        while self.segments and self.segments[-1].base >= offset and len(self.segments) > 1:
            seg = self.segments.pop()
            if self.fh is not None:
                self.fh.close()
                self.fh = None
            os.unlink(seg.path)
        if not self.segments:
            return
        seg = self.segments[-1]
        i = bisect_left(seg.bases, offset)
        size = seg.positions[i] if i < len(seg.bases) else seg.size
        if self.fh is not None:
            self.fh.close()
            self.fh = None
        # a new file renamed over the old: a reader of the old inode is never cut short
        tmp = seg.path + ".truncated"
        with open(seg.path, "rb") as src, open(tmp, "wb") as dst:
            dst.write(src.read(size))
        os.replace(tmp, seg.path)
        del seg.bases[i:], seg.positions[i:], seg.fingerprints[i:]
        seg.size = size
        self.fh = open(seg.path, "ab", buffering=0)

    def delete_below(self, log_start_offset: int) -> None:
        """Retention: whole segment files below the log start offset go."""
        while len(self.segments) > 1 and self.segments[1].base <= log_start_offset:
            os.unlink(self.segments.pop(0).path)

    def close(self) -> None:
        if self.fh is not None:
            self.fh.close()
            self.fh = None

    def save_meta(self) -> None:
        _atomic_json(
            os.path.join(self.path, PARTITION_META),
            {
                "log_start_offset": self.log_start_offset,
                "cleaner_checkpoint": self.cleaner_checkpoint,
            },
        )

    def batch_fingerprint(self, offset: int) -> int | None:
        for seg in reversed(self.segments):
            if seg.base <= offset:
                i = bisect_left(seg.bases, offset)
                if i < len(seg.bases) and seg.bases[i] == offset:
                    return seg.fingerprints[i]
                return None
        return None

    def written_bases(self) -> list[int]:
        return [b for seg in self.segments for b in seg.bases]


__all__ = [
    "LoadedBatch",
    "PartitionFiles",
    "SegmentFile",
    "StorageError",
    "fingerprint",
    "map_file",
    "release_freed_heap",
    "scan_segment",
    "segment_name",
]
