# The C arrays under the compiled log: part of _core.pyx (included there, one module).
# ``Log`` (in _core.pyx) is this class with the log's operations; the arrays,
# their growth and the lookups every operation starts from are here.


cdef class _LogIndex:
    """The arrays of one replica's log, one entry per batch from ``_head`` to
    ``_n``: base and last offsets (the offset index), the running maximum timestamp
    (the time index), the leader epoch, the bytes counted since the log began, and
    the leader-epoch cache; the batch bytes in a list beside them."""

    def __cinit__(self, int64_t start_offset=0):
        self._bases = self._lasts = self._max_ts = self._epochs = self._cum = NULL
        self._ep_ids = self._ep_starts = NULL
        self._batches = []
        self._head = self._n = self._cap = 0
        self._ep_n = self._ep_cap = 0
        self._dropped = 0
        self.log_start_offset = start_offset
        self.log_end_offset = start_offset
        self.max_timestamp = -1
        self.max_timestamp_offset = -1
        self.segments = Segments(start_offset)
        self._held = None
        self._held_base = self._held_ts = -1

    def __dealloc__(self):
        PyMem_Free(self._bases)
        PyMem_Free(self._ep_ids)

    def __sizeof__(self):
        """The object and its C arrays (sys.getsizeof; not the batches, which replicas
        share): what a test can watch stay flat while batches come and go."""
        return (object.__sizeof__(self) + ARRAYS * self._cap * sizeof(int64_t)
                + 2 * self._ep_cap * sizeof(int64_t))

    # ---- storage -----------------------------------------------------------------
    cdef int _grow(self) except -1:
        """Make room for one more batch: compact a dead head when the live batches fit
        in half the arrays, else double (at ``_n == _cap``, as on an append, the two
        tests are one; replace_batches calls it below that)."""
        cdef Py_ssize_t live = self._n - self._head
        cdef Py_ssize_t cap, k, a
        cdef int64_t* block
        cdef int64_t* arrays[ARRAYS]
        if self._head and live * 2 <= self._cap:
            arrays[0] = self._bases
            arrays[1] = self._lasts
            arrays[2] = self._max_ts
            arrays[3] = self._epochs
            arrays[4] = self._cum
            for a in range(ARRAYS):
                memmove(arrays[a], arrays[a] + self._head, live * sizeof(int64_t))
            for k in range(live):
                self._cum[k] -= self._dropped
            del self._batches[:self._head]
            self._dropped = 0
            self._head = 0
            self._n = live
            return 0
        cap = self._cap * 2 if self._cap else 8
        # One block, five arrays of ``cap`` each: move them from the old stride.
        block = <int64_t*>PyMem_Realloc(NULL, ARRAYS * cap * sizeof(int64_t))
        if block == NULL:
            raise MemoryError()
        if self._bases != NULL:
            memcpy(block, self._bases, self._n * sizeof(int64_t))
            memcpy(block + cap, self._lasts, self._n * sizeof(int64_t))
            memcpy(block + 2 * cap, self._max_ts, self._n * sizeof(int64_t))
            memcpy(block + 3 * cap, self._epochs, self._n * sizeof(int64_t))
            memcpy(block + 4 * cap, self._cum, self._n * sizeof(int64_t))
            PyMem_Free(self._bases)
        self._bases = block
        self._lasts = block + cap
        self._max_ts = block + 2 * cap
        self._epochs = block + 3 * cap
        self._cum = block + 4 * cap
        self._cap = cap
        return 0

    cdef int _ep_push(self, int64_t epoch, int64_t start) except -1:
        """Add a newer epoch's entry; entries starting at or after ``start`` go first
        (Kafka's LeaderEpochFileCache.assign drops the entries a new one contradicts:
        one a leader recorded when elected, before any append, at the same offset)."""
        cdef Py_ssize_t cap
        cdef int64_t* block
        while self._ep_n and self._ep_starts[self._ep_n - 1] >= start:
            self._ep_n -= 1
        if self._ep_n == self._ep_cap:
            cap = self._ep_cap * 2 if self._ep_cap else 4
            block = <int64_t*>PyMem_Realloc(NULL, 2 * cap * sizeof(int64_t))
            if block == NULL:
                raise MemoryError()
            if self._ep_ids != NULL:
                memcpy(block, self._ep_ids, self._ep_n * sizeof(int64_t))
                memcpy(block + cap, self._ep_starts, self._ep_n * sizeof(int64_t))
                PyMem_Free(self._ep_ids)
            self._ep_ids = block
            self._ep_starts = block + cap
            self._ep_cap = cap
        self._ep_ids[self._ep_n] = epoch
        self._ep_starts[self._ep_n] = start
        self._ep_n += 1
        return 0

    cdef Py_ssize_t _index_of(self, int64_t offset) noexcept:
        """Live index of the batch containing ``offset`` (or the first after it)."""
        return _bisect_left(self._lasts, self._head, self._n, offset) - self._head

    cdef int64_t _cum_before(self, Py_ssize_t i) noexcept:
        """Bytes of the live batches before live index ``i``."""
        if i <= 0:
            return 0
        return self._cum[self._head + i - 1] - self._dropped

    cdef int _store(self, object data, int64_t base, int64_t last, int64_t epoch,
                    int64_t max_ts) except -1:
        cdef Py_ssize_t n = self._n
        cdef int64_t prev
        if self._ep_n == 0 or epoch > self._ep_ids[self._ep_n - 1]:
            self._ep_push(epoch, base)
        if n == self._cap:
            self._grow()
            n = self._n
        self._bases[n] = base
        self._lasts[n] = last
        prev = self._max_ts[n - 1] if n > self._head else -1
        self._max_ts[n] = max_ts if max_ts > prev else prev
        self._epochs[n] = epoch
        self._cum[n] = (self._cum[n - 1] if n > 0 else 0) + len(data)
        self._batches.append(data)
        self._n = n + 1
        if max_ts > self.max_timestamp:
            self.max_timestamp = max_ts
            self.max_timestamp_offset = last
        self.log_end_offset = last + 1
        return 0
