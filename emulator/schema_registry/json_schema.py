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
from typing import Any

from emulator.schema_registry.errors import invalid_schema

NUMERIC = {"number", "integer"}
ALL_TYPES = {"null", "boolean", "object", "array", "number", "integer", "string"}


class JsonSchema:
    schema_type = "JSON"

    def __init__(self, text: str, references: list[JsonSchema] | None = None) -> None:
        import jsonschema  # type: ignore[import-untyped]  # the schema-registry extra

        try:
            self.json = json.loads(text)
        except (json.JSONDecodeError, TypeError) as e:
            raise invalid_schema(f"{text[:200]!r}: not JSON: {e}") from None
        if not isinstance(self.json, dict | bool):
            raise invalid_schema(f"{text[:200]!r}: a JSON Schema is an object or a boolean")
        try:
            jsonschema.validators.validator_for(self.json).check_schema(self.json)
        except jsonschema.exceptions.SchemaError as e:
            raise invalid_schema(f"{text[:200]!r}: {e.message}") from None
        self.references = references or []
        self.canonical = json.dumps(self.json, separators=(",", ":"), ensure_ascii=False)

    def normalized(self) -> str:
        return json.dumps(self.json, separators=(",", ":"), sort_keys=True, ensure_ascii=False)

    def check(self, reader: JsonSchema, writer: JsonSchema, new_is_reader: bool) -> list[dict]:
        out: list[dict] = []
        _Checker(reader.json, writer.json, out).check(reader.json, writer.json, "#")
        return out


def _diff(kind: str, path: str) -> dict:
    return {"errorType": kind, "description": f"{kind} at path '{path}'", "path": path}


class _Checker:
    def __init__(self, reader_root: Any, writer_root: Any, out: list[dict]) -> None:
        self.roots = (reader_root, writer_root)
        self.out = out
        self.seen: set[tuple[int, int]] = set()

    def _deref(self, s: Any, root: Any) -> Any:
        for _ in range(32):
            if not isinstance(s, dict) or not isinstance(s.get("$ref"), str) or \
                    not s["$ref"].startswith("#"):
                return s
            target: Any = root
            for part in s["$ref"][1:].strip("/").split("/"):
                if not part:
                    continue
                part = part.replace("~1", "/").replace("~0", "~")
                target = target.get(part, {}) if isinstance(target, dict) else {}
            s = target
        return s

    def check(self, r: Any, w: Any, path: str) -> None:
        r, w = self._deref(r, self.roots[0]), self._deref(w, self.roots[1])
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
            kind = "TYPE_NARROWED" if rt & wt or (wt & NUMERIC and rt & NUMERIC) \
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
            ri, wi = r.get("items"), w.get("items")
            if isinstance(ri, dict | bool) and ri is not True:
                self.check(ri, wi if wi is not None else {}, f"{path}/items")

    def _combined(self, r: dict, w: dict, path: str) -> bool:
        """oneOf / anyOf / allOf: each writer alternative must be read by some reader
        alternative (SUM_TYPE_NARROWED when one is not); an allOf that gains a part
        constrains more (PRODUCT_TYPE_EXTENDED)."""
        rk = next((k for k in ("oneOf", "anyOf", "allOf") if k in r), None)
        wk = next((k for k in ("oneOf", "anyOf", "allOf") if k in w), None)
        if rk is None and wk is None:
            return False
        if rk == "allOf" and wk == "allOf":
            if len(r["allOf"]) > len(w["allOf"]):
                self.out.append(_diff("PRODUCT_TYPE_EXTENDED", path))
            for i, (a, b) in enumerate(zip(r["allOf"], w["allOf"], strict=False)):
                self.check(a, b, f"{path}/allOf/{i}")
            return True
        w_alts = w[wk] if wk in ("oneOf", "anyOf") else [w]
        r_alts = r[rk] if rk in ("oneOf", "anyOf") else [r]
        if rk == "allOf" or wk == "allOf":
            if rk != wk:
                self.out.append(_diff("COMBINED_TYPE_CHANGED", path))
            return True
        for i, wa in enumerate(w_alts):
            if not any(self._reads(ra, wa) for ra in r_alts):
                self.out.append(_diff("SUM_TYPE_NARROWED" if rk is not None and wk is not None
                                      else "COMBINED_TYPE_SUBSCHEMAS_CHANGED",
                                      f"{path}/{wk or rk}/{i}"))
        return True

    def _reads(self, r: Any, w: Any) -> bool:
        sub = _Checker(*self.roots, [])
        sub.seen = set(self.seen)
        sub.check(r, w, "#")
        return not sub.out

    def _enum(self, r: dict, w: dict, path: str) -> None:
        if "enum" not in r:
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
        r_add, w_add = r.get("additionalProperties", True), w.get("additionalProperties", True)
        for name, ws in wp.items():
            if name in rp:
                self.check(rp[name], ws, f"{path}/properties/{name}")
            elif r_add is False:
                self.out.append(_diff("PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL",
                                      f"{path}/properties/{name}"))
            elif isinstance(r_add, dict) and not self._reads(r_add, ws):
                self.out.append(_diff("PROPERTY_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_"
                                      "MODEL", f"{path}/properties/{name}"))
        for name, rs in rp.items():
            if name in wp:
                continue
            if w_add is False:
                continue  # a closed writer never carries it
            if isinstance(w_add, dict):
                if not self._reads(rs, w_add):
                    self.out.append(_diff("PROPERTY_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_"
                                          "CONTENT_MODEL", f"{path}/properties/{name}"))
            elif not (rs is True or rs == {}):
                self.out.append(_diff("PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL",
                                      f"{path}/properties/{name}"))
        added = [p for p in r.get("required", []) if p not in w.get("required", [])]
        for p in added:
            # A required property with a default is compatible on Confluent
            # (REQUIRED_ATTRIBUTE_WITH_DEFAULT_ADDED): the reader fills it in.
            prop = rp.get(p)
            if not (isinstance(prop, dict) and "default" in prop):
                self.out.append(_diff("REQUIRED_ATTRIBUTE_ADDED", f"{path}/required/{p}"))
        if r_add is False and w_add is not False:
            self.out.append(_diff("ADDITIONAL_PROPERTIES_REMOVED", path))
        elif isinstance(r_add, dict) and w_add is not False:
            if w_add is True:
                if r_add != {}:
                    self.out.append(_diff("ADDITIONAL_PROPERTIES_NARROWED", path))
            elif not self._reads(r_add, w_add):
                self.out.append(_diff("ADDITIONAL_PROPERTIES_NARROWED", path))


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
