"""Avro schemas: parsing (fastavro validates), canonical text, and compatibility by the
Avro specification's schema resolution rules.

Compatibility is the question "can a reader with schema R read data written with
schema W?" (the specification's "Schema Resolution"): primitives match or are
promoted (int to long, float, double; long to float, double; float to double;
string and bytes both ways), named types match by unqualified name or a reader
alias, record fields are matched by name (or a reader field's alias) and a reader
field the writer lacks needs a default, enums need every writer symbol unless the
reader has an enum default, fixed sizes must agree, arrays and maps compare their
items and values, a writer union needs every branch readable and a reader union one
branch that reads the writer. The differences are named as Confluent's registry
names them (Avro's SchemaIncompatibilityType), with a JSON-pointer-like path.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from emulator.schema_registry.errors import invalid_schema

PRIMITIVES = {"null", "boolean", "int", "long", "float", "double", "bytes", "string"}
PROMOTIONS = {("int", "long"), ("int", "float"), ("int", "double"), ("long", "float"),
              ("long", "double"), ("float", "double"), ("string", "bytes"),
              ("bytes", "string")}  # (writer, reader)


@dataclass(eq=False)
class Node:
    """One Avro type, named references resolved to the same node (recursion allowed)."""

    type: str  # a primitive, record, enum, fixed, array, map, union
    name: str = ""  # full name of a named type
    aliases: list[str] = field(default_factory=list)
    fields: list[tuple[str, Node, bool, list[str]]] = field(default_factory=list)
    symbols: list[str] = field(default_factory=list)
    enum_default: str | None = None
    size: int = 0
    items: Node | None = None  # array items, map values
    branches: list[Node] = field(default_factory=list)

    @property
    def short_name(self) -> str:
        return self.name.rsplit(".", 1)[-1]


def _fullname(name: str, namespace: str | None) -> str:
    if "." in name or not namespace:
        return name
    return f"{namespace}.{name}"


class _Builder:
    def __init__(self, names: dict[str, Node]) -> None:
        self.names = names

    def build(self, s: Any, ns: str | None) -> Node:
        if isinstance(s, str):
            if s in PRIMITIVES:
                return Node(s)
            full = _fullname(s, ns)
            for cand in (full, s):
                if cand in self.names:
                    return self.names[cand]
            raise invalid_schema(f"Undefined name: {s!r}")
        if isinstance(s, list):
            return Node("union", branches=[self.build(b, ns) for b in s])
        if not isinstance(s, dict):
            raise invalid_schema(f"not an Avro schema: {s!r}")
        t = s.get("type")
        if t in ("record", "error", "enum", "fixed"):
            name = s.get("name")
            if not isinstance(name, str):
                raise invalid_schema(f"a {t} needs a name")
            inner_ns = s.get("namespace", ns)
            full = _fullname(name, inner_ns)
            space = full.rsplit(".", 1)[0] if "." in full else None
            aliases = [_fullname(a, space) for a in s.get("aliases", [])]
            node = Node("record" if t == "error" else t, name=full, aliases=aliases)
            self.names[full] = node
            if t in ("record", "error"):
                for f in s.get("fields", []):
                    node.fields.append((f["name"], self.build(f["type"], space),
                                        "default" in f, list(f.get("aliases", []))))
            elif t == "enum":
                node.symbols = list(s.get("symbols", []))
                node.enum_default = s.get("default")
            else:
                node.size = int(s.get("size", 0))
            return node
        if t == "array":
            return Node("array", items=self.build(s.get("items"), ns))
        if t == "map":
            return Node("map", items=self.build(s.get("values"), ns))
        if isinstance(t, str | list | dict):
            return self.build(t, ns)  # {"type": "string", "logicalType": ...}
        raise invalid_schema(f"not an Avro schema: {s!r}")


class AvroSchema:
    schema_type = "AVRO"

    def __init__(self, text: str, references: list[AvroSchema] | None = None) -> None:
        import fastavro  # the schema-registry extra

        try:
            self.json = json.loads(text)
        except (json.JSONDecodeError, TypeError) as e:
            raise invalid_schema(f"{text[:200]!r}: not JSON: {e}") from None
        self.references = references or []
        named: dict[str, Any] = {}
        names: dict[str, Node] = {}
        for ref in _transitive(self.references):
            try:
                fastavro.parse_schema(ref.json, named_schemas=named)
            except Exception as e:  # noqa: BLE001 - fastavro raises several kinds
                raise invalid_schema(f"reference: {e}") from None
            _Builder(names).build(ref.json, None)
        try:
            fastavro.parse_schema(self.json, named_schemas=named)
        except Exception as e:  # noqa: BLE001 - SchemaParseException, KeyError, ...
            raise invalid_schema(f"{text[:200]!r}: {e}") from None
        self.root = _Builder(names).build(self.json, None)
        self.canonical = json.dumps(_java_form(self.json, None, set()),
                                    separators=(",", ":"), ensure_ascii=False)

    def normalized(self) -> str:
        """``normalize=true``: the form Confluent's registry normalizes Avro to (its
        AvroSchemaUtils.toNormalizedString, after Avro's SchemaNormalization): full
        names, the name before the type, every field's order spelled out, aliases
        sorted, other properties sorted, a named type written once. Two spellings of
        one schema normalize to one string."""
        env = {ref_name for ref in _transitive(self.references)
               for ref_name in _defined_names(ref.json)}
        return json.dumps(_normal(self.json, None, env), separators=(",", ":"),
                          ensure_ascii=False)

    def check(self, reader: AvroSchema, writer: AvroSchema, new_is_reader: bool) -> list[dict]:
        """Differences that stop ``reader`` reading ``writer``'s data."""
        out: list[dict] = []
        _check(reader.root, writer.root, "", out, set(), new_is_reader)
        return out


