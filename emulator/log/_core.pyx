# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# cython: initializedcheck=False, embedsignature=True
"""The compiled log and ISR core; ``pure.py`` and ``isr.py`` are its Python twins.

Same API, same results (tests/test_log_parity.py feeds both the same operations).
What differs is the representation: the offset index, the time index, the epochs
and the byte counts of the batches are growable C arrays of int64 searched with a
C binary search, the batch bytes stay in a Python list (shared, never copied, with
follower replicas), the v2 header is parsed and patched in C, and the CRC-32C is
computed in C (SSE4.2, three interleaved streams, see _crc32c.h). Dropping batches
at the head (retention, DeleteRecords) only moves a start index; the arrays are
compacted when they next need to grow.

The core is one extension module in five files by role, the .pxi files included here
(Cython's ``include``: one module, one namespace, so the C functions stay inlined):
this file declares what the parts share and holds ``Log``'s operations;
_core_bytes.pxi the batch's bytes (big-endian fields, binary search, CRC-32C, header
validation); _core_index.pxi ``_LogIndex``, the C arrays under ``Log`` (the offset
and time indexes, epochs, byte counts, the leader-epoch cache) and their upkeep;
_core_isr.pxi the ISR bookkeeping (isr.py's twin); _core_scan.pxi the walk over a
batch's records (scan.py's twin).
"""

from cpython.buffer cimport PyBUF_SIMPLE, PyBuffer_Release, PyObject_GetBuffer
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.dict cimport PyDict_GetItem
from cpython.list cimport PyList_GET_ITEM, PyList_GET_SIZE
from cpython.long cimport PyLong_AsLong
from cpython.mem cimport PyMem_Free, PyMem_Realloc
from cpython.object cimport PyObject
from libc.stdint cimport int8_t, int16_t, int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.string cimport memcpy, memmove

from emulator.log.segments import Segments
from wire.records import BatchHeader, InvalidRecordError


cdef extern from "_crc32c.h":
    void emu_crc32c_init()
    uint32_t emu_crc32c(uint32_t crc, const unsigned char* buf, size_t length) nogil
    uint32_t emu_crc32c_portable(uint32_t crc, const unsigned char* buf, size_t length) nogil
    int emu_crc32c_hardware()

emu_crc32c_init()

UNDEFINED_EPOCH = -1
CORE_API = 7  # emulator/log/__init__.py refuses a build whose API is not its own
CRC32C_HARDWARE = bool(emu_crc32c_hardware())

cdef enum:
    HEADER_SIZE = 61
    LOG_OVERHEAD = 12
    MAGIC_OFFSET = 16
    CRC_OFFSET = 17
    ATTRIBUTES_OFFSET = 21
    LAST_OFFSET_DELTA_OFFSET = 23
    MAX_TIMESTAMP_OFFSET = 35
    RECORD_COUNT_OFFSET = 57
    TIMESTAMP_TYPE_BIT = 0x08
    ARRAYS = 5


include "_core_bytes.pxi"
include "_core_index.pxi"


