"""The control plane described: an OpenAPI 3.1 document generated from the operations
table (GET /openapi.json).

A Java, Go or Node test reaches the emulator's faults, rules, journal and barriers over
HTTP; the document lets their clients be generated or checked, and a property-based
tester (client_tests/test_control_openapi.py) checks the live plane against it: every
documented request answered as documented, no server error, no route left out. Built
from ``OPERATIONS`` (routes, fields and their kinds, bodies, queries, success status)
and the response schemas below, so a new row of the table is described with no further
step; tests/test_control_openapi_doc.py fails when a row names a schema that is not here.
"""

from __future__ import annotations

from typing import Any

from emulator.control.operations import FAULT_ROUTE, OPERATIONS, Operation
from emulator.faults.ops import API, BOOL, BROKER, BROKERS, ERROR, INT, MATCH, OPS, STR, Field

JSON = dict[str, Any]
_NAME_OR_CODE: JSON = {"oneOf": [{"type": "string", "minLength": 1}, {"type": "integer"}]}
KINDS: dict[str, JSON] = {
    BROKER: {"type": "integer"},
    BROKERS: {"type": "array", "items": {"type": "integer"}, "minItems": 2, "maxItems": 2},
    INT: {"type": "integer", "minimum": 0},
    BOOL: {"type": "boolean"},
    STR: {"type": "string", "minLength": 1},
    API: _NAME_OR_CODE,
    ERROR: _NAME_OR_CODE,
    MATCH: {"type": "string", "minLength": 1,
            "description": "a predicate of the match language (docs/faults.md)"},
    "brokers": {"type": ["array", "null"], "items": {"type": "integer"}},
    "ints": {"type": "array", "items": {"type": "integer"}},
}
_NULLABLE_STR: JSON = {"type": ["string", "null"]}
_NULLABLE_INT: JSON = {"type": ["integer", "null"]}
_RULE: JSON = {
    "type": "object",
    "required": ["id", "op", "matched", "hits", "active"],
    "properties": {
        "id": {"type": "string"}, "op": {"enum": ["inject_error", "drop_response", "observe"]},
        "api": _NULLABLE_INT, "api_name": _NULLABLE_STR, "error": {"type": "integer"},
        "error_name": {"type": "string"}, "group": _NULLABLE_STR,
        "transactional_id": _NULLABLE_STR, "topic": _NULLABLE_STR,
        "partition": _NULLABLE_INT, "client_id": _NULLABLE_STR, "broker": _NULLABLE_INT,
        "match": _NULLABLE_STR, "after": {"type": "integer"}, "count": _NULLABLE_INT,
        "remaining": _NULLABLE_INT, "matched": {"type": "integer"},
        "hits": {"type": "integer"}, "active": {"type": "boolean"}}}
_GROUP: JSON = {
    "type": "object", "required": ["group", "type", "state", "members"],
    "properties": {
        "group": {"type": "string"}, "type": {"type": "string"}, "state": {"type": "string"},
        "generation": _NULLABLE_INT, "coordinator": _NULLABLE_INT,
        "members": {"type": "array", "items": {"type": "object", "properties": {
            "member_id": {"type": "string"}, "client_id": _NULLABLE_STR,
            "group_instance_id": _NULLABLE_STR}}}}}
_JOURNAL_STATUS: JSON = {
    "type": "object", "required": ["enabled", "capacity", "size", "dropped", "next_seq"],
    "properties": {"enabled": {"type": "boolean"}, "capacity": {"type": "integer"},
                   "size": {"type": "integer"}, "dropped": {"type": "integer"},
                   "next_seq": {"type": "integer"}}}
