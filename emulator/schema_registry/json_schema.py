"""JSON Schemas: validation (the ``jsonschema`` package's meta-schema check), canonical
text, and compatibility by the rules Confluent documents for JSON Schema.

The question is the same as for Avro: does every document the writer's schema accepts
pass the reader's? (BACKWARD: the new schema reads what the old one accepted.) The
open and closed content models decide what a property change means: a writer whose
objects are open (``additionalProperties`` absent or true) may carry any property, so
a reader adding a property constrains data it never saw (PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL);
a closed writer (``additionalProperties: false``) cannot carry it, so the same change is
safe; a reader that drops a property is safe when it is open and breaks when it is
closed (PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL). Bounds and enums may widen, never
narrow (MAX_LENGTH_DECREASED, MINIMUM_INCREASED, ENUM_ARRAY_NARROWED, ...), types may be
extended (integer to number, adding a type) but not narrowed or changed; required
properties may not be added. Difference names are Confluent's.
"""

from __future__ import annotations

import json
import re
from typing import Any

from emulator.schema_registry.errors import invalid_schema

ALL_TYPES = {"null", "boolean", "object", "array", "number", "integer", "string"}


class JsonSchema:
    schema_type = "JSON"

    def __init__(self, text: str,
                 references: list[tuple[str, JsonSchema]] | None = None) -> None:
        import jsonschema  # type: ignore[import-untyped]  # the schema-registry extra

        try:
            self.json = json.loads(text)
        except (json.JSONDecodeError, TypeError) as e:
            raise invalid_schema(f"{text[:200]!r}: not JSON: {e}") from None
        if not isinstance(self.json, dict | bool):
            raise invalid_schema(f"{text[:200]!r}: a JSON Schema is an object or a boolean")
        try:
            # Without "$schema", draft 7, as Confluent's registry reads it.
            jsonschema.validators.validator_for(
                self.json, default=jsonschema.Draft7Validator).check_schema(self.json)
        except jsonschema.exceptions.SchemaError as e:
            raise invalid_schema(f"{text[:200]!r}: {e.message}") from None
        self.references = references or []
        # Documents a "$ref" may name (the references by name, theirs too).
        self.documents: dict[str, Any] = {}
        for name, ref in self.references:
            self.documents.update(ref.documents)
            self.documents[name] = ref.json
        self.canonical = json.dumps(self.json, separators=(",", ":"), ensure_ascii=False)

    def normalized(self) -> str:
        return json.dumps(self.json, separators=(",", ":"), sort_keys=True, ensure_ascii=False)

    def check(self, reader: JsonSchema, writer: JsonSchema, new_is_reader: bool) -> list[dict]:
        out: list[dict] = []
        _Checker(reader.json, writer.json, out,
                 (reader.documents, writer.documents)).check(reader.json, writer.json, "#")
        return out


def _diff(kind: str, path: str) -> dict:
    return {"errorType": kind, "description": f"{kind} at path '{path}'", "path": path}