# ---- the log -----------------------------------------------------------------------
cdef class Log(_LogIndex):
    """One replica's log (see pure.Log for the contract); the C arrays under it
    and their upkeep are ``_LogIndex``'s (_core_index.pxi)."""

    # ---- segments ----------------------------------------------------------------
    def maybe_roll(self, int64_t incoming, int64_t segment_bytes, int64_t segment_ms,
                   int64_t now_ms):
        """Before an append of ``incoming`` bytes: roll the active segment if it is
        full or old (segment.bytes, segment.ms); the append then dates the segment."""
        # Segments.should_roll and on_append read in place: this runs before every
        # append, and three Python calls were most of its cost.
        segs = self.segments
        cdef list bases = segs.bases
        cdef list created = segs.created_ms
        cdef list written = segs.written_ms
        cdef int64_t active = self._bytes_between(bases[len(bases) - 1], self.log_end_offset)
        cdef int64_t born
        cdef bint rolled = False
        if active > 0:
            if active + incoming > segment_bytes:
                rolled = True
            else:
                born = created[len(created) - 1]
                rolled = born >= 0 and now_ms - born >= segment_ms
        if rolled:
            segs.roll(self.log_end_offset, now_ms)
        if created[len(created) - 1] < 0:
            created[len(created) - 1] = now_ms
        written[len(written) - 1] = now_ms
        return rolled

    def roll(self, int64_t now_ms=-1):
        """Close the active segment now (a forced roll); False if it is empty."""
        return self.segments.roll(self.log_end_offset, now_ms)

    def segment_ranges(self):
        """(base offset, end offset) of every segment, the active one last."""
        return self.segments.ranges(self.log_end_offset)

    def replace_batches(self, int64_t start, int64_t end, list batches):
        """Swap the batches lying wholly in [start, end) for ``batches`` (see pure.Log).

        A splice of the C arrays (the cleaner's swap must not stall the loop); odd
        input (new batches not between their neighbours, an epoch cache that does not
        cover every batch) takes the rebuild path, whose result is the same.
        """
        cdef int64_t lso = self.log_start_offset, leo = self.log_end_offset
        cdef Py_ssize_t i, j, m
        new = sorted([b for b in batches if b[2] < leo], key=lambda e: e[1])
        m = len(new)
        i = _bisect_left(self._lasts, self._head, self._n, start)
        j = _bisect_left(self._bases, self._head, self._n, end)
        if j < i:
            j = i
        # Room for the net growth only: a data directory maps every closed segment,
        # swapping each batch for a view of the file one for one (no growth). Asking for
        # room for all m doubled a log whose live batches were under half its arrays,
        # and arrays never shrink: RssAnon stepped up by MBs under a steady load.
        while self._n + m - (j - i) >= self._cap:
            self._grow()
            i = _bisect_left(self._lasts, self._head, self._n, start)
            j = _bisect_left(self._bases, self._head, self._n, end)
            if j < i:
                j = i
        if self._splice_ok(new, i, j):
            self._splice(new, i, j)
            return
        keep = [e for e in self.batches_from(-(1 << 62), 1 << 62)  # every batch, even below 0
                if e[2] < start or e[1] >= end]
        merged = sorted(keep + new, key=lambda e: e[1])
        del self._batches[:]
        self._head = self._n = 0
        self._dropped = 0
        self.max_timestamp = self.max_timestamp_offset = -1
        for data, base, last, epoch, max_ts in merged:
            self._store(data, base, last, epoch, max_ts)
        if self._n > self._head and self._max_ts[self._head] != self._batch_ts(self._head):
            self._rescan_max()  # batches_from's running maximum counted dropped batches
        self.log_start_offset = lso
        self.log_end_offset = leo

    cdef bint _splice_ok(self, list new, Py_ssize_t i, Py_ssize_t j):
        cdef Py_ssize_t k
        cdef int64_t top, lo, hi
        if self._ep_n == 0:
            return False
        top = self._ep_ids[self._ep_n - 1]
        for k in range(self._head, self._n):
            if self._epochs[k] > top:
                return False
        lo = self._lasts[i - 1] if i > self._head else -(1 << 62)
        hi = self._bases[j] if j < self._n else (1 << 62)
        for e in new:
            if e[3] > top or e[1] <= lo or e[2] >= hi or e[1] > e[2]:
                return False
            lo = e[2]
        return True

    cdef int _splice(self, list new, Py_ssize_t i, Py_ssize_t j) except -1:
        cdef Py_ssize_t m = len(new), n = self._n, k, t, tail = n - j
        cdef int64_t prev_cum, old_before, running, length
        cdef int64_t* arrays[ARRAYS]
        arrays[0] = self._bases
        arrays[1] = self._lasts
        arrays[2] = self._max_ts
        arrays[3] = self._epochs
        arrays[4] = self._cum
        old_before = self._cum[j - 1] if j > 0 else 0
        for k in range(ARRAYS):
            memmove(arrays[k] + i + m, arrays[k] + j, tail * sizeof(int64_t))
        self._batches[i:j] = [e[0] for e in new]
        prev_cum = self._cum[i - 1] if i > 0 else 0
        running = self._max_ts[i - 1] if i > self._head else -1
        for k in range(m):
            e = new[k]
            t = i + k
            self._bases[t] = e[1]
            self._lasts[t] = e[2]
            self._epochs[t] = e[3]
            running = e[4] if e[4] > running else running
            self._max_ts[t] = running
            length = len(e[0])
            prev_cum += length
            self._cum[t] = prev_cum
        for k in range(i + m, i + m + tail):
            self._cum[k] += prev_cum - old_before
            if self._max_ts[k] < running:
                self._max_ts[k] = running
            else:
                running = self._max_ts[k]
        self._n = i + m + tail
        self.max_timestamp = -1
        self.max_timestamp_offset = -1
        if self._n > self._head and self._max_ts[self._n - 1] > -1:
            # as the rebuild's appends set them: the first batch reaching the maximum
            self.max_timestamp = self._max_ts[self._n - 1]
            k = _bisect_left(self._max_ts, self._head, self._n, self.max_timestamp)
            self.max_timestamp_offset = self._lasts[k]
            if self._max_ts[self._head] != self._batch_ts(self._head):
                self._rescan_max()  # the running maximum counts batches dropped before
        return 0

    # ---- appends -------------------------------------------------------------------
    def append_as_leader(self, data, int32_t leader_epoch, int64_t append_time=-1,
                         bint crc_checked=False):
        """Validate one batch, assign offsets and epoch, store it (see pure.Log).

        Returns (base offset, last offset, max timestamp). ``append_time`` >= 0
        stamps the batch with LogAppendTime. ``crc_checked``: the caller has just
        checked these very bytes' CRC-32C (validate_batch); the other checks are kept.
        """
        cdef Py_buffer view
        cdef const uint8_t* src
        cdef Py_ssize_t n
        cdef bint release = False
        cdef object out
        cdef uint8_t* p
        cdef int64_t base, last, max_ts
        cdef int16_t attrs
        if type(data) is bytes:
            src = <const uint8_t*>PyBytes_AS_STRING(data)
            n = PyBytes_GET_SIZE(data)
        else:
            try:
                PyObject_GetBuffer(data, &view, PyBUF_SIMPLE)
            except BufferError:  # a non-contiguous view: take a contiguous copy
                data = bytes(data)
                PyObject_GetBuffer(data, &view, PyBUF_SIMPLE)
            release = True
            src = <const uint8_t*>view.buf
            n = view.len
        try:
            _validate(src, n, not crc_checked)
            out = PyBytes_FromStringAndSize(<const char*>src, n)
        finally:
            if release:
                PyBuffer_Release(&view)
        p = <uint8_t*>PyBytes_AS_STRING(out)
        base = self.log_end_offset
        last = base + _be32(p + LAST_OFFSET_DELTA_OFFSET)
        _put64(p, base)
        _put32(p + 12, <uint32_t>leader_epoch)
        max_ts = _be64(p + MAX_TIMESTAMP_OFFSET)
        if append_time >= 0:
            attrs = _be16(p + ATTRIBUTES_OFFSET) | TIMESTAMP_TYPE_BIT
            p[ATTRIBUTES_OFFSET] = (attrs >> 8) & 0xff
            p[ATTRIBUTES_OFFSET + 1] = attrs & 0xff
            _put64(p + MAX_TIMESTAMP_OFFSET, append_time)
            _put32(p + CRC_OFFSET,
                   emu_crc32c(0, p + ATTRIBUTES_OFFSET, <size_t>(n - ATTRIBUTES_OFFSET)))
            max_ts = append_time
        self._store(out, base, last, leader_epoch, max_ts)
        return base, last, max_ts

    def append_as_follower(self, data, int64_t base, int64_t last, int64_t epoch,
                           int64_t max_ts):
        """Append a batch already validated by the leader (shared bytes)."""
        if base < self.log_end_offset:  # a gap is fine: a compacted leader has them
            raise InvalidRecordError(
                f"follower append at {base} but LEO is {self.log_end_offset}")
        self._store(data, base, last, epoch, max_ts)

    # ---- reads -----------------------------------------------------------------------
    def read(self, int64_t offset, int64_t max_bytes, int64_t max_offset, bint min_one=True):
        """Whole batches from the one containing ``offset``, below ``max_offset``.

        At most ``max_bytes``, except that the first batch is returned whole when
        ``min_one`` (KIP-74) so a consumer can always make progress.
        """
        cdef Py_ssize_t i = _bisect_left(self._lasts, self._head, self._n, offset)
        cdef Py_ssize_t n = self._n
        cdef list out = []
        cdef int64_t size = 0, length
        while i < n and self._lasts[i] < max_offset:
            length = self._cum[i] - (self._cum[i - 1] if i > 0 else 0)
            if size + length > max_bytes and (out or not min_one):
                break
            out.append(self._batches[i])
            size += length
            i += 1
        return out

    def read_bytes(self, int64_t offset, int64_t max_bytes, int64_t max_offset,
                   bint min_one=True):
        """``b"".join(self.read(...))`` without the list: the batches' bytes copied once
        into one object, in C (a Fetch answer's records of one partition)."""
        cdef Py_ssize_t start = _bisect_left(self._lasts, self._head, self._n, offset)
        cdef Py_ssize_t i = start, n = self._n, k
        cdef int64_t size = 0, length
        cdef object out, b
        cdef char* dst
        cdef Py_buffer view
        while i < n and self._lasts[i] < max_offset:
            length = self._cum[i] - (self._cum[i - 1] if i > 0 else 0)
            if size + length > max_bytes and (i > start or not min_one):
                break
            size += length
            i += 1
        if i == start:
            return b""
        if i == start + 1 and type(self._batches[start]) is bytes:
            return self._batches[start]  # one batch: the stored bytes, shared
        out = PyBytes_FromStringAndSize(NULL, size)
        dst = PyBytes_AS_STRING(out)
        for k in range(start, i):
            b = <object>PyList_GET_ITEM(self._batches, k)
            if type(b) is bytes:
                length = PyBytes_GET_SIZE(b)
                memcpy(dst, PyBytes_AS_STRING(b), length)
            else:
                PyObject_GetBuffer(b, &view, PyBUF_SIMPLE)
                length = view.len
                memcpy(dst, view.buf, length)
                PyBuffer_Release(&view)
            dst += length
        return out

    def batches_from(self, int64_t offset, int64_t max_bytes):
        """Batches for a follower fetch: (data, base, last, epoch, max_ts)."""
        cdef Py_ssize_t i = _bisect_left(self._lasts, self._head, self._n, offset)
        cdef Py_ssize_t n = self._n
        cdef list out = []
        cdef int64_t size = 0, length
        while i < n:
            length = self._cum[i] - (self._cum[i - 1] if i > 0 else 0)
            if out and size + length > max_bytes:
                break
            out.append((self._batches[i], self._bases[i], self._lasts[i], self._epochs[i],
                        self._max_ts[i]))
            size += length
            i += 1
        return out

    def bytes_between(self, int64_t start, int64_t end):
        """Stored bytes of the batches covering offsets [start, end)."""
        return self._bytes_between(start, end)

    cdef int64_t _bytes_between(self, int64_t start, int64_t end) noexcept:
        cdef Py_ssize_t i = self._index_of(start)
        cdef Py_ssize_t j = self._index_of(end)
        cdef int64_t diff
        if i >= self._n - self._head:
            return 0
        diff = self._cum_before(j) - self._cum_before(i)
        return diff if diff > 0 else 0

    @property
    def size_bytes(self):
        return self._cum_before(self._n - self._head)

    @property
    def batch_count(self):
        return self._n - self._head

    def offset_for_timestamp(self, int64_t ts):
        """First batch whose max timestamp >= ts: (base offset, timestamp) or None.

        The caller refines within the batch (records decoded) when it needs the
        exact record, as Kafka's time index does.
        """
        cdef Py_ssize_t i = _bisect_left(self._max_ts, self._head, self._n, ts)
        if i >= self._n:
            return None
        return self._bases[i], self._max_ts[i]

    def batch_at(self, int64_t offset):
        cdef Py_ssize_t i = _bisect_left(self._lasts, self._head, self._n, offset)
        return self._batches[i] if i < self._n else None

    def max_timestamp_batch(self):
        """The batch of the log's first record carrying its largest timestamp, over every
        kept segment, a batch below the log start included (see pure.Log)."""
        if self._held is not None and self._held_ts >= self.max_timestamp:
            return self._held
        return self.batch_at(self.max_timestamp_offset)

    # ---- epochs ----------------------------------------------------------------------
    @property
    def latest_epoch(self):
        return self._ep_ids[self._ep_n - 1] if self._ep_n else UNDEFINED_EPOCH

    def epoch_entries(self):
        cdef Py_ssize_t k
        return [(self._ep_ids[k], self._ep_starts[k]) for k in range(self._ep_n)]

    def assign_epoch(self, int64_t epoch, int64_t start_offset):
        """Record a new leader epoch starting at ``start_offset`` (becoming leader)."""
        if self._ep_n == 0 or epoch > self._ep_ids[self._ep_n - 1]:
            self._ep_push(epoch, start_offset)

    cdef int _epochs_from_start(self) except -1:
        """Kafka's LeaderEpochFileCache.truncateFromStart at the log start (see
        pure.Log._epochs_from_start): the entries starting at or before it go, the last
        of them comes back starting at it."""
        cdef Py_ssize_t k = 0
        cdef int64_t start = self.log_start_offset
        while k < self._ep_n and self._ep_starts[k] <= start:
            k += 1
        if k == 0:
            return 0
        k -= 1  # the last of them stays, moved to the log start
        if k:
            self._ep_n -= k
            memmove(self._ep_ids, self._ep_ids + k, self._ep_n * sizeof(int64_t))
            memmove(self._ep_starts, self._ep_starts + k, self._ep_n * sizeof(int64_t))
        self._ep_starts[0] = start
        return 0

    # ---- truncation and retention ------------------------------------------------
    def truncate_to(self, int64_t offset):
        """Remove every record at or above ``offset`` (follower divergence)."""
        cdef Py_ssize_t i, j, head = self._head
        cdef int64_t leo
        if offset >= self.log_end_offset:
            # nothing to remove, but Kafka's truncateTo still drops the epoch entries
            # from the log end on (truncateFromEnd): one this replica recorded as a
            # leader elected at its log end that appended nothing
            while self._ep_n and self._ep_starts[self._ep_n - 1] >= self.log_end_offset:
                self._ep_n -= 1
            return
        if self._held is not None and self._held_base >= offset:
            self._held = None
        i = _bisect_left(self._lasts, head, self._n, offset)
        if i < self._n and self._bases[i] < offset:
            i += 1  # keep a batch that straddles (Kafka truncates at batch boundaries)
        del self._batches[i:]
        self._n = i
        if i > head:
            leo = self._lasts[i - 1] + 1
        else:
            leo = offset
        self.log_end_offset = leo if leo > self.log_start_offset else self.log_start_offset
        leo = self.log_end_offset
        while self._ep_n and self._ep_starts[self._ep_n - 1] >= leo:
            self._ep_n -= 1  # Kafka's truncateFromEnd: every entry from the new end on
        self.max_timestamp_offset = -1
        if i > head:
            self.max_timestamp = self._max_ts[i - 1]
            j = _bisect_left(self._max_ts, head, i, self.max_timestamp)
            self.max_timestamp_offset = self._lasts[j]
            if self._max_ts[head] != self._batch_ts(head):
                self._rescan_max()  # the running maximum counts batches dropped before
        else:
            self.max_timestamp = -1
        self.segments.truncate_to(self.log_end_offset)

    def truncate_fully_and_start_at(self, int64_t offset):
        """Drop everything; the log restarts empty at ``offset``."""
        del self._batches[:]
        self._head = self._n = 0
        self._dropped = 0
        self._ep_n = 0
        self.log_start_offset = self.log_end_offset = offset
        self.max_timestamp = self.max_timestamp_offset = -1
        self.segments.reset(offset)
        self._held = None

    def delete_before(self, int64_t offset):
        """Advance the log start offset (DeleteRecords); drops whole batches below it."""
        cdef Py_ssize_t i
        if offset > self.log_end_offset:
            offset = self.log_end_offset
        if offset <= self.log_start_offset:
            return self.log_start_offset
        self.log_start_offset = offset
        i = self._index_of(offset)
        self.segments.delete_before(offset)
        self._hold(i)
        if i:
            self._drop_head(i)
        self.segments.delete_before(self.log_start_offset)
        self._epochs_from_start()
        return offset

    cdef int64_t _batch_ts(self, Py_ssize_t k) except? -2:
        """The max timestamp in the header of batch ``k`` (an array index)."""
        b = self._batches[k]
        if type(b) is bytes:
            return _be64(<const uint8_t*>PyBytes_AS_STRING(b) + MAX_TIMESTAMP_OFFSET)
        return int.from_bytes(bytes(b[MAX_TIMESTAMP_OFFSET:MAX_TIMESTAMP_OFFSET + 8]),
                              "big", signed=True)

    cdef int _hold(self, Py_ssize_t i) except -1:
        """Before DeleteRecords drops the first ``i`` live batches: keep the one carrying
        the largest timestamp among those whose segment stays (see pure.Log._hold)."""
        cdef int64_t kept = self.segments.bases[0], ts
        cdef Py_ssize_t k
        if self._held is not None and self._held_base < kept:
            self._held = None
        for k in range(self._head, self._head + i):
            if self._bases[k] < kept:
                continue
            ts = self._batch_ts(k)
            if self._held is None or ts > self._held_ts:
                self._held = self._batches[k]
                self._held_base = self._bases[k]
                self._held_ts = ts
        return 0

    cdef int _rescan_max(self) except -1:
        """The batch carrying the largest timestamp was dropped: find the first of those
        left carrying theirs (the running maximum still counts the dropped ones)."""
        cdef Py_ssize_t k
        cdef int64_t ts
        self.max_timestamp = self.max_timestamp_offset = -1
        for k in range(self._head, self._n):
            ts = self._batch_ts(k)
            if ts > self.max_timestamp:
                self.max_timestamp = ts
                self.max_timestamp_offset = self._lasts[k]
        return 0

    cdef int _drop_head(self, Py_ssize_t i) except -1:
        cdef Py_ssize_t k
        for k in range(self._head, self._head + i):
            self._batches[k] = None
        self._head += i
        self._dropped = self._cum[self._head - 1]
        if self._head < self._n:
            if self._bases[self._head] > self.log_start_offset:
                self.log_start_offset = self._bases[self._head]
        elif self.log_end_offset > self.log_start_offset:
            self.log_start_offset = self.log_end_offset
        if self.max_timestamp >= 0 and (self._head == self._n or
                                        self.max_timestamp_offset < self._bases[self._head]):
            self._rescan_max()
        return 0

    def apply_retention(self, int64_t now_ms, int64_t retention_ms, int64_t retention_bytes,
                        int64_t max_offset):
        """Delete old batches below ``max_offset`` (the high watermark); returns count."""
        cdef Py_ssize_t n = 0
        cdef int64_t first_size, first_ts
        cdef object too_old, first
        while self._n - self._head > 1 and self._lasts[self._head] < max_offset:
            first = self._batches[self._head]
            if type(first) is bytes:
                first_size = PyBytes_GET_SIZE(first)
                first_ts = _be64(<const uint8_t*>PyBytes_AS_STRING(first) + MAX_TIMESTAMP_OFFSET)
            else:  # a view of a segment file (a data directory's closed segment)
                first_size = len(first)
                first_ts = int.from_bytes(bytes(first[MAX_TIMESTAMP_OFFSET:
                                                      MAX_TIMESTAMP_OFFSET + 8]),
                                          "big", signed=True)
            if first_ts < 0:  # no timestamp: the segment's last append (Segments)
                first_ts = self.segments.retention_time(first_ts, self._bases[self._head])
            # Python integers: a client's timestamp may be anything an int64 holds.
            too_old = retention_ms >= 0 and first_ts >= 0 \
                and (<object>now_ms - first_ts > retention_ms)
            if not too_old and not (
                retention_bytes >= 0
                and self._cum_before(self._n - self._head) - first_size >= retention_bytes
            ):
                break
            self._drop_head(1)  # the log start moves to the next batch's base
            n += 1
        if n:
            self.segments.delete_before(self.log_start_offset)
            if self._held is not None and self._held_base < self.segments.bases[0]:
                self._held = None
            self._epochs_from_start()
        return n


include "_core_isr.pxi"
include "_core_scan.pxi"
