"""Kafka's LogValidator checks on produced batches (emulator/log/validator.py).

The expected codes are what a real Kafka 4.4.0 broker answered to the same batches
(sent raw over its PLAINTEXT listener with client_tests/kafka_cluster.py): INVALID_RECORD
for counts, sizes and headers the bytes do not hold, UNKNOWN_SERVER_ERROR for a payload
that does not decompress or inner offsets out of order in a compressed batch, KIP-467
per-record errors for keyless records on compacted topics and out-of-range timestamps.
The C walker and its pure twin are held to each other on arbitrary bytes.
"""

from __future__ import annotations

import struct

import cramjam
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from emulator.log import scan as pure_scan
from emulator.log.validator import (
    Checked,
    RecordValidationError,
    TopicRules,
    check_outcome,
    inflate_inline,
    needs_offline_check,
    validate_produce_batch,
)
from wire.errors import ErrorCode as E
from wire.records import (
    HEADER_SIZE,
    InvalidRecordError,
    Record,
    build_batch,
    crc32c,
    iter_timestamps,
)

try:
    from emulator.log import _core
except ImportError as e:  # a test that cannot run fails and says why
    raise ImportError("tests/test_validator.py needs the compiled emulator.log._core: run "
                      "`python setup.py build_ext --inplace`") from e

NOW = 1_795_469_452_099
PLAIN = TopicRules()
COMPACTED = TopicRules(compacted=True)
GZIP, SNAPPY, LZ4, ZSTD = 1, 2, 3, 4


def batch(body: bytes, count: int, lod: int, attrs: int = 0, base_ts: int = NOW,
          pid: int = -1, seq: int = -1) -> bytes:
    """A v2 batch around ``body`` with a correct CRC, whatever the body holds."""
    tail = struct.pack(">hiqqqhii", attrs, lod, base_ts, base_ts, pid, 0 if pid >= 0 else -1,
                       seq, count) + body
    return struct.pack(">qiibI", 0, len(tail) + 9, -1, 2, crc32c(tail)) + tail


def records(n: int, key: bytes | None = b"k", value: bytes = b"v") -> bytes:
    return build_batch([(key, value)] * n, timestamp=NOW)[HEADER_SIZE:]


def gz(b: bytes) -> bytes:
    return bytes(cramjam.gzip.compress(b))


def code_of(data: bytes, rules: TopicRules = PLAIN, limit: int | None = None) -> int:
    kw = {} if limit is None else {"max_decompressed": limit}
    try:
        validate_produce_batch(data, rules, NOW, "t-0", **kw)
    except RecordValidationError as e:
        return e.code
    except InvalidRecordError as e:
        return E.CORRUPT_MESSAGE if e.corrupt else E.INVALID_RECORD
    return E.NONE