_RESERVED = {"type", "name", "namespace", "doc", "fields", "symbols", "default", "size",
             "items", "values", "aliases", "order"}


def _java_form(s: Any, ns: str | None, defined: set[str]) -> Any:
    """The schema as Avro's Java ``Schema.toString()`` writes it, which is the string
    Confluent's registry stores and compares (``canonicalString``): compact, attributes
    in its order (type, name, namespace, doc, fields/symbols/size, other properties,
    aliases; a field's name, type, doc, default, order, aliases, properties), a
    namespace only where it differs from the enclosing one, a named type written out
    once and then referred to by name. So two spellings of one schema (key order,
    whitespace, a full name instead of a namespace) get one id, as on Confluent."""
    if isinstance(s, list):
        return [_java_form(b, ns, defined) for b in s]
    if isinstance(s, str):
        if s in PRIMITIVES:
            return s
        full = _fullname(s, ns)
        return _relative(full, ns)
    if not isinstance(s, dict):
        return s
    t = s.get("type")
    props = {k: v for k, v in s.items() if k not in _RESERVED}
    if isinstance(t, list | dict):
        return _java_form(t, ns, defined)
    if t in PRIMITIVES:
        return {"type": t, **props} if props else t
    if t in ("array", "map"):
        key = "items" if t == "array" else "values"
        return {"type": t, key: _java_form(s.get(key), ns, defined), **props}
    if t in ("record", "error", "enum", "fixed"):
        full = _fullname(s["name"], s.get("namespace", ns))
        if full in defined:
            return _relative(full, ns)
        defined.add(full)
        space = full.rsplit(".", 1)[0] if "." in full else None
        out: dict[str, Any] = {"type": t, "name": full.rsplit(".", 1)[-1]}
        if space != ns and space is not None:
            out["namespace"] = space
        if "doc" in s:
            out["doc"] = s["doc"]
        if t in ("record", "error"):
            fields = []
            for f in s.get("fields", []):
                fo: dict[str, Any] = {"name": f["name"],
                                      "type": _java_form(f["type"], space, defined)}
                for k in ("doc", "default"):
                    if k in f:
                        fo[k] = f[k]
                if f.get("order", "ascending") != "ascending":
                    fo["order"] = f["order"]
                if f.get("aliases"):
                    fo["aliases"] = f["aliases"]
                fo.update({k: v for k, v in f.items() if k not in _RESERVED})
                fields.append(fo)
            out["fields"] = fields
        elif t == "enum":
            out["symbols"] = s.get("symbols", [])
            if "default" in s:
                out["default"] = s["default"]
        else:
            out["size"] = s.get("size")
        out.update(props)
        if s.get("aliases"):
            out["aliases"] = [_relative(_fullname(a, space), space) for a in s["aliases"]]
        return out
    return s


