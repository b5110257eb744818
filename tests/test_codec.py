"""The codec compiler's building blocks: varints, compact encodings, tagged fields."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from wire.codec import (
    DecodeError,
    EncodedList,
    compile_message,
    read_uvarint,
    read_varint,
    write_uvarint,
    write_varint,
)
from wire.messages import REQUESTS, RESPONSES
from wire.schema import INT16, INT32, STRING, Array, Field, message

DEMO = message("DemoRequest", 999, "0-2", "2+", [
    Field("name", STRING),
    Field("maybe", STRING, "1+", nullable="1+", default=None),
    Field("ids", Array(INT32)),
    Field("items", Array, fields=[Field("k", INT16), Field("v", STRING)]),
    Field("extra", INT32, "2+", tag=3, default=-1),
])


@given(st.integers(0, 2**35 - 1))
def test_uvarint_round_trip(n: int) -> None:
    b = write_uvarint(n)
    assert read_uvarint(b, 0) == (n, len(b))


@given(st.integers(-(2**62), 2**62))
def test_zigzag_varint_round_trip(n: int) -> None:
    b = write_varint(n)
    assert read_varint(b, 0) == (n, len(b))


def test_flexible_encoding_uses_compact_lengths_and_tags() -> None:
    dec, enc, _ = compile_message(DEMO, 2)
    out: list = []
    enc({"name": "ab", "maybe": None, "ids": [1], "items": [], "extra": 7}, out)
    data = b"".join(out)
    # compact "ab" (len+1=3), null string (0), [1] (count+1=2, int32), empty array (1),
    # no tags in the item struct, then 1 tagged field: tag 3, size 4, value 7.
    assert data == (b"\x03ab" + b"\x00" + b"\x02\x00\x00\x00\x01" + b"\x01"
                    + b"\x01\x03\x04\x00\x00\x00\x07")
    assert dec(data, 0)[0]["extra"] == 7


def test_unknown_tags_are_skipped_and_absent_tags_default() -> None:
    dec, enc, _ = compile_message(DEMO, 2)
    out: list = []
    enc({"name": "x"}, out)
    data = b"".join(out)
    assert dec(data, 0)[0]["extra"] == -1
    with_unknown = data[:-1] + b"\x01\x09\x02\xAA\xBB"  # one unknown tag 9 of 2 bytes
    d, end = dec(with_unknown, 0)
    assert end == len(with_unknown) and d["extra"] == -1


def test_non_flexible_versions_use_int16_and_int32_lengths() -> None:
    dec, enc, _ = compile_message(DEMO, 0)
    out: list = []
    enc({"name": "ab", "ids": [5, 6], "items": [{"k": 1, "v": "z"}]}, out)
    data = b"".join(out)
    assert data.startswith(b"\x00\x02ab\x00\x00\x00\x02")
    d, _ = dec(data, 0)
    assert d == {"name": "ab", "maybe": None, "ids": [5, 6], "items": [{"k": 1, "v": "z"}],
                 "extra": -1}


def test_an_encoded_list_is_written_as_a_list_and_encoded_once_per_version() -> None:
    items = [{"k": 1, "v": "z"}, {"k": 2, "v": "yy"}]
    kept = EncodedList(items)
    encoders = {v: compile_message(DEMO, v)[1] for v in (0, 2)}
    for version in (0, 2, 0, 2):  # non-flexible and flexible lengths
        enc = encoders[version]
        plain: list = []
        enc({"name": "ab", "items": items}, plain)
        out: list = []
        enc({"name": "ab", "items": kept}, out)
        assert b"".join(out) == b"".join(plain)
    assert len(kept.encoded) == 2  # one encoding for each version, reused the second time
    kept.encoded = {key: b"stale" for key in kept.encoded}  # what is kept is what is sent
    out = []
    encoders[2]({"name": "ab", "items": kept}, out)
    assert b"stale" in out


def test_truncated_input_raises_decode_error() -> None:
    codec = REQUESTS[3]
    full = codec.encode({"topics": [{"name": "topic"}]}, 12)
    for cut in range(len(full)):
        with pytest.raises(DecodeError):
            codec.decode(full[:cut], 12)


def test_null_in_non_nullable_field_is_refused() -> None:
    dec, _, _ = compile_message(DEMO, 0)
    with pytest.raises(DecodeError, match="non-nullable"):
        dec(b"\xff\xff", 0)


def test_every_declared_message_compiles_at_every_version() -> None:
    for table in (REQUESTS, RESPONSES):
        for codec in table.values():
            lo, hi = codec.msg.versions
            for v in range(lo, hi + 1):
                assert codec.encode({}, v) is not None


def test_strict_fields_refuse_a_key_no_version_has(monkeypatch: pytest.MonkeyPatch) -> None:
    """KAFKA_WIRE_STRICT_FIELDS=1 (the suite runs so: conftest.py): a key naming no field
    of its struct in any version is a TypeError, in a nested struct too; a field of
    another version of the message is not (a handler builds one dict for several
    versions). Unset, the misspelt key is ignored and its field goes out as its default:
    the silent bug the check is for."""
    monkeypatch.delenv("KAFKA_WIRE_STRICT_FIELDS", raising=False)
    enc = compile_message(DEMO, 0)[1]
    out: list = []
    enc({"name": "x", "ids": [], "items": [{"k": 1, "vv": "typo"}]}, out)
    assert b"".join(out) == b"\x00\x01x" + b"\x00\x00\x00\x00" + (
        b"\x00\x00\x00\x01" + b"\x00\x01" + b"\x00\x00")  # v: its default, ""
    monkeypatch.setenv("KAFKA_WIRE_STRICT_FIELDS", "1")
    enc = compile_message(DEMO, 0)[1]
    enc({"name": "x", "maybe": "v1+", "extra": 5, "ids": [], "items": [{"k": 1}]}, [])
    with pytest.raises(TypeError, match="no field 'vv' in any version"):
        enc({"name": "x", "ids": [], "items": [{"k": 1, "vv": "typo"}]}, [])
    with pytest.raises(TypeError, match="no field 'nmae'"):
        enc({"nmae": "x"}, [])