class _Checker:
    def __init__(self, reader_root: Any, writer_root: Any, out: list[dict],
                 documents: tuple[dict[str, Any], dict[str, Any]] = ({}, {})) -> None:
        self.roots = (reader_root, writer_root)
        self.documents = documents
        self.out = out
        self.seen: set[tuple[int, int]] = set()

    def _deref(self, s: Any, side: int) -> Any:
        """Follow ``$ref``: a pointer into this schema, or into a referenced document
        (a schema reference's name, then an optional ``#/pointer``)."""
        for _ in range(32):
            if not isinstance(s, dict) or not isinstance(s.get("$ref"), str):
                return s
            doc, _, pointer = s["$ref"].partition("#")
            target: Any = self.documents[side].get(doc) if doc else self.roots[side]
            if target is None:
                return s  # not resolvable here: compared as written
            for part in pointer.strip("/").split("/"):
                if not part:
                    continue
                part = part.replace("~1", "/").replace("~0", "~")
                target = target.get(part, {}) if isinstance(target, dict) else {}
            s = target
        return s

    def check(self, r: Any, w: Any, path: str) -> None:
        r, w = self._deref(r, 0), self._deref(w, 1)
        key = (id(r), id(w))
        if key in self.seen:
            return
        self.seen.add(key)
        if r is True or r == {}:
            return  # the reader accepts anything
        if w is False:
            return  # the writer accepts nothing
        if r is False:
            self.out.append(_diff("TYPE_NARROWED", path))
            return
        if w is True:
            w = {}
        if self._combined(r, w, path):
            return
        rt, wt = _types(r), _types(w) or set(ALL_TYPES)
        if not wt <= _widen(rt):
            kind = "TYPE_NARROWED" if wt == {"number"} and rt == {"integer"} \
                else "TYPE_CHANGED"
            self.out.append(_diff(kind, path))
            return
        self._enum(r, w, path)
        self._bound(r, w, path, "maxLength", "MAX_LENGTH", smaller_narrows=True)
        self._bound(r, w, path, "minLength", "MIN_LENGTH", smaller_narrows=False)
        self._bound(r, w, path, "maximum", "MAXIMUM", smaller_narrows=True)
        self._bound(r, w, path, "minimum", "MINIMUM", smaller_narrows=False)
        self._bound(r, w, path, "exclusiveMaximum", "EXCLUSIVE_MAXIMUM", smaller_narrows=True)
        self._bound(r, w, path, "exclusiveMinimum", "EXCLUSIVE_MINIMUM", smaller_narrows=False)
        self._bound(r, w, path, "maxItems", "MAX_ITEMS", smaller_narrows=True)
        self._bound(r, w, path, "minItems", "MIN_ITEMS", smaller_narrows=False)
        self._bound(r, w, path, "maxProperties", "MAX_PROPERTIES", smaller_narrows=True)
        self._bound(r, w, path, "minProperties", "MIN_PROPERTIES", smaller_narrows=False)
        if "pattern" in r and r.get("pattern") != w.get("pattern"):
            self.out.append(_diff("PATTERN_ADDED" if "pattern" not in w else "PATTERN_CHANGED",
                                  path))
        if "multipleOf" in r:
            wm = w.get("multipleOf")
            if wm is None:
                self.out.append(_diff("MULTIPLE_OF_ADDED", path))
            elif not _divides(r["multipleOf"], wm):
                self.out.append(_diff("MULTIPLE_OF_EXPANDED" if r["multipleOf"] > wm
                                      else "MULTIPLE_OF_CHANGED", path))
        if r.get("uniqueItems") is True and w.get("uniqueItems") is not True:
            self.out.append(_diff("UNIQUE_ITEMS_ADDED", path))
        if "object" in wt:
            self._object(r, w, path)
        if "array" in wt:
            self._array(r, w, path)

    def _array(self, r: dict, w: dict, path: str) -> None:
        """``items`` one schema for all, or a tuple (a list; draft 2020-12's
        ``prefixItems``) whose extra items ``additionalItems`` governs, with the same
        open, closed and partially open content models as properties (ITEM_ADDED_...,
        ITEM_REMOVED_...)."""
        ri, wi = r.get("items"), w.get("items")
        if isinstance(ri, dict | bool) and ri is not True:
            self.check(ri, wi if isinstance(wi, dict | bool) else {}, f"{path}/items")
        rt = r.get("prefixItems", ri if isinstance(ri, list) else [])
        wt = w.get("prefixItems", wi if isinstance(wi, list) else [])
        if not (isinstance(rt, list) and isinstance(wt, list)) or not (rt or wt):
            return
        r_more = r.get("additionalItems", r.get("items") if "prefixItems" in r else True)
        w_more = w.get("additionalItems", w.get("items") if "prefixItems" in w else True)
        for i in range(min(len(rt), len(wt))):
            self.check(rt[i], wt[i], f"{path}/items/{i}")
        for i in range(len(rt), len(wt)):  # items the new schema no longer lists
            if r_more is True or r_more is None:
                continue
            if isinstance(r_more, dict):
                if not self._reads(r_more, wt[i]):
                    self.out.append(_diff("ITEM_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_"
                                          "CONTENT_MODEL", f"{path}/items/{i}"))
            elif wt[i] is not False:
                self.out.append(_diff("ITEM_REMOVED_FROM_CLOSED_CONTENT_MODEL",
                                      f"{path}/items/{i}"))
        for i in range(len(wt), len(rt)):  # items the new schema adds
            if w_more is True or w_more is None:
                if not (rt[i] is True or rt[i] == {}):
                    self.out.append(_diff("ITEM_ADDED_TO_OPEN_CONTENT_MODEL",
                                          f"{path}/items/{i}"))
            elif isinstance(w_more, dict) and not self._reads(rt[i], w_more):
                self.out.append(_diff("ITEM_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_"
                                      "MODEL", f"{path}/items/{i}"))
        if w_more is not False and r_more is False:
            self.out.append(_diff("ADDITIONAL_ITEMS_REMOVED", path))
        elif isinstance(r_more, dict) and (w_more is True or w_more is None):
            self.out.append(_diff("ADDITIONAL_ITEMS_NARROWED", path))
        elif isinstance(r_more, dict) and isinstance(w_more, dict):
            self.check(r_more, w_more, f"{path}/additionalItems")

    def _combined(self, r: dict, w: dict, path: str) -> bool:
        """oneOf / anyOf / allOf (and a list of types, which is an anyOf of one schema per
        type), as Confluent compares them, the old schema (``w``) against the new
        (``r``): the criterion may widen to anyOf (COMBINED_TYPE_EXTENDED) but not
        otherwise change; a sum type may gain alternatives (SUM_TYPE_EXTENDED), not lose
        them (SUM_TYPE_NARROWED); a product type may lose parts (PRODUCT_TYPE_NARROWED),
        not gain them (PRODUCT_TYPE_EXTENDED); and the alternatives must pair up, each
        old one with a new one that reads it (COMBINED_TYPE_SUBSCHEMAS_CHANGED). A plain
        schema becoming a sum that holds it is SUM_TYPE_EXTENDED; other changes between a
        combination and a plain schema are TYPE_CHANGED."""
        wc, rc = _criterion(w), _criterion(r)
        if wc is None and rc is None:
            return False
        if wc is not None and rc is not None:
            (wk, w_subs), (rk, r_subs) = wc, rc
            if wk != rk:
                if rk == "anyOf" or (rk == "oneOf" and len(w_subs) == 1) or (
                        rk == "allOf" and len(w_subs) == 1 and len(r_subs) == 1):
                    pass  # COMBINED_TYPE_EXTENDED: compatible
                else:
                    self.out.append(_diff("COMBINED_TYPE_CHANGED", path))
                    return True
            w_unique, r_unique = _unique(w_subs), _unique(r_subs)
            if len(r_unique) > len(w_unique) and rk == "allOf":
                self.out.append(_diff("PRODUCT_TYPE_EXTENDED", path))
            elif len(r_unique) < len(w_unique) and rk != "allOf":
                self.out.append(_diff("SUM_TYPE_NARROWED", path))
            edges = [[self._reads(rs, ws) for rs in r_unique] for ws in w_unique]
            if _max_matching(edges) < min(len(w_unique), len(r_unique)):
                self.out.append(_diff("COMBINED_TYPE_SUBSCHEMAS_CHANGED", path))
            return True
        if rc is not None:  # a plain schema became a combination
            rk, r_subs = rc
            if len(r_subs) == 1:
                self.check(r_subs[0], w, path)
            elif rk == "allOf" or not any(self._reads(rs, w) for rs in r_subs):
                self.out.append(_diff("TYPE_CHANGED", path))
            return True
        wk, w_subs = wc  # type: ignore[misc]
        if len(w_subs) == 1:
            self.check(r, w_subs[0], path)
        else:
            self.out.append(_diff("TYPE_CHANGED", path))
        return True

    def _reads(self, r: Any, w: Any) -> bool:
        sub = _Checker(*self.roots, [], self.documents)
        sub.seen = set(self.seen)
        sub.check(r, w, "#")
        return not sub.out

    def _enum(self, r: dict, w: dict, path: str) -> None:
        if "enum" not in r:
            if "enum" in w:
                # Confluent: an enum schema and a typed one are different kinds
                self.out.append(_diff("TYPE_CHANGED", path))
            return
        if "enum" not in w:
            self.out.append(_diff("ENUM_ARRAY_NARROWED" if "const" not in w
                                  else "ENUM_ARRAY_CHANGED", path))
            return
        if any(v not in r["enum"] for v in w["enum"]):
            self.out.append(_diff("ENUM_ARRAY_NARROWED", path))

    def _bound(self, r: dict, w: dict, path: str, key: str, name: str,
               smaller_narrows: bool) -> None:
        if key not in r or isinstance(r[key], bool):
            return
        if key not in w or isinstance(w[key], bool):
            self.out.append(_diff(f"{name}_ADDED", path))
            return
        narrowed = r[key] < w[key] if smaller_narrows else r[key] > w[key]
        if narrowed:
            self.out.append(_diff(f"{name}_{'DECREASED' if smaller_narrows else 'INCREASED'}",
                                  path))

    def _object(self, r: dict, w: dict, path: str) -> None:
        rp, wp = r.get("properties", {}) or {}, w.get("properties", {}) or {}
        r_req, w_req = set(r.get("required", []) or []), set(w.get("required", []) or [])
        for name in wp:  # required changed on a property both have
            if name in rp and name in r_req and name not in w_req \
                    and not _has_default(rp[name]):
                self.out.append(_diff("REQUIRED_ATTRIBUTE_ADDED", f"{path}/required/{name}"))
        for name, ws in wp.items():
            if name in rp:
                self.check(rp[name], ws, f"{path}/properties/{name}")
                continue
            # removed: only the new schema's content model matters
            if _open(r):
                continue  # PROPERTY_REMOVED_FROM_OPEN_CONTENT_MODEL
            partial = _partial(r, name)
            if partial is not None:
                if not self._reads(partial, ws):
                    self.out.append(_diff("PROPERTY_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_"
                                          "CONTENT_MODEL", f"{path}/properties/{name}"))
            elif ws is not False:
                self.out.append(_diff("PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL",
                                      f"{path}/properties/{name}"))
        for name, rs in rp.items():
            if name in wp:
                continue
            # added: only the old schema's content model matters
            if _open(w):
                if not (rs is True or rs == {}):
                    self.out.append(_diff("PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL",
                                          f"{path}/properties/{name}"))
                continue
            partial = _partial(w, name)
            if partial is not None and not self._reads(rs, partial):
                self.out.append(_diff("PROPERTY_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_"
                                      "MODEL", f"{path}/properties/{name}"))
            if name in r_req and not _has_default(rs):
                self.out.append(_diff("REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL",
                                      f"{path}/properties/{name}"))
        self._dependencies(r, w, path)
        r_add, w_add = r.get("additionalProperties", True), w.get("additionalProperties", True)
        if r_add is False and w_add is not False:
            self.out.append(_diff("ADDITIONAL_PROPERTIES_REMOVED", path))
        elif isinstance(r_add, dict) and w_add is True:
            if r_add != {}:
                self.out.append(_diff("ADDITIONAL_PROPERTIES_NARROWED", path))
        elif isinstance(r_add, dict) and isinstance(w_add, dict):
            self.check(r_add, w_add, f"{path}/additionalProperties")

    def _dependencies(self, r: dict, w: dict, path: str) -> None:
        """``dependencies`` (and draft 2019's ``dependentRequired``/``dependentSchemas``):
        a property's dependencies may narrow or go, not be added or grow."""
        rd, wd = _deps(r), _deps(w)
        for name in sorted(set(rd) | set(wd)):
            a, b = wd.get(name), rd.get(name)  # old, new
            dpath = f"{path}/dependencies/{name}"
            if b is None:
                continue  # DEPENDENCY_*_REMOVED: compatible
            if isinstance(b, list):
                if a is None:
                    self.out.append(_diff("DEPENDENCY_ARRAY_ADDED", dpath))
                elif isinstance(a, list) and set(a) != set(b):
                    if set(b) >= set(a):
                        self.out.append(_diff("DEPENDENCY_ARRAY_EXTENDED", dpath))
                    elif not set(a) >= set(b):
                        self.out.append(_diff("DEPENDENCY_ARRAY_CHANGED", dpath))
            elif a is None:
                self.out.append(_diff("DEPENDENCY_SCHEMA_ADDED", dpath))
            elif not isinstance(a, list):
                self.check(b, a, dpath)