_LOGICAL = ("logicalType", "precision", "scale")


def _logical(s: dict) -> dict:
    out: dict[str, Any] = {"logicalType": s["logicalType"]}
    if s["logicalType"] == "decimal":
        out["precision"] = s.get("precision")
        if s.get("scale", 0):
            out["scale"] = s["scale"]
    return out


def _sorted_props(d: dict, reserved: set[str]) -> dict:
    return {k: d[k] for k in sorted(d) if k not in reserved and k not in _LOGICAL}


def _normal(s: Any, ns: str | None, env: set[str]) -> Any:
    """Confluent's normalized Avro (see AvroSchema.normalized)."""
    if isinstance(s, list):
        return [_normal(b, ns, env) for b in s]
    if isinstance(s, str):
        return s if s in PRIMITIVES else _fullname(s, ns)
    if not isinstance(s, dict):
        return s
    t = s.get("type")
    if isinstance(t, list | dict):
        return _normal(t, ns, env)
    if t in PRIMITIVES:
        if "logicalType" in s:
            return {"type": t, **_logical(s), **_sorted_props(s, _RESERVED)}
        props = _sorted_props(s, _RESERVED)
        return {"type": t, **props} if props else t
    if t in ("array", "map"):
        key = "items" if t == "array" else "values"
        return {"type": t, key: _normal(s.get(key), ns, env), **_sorted_props(s, _RESERVED)}
    if t not in ("record", "error", "enum", "fixed"):
        return s
    full = _fullname(s["name"], s.get("namespace", ns))
    if full in env:
        return full
    env.add(full)
    space = full.rsplit(".", 1)[0] if "." in full else None
    out: dict[str, Any] = {"name": full, "type": t}
    if t == "enum":
        out["symbols"] = s.get("symbols", [])
    elif t == "fixed":
        out["size"] = s.get("size")
        if "logicalType" in s:
            out.update(_logical(s))
    else:
        fields = []
        for f in s.get("fields", []):
            fo: dict[str, Any] = {"name": f["name"], "type": _normal(f["type"], space, env),
                                  "order": str(f.get("order", "ascending")).upper()}
            if "doc" in f:
                fo["doc"] = f["doc"]
            if f.get("aliases"):
                fo["aliases"] = sorted(f["aliases"])
            if "default" in f:
                fo["default"] = _typed_default(f["default"], f["type"])
            fo.update(_sorted_props(f, _RESERVED))
            fields.append(fo)
        out["fields"] = fields
    if s.get("doc"):
        out["doc"] = s["doc"]
    if s.get("aliases"):
        out["aliases"] = sorted(_fullname(a, space) for a in s["aliases"])
    if t == "enum" and "default" in s:
        out["default"] = s["default"]
    out.update(_sorted_props(s, _RESERVED))
    return out


def _typed_default(value: Any, t: Any) -> Any:
    """A default as Java holds it: a float or double field's 1 is 1.0."""
    first = t[0] if isinstance(t, list) and t else t
    if isinstance(first, dict):
        first = first.get("type")
    if first in ("float", "double") and isinstance(value, int) and not isinstance(value,
                                                                                  bool):
        return float(value)
    return value


def _defined_names(s: Any, ns: str | None = None) -> list[str]:
    """Full names of the named types a schema defines (a reference's, for ``_normal``)."""
    out: list[str] = []
    if isinstance(s, list):
        for b in s:
            out += _defined_names(b, ns)
    elif isinstance(s, dict):
        if s.get("type") in ("record", "error", "enum", "fixed") and "name" in s:
            full = _fullname(s["name"], s.get("namespace", ns))
            out.append(full)
            ns = full.rsplit(".", 1)[0] if "." in full else None
        for f in s.get("fields", []) if isinstance(s.get("fields"), list) else []:
            if isinstance(f, dict):
                out += _defined_names(f.get("type"), ns)
        for k in ("items", "values"):
            if k in s:
                out += _defined_names(s[k], ns)
        if isinstance(s.get("type"), list | dict):
            out += _defined_names(s["type"], ns)
    return out


def _relative(full: str, ns: str | None) -> str:
    space, _, short = full.rpartition(".")
    return short if (space or None) == ns else full


