"""Compatibility rules of the built-in schema registry, one test per rule and format.

Avro: the Avro specification's schema resolution (reader reads writer's data).
JSON Schema: the rules Confluent documents for open, closed and partially open content
models. Protobuf: Confluent's rules on field numbers, kinds, types and oneofs. BACKWARD
means the new schema reads the old one's data, FORWARD the old reads the new's, FULL
both; the _TRANSITIVE levels compare with every earlier version (emulator/schema_registry).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from emulator.schema_registry.model import Registry, differences

BACKWARD, FORWARD, FULL = "BACKWARD", "FORWARD", "FULL"


def kinds(schema_type: str, old: Any, new: Any, level: str) -> list[str]:
    reg = Registry()
    o, n = reg.parse(schema_type, _text(old), []), reg.parse(schema_type, _text(new), [])
    return [d["errorType"] for d in differences(n, o, level)]


def _text(s: Any) -> str:
    return s if isinstance(s, str) else json.dumps(s)


def rec(*fields: dict, name: str = "R", **extra: Any) -> dict:
    return {"type": "record", "name": name, "fields": list(fields), **extra}


def f(name: str, t: Any, **extra: Any) -> dict:
    return {"name": name, "type": t, **extra}


# ---- Avro ------------------------------------------------------------------------------
AVRO_CASES = [
    # (rule, old, new, {level: expected error types})
    ("field added without default", rec(f("a", "int")), rec(f("a", "int"), f("b", "int")),
     {BACKWARD: ["READER_FIELD_MISSING_DEFAULT_VALUE"], FORWARD: []}),
    ("field added with default", rec(f("a", "int")),
     rec(f("a", "int"), f("b", "int", default=0)), {BACKWARD: [], FORWARD: [], FULL: []}),
    ("field removed that had no default", rec(f("a", "int"), f("b", "int")),
     rec(f("a", "int")), {BACKWARD: [], FORWARD: ["READER_FIELD_MISSING_DEFAULT_VALUE"]}),
    ("field removed that had a default", rec(f("a", "int"), f("b", "int", default=1)),
     rec(f("a", "int")), {FULL: []}),
    ("int promoted to long", rec(f("a", "int")), rec(f("a", "long")),
     {BACKWARD: [], FORWARD: ["TYPE_MISMATCH"]}),
    ("int promoted to float", "\"int\"", "\"float\"", {BACKWARD: []}),
    ("int promoted to double", "\"int\"", "\"double\"", {BACKWARD: []}),
    ("long promoted to float", "\"long\"", "\"float\"", {BACKWARD: []}),
    ("long promoted to double", "\"long\"", "\"double\"", {BACKWARD: [],
                                                           FORWARD: ["TYPE_MISMATCH"]}),
    ("float promoted to double", "\"float\"", "\"double\"", {BACKWARD: []}),
    ("string read as bytes and back", "\"string\"", "\"bytes\"", {FULL: []}),
    ("long demoted to int", "\"long\"", "\"int\"", {BACKWARD: ["TYPE_MISMATCH"]}),
    ("string changed to int", rec(f("a", "string")), rec(f("a", "int")),
     {BACKWARD: ["TYPE_MISMATCH"], FORWARD: ["TYPE_MISMATCH"]}),
    ("record renamed", rec(f("a", "int")), rec(f("a", "int"), name="S"),
     {BACKWARD: ["NAME_MISMATCH"]}),
    ("record renamed with an alias of the old name", rec(f("a", "int")),
     rec(f("a", "int"), name="S", aliases=["R"]), {BACKWARD: []}),
    ("namespace changed: names compare unqualified", rec(f("a", "int"), namespace="x"),
     rec(f("a", "int"), namespace="y"), {FULL: []}),
    ("field renamed with an alias", rec(f("a", "int")),
     rec(f("b", "int", aliases=["a"])), {BACKWARD: []}),
    ("field renamed without an alias", rec(f("a", "int")), rec(f("b", "int")),
     {BACKWARD: ["READER_FIELD_MISSING_DEFAULT_VALUE"]}),
    ("enum symbol added", {"type": "enum", "name": "E", "symbols": ["A"]},
     {"type": "enum", "name": "E", "symbols": ["A", "B"]},
     {BACKWARD: [], FORWARD: ["MISSING_ENUM_SYMBOLS"]}),
    ("enum symbol added, old reader has an enum default",
     {"type": "enum", "name": "E", "symbols": ["A", "U"], "default": "U"},
     {"type": "enum", "name": "E", "symbols": ["A", "U", "B"], "default": "U"},
     {FULL: []}),
    ("enum symbol removed", {"type": "enum", "name": "E", "symbols": ["A", "B"]},
     {"type": "enum", "name": "E", "symbols": ["A"]},
     {BACKWARD: ["MISSING_ENUM_SYMBOLS"], FORWARD: []}),
    ("enum renamed", {"type": "enum", "name": "E", "symbols": ["A"]},
     {"type": "enum", "name": "F", "symbols": ["A"]}, {BACKWARD: ["NAME_MISMATCH"]}),
    ("fixed size changed", {"type": "fixed", "name": "F", "size": 4},
     {"type": "fixed", "name": "F", "size": 8}, {BACKWARD: ["FIXED_SIZE_MISMATCH"]}),
    ("array items promoted", {"type": "array", "items": "int"},
     {"type": "array", "items": "long"}, {BACKWARD: [], FORWARD: ["TYPE_MISMATCH"]}),
    ("array items changed", {"type": "array", "items": "string"},
     {"type": "array", "items": "int"}, {BACKWARD: ["TYPE_MISMATCH"]}),
    ("map values changed", {"type": "map", "values": "string"},
     {"type": "map", "values": "boolean"}, {BACKWARD: ["TYPE_MISMATCH"]}),
    ("array became a map", {"type": "array", "items": "string"},
     {"type": "map", "values": "string"}, {BACKWARD: ["TYPE_MISMATCH"]}),
    ("union branch added", ["null", "string"], ["null", "string", "int"],
     {BACKWARD: [], FORWARD: ["MISSING_UNION_BRANCH"]}),
    ("union branch removed", ["null", "string", "int"], ["null", "string"],
     {BACKWARD: ["MISSING_UNION_BRANCH"], FORWARD: []}),
    ("a type became a union holding it", "\"string\"", ["null", "string"],
     {BACKWARD: [], FORWARD: ["TYPE_MISMATCH"]}),
    ("a union read by a promotable branch", ["int", "null"], ["long", "null"],
     {BACKWARD: []}),
    ("nested record field added without default",
     rec(f("inner", rec(f("x", "int"), name="I"))),
     rec(f("inner", rec(f("x", "int"), f("y", "int"), name="I"))),
     {BACKWARD: ["READER_FIELD_MISSING_DEFAULT_VALUE"], FORWARD: []}),
    ("recursive type with a defaulted field added",
     rec(f("v", "int"), f("next", ["null", "R"])),
     rec(f("v", "int"), f("next", ["null", "R"]), f("w", "int", default=0)), {FULL: []}),
    ("logical type over the same primitive",
     rec(f("t", {"type": "long", "logicalType": "timestamp-millis"})),
     rec(f("t", {"type": "long", "logicalType": "timestamp-micros"})), {FULL: []}),
]


@pytest.mark.parametrize("rule,old,new,expected", AVRO_CASES, ids=[c[0] for c in AVRO_CASES])
def test_avro_rule(rule: str, old: Any, new: Any, expected: dict[str, list[str]]) -> None:
    for level, want in expected.items():
        assert kinds("AVRO", old, new, level) == want, (rule, level)


def test_avro_full_is_both_directions() -> None:
    old, new = rec(f("a", "int")), rec(f("a", "int"), f("b", "int"))
    assert kinds("AVRO", old, new, FULL) == ["READER_FIELD_MISSING_DEFAULT_VALUE"]
    assert kinds("AVRO", new, old, FULL) == ["READER_FIELD_MISSING_DEFAULT_VALUE"]
    assert kinds("AVRO", old, new, "NONE") == []


def test_avro_invalid_schemas_are_42201() -> None:
    from emulator.schema_registry.errors import RegistryError

    for bad in ['{"type": "record", "name": "R", "fields": [{"name": "a", "type": "nope"}]}',
                '{"type": "record", "name": "R", "fields": [{"name": "a", "type": "int", '
                '"default": "x"}]}', "{", '{"type": "enum", "name": "E"}']:
        with pytest.raises(RegistryError) as e:
            Registry().parse("AVRO", bad, [])
        assert (e.value.status, e.value.error_code) == (422, 42201), bad


# ---- the levels, through registration ------------------------------------------------------
V1 = rec(f("a", "int"))
V2 = rec(f("a", "int"), f("b", "string", default="x"))
V3 = rec(f("a", "int"), f("b", "string"))  # reads v2's data, not v1's


@pytest.mark.parametrize("level,accepted", [
    ("BACKWARD", True), ("BACKWARD_TRANSITIVE", False), ("FORWARD", True),
    ("FORWARD_TRANSITIVE", True), ("FULL", True), ("FULL_TRANSITIVE", False),
    ("NONE", True)])
def test_levels_against_latest_or_all_versions(level: str, accepted: bool) -> None:
    reg = Registry()
    reg.set_config(None, {"compatibility": "NONE"})
    reg.register("s", {"schema": json.dumps(V1)})
    reg.register("s", {"schema": json.dumps(V2)})
    reg.set_config("s", {"compatibility": level})
    result = reg.check_compatibility("s", None, {"schema": json.dumps(V3)}, verbose=True)
    assert result["is_compatible"] is accepted, result
    if not accepted:
        assert f"{{compatibility: '{level}'}}" in result["messages"]


def test_forward_transitive_sees_every_version() -> None:
    reg = Registry()
    reg.set_config(None, {"compatibility": "NONE"})
    # v1 had a field without default; v2 dropped it: v1's readers cannot read v3's
    reg.register("s", {"schema": json.dumps(rec(f("a", "int"), f("b", "int")))})
    reg.register("s", {"schema": json.dumps(rec(f("a", "int"), f("b", "int", default=0)))})
    v3 = {"schema": json.dumps(rec(f("a", "int")))}
    reg.set_config("s", {"compatibility": "FORWARD"})
    assert reg.check_compatibility("s", None, v3)["is_compatible"] is True
    reg.set_config("s", {"compatibility": "FORWARD_TRANSITIVE"})
    assert reg.check_compatibility("s", None, v3)["is_compatible"] is False


def test_soft_deleted_versions_are_not_compared() -> None:
    reg = Registry()
    reg.register("s", {"schema": json.dumps(V1)})
    reg.delete_version("s", "1")
    assert reg.register("s", {"schema": json.dumps(rec(f("z", "string")))}) == {"id": 2}


def test_schema_type_change_is_incompatible() -> None:
    reg = Registry()
    reg.register("s", {"schema": json.dumps({"type": "string"})})
    out = reg.check_compatibility("s", None, {"schemaType": "JSON",
                                              "schema": json.dumps({"type": "string"})},
                                  verbose=True)
    assert out["is_compatible"] is False
    assert out["messages"][0] == "Incompatible because of different schema type"


# ---- JSON Schema ---------------------------------------------------------------------------
def obj(props: dict, additional: Any = None, required: list[str] | None = None,
        **extra: Any) -> dict:
    out: dict[str, Any] = {"type": "object", "properties": props, **extra}
    if additional is not None:
        out["additionalProperties"] = additional
    if required is not None:
        out["required"] = required
    return out


S, INT, N = {"type": "string"}, {"type": "integer"}, {"type": "number"}
JSON_CASES = [
    ("property added to an open content model", obj({"a": S}), obj({"a": S, "b": INT}),
     {BACKWARD: ["PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL"], FORWARD: []}),
    ("property added to a closed content model", obj({"a": S}, False),
     obj({"a": S, "b": INT}, False),
     {BACKWARD: [], FORWARD: ["PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL"]}),
    ("property removed from an open content model", obj({"a": S, "b": INT}), obj({"a": S}),
     {BACKWARD: [], FORWARD: ["PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL"]}),
    ("property removed from a closed content model", obj({"a": S, "b": INT}, False),
     obj({"a": S}, False), {BACKWARD: ["PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL"]}),
    ("property added, covered by a partially open model", obj({"a": S}, S),
     obj({"a": S, "b": S}, S), {BACKWARD: []}),
    ("property added, not covered by a partially open model", obj({"a": S}, S),
     obj({"a": S, "b": INT}, S),
     {BACKWARD: ["PROPERTY_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL"]}),
    ("property removed, not covered by a partially open model", obj({"a": S, "b": INT}, S),
     obj({"a": S}, S),
     {BACKWARD: ["PROPERTY_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL"]}),
    ("property accepting anything added to an open model", obj({"a": S}),
     obj({"a": S, "b": {}}), {BACKWARD: []}),
    ("required property added", obj({"a": S, "b": INT}, False),
     obj({"a": S, "b": INT}, False, ["b"]),
     {BACKWARD: ["REQUIRED_ATTRIBUTE_ADDED"], FORWARD: []}),
    ("required property with a default added", obj({"a": S, "b": INT}, False),
     obj({"a": S, "b": {"type": "integer", "default": 0}}, False, ["b"]), {BACKWARD: []}),
    ("content model closed", obj({"a": S}), obj({"a": S}, False),
     {BACKWARD: ["ADDITIONAL_PROPERTIES_REMOVED"], FORWARD: []}),
    ("content model narrowed to a schema", obj({"a": S}), obj({"a": S}, S),
     {BACKWARD: ["ADDITIONAL_PROPERTIES_NARROWED"]}),
    ("a list of types narrowed to one", {"type": ["string", "null"]}, S,
     {BACKWARD: ["TYPE_CHANGED"], FORWARD: []}),
    ("a list of types narrowed", {"type": ["string", "null", "integer"]},
     {"type": ["string", "null"]}, {BACKWARD: ["SUM_TYPE_NARROWED"], FORWARD: []}),
    ("type extended", S, {"type": ["string", "null"]}, {BACKWARD: []}),
    ("number narrowed to integer", N, INT, {BACKWARD: ["TYPE_NARROWED"], FORWARD: []}),
    ("integer widened to number", INT, N, {BACKWARD: [], FORWARD: ["TYPE_NARROWED"]}),
    ("type changed", S, INT, {BACKWARD: ["TYPE_CHANGED"], FORWARD: ["TYPE_CHANGED"]}),
    ("maxLength added", S, {"type": "string", "maxLength": 5},
     {BACKWARD: ["MAX_LENGTH_ADDED"], FORWARD: []}),
    ("maxLength decreased", {"type": "string", "maxLength": 9},
     {"type": "string", "maxLength": 5}, {BACKWARD: ["MAX_LENGTH_DECREASED"]}),
    ("maxLength increased", {"type": "string", "maxLength": 5},
     {"type": "string", "maxLength": 9}, {BACKWARD: [], FORWARD: ["MAX_LENGTH_DECREASED"]}),
    ("minLength added", S, {"type": "string", "minLength": 2}, {BACKWARD: ["MIN_LENGTH_ADDED"]}),
    ("minLength increased", {"type": "string", "minLength": 1},
     {"type": "string", "minLength": 2}, {BACKWARD: ["MIN_LENGTH_INCREASED"]}),
    ("pattern added", S, {"type": "string", "pattern": "^a"}, {BACKWARD: ["PATTERN_ADDED"]}),
    ("pattern changed", {"type": "string", "pattern": "^a"},
     {"type": "string", "pattern": "^b"}, {BACKWARD: ["PATTERN_CHANGED"]}),
    ("maximum added", N, {"type": "number", "maximum": 3}, {BACKWARD: ["MAXIMUM_ADDED"]}),
    ("maximum decreased", {"type": "number", "maximum": 5}, {"type": "number", "maximum": 3},
     {BACKWARD: ["MAXIMUM_DECREASED"], FORWARD: []}),
    ("minimum increased", {"type": "number", "minimum": 0}, {"type": "number", "minimum": 1},
     {BACKWARD: ["MINIMUM_INCREASED"], FORWARD: []}),
    ("exclusiveMaximum added", N, {"type": "number", "exclusiveMaximum": 3},
     {BACKWARD: ["EXCLUSIVE_MAXIMUM_ADDED"]}),
    ("exclusiveMinimum increased", {"type": "number", "exclusiveMinimum": 0},
     {"type": "number", "exclusiveMinimum": 2}, {BACKWARD: ["EXCLUSIVE_MINIMUM_INCREASED"]}),
    ("multipleOf added", N, {"type": "number", "multipleOf": 2},
     {BACKWARD: ["MULTIPLE_OF_ADDED"]}),
    ("multipleOf expanded", {"type": "number", "multipleOf": 2},
     {"type": "number", "multipleOf": 4}, {BACKWARD: ["MULTIPLE_OF_EXPANDED"]}),
    ("multipleOf reduced to a divisor", {"type": "number", "multipleOf": 4},
     {"type": "number", "multipleOf": 2}, {BACKWARD: []}),
    ("enum narrowed", {"enum": ["a", "b"]}, {"enum": ["a"]},
     {BACKWARD: ["ENUM_ARRAY_NARROWED"], FORWARD: []}),
    ("enum extended", {"enum": ["a"]}, {"enum": ["a", "b"]}, {BACKWARD: []}),
    ("array items narrowed", {"type": "array", "items": N}, {"type": "array", "items": INT},
     {BACKWARD: ["TYPE_NARROWED"]}),
    ("maxItems added", {"type": "array"}, {"type": "array", "maxItems": 3},
     {BACKWARD: ["MAX_ITEMS_ADDED"]}),
    ("minItems increased", {"type": "array", "minItems": 1}, {"type": "array", "minItems": 2},
     {BACKWARD: ["MIN_ITEMS_INCREASED"]}),
    ("uniqueItems added", {"type": "array"}, {"type": "array", "uniqueItems": True},
     {BACKWARD: ["UNIQUE_ITEMS_ADDED"], FORWARD: []}),
    ("maxProperties decreased", {"type": "object", "maxProperties": 5},
     {"type": "object", "maxProperties": 2}, {BACKWARD: ["MAX_PROPERTIES_DECREASED"]}),
    ("minProperties added", {"type": "object"}, {"type": "object", "minProperties": 1},
     {BACKWARD: ["MIN_PROPERTIES_ADDED"]}),
    ("oneOf alternative removed", {"oneOf": [S, INT]}, {"oneOf": [S]},
     {BACKWARD: ["SUM_TYPE_NARROWED"], FORWARD: []}),
    ("oneOf alternative added", {"oneOf": [S]}, {"oneOf": [S, INT]}, {BACKWARD: []}),
    ("a type became a oneOf holding it", S, {"oneOf": [S, INT]}, {BACKWARD: []}),
    ("allOf part added", {"allOf": [obj({"a": S})]}, {"allOf": [obj({"a": S}), {
        "required": ["a"]}]}, {BACKWARD: ["PRODUCT_TYPE_EXTENDED"]}),
    ("enum dropped, type kept: another kind of schema", {"type": "string", "enum": ["a"]},
     S, {BACKWARD: ["TYPE_CHANGED"], FORWARD: ["ENUM_ARRAY_NARROWED"]}),
    ("oneOf widened to anyOf", {"oneOf": [S, INT]}, {"anyOf": [S, INT]},
     {BACKWARD: [], FORWARD: ["COMBINED_TYPE_CHANGED"]}),
    ("anyOf changed to oneOf", {"anyOf": [S, INT]}, {"oneOf": [S, INT]},
     {BACKWARD: ["COMBINED_TYPE_CHANGED"]}),
    ("allOf part removed", {"allOf": [obj({"a": S}), {"required": ["a"]}]},
     {"allOf": [obj({"a": S})]}, {BACKWARD: [], FORWARD: ["PRODUCT_TYPE_EXTENDED"]}),
    ("oneOf alternative replaced", {"oneOf": [S, INT]}, {"oneOf": [S, {"type": "boolean"}]},
     {BACKWARD: ["COMBINED_TYPE_SUBSCHEMAS_CHANGED"]}),
    ("oneOf alternatives reordered", {"oneOf": [S, INT]}, {"oneOf": [INT, S]}, {FULL: []}),
    ("a type became an allOf of two", S, {"allOf": [S, {"maxLength": 3}]},
     {BACKWARD: ["TYPE_CHANGED"]}),
    ("property with a false schema removed from a closed model",
     obj({"a": S, "b": False}, False), obj({"a": S}, False), {BACKWARD: []}),
    ("property added, covered by patternProperties",
     obj({"a": S}, False, patternProperties={"^x_": S}),
     obj({"a": S, "x_1": S}, False, patternProperties={"^x_": S}), {BACKWARD: []}),
    ("property added, not covered by patternProperties",
     obj({"a": S}, False, patternProperties={"^x_": S}),
     obj({"a": S, "x_1": INT}, False, patternProperties={"^x_": S}),
     {BACKWARD: ["PROPERTY_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL"]}),
    ("required property added to a closed model", obj({"a": S}, False),
     obj({"a": S, "b": INT}, False, ["b"]),
     {BACKWARD: ["REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL"]}),
    ("required property with a default added to a closed model", obj({"a": S}, False),
     obj({"a": S, "b": {"type": "integer", "default": 1}}, False, ["b"]), {BACKWARD: []}),
    ("property dependency added", obj({"a": S, "b": S}),
     obj({"a": S, "b": S}, dependencies={"a": ["b"]}),
     {BACKWARD: ["DEPENDENCY_ARRAY_ADDED"], FORWARD: []}),
    ("property dependency extended", obj({"a": S, "b": S, "c": S}, dependencies={"a": ["b"]}),
     obj({"a": S, "b": S, "c": S}, dependencies={"a": ["b", "c"]}),
     {BACKWARD: ["DEPENDENCY_ARRAY_EXTENDED"], FORWARD: []}),
    ("schema dependency added", obj({"a": S}),
     obj({"a": S}, dependencies={"a": {"required": ["b"]}}),
     {BACKWARD: ["DEPENDENCY_SCHEMA_ADDED"], FORWARD: []}),
    ("tuple item added to an open tuple", {"type": "array", "items": [S]},
     {"type": "array", "items": [S, INT]},
     {BACKWARD: ["ITEM_ADDED_TO_OPEN_CONTENT_MODEL"], FORWARD: []}),
    ("tuple item added to a closed tuple", {"type": "array", "items": [S],
                                            "additionalItems": False},
     {"type": "array", "items": [S, INT], "additionalItems": False},
     {BACKWARD: [], FORWARD: ["ITEM_REMOVED_FROM_CLOSED_CONTENT_MODEL"]}),
    ("tuple closed", {"type": "array", "items": [S]},
     {"type": "array", "items": [S], "additionalItems": False},
     {BACKWARD: ["ADDITIONAL_ITEMS_REMOVED"], FORWARD: []}),
    ("nested property narrowed", obj({"o": obj({"x": N})}), obj({"o": obj({"x": INT})}),
     {BACKWARD: ["TYPE_NARROWED"], FORWARD: []}),
    ("local $ref followed", {"definitions": {"A": N}, "type": "object",
                             "properties": {"a": {"$ref": "#/definitions/A"}}},
     {"definitions": {"A": INT}, "type": "object",
      "properties": {"a": {"$ref": "#/definitions/A"}}}, {BACKWARD: ["TYPE_NARROWED"]}),
]


@pytest.mark.parametrize("rule,old,new,expected", JSON_CASES, ids=[c[0] for c in JSON_CASES])
def test_json_schema_rule(rule: str, old: Any, new: Any, expected: dict[str, list[str]]
                          ) -> None:
    for level, want in expected.items():
        assert kinds("JSON", old, new, level) == want, (rule, level)


def test_json_schema_invalid_is_42201() -> None:
    from emulator.schema_registry.errors import RegistryError

    for bad in ['{"type": 5}', '[1]', '{"minLength": -1}', "nope"]:
        with pytest.raises(RegistryError) as e:
            Registry().parse("JSON", bad, [])
        assert e.value.error_code == 42201, bad


# ---- Protobuf ------------------------------------------------------------------------------
def proto(body: str, package: str = "p", syntax: str = "proto3") -> str:
    return f'syntax = "{syntax}";\npackage {package};\n{body}\n'


PROTO_CASES = [
    ("field added", "message M { string a = 1; }", "message M { string a = 1; int32 b = 2; }",
     []),
    ("field removed", "message M { string a = 1; int32 b = 2; }", "message M { string a = 1; }",
     []),
    ("field renamed", "message M { string a = 1; }", "message M { string z = 1; }", []),
    ("int32 to int64: one wire group", "message M { int32 a = 1; }",
     "message M { int64 a = 1; }", []),
    ("uint32 to bool: one wire group", "message M { uint32 a = 1; }",
     "message M { bool a = 1; }", []),
    ("sint32 to sint64", "message M { sint32 a = 1; }", "message M { sint64 a = 1; }", []),
    ("string to bytes", "message M { string a = 1; }", "message M { bytes a = 1; }", []),
    ("fixed32 to sfixed32", "message M { fixed32 a = 1; }", "message M { sfixed32 a = 1; }",
     []),
    ("fixed64 to sfixed64", "message M { fixed64 a = 1; }", "message M { sfixed64 a = 1; }",
     []),
    ("int32 to sint32: other encodings", "message M { int32 a = 1; }",
     "message M { sint32 a = 1; }", ["FIELD_SCALAR_KIND_CHANGED"]),
    ("int32 to string", "message M { int32 a = 1; }", "message M { string a = 1; }",
     ["FIELD_SCALAR_KIND_CHANGED"]),
    ("double to float", "message M { double a = 1; }", "message M { float a = 1; }",
     ["FIELD_SCALAR_KIND_CHANGED"]),
    ("scalar to message", "message M { string a = 1; } message N { string x = 1; }",
     "message M { N a = 1; } message N { string x = 1; }", ["FIELD_KIND_CHANGED"]),
    ("int32 to an enum: both varints", "message M { int32 a = 1; } enum E { Z = 0; }",
     "message M { E a = 1; } enum E { Z = 0; }", []),
    ("string to an enum", "message M { string a = 1; } enum E { Z = 0; }",
     "message M { E a = 1; } enum E { Z = 0; }", ["FIELD_SCALAR_KIND_CHANGED"]),
    ("enum to a message", "message M { E a = 1; } enum E { Z = 0; } message N {}",
     "message M { N a = 1; } enum E { Z = 0; } message N {}", ["FIELD_KIND_CHANGED"]),
    ("scalar to a map", "message M { string a = 1; }",
     "message M { map<string, string> a = 1; }", ["FIELD_KIND_CHANGED"]),
    ("singular string to repeated: labels are not compared", "message M { string a = 1; }",
     "message M { repeated string a = 1; }", []),
    ("message field to another message type",
     "message M { A a = 1; } message A { string x = 1; } message B { string x = 1; }",
     "message M { B a = 1; } message A { string x = 1; } message B { string x = 1; }",
     ["FIELD_NAMED_TYPE_CHANGED"]),
    ("map value type changed", "message M { map<string, string> m = 1; }",
     "message M { map<string, int32> m = 1; }", ["FIELD_SCALAR_KIND_CHANGED"]),
    ("map value within its wire group", "message M { map<string, int32> m = 1; }",
     "message M { map<string, int64> m = 1; }", []),
    ("map key type changed", "message M { map<string, string> m = 1; }",
     "message M { map<int32, string> m = 1; }", ["FIELD_SCALAR_KIND_CHANGED"]),
    ("oneof removed whole", "message M { oneof o { string a = 1; } int32 b = 2; }",
     "message M { int32 b = 2; }", []),
    ("message removed", "message M { string a = 1; } message N { string b = 1; }",
     "message M { string a = 1; }", ["MESSAGE_REMOVED"]),
    ("nested message removed", "message M { message In { int32 x = 1; } In i = 1; }",
     "message M { int32 i = 1; }", ["FIELD_KIND_CHANGED", "MESSAGE_REMOVED"]),
    ("enum value added", "enum E { A = 0; } message M { E e = 1; }",
     "enum E { A = 0; B = 1; } message M { E e = 1; }", []),
    ("enum value removed", "enum E { A = 0; B = 1; } message M { E e = 1; }",
     "enum E { A = 0; } message M { E e = 1; }", []),
    ("oneof field removed", "message M { oneof o { string a = 1; int32 b = 2; } }",
     "message M { oneof o { string a = 1; } }", ["ONEOF_FIELD_REMOVED"]),
    ("one field moved into a new oneof", "message M { string a = 1; }",
     "message M { oneof o { string a = 1; } }", []),
    ("several fields moved into a new oneof", "message M { string a = 1; int32 b = 2; }",
     "message M { oneof o { string a = 1; int32 b = 2; } }",
     ["MULTIPLE_FIELDS_MOVED_TO_ONEOF"]),
    ("field moved into an existing oneof",
     "message M { string a = 1; oneof o { int32 b = 2; } }",
     "message M { oneof o { string a = 1; int32 b = 2; } }",
     ["FIELD_MOVED_TO_EXISTING_ONEOF"]),
]


@pytest.mark.parametrize("rule,old,new,expected", PROTO_CASES,
                         ids=[c[0] for c in PROTO_CASES])
def test_protobuf_rule(rule: str, old: str, new: str, expected: list[str]) -> None:
    assert kinds("PROTOBUF", proto(old), proto(new), BACKWARD) == expected, rule


def test_protobuf_package_changed() -> None:
    """The package is one difference; messages and their fields keep their local names."""
    m = "message M { N n = 1; } message N { string a = 1; }"
    assert kinds("PROTOBUF", proto(m), proto(m, "q"), BACKWARD) == ["PACKAGE_CHANGED"]


def test_protobuf_field_moved_into_an_existing_oneof_is_backward_only() -> None:
    old = "message M { string a = 1; oneof o { int32 b = 2; } }"
    new = "message M { oneof o { string a = 1; int32 b = 2; } }"
    assert kinds("PROTOBUF", proto(old), proto(new), FORWARD) == []


def test_protobuf_forward_sees_the_other_side() -> None:
    old, new = "message M { string a = 1; }", "message M { string a = 1; } message N {}"
    assert kinds("PROTOBUF", proto(old), proto(new), BACKWARD) == []
    assert kinds("PROTOBUF", proto(old), proto(new), FORWARD) == ["MESSAGE_REMOVED"]


def test_protobuf_proto2_required_fields() -> None:
    old = proto("message M { optional string a = 1; }", syntax="proto2")
    added = proto("message M { optional string a = 1; required int32 b = 2; }", syntax="proto2")
    now_required = proto("message M { required string a = 1; }", syntax="proto2")
    assert kinds("PROTOBUF", old, added, BACKWARD) == ["REQUIRED_FIELD_ADDED"]
    assert kinds("PROTOBUF", added, old, BACKWARD) == ["REQUIRED_FIELD_REMOVED"]
    # Confluent compares the labels of fields kept in place not at all
    assert kinds("PROTOBUF", old, now_required, BACKWARD) == []


def test_protobuf_invalid_is_42201_with_protoc_message() -> None:
    from emulator.schema_registry.errors import RegistryError

    with pytest.raises(RegistryError) as e:
        Registry().parse("PROTOBUF", proto("message M { strin a = 1; }"), [])
    assert e.value.error_code == 42201 and "strin" in e.value.message


def test_protobuf_text_round_trips_through_the_rendering() -> None:
    """The canonical text is rendered from the descriptor; compiling it again gives the
    same descriptor (what a restart replays from _schemas)."""
    text = proto("""