_ENTRY: JSON = {
    "type": "object",
    "required": ["seq", "time_ms", "broker", "api", "api_key", "version", "errors", "outcome"],
    "properties": {
        "seq": {"type": "integer"}, "time_ms": {"type": "integer"},
        "broker": {"type": "integer"}, "client_id": _NULLABLE_STR, "api": {"type": "string"},
        "api_key": {"type": "integer"}, "version": {"type": "integer"},
        "correlation_id": {"type": "integer"},
        "topics": {"type": "array", "items": {"type": "string"}},
        "partitions": {"type": "array", "items": {"type": "object", "properties": {
            "topic": {"type": "string"}, "partition": {"type": "integer"}}}},
        "groups": {"type": "array", "items": {"type": "string"}},
        "transactional_ids": {"type": "array", "items": {"type": "string"}},
        "errors": {"type": "array", "items": {"type": "string"}},
        "injected": _NULLABLE_STR, "held_ms": {"type": "integer"},
        "outcome": {"enum": ["answered", "no_response", "dropped", "closed"]}}}
_BARRIER: JSON = {
    "type": "object", "required": ["id", "held", "caught", "released", "active", "holding"],
    "properties": {
        "id": {"type": "string"}, "api": _NULLABLE_INT, "api_name": _NULLABLE_STR,
        "broker": _NULLABLE_INT, "client_id": _NULLABLE_STR, "group": _NULLABLE_STR,
        "transactional_id": _NULLABLE_STR, "topic": _NULLABLE_STR, "match": _NULLABLE_STR,
        "count": _NULLABLE_INT, "held": {"type": "integer"}, "caught": {"type": "integer"},
        "released": {"type": "integer"}, "active": {"type": "boolean"},
        "holding": {"type": "array", "items": {"type": "object", "properties": {
            "api": {"type": "string"}, "broker": {"type": "integer"},
            "client_id": _NULLABLE_STR, "held_ms": {"type": "integer"}}}}}}


def _ref(name: str) -> JSON:
    return {"$ref": f"#/components/schemas/{name}"}


def _wait(key: str, schema: str) -> JSON:
    return {"type": "object", "required": ["reached", key], "properties": {
        "reached": {"type": "boolean"}, key: _ref(schema)}}


# Each operation's answer, by the name its row gives (``Operation.response``).
RESPONSES: dict[str, JSON] = {
    "object": {"type": "object"},
    "rule": _RULE,
    "rules": {"type": "object", "required": ["rules"],
              "properties": {"rules": {"type": "array", "items": _ref("rule")}}},
    "removed_rule": {"type": "object", "required": ["removed"],
                     "properties": {"removed": _ref("rule")}},
    "rule_wait": _wait("rule", "rule"),
    "group": _GROUP,
    "group_wait": {"type": "object", "required": ["reached", "group"], "properties": {
        "reached": {"type": "boolean"}, "group": {"oneOf": [_ref("group"), {"type": "null"}]}}},
    "journal_status": _JOURNAL_STATUS,
    "journal": {"allOf": [_ref("journal_status"), {
        "type": "object", "required": ["entries"],
        "properties": {"entries": {"type": "array", "items": _ref("entry")}}}]},
    "entry": _ENTRY,
    "barrier": _BARRIER,
    "barriers": {"type": "object", "required": ["barriers"],
                 "properties": {"barriers": {"type": "array", "items": _ref("barrier")}}},
    "removed_barrier": {"type": "object", "required": ["removed"],
                        "properties": {"removed": _ref("barrier")}},
    "barrier_wait": _wait("barrier", "barrier"),
    "openapi": {"type": "object", "required": ["openapi", "paths"]},
    "error": {"type": "object", "required": ["error"], "properties": {
        "error": {"type": "string"}, "problems": {"type": "array", "items": {"type": "string"}}}},
}
# Answers that are not JSON.
CONTENT_TYPES = {"metrics": "text/plain", "ui": "text/html", "events": "text/event-stream"}
# What any request may be refused with, besides its operation's own answers.
ERRORS = {"400": "a malformed or invalid request", "401": "the bearer token is missing or "
          "wrong", "403": "a foreign Origin or Host", "404": "an unknown broker, topic, "
          "rule, group, barrier or fault", "405": "the path has no such method",
          "409": "the request conflicts with the cluster's state",
          "413": "the body is too large", "415": "a write that is not application/json"}


def _schema(f: Field) -> JSON:
    out = dict(KINDS[f.kind])
    if f.help:
        out["description"] = f.help
    return out