def _transitive(refs: list[AvroSchema]) -> list[AvroSchema]:
    """References and theirs, each once, a reference before what uses it."""
    out: list[AvroSchema] = []

    def add(r: AvroSchema) -> None:
        for inner in r.references:
            add(inner)
        if all(r is not o for o in out):
            out.append(r)

    for r in refs:
        add(r)
    return out


def _diff(kind: str, path: str, description: str, info: str) -> dict:
    return {"errorType": kind, "description": description, "additionalInfo": info,
            "path": path or "/"}


def _check(r: Node, w: Node, path: str, out: list[dict], seen: set[tuple[int, int]],
           new_is_reader: bool) -> None:
    key = (id(r), id(w))
    if key in seen:
        return  # recursive types: assumed compatible while being checked
    seen.add(key)
    new, old = ("new", "old") if new_is_reader else ("old", "new")
    if w.type == "union":
        for i, b in enumerate(w.branches):
            if r.type == "union":
                if not any(_readable(rb, b, seen) for rb in r.branches):
                    out.append(_diff("MISSING_UNION_BRANCH", f"{path}/{i}",
                                     f"The {new} schema is missing a type inside a union field "
                                     f"at path '{path}/{i}' in the {old} schema",
                                     f"reader union lacking writer type: {_name(b)}"))
            else:
                sub: list[dict] = []
                _check(r, b, f"{path}/{i}", sub, seen, new_is_reader)
                out.extend(sub)
        return
    if r.type == "union":
        if not any(_readable(rb, w, seen) for rb in r.branches):
            out.append(_diff("MISSING_UNION_BRANCH", path,
                             f"The {new} schema is missing a type inside a union field at "
                             f"path '{path}' in the {old} schema",
                             f"reader union lacking writer type: {_name(w)}"))
        return
    if r.type != w.type:
        if (w.type, r.type) not in PROMOTIONS:
            out.append(_diff("TYPE_MISMATCH", path,
                             f"The type (path '{path}') of a field in the {new} schema does "
                             f"not match with the {old} schema",
                             f"reader type: {r.type.upper()} not compatible with writer type: "
                             f"{w.type.upper()}"))
        return
    if r.type in ("record", "enum", "fixed") and not (
            r.short_name == w.short_name or w.name in r.aliases):
        out.append(_diff("NAME_MISMATCH", f"{path}/name",
                         f"The name of the schema has changed (path '{path}/name')",
                         f"expected: {w.name}"))
        return
    if r.type == "fixed" and r.size != w.size:
        out.append(_diff("FIXED_SIZE_MISMATCH", f"{path}/size",
                         f"The size of FIXED type field at path '{path}/size' in the {new} "
                         f"schema does not match with the {old} schema",
                         f"expected: {w.size}, found: {r.size}"))
    elif r.type == "enum":
        missing = [s for s in w.symbols if s not in r.symbols]
        if missing and r.enum_default is None:
            out.append(_diff("MISSING_ENUM_SYMBOLS", f"{path}/symbols",
                             f"The {new} schema is missing enum symbols '{missing}' at path "
                             f"'{path}/symbols' in the {old} schema", str(missing)))
    elif r.type in ("array", "map"):
        assert r.items is not None and w.items is not None
        _check(r.items, w.items, f"{path}/{'items' if r.type == 'array' else 'values'}", out,
               seen, new_is_reader)
    elif r.type == "record":
        writer_fields = {f[0]: f for f in w.fields}
        for i, (fname, ftype, has_default, aliases) in enumerate(r.fields):
            wf = writer_fields.get(fname) or next(
                (writer_fields[a] for a in aliases if a in writer_fields), None)
            fpath = f"{path}/fields/{i}"
            if wf is None:
                if not has_default:
                    out.append(_diff("READER_FIELD_MISSING_DEFAULT_VALUE", fpath,
                                     f"The field '{fname}' at path '{fpath}' in the {new} "
                                     f"schema has no default value and is missing in the {old} "
                                     "schema", fname))
            else:
                _check(ftype, wf[1], f"{fpath}/type", out, seen, new_is_reader)


def _readable(r: Node, w: Node, seen: set[tuple[int, int]]) -> bool:
    sub: list[dict] = []
    _check(r, w, "", sub, set(seen), True)
    return not sub


def _name(n: Node) -> str:
    return (n.name or n.type).upper() if not n.name else n.name
