"""The Avro specification's type promotions, every ordered pair of primitives, both ways;
and what the registry says of each kind of incompatibility, whole.

Schema Resolution in the Avro specification: a reader of type R reads data written with
type W when W == R or W is promoted to R, and only then: int to long, float or double;
long to float or double; float to double; string to bytes and bytes to string. So
BACKWARD (the new schema reads the old one's data) accepts exactly (old, new) among
those pairs and FORWARD (the old schema reads the new one's data) exactly (new, old);
every other pair is a TYPE_MISMATCH, in either direction: double to float, long to int,
float to int, boolean to int, and so on (``double`` -> ``float`` was once
accepted as a promotion and 170 tests passed). Checked on a bare type, as a record
field and as array items, the three places a reader meets a writer's primitive.
"""

from __future__ import annotations

import json as _json
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

    reg = Registry()
    o = reg.parse("AVRO", _json.dumps(old), [])
    n = reg.parse("AVRO", _json.dumps(new), [])
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

    reg = Registry()
    o = reg.parse("AVRO", _json.dumps(old), [])
    n = reg.parse("AVRO", _json.dumps(new), [])
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


# ---- each difference whole ----------------------------------------------------------
# The error type, the JSON-pointer path of the incompatible node, the description naming
# the reader side, and the additional info (the registry's verbose compatibility answer
# prints them). tests/test_schema_registry_compat.py holds the rules by error type; a
# mutation run of the compatibility rules (docs/mutation.md) found paths, sides and texts
# unpinned: an array reported at /values, a union branch at the union's own path, or the
# reader and writer swapped in a description all passed. The texts follow Confluent's
# (Avro's SchemaIncompatibilityType, with Confluent's descriptions).
def _rec(*fields: dict, name: str = "R") -> dict:
    return {"type": "record", "name": name, "fields": list(fields)}


def _f(name: str, t: Any) -> dict:
    return {"name": name, "type": t}


def diff(kind: str, path: str, description: str, info: str) -> dict:
    return {"errorType": kind, "path": path, "description": description,
            "additionalInfo": info}


def mismatch(path: str, reader: str, writer: str, new: str = "new", old: str = "old") -> dict:
    return diff("TYPE_MISMATCH", path, f"The type (path '{path}') of a field in the {new} "
                f"schema does not match with the {old} schema",
                f"reader type: {reader} not compatible with writer type: {writer}")


def union_branch(path: str, writer: str, new: str = "new", old: str = "old") -> dict:
    return diff("MISSING_UNION_BRANCH", path, f"The {new} schema is missing a type inside a "
                f"union field at path '{path}' in the {old} schema",
                f"reader union lacking writer type: {writer}")


ENUM = {"type": "enum", "name": "E", "symbols": ["A", "B"]}
CASES = [
    ("a reader union lacking the writer's type", _rec(_f("a", "int")),
     _rec(_f("a", ["null", "string"])), "BACKWARD", [union_branch("/fields/0/type", "INT")]),
    ("a writer union branch the reader union lacks", _rec(_f("a", ["null", "int"])),
     _rec(_f("a", ["null", "string"])), "BACKWARD", [union_branch("/fields/0/type/1", "INT")]),
    ("a writer union read by one type", _rec(_f("a", ["null", "int"])), _rec(_f("a", "int")),
     "BACKWARD", [mismatch("/fields/0/type/0", "INT", "NULL")]),
    ("a writer union branch the old reader lacks (FORWARD)", _rec(_f("a", ["null", "string"])),
     _rec(_f("a", ["null", "int"])), "FORWARD",
     [union_branch("/fields/0/type/1", "INT", "old", "new")]),
    ("a field added without a default", _rec(_f("a", "int")), _rec(_f("a", "int"), _f("b", "int")),
     "BACKWARD", [diff("READER_FIELD_MISSING_DEFAULT_VALUE", "/fields/1",
                       "The field 'b' at path '/fields/1' in the new schema has no default "
                       "value and is missing in the old schema", "b")]),
    ("a field removed without a default (FORWARD)", _rec(_f("a", "int"), _f("b", "int")),
     _rec(_f("a", "int")), "FORWARD",
     [diff("READER_FIELD_MISSING_DEFAULT_VALUE", "/fields/1",
           "The field 'b' at path '/fields/1' in the old schema has no default value and "
           "is missing in the new schema", "b")]),
    ("an enum symbol removed", _rec(_f("e", ENUM)),
     _rec(_f("e", {**ENUM, "symbols": ["A"]})), "BACKWARD",
     [diff("MISSING_ENUM_SYMBOLS", "/fields/0/type/symbols",
           "The new schema is missing enum symbols '['B']' at path '/fields/0/type/symbols' "
           "in the old schema", "['B']")]),
    ("array items narrowed", _rec(_f("xs", {"type": "array", "items": "long"})),
     _rec(_f("xs", {"type": "array", "items": "int"})), "BACKWARD",
     [mismatch("/fields/0/type/items", "INT", "LONG")]),
    ("map values narrowed", _rec(_f("m", {"type": "map", "values": "long"})),
     _rec(_f("m", {"type": "map", "values": "int"})), "BACKWARD",
     [mismatch("/fields/0/type/values", "INT", "LONG")]),
    ("map values narrowed (FORWARD)", _rec(_f("m", {"type": "map", "values": "int"})),
     _rec(_f("m", {"type": "map", "values": "long"})), "FORWARD",
     [mismatch("/fields/0/type/values", "INT", "LONG", "old", "new")]),
    ("a nested record's field narrowed", _rec(_f("n", _rec(_f("x", "long"), name="N"))),
     _rec(_f("n", _rec(_f("x", "int"), name="N"))), "BACKWARD",
     [mismatch("/fields/0/type/fields/0/type", "INT", "LONG")]),
    ("a fixed size changed", _rec(_f("x", {"type": "fixed", "name": "F", "size": 4})),
     _rec(_f("x", {"type": "fixed", "name": "F", "size": 8})), "BACKWARD",
     [diff("FIXED_SIZE_MISMATCH", "/fields/0/type/size", "The size of FIXED type field at "
           "path '/fields/0/type/size' in the new schema does not match with the old schema",
           "expected: 4, found: 8")]),
    ("a fixed type renamed", _rec(_f("x", {"type": "fixed", "name": "F", "size": 4})),
     _rec(_f("x", {"type": "fixed", "name": "G", "size": 4})), "BACKWARD",
     [diff("NAME_MISMATCH", "/fields/0/type/name",
           "The name of the schema has changed (path '/fields/0/type/name')", "expected: F")]),
    ("a fixed type unchanged", _rec(_f("x", {"type": "fixed", "name": "F", "size": 4})),
     _rec(_f("x", {"type": "fixed", "name": "F", "size": 4}), name="R"), "FULL", []),
    ("a named type renamed", _rec(_f("n", _rec(_f("x", "int"), name="N"))),
     _rec(_f("n", _rec(_f("x", "int"), name="M"))), "BACKWARD",
     [diff("NAME_MISMATCH", "/fields/0/type/name",
           "The name of the schema has changed (path '/fields/0/type/name')", "expected: N")]),
]


@pytest.mark.parametrize("old,new,level,want", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_the_whole_difference(old: Any, new: Any, level: str, want: list[dict]) -> None:
    reg = Registry()
    o = reg.parse("AVRO", _json.dumps(old), [])
    n = reg.parse("AVRO", _json.dumps(new), [])
    assert differences(n, o, level) == want
