"""The same REST scenarios against two schema registries, every difference listed.

    python -m conformance.schema_registry_diff URL_A URL_B     # two running registries
    python -m conformance.schema_registry_diff --emulator URL_B  # ours started here

Each scenario is a list of calls in the form the Java client sends them (its content
type and paths); both registries get the same calls on fresh subject names, and the
answers are compared by status, ``error_code`` and body (ids and messages are compared
loosely: ids by their pattern of equality, messages not at all, since their wording is
each implementation's own). Used with an open Confluent-compatible registry as the
outside oracle (docs/schema-registry.md records the run).
"""

from __future__ import annotations

import argparse
import json
import sys
import urllib.error
import urllib.request
import uuid
from typing import Any

CTYPE = "application/vnd.schemaregistry.v1+json"


def avro(*fields: tuple[str, Any], name: str = "R", **extra: Any) -> str:
    return json.dumps({"type": "record", "name": name,
                       "fields": [{"name": n, "type": t, **({"default": d} if d is not ...
                                                             else {})}
                                  for n, t, d in (f if len(f) == 3 else (*f, ...)
                                                  for f in fields)], **extra})


PROTO_V1 = 'syntax = "proto3";\npackage p;\n\nmessage M {\n  string a = 1;\n  int32 b = 2;\n}\n'
PROTO_V2_BAD = PROTO_V1.replace("int32 b = 2", "string b = 2")
JSON_V1 = json.dumps({"type": "object", "properties": {"a": {"type": "string"}}})
JSON_V2_BAD = json.dumps({"type": "object", "properties": {"a": {"type": "string"},
                                                           "b": {"type": "integer"}}})