def _criterion(s: dict) -> tuple[str, list] | None:
    """The combination a schema is, if any: its keyword and its alternatives (a list of
    types is an anyOf of one schema per type)."""
    for k in ("oneOf", "anyOf", "allOf"):
        if isinstance(s.get(k), list) and s[k]:
            return k, s[k]
    t = s.get("type")
    if isinstance(t, list) and len(t) > 1:
        rest = {k: v for k, v in s.items() if k != "type"}
        return "anyOf", [{**rest, "type": one} for one in t]
    return None


def _unique(subs: list) -> list:
    out: list = []
    for x in subs:
        if all(x != y for y in out):
            out.append(x)
    return out


def _max_matching(edges: list[list[bool]]) -> int:
    """Maximum bipartite matching (Kuhn's augmenting paths): rows are old
    alternatives, columns new ones, ``edges[i][j]`` when new j reads old i."""
    match: dict[int, int] = {}

    def augment(i: int, seen: set[int]) -> bool:
        for j, ok in enumerate(edges[i]):
            if ok and j not in seen:
                seen.add(j)
                if j not in match or augment(match[j], seen):
                    match[j] = i
                    return True
        return False

    return sum(augment(i, set()) for i in range(len(edges)))


def _open(s: dict) -> bool:
    """An open content model: any property, of any value (Confluent's definition)."""
    add = s.get("additionalProperties", True)
    return not s.get("patternProperties") and (add is True or add is None)


def _partial(s: dict, name: str) -> Any:
    """The schema a partially open content model gives an undeclared property: the
    first matching patternProperties entry, else additionalProperties if a schema."""
    for pattern, schema in (s.get("patternProperties") or {}).items():
        try:
            if re.search(pattern, name):
                return schema
        except re.error:
            continue
    add = s.get("additionalProperties")
    return add if isinstance(add, dict) else None


def _has_default(s: Any) -> bool:
    return isinstance(s, dict) and "default" in s


def _deps(s: dict) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in ("dependencies", "dependentRequired", "dependentSchemas"):
        d = s.get(key)
        if isinstance(d, dict):
            out.update(d)
    return out


def _types(s: dict) -> set[str]:
    t = s.get("type")
    if t is None:
        return set()  # unconstrained
    return {t} if isinstance(t, str) else set(t)


def _widen(types: set[str]) -> set[str]:
    if not types:
        return set(ALL_TYPES)
    return types | ({"integer"} if "number" in types else set())


def _divides(reader: float, writer: float) -> bool:
    """Every multiple of ``writer`` is one of ``reader``."""
    try:
        q = writer / reader
    except ZeroDivisionError:
        return False
    return abs(q - round(q)) < 1e-9