import "google/protobuf/timestamp.proto";
option java_package = "com.example";
message M {
  reserved 9, 11 to 13;
  reserved "old";
  optional string maybe = 1;
  repeated int64 ids = 2 [packed = false];
  map<string, M> children = 3;
  oneof pick { string s = 4; bytes b = 5; }
  google.protobuf.Timestamp at = 6;
  message Inner { enum Kind { K0 = 0; K1 = 1; } Kind k = 1; }
  Inner inner = 7;
  double d = 8 [deprecated = true, json_name = "dee"];
}
service S { rpc Get(M) returns (stream M); }""")
    reg = Registry()
    first = reg.parse("PROTOBUF", text, [])
    again = reg.parse("PROTOBUF", first.canonical, [])
    assert again.descriptor == first.descriptor
    assert again.canonical == first.canonical


def test_json_schema_references_are_followed() -> None:
    """A "$ref" naming a schema reference is compared through it: narrowing the
    referenced subject's schema in a new version of the referrer is caught."""
    reg = Registry()
    reg.set_config(None, {"compatibility": "NONE"})
    reg.register("addr", {"schemaType": "JSON", "schema": json.dumps(obj({"zip": N}))})
    reg.register("addr", {"schemaType": "JSON", "schema": json.dumps(obj({"zip": INT}))})
    person = json.dumps(obj({"home": {"$ref": "addr.json"}}))
    ref = {"name": "addr.json", "subject": "addr"}
    reg.register("person", {"schemaType": "JSON", "schema": person,
                            "references": [{**ref, "version": 1}]})
    reg.set_config("person", {"compatibility": "BACKWARD"})
    out = reg.check_compatibility("person", None, {
        "schemaType": "JSON", "schema": person, "references": [{**ref, "version": 2}]},
        verbose=True)
    assert out["is_compatible"] is False
    assert any("TYPE_NARROWED" in m for m in out["messages"])
    same = reg.check_compatibility("person", None, {
        "schemaType": "JSON", "schema": person, "references": [{**ref, "version": 1}]})
    assert same == {"is_compatible": True}


def test_avro_normalize_is_confluents_form() -> None:
    """normalize=true: Confluent's normalized Avro (full names, name before type, each
    field's order spelled out, a double's default as a double); a schema registered
    without normalizing is found again by a respelled one with normalize=true."""
    reg = Registry()
    plain = rec(f("a", "int"), f("d", "double", default=1), name="R", namespace="x")
    respelled = {"name": "x.R", "type": "record", "fields": [
        {"type": "int", "name": "a"}, {"default": 1.0, "type": "double", "name": "d"}]}
    assert reg.parse("AVRO", json.dumps(plain), []).normalized() == (
        '{"name":"x.R","type":"record","fields":[{"name":"a","type":"int","order":"ASCENDING"},'
        '{"name":"d","type":"double","order":"ASCENDING","default":1.0}]}')
    assert reg.register("s", {"schema": json.dumps(plain)}) == {"id": 1}
    assert reg.register("s", {"schema": json.dumps(respelled)}, normalize=True) == {"id": 1}
    assert reg.list_versions("s") == [1]
    assert reg.lookup("s", {"schema": json.dumps(respelled)}, normalize=True)["id"] == 1
