"""Every schema at every version round-trips: random values encode, decode back
equal, and re-encode to identical bytes (hypothesis)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from wire.messages import REQUESTS, RESPONSES
from wire.schema import BYTES, RECORDS, STRING, UUID, Array, Field, Struct, Type

RANGES = {"b": (-(2**7), 2**7 - 1), "h": (-(2**15), 2**15 - 1), "i": (-(2**31), 2**31 - 1),
          "q": (-(2**63), 2**63 - 1), "H": (0, 2**16 - 1), "I": (0, 2**32 - 1)}


def value_strategy(f: Field, v: int, depth: int = 0) -> st.SearchStrategy:
    t = f.type
    if isinstance(t, Struct):
        base = struct_strategy(t, v, depth + 1)
    elif isinstance(t, Array):
        item = Field("item", t.item)
        base = st.lists(value_strategy(item, v, depth + 1), max_size=3 if depth < 2 else 1)
    elif t is STRING:
        base = st.text(max_size=12)
    elif t in (BYTES, RECORDS):
        base = st.binary(max_size=24)
    elif t is UUID:
        base = st.binary(min_size=16, max_size=16)
    elif isinstance(t, Type) and t.fmt == "?":
        base = st.booleans()
    elif isinstance(t, Type) and t.fmt == "d":
        base = st.floats(allow_nan=False)
    else:
        lo, hi = RANGES[t.fmt]
        base = st.integers(lo, hi)
    return st.one_of(st.none(), base) if f.is_nullable(v) else base


def struct_strategy(s: Struct, v: int, depth: int = 0) -> st.SearchStrategy:
    present = [f for f in s.fields if f.present(v)]
    return st.fixed_dictionaries({f.name: value_strategy(f, v, depth) for f in present})


def strip(value: object, s: Struct, v: int) -> object:
    """The decoded dict also holds absent fields at their defaults: keep the present ones."""
    assert isinstance(value, dict)
    out = {}
    for f in s.fields:
        if not f.present(v):
            continue
        x = value[f.name]
        if isinstance(f.type, Struct) and x is not None:
            x = strip(x, f.type, v)
        elif isinstance(f.type, Array) and isinstance(f.type.item, Struct) and x is not None:
            x = [strip(i, f.type.item, v) for i in x]
        out[f.name] = x
    return out


CASES = [(codec, v) for table in (REQUESTS, RESPONSES) for codec in table.values()
         for v in range(codec.msg.versions[0], codec.msg.versions[1] + 1)]


@pytest.mark.parametrize(("codec", "version"), CASES,
                         ids=[f"{c.msg.name}-v{v}" for c, v in CASES])
def test_round_trip(codec, version: int) -> None:
    @settings(max_examples=8, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(struct_strategy(codec.msg.struct, version))
    def check(obj: dict) -> None:
        data = codec.encode(obj, version)
        decoded, end = codec.decode(data, version)
        assert end == len(data)
        assert strip(decoded, codec.msg.struct, version) == obj
        assert codec.encode(decoded, version) == data

    check()