BAD_OFFSET = records(1).replace(b"\x00\x00\x02k", b"\x00\x0a\x02k", 1)
CASES = {
    "ok": (build_batch([(b"k", b"v")] * 3, timestamp=NOW), E.NONE),
    "gzip garbage": (batch(b"\x1f\x8b garbage garbage", 1, 0, attrs=GZIP), E.UNKNOWN_SERVER_ERROR),
    "snappy garbage": (batch(b"garbage garbage", 1, 0, attrs=SNAPPY), E.UNKNOWN_SERVER_ERROR),
    "lz4 garbage": (batch(b"garbage garbage", 1, 0, attrs=LZ4), E.UNKNOWN_SERVER_ERROR),
    "zstd garbage": (batch(b"garbage garbage", 1, 0, attrs=ZSTD), E.UNKNOWN_SERVER_ERROR),
    "count 2^31-1": (batch(records(1), 2**31 - 1, 2**31 - 2), E.INVALID_RECORD),
    "count vs last offset delta": (batch(records(1), 2, 0), E.INVALID_RECORD),
    "count 2, one record": (batch(records(1), 2, 1), E.INVALID_RECORD),
    "count 1, two records": (batch(records(2), 1, 0), E.INVALID_RECORD),
    "count 0": (batch(b"", 0, -1), E.INVALID_RECORD),
    "gzip count 2, one record": (batch(gz(records(1)), 2, 1, attrs=GZIP), E.INVALID_RECORD),
    "gzip count 1, two records": (batch(gz(records(2)), 1, 0, attrs=GZIP), E.INVALID_RECORD),
    "offset delta, uncompressed": (batch(BAD_OFFSET, 1, 0), E.NONE),
    "offset delta, gzip": (batch(gz(BAD_OFFSET), 1, 0, attrs=GZIP), E.UNKNOWN_SERVER_ERROR),
    "record length short": (batch(b"\x02" + records(1)[1:], 1, 0), E.INVALID_RECORD),
    "record length long": (batch(b"\x40" + records(1)[1:], 1, 0), E.INVALID_RECORD),
    "trailing bytes": (batch(records(1) + b"\x00\x00\x00", 1, 0), E.INVALID_RECORD),
    "key length -2": (batch(records(1).replace(b"\x02k", b"\x03k", 1), 1, 0), E.INVALID_RECORD),
    "negative header count": (batch(records(1)[:-1] + b"\x03", 1, 0), E.INVALID_RECORD),
    "producer id without sequence": (batch(records(1), 1, 0, pid=5, seq=-1), E.INVALID_RECORD),
    "LogAppendTime bit from a producer": (batch(records(1), 1, 0, attrs=8), E.NONE),
    "gzip inflating past max.message.bytes": (
        batch(gz(records(20, value=b"\x00" * 9000)), 20, 19, attrs=GZIP), E.NONE),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_batches_get_kafka_4_4s_answers(name: str) -> None:
    data, code = CASES[name]
    assert code_of(data) == code


def test_keyless_records_on_a_compacted_topic_are_per_record_errors() -> None:
    data = build_batch([(None, b"v"), (b"k", b"v"), (None, b"v")], timestamp=NOW)
    assert code_of(data) == E.NONE
    with pytest.raises(RecordValidationError) as info:
        validate_produce_batch(data, COMPACTED, NOW, "c-0")
    e = info.value
    msg = "Compacted topic cannot accept message without key in topic partition c-0"
    assert (e.code, e.record_errors) == (E.INVALID_RECORD, [(0, msg), (2, msg)])
    assert e.message == (
        "One or more records have been rejected due to 2 record errors in total, and only "
        f"showing the first three errors at most: [RecordError(batchIndex=0, message='{msg}'), "
        f"RecordError(batchIndex=2, message='{msg}')]")


def test_timestamps_outside_the_window_are_invalid_timestamp() -> None:
    data = build_batch([Record(0, NOW, b"k", b"v"), Record(0, NOW + 7_200_000, b"k", b"v")],
                       timestamp=NOW)
    with pytest.raises(RecordValidationError) as info:
        validate_produce_batch(data, PLAIN, NOW, "p-0")
    e = info.value
    assert e.code == E.INVALID_TIMESTAMP
    assert e.message == "One or more records have been rejected due to invalid timestamp"
    # Kafka prints now - Long.MAX_VALUE as Java computes it (wrapped).
    assert e.record_errors == [(1, f"Timestamp {NOW + 7_200_000} of message with offset 1 is "
                                f"out of range. The timestamp should be within "
                                f"[-9223370241385323708, {NOW + 3_600_000}]")]
    # LogAppendTime topics take any producer timestamp.
    validate_produce_batch(data, TopicRules(create_time=False), NOW, "p-0")
    old = build_batch([(b"k", b"v")], timestamp=NOW - 10_000)
    with pytest.raises(RecordValidationError):
        validate_produce_batch(old, TopicRules(before_max_ms=5_000), NOW, "p-0")


def test_a_compression_bomb_is_bounded() -> None:
    """Kafka streams compressed batches; the emulator holds one decompressed batch at a
    time, bounded, and refuses more with RECORD_LIST_TOO_LARGE."""
    bomb = batch(gz(records(1, value=b"\x00" * 3_000_000)), 1, 0, attrs=GZIP)
    assert len(bomb) < 10_000
    assert code_of(bomb, limit=1 << 20) == E.RECORD_LIST_TOO_LARGE
    assert code_of(bomb) == E.NONE
    with pytest.raises(InvalidRecordError):
        list(iter_timestamps(bomb, limit=1 << 20))
    assert list(iter_timestamps(bomb)) == [(0, NOW)]


@pytest.mark.parametrize("codec", [GZIP, SNAPPY, LZ4, ZSTD])
def test_every_codec_validates_and_reads_timestamps(codec: int) -> None:
    raw = records(4)
    comp = {GZIP: gz, SNAPPY: lambda b: bytes(cramjam.snappy.compress_raw(b)),
            LZ4: lambda b: bytes(cramjam.lz4.compress(b)),
            ZSTD: lambda b: bytes(cramjam.zstd.compress(b))}[codec](raw)
    data = batch(comp, 4, 3, attrs=codec)
    assert code_of(data) == E.NONE
    assert list(iter_timestamps(data)) == [(i, NOW) for i in range(4)]


def _outcome(fn, data: bytes, count: int, flags: tuple[bool, bool, bool]):  # noqa: ANN001, ANN202
    try:
        return fn(data, count, NOW, NOW - 1000, NOW + 1000, *flags)
    except InvalidRecordError as e:
        return type(e).__name__, str(e)


@settings(max_examples=400, deadline=None)
@given(st.binary(max_size=80), st.integers(0, 6),
       st.tuples(st.booleans(), st.booleans(), st.booleans()))
def test_the_c_walker_and_its_pure_twin_agree_on_any_bytes(
        data: bytes, count: int, flags: tuple[bool, bool, bool]) -> None:
    assert _outcome(_core.scan_records, data, count, flags) == \
        _outcome(pure_scan.scan_records, data, count, flags)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.one_of(st.none(), st.binary(max_size=5)), st.binary(max_size=5),
                          st.integers(-5000, 5000)), min_size=1, max_size=6),
       st.integers(0, 60), st.integers(0, 255))