# (method, path with {s} for the scenario's subject, body or None)
SCENARIOS: dict[str, list[tuple[str, str, Any]]] = {
    "register, same schema, lookup": [
        ("POST", "/subjects/{s}/versions", {"schema": avro(("a", "int"))}),
        ("POST", "/subjects/{s}/versions", {"schema": avro(("a", "int"))}),
        ("POST", "/subjects/{s}-other/versions", {"schema": avro(("a", "int"))}),
        ("GET", "/subjects/{s}/versions", None),
        ("GET", "/subjects/{s}/versions/latest", None),
        ("GET", "/subjects/{s}/versions/1/schema", None),
        ("POST", "/subjects/{s}", {"schema": avro(("a", "int"))}),
        ("POST", "/subjects/{s}", {"schema": avro(("z", "int"))}),
        ("POST", "/subjects/{s}-none", {"schema": avro(("a", "int"))}),
        ("GET", "/subjects/{s}/versions/2", None),
        ("GET", "/subjects/{s}/versions/0", None),
        ("GET", "/subjects/{s}/versions/abc", None),
        ("GET", "/subjects/{s}-none/versions", None),
        ("GET", "/schemas/ids/999999", None),
    ],
    "avro evolution under BACKWARD": [
        ("POST", "/subjects/{s}/versions", {"schema": avro(("a", "int"))}),
        ("POST", "/compatibility/subjects/{s}/versions/latest",
         {"schema": avro(("a", "int"), ("b", "int"))}),
        ("POST", "/subjects/{s}/versions", {"schema": avro(("a", "int"), ("b", "int"))}),
        ("POST", "/subjects/{s}/versions", {"schema": avro(("a", "int"), ("b", "int", 0))}),
        ("POST", "/subjects/{s}/versions", {"schema": avro(("a", "long"), ("b", "int", 0))}),
        ("POST", "/subjects/{s}/versions", {"schema": avro(("a", "string"), ("b", "int", 0))}),
        ("GET", "/subjects/{s}/versions", None),
    ],
    "levels": [
        ("PUT", "/config/{s}", {"compatibility": "FULL_TRANSITIVE"}),
        ("GET", "/config/{s}", None),
        ("PUT", "/config/{s}", {"compatibility": "SIDEWAYS"}),
        ("POST", "/subjects/{s}/versions", {"schema": avro(("a", "int"))}),
        ("POST", "/subjects/{s}/versions", {"schema": avro(("a", "int"), ("b", "int", 0))}),
        ("POST", "/subjects/{s}/versions", {"schema": avro(("a", "int"), ("b", "int"))}),
        ("DELETE", "/config/{s}", None),
        ("GET", "/config/{s}", None),
    ],
    "deletes": [
        ("POST", "/subjects/{s}/versions", {"schema": avro(("a", "int"))}),
        ("POST", "/subjects/{s}/versions", {"schema": avro(("a", "int"), ("b", "int", 0))}),
        ("DELETE", "/subjects/{s}/versions/1?permanent=true", None),
        ("DELETE", "/subjects/{s}/versions/1", None),
        ("DELETE", "/subjects/{s}/versions/1", None),
        ("GET", "/subjects/{s}/versions", None),
        ("GET", "/subjects/{s}/versions?deleted=true", None),
        ("DELETE", "/subjects/{s}?permanent=true", None),
        ("DELETE", "/subjects/{s}", None),
        ("DELETE", "/subjects/{s}", None),
        ("GET", "/subjects/{s}/versions", None),
        ("DELETE", "/subjects/{s}?permanent=true", None),
        ("GET", "/subjects/{s}/versions?deleted=true", None),
    ],
    "protobuf": [
        ("POST", "/subjects/{s}/versions", {"schemaType": "PROTOBUF", "schema": PROTO_V1}),
        ("GET", "/subjects/{s}/versions/1", None),
        ("POST", "/subjects/{s}/versions", {"schemaType": "PROTOBUF", "schema": PROTO_V2_BAD}),
        ("POST", "/subjects/{s}/versions",
         {"schemaType": "PROTOBUF", "schema": "syntax = \"proto3\"; message { }"}),
    ],
    "json schema": [
        ("POST", "/subjects/{s}/versions", {"schemaType": "JSON", "schema": JSON_V1}),
        ("POST", "/subjects/{s}/versions", {"schemaType": "JSON", "schema": JSON_V2_BAD}),
        ("POST", "/subjects/{s}/versions", {"schemaType": "JSON", "schema": "{\"type\": 7}"}),
    ],
    "references": [
        ("POST", "/subjects/{s}-addr/versions",
         {"schema": avro(("city", "string"), name="Addr")}),
        ("POST", "/subjects/{s}/versions", {"schema": avro(("home", "Addr"), name="P"),
                                            "references": [{"name": "Addr",
                                                            "subject": "{s}-addr",
                                                            "version": 1}]}),
        ("GET", "/subjects/{s}/versions/1", None),
        ("GET", "/subjects/{s}-addr/versions/1/referencedby", None),
        ("DELETE", "/subjects/{s}-addr/versions/1", None),
    ],
    "bad input": [
        ("POST", "/subjects/{s}/versions", "{not json"),
        ("POST", "/subjects/{s}/versions", {"schema": "{\"type\": \"nope\"}"}),
        ("POST", "/subjects/{s}/versions", {"schemaType": "XML", "schema": "<a/>"}),
        ("GET", "/schemas/types", None),
    ],
}


def call(url: str, method: str, path: str, body: Any) -> tuple[int, Any]:
    data = None
    if body is not None:
        data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
    req = urllib.request.Request(url + path, data=data, method=method,
                                 headers={"Content-Type": CTYPE, "Accept": CTYPE})
    try:
        with urllib.request.urlopen(req, timeout=20) as r:
            status, text = r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        status, text = e.code, e.read().decode()
    try:
        return status, json.loads(text)
    except json.JSONDecodeError:
        return status, text


def _fill(obj: Any, s: str) -> Any:
    if isinstance(obj, str):
        return obj.replace("{s}", s)
    if isinstance(obj, list):
        return [_fill(x, s) for x in obj]
    if isinstance(obj, dict):
        return {k: _fill(v, s) for k, v in obj.items()}
    return obj


def _shape(status: int, body: Any, ids: dict[int, int]) -> Any:
    """What is compared: the status, the error code, and the body with ids renumbered
    in order of appearance and messages dropped."""
    def norm(x: Any, key: str = "") -> Any:
        if isinstance(x, dict):
            return {k: norm(v, k) for k, v in x.items() if k not in ("message", "messages",
                                                                      "guid", "ts")}
        if isinstance(x, list):
            return [norm(v, key) for v in x]
        if key == "id" and isinstance(x, int):
            return f"id#{ids.setdefault(x, len(ids) + 1)}"
        if key == "schema" and isinstance(x, str):
            try:
                return json.loads(x)
            except json.JSONDecodeError:
                return x
        return x
    return status, norm(body)


