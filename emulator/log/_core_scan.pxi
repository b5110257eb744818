# Part of _core.pyx (included there, one module): scan.py's twin.


# ---- walking a batch's records (Kafka's LogValidator; emulator/log/scan.py is the twin) --
from emulator.log.scan import InnerOffsetError

cdef enum:
    NO_KEY = 0
    BAD_TIMESTAMP = 1


cdef inline int64_t _varint(const uint8_t* p, Py_ssize_t* pos, Py_ssize_t end,
                            int max_bytes) except? -1:
    cdef uint64_t value = 0
    cdef int shift = 0
    cdef int k
    cdef uint8_t b
    for k in range(max_bytes):
        if pos[0] >= end:
            raise InvalidRecordError("record ends inside a varint")
        b = p[pos[0]]
        pos[0] += 1
        value |= (<uint64_t>(b & 0x7F)) << shift
        if b < 0x80:
            return <int64_t>((value >> 1) ^ (-(<int64_t>(value & 1))))
        shift += 7
    raise InvalidRecordError("Varint is too long" if max_bytes == 5 else "Varlong is too long")


def scan_records(data, long count, int64_t base_timestamp, int64_t ts_low, int64_t ts_high,
                 bint check_timestamps, bint need_key, bint check_offsets,
                 Py_ssize_t offset=0):
    """emulator.log.scan.scan_records in C: the same checks, order and messages."""
    cdef Py_buffer view
    PyObject_GetBuffer(data, &view, PyBUF_SIMPLE)
    cdef const uint8_t* p = <const uint8_t*>view.buf
    cdef Py_ssize_t end = view.len
    cdef Py_ssize_t pos = offset, start, rend
    if offset < 0 or offset > end:
        PyBuffer_Release(&view)
        raise ValueError(f"records offset {offset} outside a buffer of {end} bytes")
    cdef int64_t size, ts_delta, off_delta, key_size, value_size, headers, hk, hv, ts
    cdef int64_t max_ts = -1
    cdef long i, j
    errors = []
    try:
        for i in range(count):
            if pos >= end:
                raise InvalidRecordError(f"Incorrect declared batch size, found {i} records "
                                         f"but {count} were declared")
            size = _varint(p, &pos, end, 5)
            start = pos
            if size < 0 or end - pos < size:
                raise InvalidRecordError(
                    f"Invalid record size: expected {size} bytes in record payload, but "
                    f"instead the buffer has only {end - pos} remaining bytes.")
            rend = pos + size
            pos += 1
            ts_delta = _varint(p, &pos, rend, 10)
            off_delta = _varint(p, &pos, rend, 5)
            if check_offsets and off_delta != i:
                raise InnerOffsetError(
                    f"Inner record with offset delta {off_delta} inside the compressed record "
                    f"batch does not have incremental offsets, expected offset delta is {i}")
            key_size = _varint(p, &pos, rend, 5)
            if key_size >= 0:
                pos += key_size
            value_size = _varint(p, &pos, rend, 5)
            if value_size >= 0:
                pos += value_size
            headers = _varint(p, &pos, rend, 5)
            if headers < 0:
                raise InvalidRecordError(f"Found invalid number of record headers {headers}")
            for j in range(headers):
                hk = _varint(p, &pos, rend, 5)
                if hk < 0:
                    raise InvalidRecordError("Invalid negative header key size " + str(hk))
                pos += hk
                hv = _varint(p, &pos, rend, 5)
                if hv >= 0:
                    pos += hv
            if pos != rend:
                raise InvalidRecordError(
                    f"Invalid record size: expected to read {size} bytes in record payload, "
                    f"but instead read {pos - start}")
            ts = <int64_t>(<uint64_t>base_timestamp + <uint64_t>ts_delta)
            if ts > max_ts:
                max_ts = ts
            if need_key and key_size < 0:
                errors.append((i, NO_KEY, ts))
            elif check_timestamps and ts != -1 and not (ts_low <= ts <= ts_high):
                errors.append((i, BAD_TIMESTAMP, ts))
        if pos != end:
            raise InvalidRecordError(
                "Incorrect declared batch size, records still remaining in file")
    finally:
        PyBuffer_Release(&view)
    return max_ts, errors