def test_the_twins_agree_on_mutated_valid_records(recs: list, at: int, byte: int) -> None:
    body = bytearray(build_batch([Record(0, NOW + d, k, v) for k, v, d in recs],
                                 timestamp=NOW)[HEADER_SIZE:])
    if body:
        body[at % len(body)] = byte
    for flags in ((True, True, True), (True, False, False)):
        assert _outcome(_core.scan_records, bytes(body), len(recs), flags) == \
            _outcome(pure_scan.scan_records, bytes(body), len(recs), flags)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=80), st.integers(0, 6), st.integers(-2, 90),
       st.tuples(st.booleans(), st.booleans(), st.booleans()))
def test_the_twins_agree_walking_from_an_offset(data: bytes, count: int, offset: int,
                                                flags: tuple[bool, bool, bool]) -> None:
    """From ``offset`` (the validator walks a batch's records in place, from HEADER_SIZE):
    what the walk of the bytes after it gives, or ValueError outside the buffer."""
    def walk(fn):  # noqa: ANN001, ANN202
        try:
            return fn(data, count, NOW, NOW - 1000, NOW + 1000, *flags, offset)
        except (InvalidRecordError, ValueError) as e:
            return type(e).__name__, str(e)
    assert walk(_core.scan_records) == walk(pure_scan.scan_records)
    if 0 <= offset <= len(data):
        assert walk(_core.scan_records) == _outcome(_core.scan_records, data[offset:], count,
                                                    flags)


def _answer(fn) -> tuple:  # noqa: ANN001
    """What a validation gives, comparable: the header, or the error's fields."""
    try:
        return ("ok", fn())
    except RecordValidationError as e:
        return ("record", e.code, e.message, e.record_errors, e.reason)
    except InvalidRecordError as e:
        return ("invalid", str(e), e.corrupt)  # (the domain reads only these)


@pytest.mark.parametrize("name", sorted(CASES))
def test_an_outcome_computed_elsewhere_answers_as_the_validator(name: str) -> None:
    """The server validates large batches in a worker process (emulator/server/
    offload.py): the outcome crosses as plain data and answers exactly as inline."""
    import pickle

    data, _ = CASES[name]
    direct = _answer(lambda: validate_produce_batch(data, COMPACTED, NOW, "t-0"))
    outcome = pickle.loads(pickle.dumps(check_outcome(data, COMPACTED, NOW, "t-0")))
    via = _answer(lambda: validate_produce_batch(data, COMPACTED, NOW, "t-0",
                                                 checked=Checked(outcome=outcome)))
    assert via == direct
    # Inflated by the server first (batches within INLINE_INFLATE): the same answer.
    pre = inflate_inline(data)
    again = _answer(lambda: validate_produce_batch(data, COMPACTED, NOW, "t-0", checked=pre))
    assert again == direct


def test_only_compressed_batches_inflating_past_the_inline_bound_go_elsewhere() -> None:
    small = batch(gz(records(3)), 3, 2, attrs=GZIP)
    assert inflate_inline(small).inflated == records(3)
    big = batch(gz(records(2000, value=b"\x00" * 1000)), 2000, 1999, attrs=GZIP)
    assert inflate_inline(big) is None and needs_offline_check(big)
    plain = build_batch([(b"k", b"v")], timestamp=NOW)
    assert inflate_inline(plain) is None and not needs_offline_check(plain)