def run(url_a: str, url_b: str) -> list[str]:
    diffs = []
    for name, steps in SCENARIOS.items():
        s = f"diff-{uuid.uuid4().hex[:8]}"
        ids_a: dict[int, int] = {}
        ids_b: dict[int, int] = {}
        for method, path, body in steps:
            p, b = _fill(path, s), _fill(body, s)
            ra, rb = call(url_a, method, p, b), call(url_b, method, p, b)
            if p.endswith("/referencedby"):  # a list of ids: compare their pattern
                ra = (ra[0], [{"id": i} for i in ra[1]] if isinstance(ra[1], list) else ra[1])
                rb = (rb[0], [{"id": i} for i in rb[1]] if isinstance(rb[1], list) else rb[1])
            sa, sb = _shape(*ra, ids_a), _shape(*rb, ids_b)
            if sa != sb:
                diffs.append(f"[{name}] {method} {path.replace('{s}', 'S')}:\n"
                             f"    A {ra[0]} {json.dumps(ra[1])[:300]}\n"
                             f"    B {rb[0]} {json.dumps(rb[1])[:300]}")
    return diffs


def rule_cases() -> list[tuple[str, str, str, str]]:
    """(format, rule, old, new) of every compatibility rule tests/ checks us on."""
    from tests.test_schema_registry_compat import (
        AVRO_CASES,
        JSON_CASES,
        PROTO_CASES,
        _text,
        proto,
    )

    return ([("AVRO", r, _text(o), _text(n)) for r, o, n, _ in AVRO_CASES]
            + [("JSON", r, _text(o), _text(n)) for r, o, n, _ in JSON_CASES]
            + [("PROTOBUF", r, proto(o), proto(n)) for r, o, n, _ in PROTO_CASES])


def rules(url_a: str, url_b: str) -> tuple[int, list[str]]:
    """Each rule's verdict (is_compatible) under BACKWARD, FORWARD and FULL on both."""
    diffs, n = [], 0
    for fmt, rule, old, new in rule_cases():
        for level in ("BACKWARD", "FORWARD", "FULL"):
            s = f"rule-{uuid.uuid4().hex[:8]}"
            verdicts = []
            for url in (url_a, url_b):
                call(url, "PUT", f"/config/{s}", {"compatibility": "NONE"})
                reg = call(url, "POST", f"/subjects/{s}/versions",
                           {"schemaType": fmt, "schema": old})
                call(url, "PUT", f"/config/{s}", {"compatibility": level})
                status, out = call(url, "POST", f"/compatibility/subjects/{s}/versions/latest",
                                   {"schemaType": fmt, "schema": new})
                verdicts.append((reg[0], status, out.get("is_compatible")
                                 if isinstance(out, dict) else out))
            n += 1
            if verdicts[0] != verdicts[1]:
                diffs.append(f"[{fmt} {level}] {rule}: A {verdicts[0]}  B {verdicts[1]}")
    return n, diffs


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("url_a", nargs="?")
    p.add_argument("url_b")
    p.add_argument("--emulator", action="store_true",
                   help="A is a schema registry of an emulator started here")
    args = p.parse_args(argv)
    def both(url_a: str, url_b: str) -> None:
        diffs = run(url_a, url_b)
        steps = sum(len(s) for s in SCENARIOS.values())
        print("\n".join(diffs))
        print(f"{steps} calls in {len(SCENARIOS)} scenarios: {len(diffs)} differing")
        n, rule_diffs = rules(url_a, url_b)
        print("\n".join(rule_diffs))
        print(f"{n} compatibility verdicts (rule x level): {len(rule_diffs)} differing")

    if args.emulator:
        from emulator import Cluster

        with Cluster(brokers=1, port=0, schema_registry_port=0) as c:
            both(c.schema_registry_url, args.url_b)
    else:
        both(args.url_a, args.url_b)
    return 0


if __name__ == "__main__":
    sys.exit(main())
