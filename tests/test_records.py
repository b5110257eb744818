"""Record batch v2 handling, checked against construct's independent reading."""

from __future__ import annotations

import ast
import struct
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wire.frames import encode_request, read_request_header
from wire.records import (
    HEADER_SIZE,
    InvalidRecordError,
    Record,
    build_batch,
    control_batch,
    crc32c,
    decode_records,
    patch_offsets,
    read_header,
    set_log_append_time,
    split_batches,
    validate_batch,
)
from wire.reference import RECORD_BATCH_HEADER, REQUEST_HEADER_V1

records = st.lists(
    st.tuples(st.one_of(st.none(), st.binary(max_size=20)),
              st.one_of(st.none(), st.binary(max_size=50))),
    min_size=1, max_size=8,
)


def test_crc32c_known_vector() -> None:
    # RFC 3720 test vector: 32 bytes of zeros.
    assert crc32c(bytes(32)) == 0x8A9136AA


@settings(max_examples=60, deadline=None)
@given(records, st.integers(0, 2**40), st.integers(-1, 2**20), st.integers(0, 2**41))
def test_header_matches_construct(recs, base, epoch, ts) -> None:
    batch = build_batch(recs, base_offset=base, partition_leader_epoch=epoch, timestamp=ts,
                        producer_id=7, producer_epoch=1, base_sequence=3)
    ours = read_header(batch)
    ref = RECORD_BATCH_HEADER.parse(batch[:HEADER_SIZE])
    for name in ("base_offset", "batch_length", "partition_leader_epoch", "magic", "crc",
                 "attributes", "last_offset_delta", "base_timestamp", "max_timestamp",
                 "producer_id", "producer_epoch", "base_sequence", "record_count"):
        assert getattr(ours, name) == ref[name], name
    assert ours.size == len(batch)
    validate_batch(batch)
    decoded = decode_records(batch)
    assert [(r.key, r.value) for r in decoded] == recs
    assert [r.offset for r in decoded] == list(range(base, base + len(recs)))


def test_patch_keeps_crc_valid() -> None:
    buf = bytearray(build_batch([(b"k", b"v")] * 3))
    patch_offsets(buf, 1234, 9)
    h = validate_batch(buf)  # CRC does not cover base offset or leader epoch
    assert (h.base_offset, h.partition_leader_epoch, h.last_offset) == (1234, 9, 1236)


def test_log_append_time_recomputes_crc() -> None:
    buf = bytearray(build_batch([(b"k", b"v")], timestamp=5))
    set_log_append_time(buf, 99)
    h = validate_batch(buf)
    assert h.max_timestamp == 99 and h.attributes & 0x08
    assert [r.timestamp for r in decode_records(buf)] == [99]


def test_corruption_is_detected() -> None:
    buf = bytearray(build_batch([(b"k", b"value")]))
    buf[-1] ^= 0xFF
    with pytest.raises(InvalidRecordError) as e:
        validate_batch(buf)
    assert e.value.corrupt


def test_truncated_and_wrong_magic() -> None:
    batch = build_batch([(b"k", b"v")])
    with pytest.raises(InvalidRecordError):
        split_batches(batch[:-3])
    old = bytearray(batch)
    old[16] = 1
    with pytest.raises(InvalidRecordError, match="magic"):
        validate_batch(old)


def test_record_count_must_match_offset_delta() -> None:
    buf = bytearray(build_batch([(b"k", b"v")] * 2))
    struct.pack_into(">i", buf, 57, 5)  # record count (inside the CRC): fix the CRC too
    struct.pack_into(">I", buf, 17, crc32c(bytes(buf[21:])))
    with pytest.raises(InvalidRecordError, match="record count"):
        validate_batch(buf)


def test_headers_and_timestamps_round_trip() -> None:
    recs = [Record(0, 1000 + i, b"k", b"v", [("h", b"x"), ("n", None)]) for i in range(3)]
    batch = build_batch(recs, timestamp=1000)
    out = decode_records(batch)
    assert [r.timestamp for r in out] == [1000, 1001, 1002]
    assert out[0].headers == [("h", b"x"), ("n", None)]


def test_control_batch_is_marked() -> None:
    h = read_header(control_batch(True, 5, 2, 0))
    assert h.is_control and h.is_transactional and h.producer_id == 5


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 75), st.integers(0, 20), st.integers(-(2**31), 2**31 - 1),
       st.one_of(st.none(), st.text(max_size=30)))
def test_request_header_matches_construct(key, version, corr, client_id) -> None:
    from wire.messages import REQUESTS

    if key not in REQUESTS:
        key = 18
    lo, hi = REQUESTS[key].msg.versions
    version = lo + version % (hi - lo + 1)
    frame = encode_request(key, version, corr, client_id, {})[4:]
    ours = read_request_header(frame)
    ref = REQUEST_HEADER_V1.parse(frame)
    assert (ours.api_key, ours.api_version, ours.correlation_id) == (
        ref.api_key, ref.api_version, ref.correlation_id)
    expected = None if ref.client_id_length < 0 else ref.client_id.decode()
    assert ours.client_id == expected


def test_a_batch_without_a_timestamp_is_stamped_now(monkeypatch: pytest.MonkeyPatch) -> None:
    """Records dated 1970 are past every topic's retention.ms, so a broker deletes them on
    arrival: a batch built without a timestamp is stamped now, as a producer stamps it.
    A batch whose first record is a ``Record`` takes that record's time as its base, as
    Kafka's producer does, and its max timestamp is the records' own."""
    monkeypatch.undo()  # conftest.py dates the unit tests' batches 0, for the manual clock
    before = time.time() * 1000
    batch = build_batch([(b"k", b"v")] * 2)
    after = time.time() * 1000
    h = read_header(batch)
    assert before - 1 <= h.base_timestamp == h.max_timestamp <= after + 1
    assert [r.timestamp for r in decode_records(batch)] == [h.base_timestamp] * 2
    own = read_header(build_batch([Record(0, 5000, None, b"a"), Record(1, 3000, None, b"b")]))
    assert (own.base_timestamp, own.max_timestamp) == (5000, 5000)
    given = read_header(build_batch([(b"k", b"v")], timestamp=0))
    assert (given.base_timestamp, given.max_timestamp) == (0, 0)



def test_the_emulator_and_the_wire_name_the_time_of_every_batch_they_build() -> None:
    """The emulator's own records (the coordinators' logs, the schema registry's) are
    dated by the cluster's clock, which a test may run by hand: a ``build_batch`` call
    left to its default would date them by the wall clock instead (years ahead of a
    manual clock, so INVALID_TIMESTAMP or never expired)."""
    root = Path(__file__).resolve().parent.parent
    unnamed = []
    for path in sorted([*root.joinpath("emulator").rglob("*.py"),
                        *root.joinpath("wire").rglob("*.py")]):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            func = getattr(node, "func", None)
            name = getattr(func, "id", None) or getattr(func, "attr", None)
            if isinstance(node, ast.Call) and name == "build_batch" \
                    and not any(k.arg == "timestamp" for k in node.keywords):
                unnamed.append(f"{path.relative_to(root)}:{node.lineno}")
    assert unnamed == []
