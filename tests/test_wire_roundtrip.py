"""Every schema at every version round-trips, plus hand-computed golden bytes.

The property test is generic over ``wire.messages.REQUESTS`` and ``RESPONSES``:
for each (message, version) hypothesis builds a random dict valid at that version
straight from the schema (ints within their type's range, strings, bytes, 16-byte
uuids, arrays of 0-3 items, ``None`` only where the field is nullable at that
version, tagged fields sometimes left out), encodes it, decodes it back, checks
every field present at that version, and re-encodes to the very same bytes.

The golden tests pin byte layouts worked out by hand from the Kafka protocol
guide: classic int16/int32 lengths, compact (varint+1) lengths, null markers,
nullable structs, uuids and tagged fields.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from wire.codec import CompiledMessage
from wire.messages import REQUESTS, RESPONSES
from wire.schema import BYTES, RECORDS, STRING, UUID, Array, Field, Struct, Type

RANGES = {
    "b": (-(2**7), 2**7 - 1),
    "h": (-(2**15), 2**15 - 1),
    "i": (-(2**31), 2**31 - 1),
    "q": (-(2**63), 2**63 - 1),
    "H": (0, 2**16 - 1),
    "I": (0, 2**32 - 1),
}

# ---------------------------------------------------------------------------
# random values from the schema


def value_strategy(f: Field, v: int, depth: int = 0) -> st.SearchStrategy:
    """Values of field ``f`` valid at version ``v``."""
    t = f.type
    if isinstance(t, Struct):
        base = struct_strategy(t, v, depth + 1)
    elif isinstance(t, Array):
        item = Field("item", t.item)
        base = st.lists(value_strategy(item, v, depth + 1), max_size=3 if depth < 2 else 1)
    elif t is STRING:
        base = st.text(max_size=12)
    elif t is BYTES or t is RECORDS:
        base = st.binary(max_size=24)
    elif t is UUID:
        base = st.binary(min_size=16, max_size=16)
    elif isinstance(t, Type) and t.fmt == "?":
        base = st.booleans()
    elif isinstance(t, Type) and t.fmt == "d":
        base = st.floats(allow_nan=False)
    elif isinstance(t, Type) and t.fmt in RANGES:
        lo, hi = RANGES[t.fmt]
        base = st.integers(lo, hi)
    else:
        raise AssertionError(f"no strategy for {f.name}: {t!r}")
    return st.one_of(st.none(), base) if f.is_nullable(v) else base


def struct_strategy(s: Struct, v: int, depth: int = 0) -> st.SearchStrategy:
    """Dicts holding every field present at ``v``; tagged ones only sometimes."""
    present = [f for f in s.fields if f.present(v)]
    required = {f.name: value_strategy(f, v, depth) for f in present if not f.is_tagged(v)}
    optional = {f.name: value_strategy(f, v, depth) for f in present if f.is_tagged(v)}
    return st.fixed_dictionaries(required, optional=optional)


def expected(value: dict, s: Struct, v: int) -> dict:
    """``value`` as a decoder returns it: tagged fields left out read as their default."""
    out = {}
    for f in s.fields:
        if not f.present(v):
            continue
        if f.name in value:
            out[f.name] = _nested(value[f.name], f, v, expected)
        elif isinstance(f.type, Struct) and not f.is_tagged(v) and f.default == {}:
            out[f.name] = expected({}, f.type, v)  # written out field by field
        else:
            out[f.name] = f.default  # an absent tagged struct decodes as {}
    return out


def present_only(value: dict, s: Struct, v: int) -> dict:
    """A decoded dict restricted to the fields present at ``v`` (absent ones hold defaults)."""
    out = {}
    for f in s.fields:
        if f.present(v):
            out[f.name] = _nested(value[f.name], f, v, present_only)
    return out


def _nested(x: object, f: Field, v: int, fn) -> object:
    if x is None or (x == {} and f.is_tagged(v)):  # an absent tagged struct reads as {}
        return x
    if isinstance(f.type, Struct):
        return fn(x, f.type, v)
    if isinstance(f.type, Array) and isinstance(f.type.item, Struct):
        return [fn(i, f.type.item, v) for i in x]
    return x


CASES = [
    (codec, v)
    for table in (REQUESTS, RESPONSES)
    for codec in table.values()
    for v in range(codec.msg.versions[0], codec.msg.versions[1] + 1)
]


@pytest.mark.parametrize(
    ("codec", "version"), CASES, ids=[f"{c.msg.name}-v{v}" for c, v in CASES]
)
def test_round_trip(codec: CompiledMessage, version: int) -> None:
    s = codec.msg.struct

    @settings(
        max_examples=20,
        deadline=None,
        database=None,
        phases=[Phase.explicit, Phase.generate, Phase.shrink],
        suppress_health_check=list(HealthCheck),
    )
    @given(struct_strategy(s, version))
    def check(obj: dict) -> None:
        data = codec.encode(obj, version)
        decoded, end = codec.decode(data, version)
        assert end == len(data)
        assert present_only(decoded, s, version) == expected(obj, s, version)
        assert codec.encode(decoded, version) == data

    check()


@pytest.mark.parametrize(
    ("codec", "version"), CASES, ids=[f"{c.msg.name}-v{v}" for c, v in CASES]
)
def test_empty_dict_encodes_with_declared_defaults(codec: CompiledMessage, version: int) -> None:
    """Handlers leave fields out and rely on the declared defaults being encodable."""
    data = codec.encode({}, version)
    decoded, end = codec.decode(data, version)
    assert end == len(data)
    s = codec.msg.struct
    assert present_only(decoded, s, version) == expected({}, s, version)
    assert codec.encode(decoded, version) == data


def test_every_version_is_covered() -> None:
    assert len(CASES) == sum(
        c.msg.versions[1] - c.msg.versions[0] + 1
        for table in (REQUESTS, RESPONSES)
        for c in table.values()
    )
    assert set(REQUESTS) == set(RESPONSES)


def _structs(s: Struct):
    yield s
    for f in s.fields:
        t = f.type.item if isinstance(f.type, Array) else f.type
        if isinstance(t, Struct):
            yield from _structs(t)


@pytest.mark.parametrize(
    "codec",
    [c for table in (REQUESTS, RESPONSES) for c in table.values()],
    ids=lambda c: c.msg.name,
)
def test_tags_are_unique_and_declared_in_ascending_order(codec: CompiledMessage) -> None:
    """Kafka writes tagged fields in ascending tag order; our encoder writes them in
    declaration order, so byte-exact re-encoding needs them declared ascending."""
    for s in _structs(codec.msg.struct):
        tags = [f.tag for f in s.fields if f.tag is not None]
        assert tags == sorted(set(tags)), f"{codec.msg.name}: tags {tags}"
        for f in s.fields:
            if f.tag is not None:
                assert codec.msg.flexible is not None
                assert f.tagged[0] >= codec.msg.flexible, f"{codec.msg.name}.{f.name}"


# ---------------------------------------------------------------------------
# golden bytes, computed by hand


def _round(key: int, kind: str, version: int, obj: dict, data: bytes) -> None:
    codec = (REQUESTS if kind == "request" else RESPONSES)[key]
    assert codec.encode(obj, version) == data
    decoded, end = codec.decode(data, version)
    assert end == len(data)
    assert codec.encode(decoded, version) == data
    got = present_only(decoded, codec.msg.struct, version)
    for k, val in obj.items():
        assert got[k] == val, k


def test_api_versions_request_v3_compact_strings() -> None:
    obj = {"client_software_name": "kcat", "client_software_version": "1.7"}
    # compact string = uvarint(len + 1) + utf-8; then the empty tagged-field section.
    _round(18, "request", 3, obj, b"\x05kcat" + b"\x041.7" + b"\x00")


def test_api_versions_request_v0_to_v2_are_empty() -> None:
    for v in (0, 1, 2):
        assert REQUESTS[18].encode({"client_software_name": "x"}, v) == b""
        assert REQUESTS[18].decode(b"", v) == (
            {"client_software_name": "", "client_software_version": "", "cluster_id": None,
             "node_id": -1},
            0,
        )


def test_api_versions_response_classic_v0_and_v1() -> None:
    obj = {"error_code": 0, "api_keys": [{"api_key": 18, "min_version": 0, "max_version": 4}]}
    entry = b"\x00\x12" + b"\x00\x00" + b"\x00\x04"
    # int16 error, int32 array count, int16 triples; v1 appends int32 throttle_time_ms.
    _round(18, "response", 0, obj, b"\x00\x00" + b"\x00\x00\x00\x01" + entry)
    _round(
        18,
        "response",
        1,
        {**obj, "throttle_time_ms": 7},
        b"\x00\x00" + b"\x00\x00\x00\x01" + entry + b"\x00\x00\x00\x07",
    )


def test_api_versions_response_v3_tagged_fields() -> None:
    obj = {
        "error_code": 35,
        "api_keys": [{"api_key": 18, "min_version": 0, "max_version": 4}],
        "throttle_time_ms": 0,
        "finalized_features_epoch": 5,
        "zk_migration_ready": True,
    }
    data = (
        b"\x00\x23"  # error_code 35
        + b"\x02"  # compact array of 1
        + b"\x00\x12\x00\x00\x00\x04"
        + b"\x00"  # no tags in the entry
        + b"\x00\x00\x00\x00"  # throttle_time_ms
        + b"\x02"  # two tagged fields, ascending by tag; defaults are not written
        + b"\x01\x08" + b"\x00\x00\x00\x00\x00\x00\x00\x05"  # tag 1, 8 bytes: int64 5
        + b"\x03\x01" + b"\x01"  # tag 3, 1 byte: true
    )
    _round(18, "response", 3, obj, data)
    # Leaving the tagged fields out writes an empty tag section and reads back defaults.
    short = {k: obj[k] for k in ("error_code", "api_keys", "throttle_time_ms")}
    data = RESPONSES[18].encode(short, 3)
    assert data.endswith(b"\x00\x00\x00\x00" + b"\x00")
    decoded, _ = RESPONSES[18].decode(data, 3)
    assert decoded["finalized_features_epoch"] == -1
    assert decoded["zk_migration_ready"] is False
    assert decoded["supported_features"] == []


def test_create_topics_request_classic_v4_and_flexible_v5() -> None:
    obj = {
        "topics": [
            {
                "name": "t",
                "num_partitions": 3,
                "replication_factor": -1,
                "assignments": [],
                "configs": [{"name": "k", "value": None}],
            }
        ],
        "timeout_ms": 60000,
        "validate_only": False,
    }
    v4 = (
        b"\x00\x00\x00\x01"  # int32 topic count
        + b"\x00\x01t"  # int16-length name
        + b"\x00\x00\x00\x03"  # num_partitions
        + b"\xff\xff"  # replication_factor -1
        + b"\x00\x00\x00\x00"  # no assignments
        + b"\x00\x00\x00\x01" + b"\x00\x01k" + b"\xff\xff"  # one config, value null
        + b"\x00\x00\xea\x60"  # timeout_ms 60000
        + b"\x00"  # validate_only
    )
    _round(19, "request", 4, obj, v4)
    v5 = (
        b"\x02"  # compact topic count
        + b"\x02t"
        + b"\x00\x00\x00\x03"
        + b"\xff\xff"
        + b"\x01"  # empty compact array
        + b"\x02" + b"\x02k" + b"\x00" + b"\x00"  # one config, compact null value, no tags
        + b"\x00"  # topic's tag section
        + b"\x00\x00\xea\x60"
        + b"\x00"
        + b"\x00"  # top-level tag section
    )
    _round(19, "request", 5, obj, v5)
    # timeout_ms and validate_only fall back to their declared defaults.
    assert REQUESTS[19].encode({"topics": obj["topics"]}, 5) == v5


def test_create_topics_response_v5_tagged_topic_config_error_code() -> None:
    topic = {
        "name": "t",
        "error_code": 0,
        "error_message": None,
        "topic_config_error_code": 29,
        "num_partitions": 1,
        "replication_factor": 1,
        "configs": None,
    }
    data = (
        b"\x00\x00\x00\x00"  # throttle_time_ms
        + b"\x02"
        + b"\x02t"
        + b"\x00\x00"  # error_code
        + b"\x00"  # compact null error_message
        + b"\x00\x00\x00\x01"  # num_partitions
        + b"\x00\x01"  # replication_factor
        + b"\x00"  # compact null configs array
        + b"\x01" + b"\x00\x02" + b"\x00\x1d"  # one tag: tag 0, 2 bytes, int16 29
        + b"\x00"
    )
    _round(19, "response", 5, {"throttle_time_ms": 0, "topics": [topic]}, data)


def test_metadata_request_null_topics() -> None:
    _round(3, "request", 1, {"topics": None}, b"\xff\xff\xff\xff")
    _round(3, "request", 0, {"topics": []}, b"\x00\x00\x00\x00")
    # v9: compact null (0), allow_auto_topic_creation true, the two v8+ bools, no tags.
    _round(3, "request", 9, {"topics": None}, b"\x00\x01\x00\x00\x00")


def test_describe_topic_partitions_request_nullable_cursor() -> None:
    head = b"\x02" + b"\x02t" + b"\x00" + b"\x00\x00\x07\xd0"  # one topic, limit 2000
    _round(75, "request", 0, {"topics": [{"name": "t"}], "cursor": None}, head + b"\xff\x00")
    cursor = {"topic_name": "t", "partition_index": 5}
    # A present nullable struct is prefixed by int8 1 and carries its own tag section.
    data = head + b"\x01" + b"\x02t" + b"\x00\x00\x00\x05" + b"\x00" + b"\x00"
    _round(75, "request", 0, {"topics": [{"name": "t"}], "cursor": cursor}, data)


def test_delete_topics_request_v6_uuid_and_null_name() -> None:
    tid = bytes(range(1, 17))
    obj = {"topics": [{"name": None, "topic_id": tid}], "timeout_ms": 1000}
    data = b"\x02" + b"\x00" + tid + b"\x00" + b"\x00\x00\x03\xe8" + b"\x00"
    _round(20, "request", 6, obj, data)
    # v1-v5 carry topic names instead: classic array of int16-length strings.
    _round(20, "request", 3, {"topic_names": ["ab"], "timeout_ms": 1000},
           b"\x00\x00\x00\x01" + b"\x00\x02ab" + b"\x00\x00\x03\xe8")


def test_alter_partition_reassignments_request_null_replicas_cancels() -> None:
    obj = {
        "timeout_ms": 60000,
        "allow_replication_factor_change": True,
        "topics": [{"name": "t", "partitions": [{"partition_index": 0, "replicas": None}]}],
    }
    data = (
        b"\x00\x00\xea\x60"
        + b"\x01"  # allow_replication_factor_change (v1+)
        + b"\x02" + b"\x02t" + b"\x02" + b"\x00\x00\x00\x00" + b"\x00" + b"\x00" + b"\x00"
        + b"\x00"
    )
    _round(45, "request", 1, obj, data)
    # v0 has no allow_replication_factor_change byte.
    assert REQUESTS[45].encode(obj, 0) == data[:4] + data[5:]
