# The batch's bytes: part of _core.pyx (included there, one module).


# ---- big-endian fields ---------------------------------------------------------
cdef inline int64_t _be64(const uint8_t* p) noexcept nogil:
    cdef uint64_t v = 0
    cdef int k
    for k in range(8):
        v = (v << 8) | p[k]
    return <int64_t>v


cdef inline int32_t _be32(const uint8_t* p) noexcept nogil:
    return <int32_t>((<uint32_t>p[0] << 24) | (<uint32_t>p[1] << 16)
                     | (<uint32_t>p[2] << 8) | <uint32_t>p[3])


cdef inline int16_t _be16(const uint8_t* p) noexcept nogil:
    return <int16_t>((p[0] << 8) | p[1])


cdef inline void _put64(uint8_t* p, int64_t value) noexcept nogil:
    cdef uint64_t v = <uint64_t>value
    cdef int k
    for k in range(7, -1, -1):
        p[k] = v & 0xff
        v >>= 8


cdef inline void _put32(uint8_t* p, uint32_t v) noexcept nogil:
    p[0] = (v >> 24) & 0xff
    p[1] = (v >> 16) & 0xff
    p[2] = (v >> 8) & 0xff
    p[3] = v & 0xff


cdef inline Py_ssize_t _bisect_left(const int64_t* a, Py_ssize_t lo, Py_ssize_t hi,
                                    int64_t x) noexcept nogil:
    """First index in [lo, hi) whose value is >= x (hi if none)."""
    cdef Py_ssize_t mid
    while lo < hi:
        mid = (lo + hi) >> 1
        if a[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


cdef inline Py_ssize_t _bisect_right(const int64_t* a, Py_ssize_t lo, Py_ssize_t hi,
                                     int64_t x) noexcept nogil:
    """First index in [lo, hi) whose value is > x (hi if none)."""
    cdef Py_ssize_t mid
    while lo < hi:
        mid = (lo + hi) >> 1
        if x < a[mid]:
            hi = mid
        else:
            lo = mid + 1
    return lo


# ---- CRC-32C ---------------------------------------------------------------------
def crc32c(data) -> int:
    """CRC-32C (Castagnoli) of a bytes-like object, hardware-accelerated where possible."""
    cdef Py_buffer view
    cdef uint32_t crc
    PyObject_GetBuffer(data, &view, PyBUF_SIMPLE)
    try:
        with nogil:
            crc = emu_crc32c(0, <const unsigned char*>view.buf, <size_t>view.len)
    finally:
        PyBuffer_Release(&view)
    return crc


def crc32c_portable(data) -> int:
    """CRC-32C with the table-driven path only (tests hold both paths to the reference)."""
    cdef Py_buffer view
    cdef uint32_t crc
    PyObject_GetBuffer(data, &view, PyBUF_SIMPLE)
    try:
        crc = emu_crc32c_portable(0, <const unsigned char*>view.buf, <size_t>view.len)
    finally:
        PyBuffer_Release(&view)
    return crc


cdef object _invalid(str message, bint corrupt):
    return InvalidRecordError(message, corrupt)


cdef int _validate(const uint8_t* p, Py_ssize_t n, bint check_crc=True) except -1:
    """wire.records.validate_batch in C: the same checks, order and messages
    (``check_crc`` False: its ``check_crc=False``, every check but the CRC-32C)."""
    cdef int8_t magic
    cdef int32_t count, delta
    if n < HEADER_SIZE:
        if n >= MAGIC_OFFSET + 1 and p[MAGIC_OFFSET] != 2:
            raise _invalid(f"unsupported record magic {p[MAGIC_OFFSET]}", False)
        raise _invalid("record batch shorter than its header", True)
    magic = <int8_t>p[MAGIC_OFFSET]
    if magic != 2:
        raise _invalid(f"unsupported record magic {magic}", False)
    if <int64_t>_be32(p + 8) + LOG_OVERHEAD != n:
        raise _invalid("record batch length does not match the data", True)
    if check_crc and emu_crc32c(0, p + ATTRIBUTES_OFFSET, <size_t>(n - ATTRIBUTES_OFFSET)) \
            != <uint32_t>_be32(p + CRC_OFFSET):
        raise _invalid("record batch CRC-32C mismatch", True)
    count = _be32(p + RECORD_COUNT_OFFSET)
    delta = _be32(p + LAST_OFFSET_DELTA_OFFSET)
    if count <= 0 or <int64_t>delta != <int64_t>count - 1:
        raise _invalid(f"record count {count} does not match last offset delta {delta}", False)
    return 0



def validate_batch(data):
    """wire.records.validate_batch in C: the same checks, order and messages, and the
    same BatchHeader (the produce validator's first step, once per partition)."""
    cdef Py_buffer view
    PyObject_GetBuffer(data, &view, PyBUF_SIMPLE)
    cdef const uint8_t* p = <const uint8_t*>view.buf
    try:
        _validate(p, view.len)
        return BatchHeader(_be64(p), _be32(p + 8), _be32(p + 12), <int8_t>p[MAGIC_OFFSET],
                           <uint32_t>_be32(p + CRC_OFFSET), _be16(p + ATTRIBUTES_OFFSET),
                           _be32(p + LAST_OFFSET_DELTA_OFFSET), _be64(p + 27),
                           _be64(p + MAX_TIMESTAMP_OFFSET), _be64(p + 43), _be16(p + 51),
                           _be32(p + 53), _be32(p + RECORD_COUNT_OFFSET))
    finally:
        PyBuffer_Release(&view)