def _object(fields: dict[str, Field], names: tuple[str, ...] | None = None,
            op: str | None = None) -> JSON:
    names = tuple(fields) if names is None else names
    props = {n: _schema(fields[n]) for n in names}
    required = [n for n in names if fields[n].required]
    if op is not None:
        props = {"op": {"const": op}, **props}
        required = ["op", *required]
    out: JSON = {"type": "object", "properties": props, "additionalProperties": False}
    if required:
        out["required"] = required
    return out


def _path_params(op: Operation) -> list[JSON]:
    out = []
    for placeholder in ("id", "name", "rule", "group", "barrier"):
        if "{" + placeholder + "}" in op.path:
            f = op.fields.get("broker" if placeholder == "id" else placeholder)
            schema: JSON = {"type": "integer"} if placeholder == "id" else {"type": "string"}
            out.append({"name": placeholder, "in": "path", "required": True,
                        "schema": schema, "description": f.help if f else ""})
    return out


def _request_body(op: Operation) -> JSON | None:
    if op.method == "GET":
        return None
    if (op.method, op.path) == FAULT_ROUTE:
        one: JSON = {"oneOf": [_object(OPS[name].fields, op=name) for name in OPS]}
        schema: JSON = {"oneOf": [one, {"type": "array", "items": one}]}
        return {"required": True, "content": {"application/json": {"schema": schema}}}
    if op.name == "run_schedule":
        schema = {"type": "object", "description": "a fault schedule (docs/faults.md): "
                  '{"seed": N, "faults": [...]}, or JSON lines'}
        return {"required": True, "content": {"application/json": {"schema": schema}}}
    schema = _object(op.fields, op.body)
    return {"required": bool(schema.get("required")),
            "content": {"application/json": {"schema": schema}}}


def _operation(op: Operation) -> JSON:
    out: JSON = {"operationId": op.name, "summary": op.summary}
    if op.cli:
        out["description"] = f"Command line: kafka-emulator fault {op.cli}"
    params = _path_params(op) + [
        {"name": n, "in": "query", "required": False, "schema": _schema(op.fields[n])}
        for n in op.query]
    if op.name == "events":
        params.append({"name": "interval_ms", "in": "query", "required": False,
                       "schema": {"type": "integer", "minimum": 0}})
    if params:
        out["parameters"] = params
    body = _request_body(op)
    if body is not None:
        out["requestBody"] = body
    ctype = CONTENT_TYPES.get(op.name, "application/json")
    schema = {"type": "string"} if ctype != "application/json" else _ref(op.response)
    responses: JSON = {str(op.status): {"description": op.summary,
                                        "content": {ctype: {"schema": schema}}}}
    if (op.method, op.path) == FAULT_ROUTE or op.name == "run_schedule":
        responses["200" if op.status != 200 else "202"] = responses[str(op.status)]
    for status, why in ERRORS.items():
        responses[status] = {"description": why,
                             "content": {"application/json": {"schema": _ref("error")}}}
    out["responses"] = responses
    return out


def document(version: str = "") -> JSON:
    """The OpenAPI 3.1 document of every route of the table."""
    paths: JSON = {}
    seen: set[tuple[str, str]] = set()
    for op in OPERATIONS:
        if (op.method, op.path) in seen:  # POST /faults: one route for every fault
            continue
        seen.add((op.method, op.path))
        item = _operation(op)
        if (op.method, op.path) == FAULT_ROUTE:
            item["operationId"], item["summary"] = "faults_apply", (
                "apply one fault operation, or a list (all validated first)")
        paths.setdefault(op.path, {})[op.method.lower()] = item
    return {
        "openapi": "3.1.0",
        "info": {"title": "kafka-emulator control plane", "version": version or "0",
                 "description": "Faults, request rules, the request journal and barriers "
                 "of a running kafka-emulator (docs/faults.md, docs/journal.md)."},
        "paths": paths,
        "components": {
            "schemas": RESPONSES,
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}}},
        "security": [{}, {"bearer": []}],
    }


__all__ = ["RESPONSES", "document"]
