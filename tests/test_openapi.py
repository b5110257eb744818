"""The OpenAPI document (emulator.control.openapi) made from the operations table: every
row described, every schema it names defined and valid JSON Schema, and the fields a
request may carry checked as the table says (emulator.control.operations.read_fields)."""

from __future__ import annotations

import json

import pytest
from jsonschema import Draft202012Validator

from emulator.control.openapi import RESPONSES, document
from emulator.control.operations import BY_NAME, OPERATIONS, ControlError, read_fields


def test_every_row_names_a_defined_valid_schema() -> None:
    for op in OPERATIONS:
        assert op.response in RESPONSES, op.name
    for schema in RESPONSES.values():
        Draft202012Validator.check_schema(schema)
    doc = document("1.2.3")
    text = json.dumps(doc)
    for ref in {part.split('"')[0] for part in text.split('"$ref": "#/components/schemas/')[1:]}:
        assert ref in doc["components"]["schemas"], ref
    assert doc["info"]["version"] == "1.2.3"


def test_a_wait_is_described_with_its_body_and_answer() -> None:
    op = document()["paths"]["/rules/{rule}/wait"]["post"]
    assert op["operationId"] == "wait_rule"
    assert op["parameters"][0] == {"name": "rule", "in": "path", "required": True,
                                   "schema": {"type": "string"},
                                   "description": BY_NAME["wait_rule"].fields["rule"].help}
    body = op["requestBody"]["content"]["application/json"]["schema"]
    assert set(body["properties"]) == {"hits", "timeout_ms"} and not op["requestBody"]["required"]
    ok = op["responses"]["200"]["content"]["application/json"]["schema"]
    assert ok == {"$ref": "#/components/schemas/rule_wait"}
    faults = document()["paths"]["/faults"]["post"]["requestBody"]["content"]
    one = faults["application/json"]["schema"]["oneOf"][0]["oneOf"]
    assert {o["properties"]["op"]["const"] for o in one} >= {"inject_error", "observe"}
    journal = document()["paths"]["/journal"]["get"]["parameters"]
    assert {p["name"] for p in journal} >= {"group", "match", "since", "error"}


def test_request_fields_are_checked_by_the_tables_kinds() -> None:
    journal = BY_NAME["journal"]
    out = read_fields(journal, {}, None, {"api": ["OffsetCommit"], "since": ["4"]}, [1, 2])
    assert out == {"api": 8, "since": 4}
    for query, message in [({"since": ["-1"]}, "non-negative"), ({"nope": ["1"]}, "nope"),
                           ({"match": ["a =="]}, "match"), ({"broker": ["7"]}, "unknown")]:
        with pytest.raises(ControlError) as e:
            read_fields(journal, {}, None, query, [1, 2])
        assert message in e.value.message
    wait = BY_NAME["wait_rule"]
    assert read_fields(wait, {"rule": "r1"}, {"hits": 2}, {}, [1]) == {"rule": "r1", "hits": 2}
    with pytest.raises(ControlError) as e:
        read_fields(wait, {"rule": "r1"}, {"hits": "2"}, {}, [1])
    assert e.value.status == 400 and e.value.message.startswith("wait_rule: hits")
    with pytest.raises(ControlError):
        read_fields(wait, {"rule": "r1"}, [1], {}, [1])
