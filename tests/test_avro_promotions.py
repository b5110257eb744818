"""The Avro specification's type promotions, every ordered pair of primitives, both ways.

Schema Resolution in the Avro specification: a reader of type R reads data written with
type W when W == R or W is promoted to R, and only then: int to long, float or double;
long to float or double; float to double; string to bytes and bytes to string. So
BACKWARD (the new schema reads the old one's data) accepts exactly (old, new) among
those pairs and FORWARD (the old schema reads the new one's data) exactly (new, old);
every other pair is a TYPE_MISMATCH, in either direction: double to float, long to int,
float to int, boolean to int, and so on (issue 38: ``double`` -> ``float`` was once
accepted as a promotion and 170 tests passed). Checked on a bare type, as a record
field and as array items, the three places a reader meets a writer's primitive.
"""

from __future__ import annotations

from itertools import permutations
from typing import Any

import pytest

from emulator.schema_registry.model import Registry, differences

PRIMITIVES = ("null", "boolean", "int", "long", "float", "double", "bytes", "string")
# (writer, reader): the specification's list, written out here rather than imported
SPEC_PROMOTIONS = {("int", "long"), ("int", "float"), ("int", "double"),
                   ("long", "float"), ("long", "double"), ("float", "double"),
                   ("string", "bytes"), ("bytes", "string")}
PAIRS = list(permutations(PRIMITIVES, 2))


def _kinds(old: Any, new: Any, level: str) -> list[str]:
    import json

    reg = Registry()
    o = reg.parse("AVRO", json.dumps(old), [])
    n = reg.parse("AVRO", json.dumps(new), [])
    return [d["errorType"] for d in differences(n, o, level)]


def _shapes(t: str) -> dict[str, Any]:
    return {"bare": t,
            "field": {"type": "record", "name": "R", "fields": [{"name": "a", "type": t}]},
            "items": {"type": "array", "items": t}}


def test_the_pairs_cover_each_promotion_both_ways() -> None:
    """Not vacuous: 56 ordered pairs, 8 promotions, and each promotion's reverse is in
    the list only for string/bytes (the one promotion that goes both ways)."""
    assert len(PAIRS) == 56 and SPEC_PROMOTIONS <= set(PAIRS)
    reverse = {(r, w) for w, r in SPEC_PROMOTIONS} & SPEC_PROMOTIONS
    assert reverse == {("string", "bytes"), ("bytes", "string")}


@pytest.mark.parametrize("shape", ["bare", "field", "items"])
@pytest.mark.parametrize("old,new", PAIRS, ids=[f"{a}-to-{b}" for a, b in PAIRS])
def test_backward_accepts_exactly_the_specifications_promotions(
        old: str, new: str, shape: str) -> None:
    """BACKWARD: the new schema (reader) reads data the old one (writer) wrote."""
    want = [] if (old, new) in SPEC_PROMOTIONS else ["TYPE_MISMATCH"]
    assert _kinds(_shapes(old)[shape], _shapes(new)[shape], "BACKWARD") == want


@pytest.mark.parametrize("shape", ["bare", "field", "items"])
@pytest.mark.parametrize("old,new", PAIRS, ids=[f"{a}-to-{b}" for a, b in PAIRS])
def test_forward_accepts_exactly_the_reverse_promotions(old: str, new: str, shape: str) -> None:
    """FORWARD: the old schema (reader) reads data the new one (writer) wrote."""
    want = [] if (new, old) in SPEC_PROMOTIONS else ["TYPE_MISMATCH"]
    assert _kinds(_shapes(old)[shape], _shapes(new)[shape], "FORWARD") == want


@pytest.mark.parametrize("old,new", PAIRS, ids=[f"{a}-to-{b}" for a, b in PAIRS])
def test_full_accepts_only_string_and_bytes(old: str, new: str) -> None:
    """FULL is both: only a promotion that goes both ways (string/bytes) passes."""
    both = (old, new) in SPEC_PROMOTIONS and (new, old) in SPEC_PROMOTIONS
    got = _kinds(old, new, "FULL")
    assert (got == []) == both, got


def _diffs(old: Any, new: Any, level: str) -> list[dict]:
    import json

    reg = Registry()
    o = reg.parse("AVRO", json.dumps(old), [])
    n = reg.parse("AVRO", json.dumps(new), [])
    return differences(n, o, level)


def test_a_difference_names_where_and_which_side() -> None:
    """Not only the error type: the path of the incompatible node (a JSON pointer, ``/``
    for the root) and which schema is the reader (the new one under BACKWARD, the old
    one under FORWARD) are what a user reads in the registry's verbose answer."""
    old = _shapes("double")["field"]
    new = _shapes("float")["field"]
    [back] = _diffs(old, new, "BACKWARD")
    assert back == {
        "errorType": "TYPE_MISMATCH", "path": "/fields/0/type",
        "description": "The type (path '/fields/0/type') of a field in the new schema does "
                       "not match with the old schema",
        "additionalInfo": "reader type: FLOAT not compatible with writer type: DOUBLE"}
    [fwd] = _diffs(new, old, "FORWARD")
    assert fwd["path"] == "/fields/0/type"
    assert fwd["description"] == ("The type (path '/fields/0/type') of a field in the old "
                                  "schema does not match with the new schema")
    [root] = _diffs("double", "float", "BACKWARD")
    assert root["path"] == "/" and root["errorType"] == "TYPE_MISMATCH"
    [items] = _diffs(_shapes("long")["items"], _shapes("int")["items"], "BACKWARD")
    assert items["path"] == "/items"


@pytest.mark.parametrize("old,new", PAIRS, ids=[f"{a}-to-{b}" for a, b in PAIRS])
def test_a_reader_union_reads_a_writer_type_only_through_a_promotable_branch(
        old: str, new: str) -> None:
    """BACKWARD with the new schema a union ``[new, "null"]`` (or ``["null", new]``): a
    writer of ``old`` is read by the branch when ``old`` is promoted to ``new`` (or is
    null), else MISSING_UNION_BRANCH; a writer union ``[old, "null"]`` read by a plain
    ``new`` needs every branch readable (null is not read by a non-null type)."""
    readable = (old, new) in SPEC_PROMOTIONS or old == "null"
    for union in ([new, "null"], ["null", new]) if new != "null" else ([new, "boolean"],):
        got = _kinds(old, union, "BACKWARD")
        readable_here = readable or old in union
        assert got == ([] if readable_here else ["MISSING_UNION_BRANCH"]), (union, got)
    if old != "null" and new != "null":
        got = _kinds([old, "null"], new, "BACKWARD")
        want = ["TYPE_MISMATCH"] * ((old, new) not in SPEC_PROMOTIONS) + ["TYPE_MISMATCH"]
        assert got == want, got
