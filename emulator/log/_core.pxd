# Declarations of the compiled log and ISR core, for other Cython modules that want
# C-level access (the handlers are Python today; this keeps the door open).
from libc.stdint cimport int64_t


cdef class _LogIndex:
    # the C arrays under Log (_core_index.pxi)
    cdef int64_t* _bases        # base offset of batch i
    cdef int64_t* _lasts        # last offset of batch i (the offset index)
    cdef int64_t* _max_ts       # running maximum timestamp (the time index)
    cdef int64_t* _epochs       # partition leader epoch of batch i
    cdef int64_t* _cum          # bytes of batches [0, i], counted since the log began
    cdef list _batches          # the immutable batch bytes, shared with other replicas
    cdef Py_ssize_t _head       # index of the first live batch (head drops are lazy)
    cdef Py_ssize_t _n          # one past the last live batch
    cdef Py_ssize_t _cap
    cdef int64_t _dropped       # _cum of the last dropped batch: bytes no longer held
    cdef int64_t* _ep_ids       # leader-epoch cache: epoch ids ...
    cdef int64_t* _ep_starts    # ... and their start offsets
    cdef Py_ssize_t _ep_n
    cdef Py_ssize_t _ep_cap
    cdef public int64_t log_start_offset
    cdef public int64_t log_end_offset
    cdef public int64_t max_timestamp
    cdef public int64_t max_timestamp_offset
    cdef public object segments  # emulator.log.segments.Segments, shared with the twin
    cdef object _held           # a batch below the log start whose segment is kept ...
    cdef int64_t _held_base     # ... its base offset ...
    cdef int64_t _held_ts       # ... and max timestamp (pure.Log.max_timestamp_batch)

    cdef int _grow(self) except -1
    cdef int _ep_push(self, int64_t epoch, int64_t start) except -1
    cdef Py_ssize_t _index_of(self, int64_t offset) noexcept
    cdef int _store(self, object data, int64_t base, int64_t last, int64_t epoch,
                    int64_t max_ts) except -1
    cdef int64_t _cum_before(self, Py_ssize_t i) noexcept


cdef class Log(_LogIndex):
    # the log's operations (_core.pyx)
    cdef int _drop_head(self, Py_ssize_t i) except -1
    cdef int _epochs_from_start(self) except -1
    cdef int64_t _batch_ts(self, Py_ssize_t k) except? -2
    cdef int _hold(self, Py_ssize_t i) except -1
    cdef int _rescan_max(self) except -1
    cdef int64_t _bytes_between(self, int64_t start, int64_t end) noexcept
    cdef bint _splice_ok(self, list new, Py_ssize_t i, Py_ssize_t j)
    cdef int _splice(self, list new, Py_ssize_t i, Py_ssize_t j) except -1


cdef class FollowerState:
    cdef public int64_t log_end_offset
    cdef public int64_t last_caught_up_ms
    cdef public int64_t last_fetch_leader_leo
    cdef public int64_t last_fetch_ms

