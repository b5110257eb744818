"""The control plane against its own OpenAPI document (GET /openapi.json), checked live
with schemathesis: every documented request is answered as documented (status, content
type, schema), never with a server error, and no route is left out of the document.

Valid and invalid requests (an invalid one must be refused with a 4xx). Bounded (about
10 s): a dozen examples per operation, the waits' timeouts narrowed to 50 ms in the copy
of the document the tester reads, and GET /events (a stream that never ends) only
checked to be described."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis.checks import not_a_server_error
from schemathesis.generation import GenerationMode
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    negative_data_rejection,
    response_schema_conformance,
    status_code_conformance,
)

from emulator import Cluster
from emulator.control.operations import OPERATIONS, routes

# Not run with --target kafka: the emulator's control plane.
pytestmark = pytest.mark.emulator_only
WAITS = {"/rules/{rule}/wait", "/groups/{group}/wait", "/barriers/{barrier}/wait"}
CHECKS = (not_a_server_error, status_code_conformance, content_type_conformance,
          response_schema_conformance)


@pytest.fixture(scope="module")
def plane() -> Iterator[tuple[Cluster, str]]:
    with Cluster(brokers=3, port=0, control_port=0) as c:
        c.create_topic("orders", 1, 3)
        yield c, f"http://127.0.0.1:{c.control.port}"


def fetch(base: str) -> dict[str, Any]:
    with urllib.request.urlopen(base + "/openapi.json", timeout=30) as r:
        assert r.headers["Content-Type"] == "application/json"
        doc: dict[str, Any] = json.loads(r.read())
        return doc


def narrowed(doc: dict[str, Any]) -> dict[str, Any]:
    """The document with the waits' timeouts given and at most 50 ms (``WAITS``), /events
    left out."""
    doc = json.loads(json.dumps(doc))
    doc["paths"].pop("/events")
    for item in doc["paths"].values():
        for op in item.values():
            body = op.get("requestBody", {}).get("content", {}).get("application/json", {})
            props = body.get("schema", {}).get("properties", {})
            if "timeout_ms" in props:  # a wait's default is 10 s: always short here
                props["timeout_ms"]["maximum"] = 50
                body["schema"]["required"] = [*body["schema"].get("required", []), "timeout_ms"]
                op["requestBody"]["required"] = True
    return doc


def test_every_route_of_the_table_is_described(plane: tuple[Cluster, str]) -> None:
    doc = fetch(plane[1])
    assert doc["openapi"].startswith("3.1")
    described = {f"{m.upper()} {p}" for p, item in doc["paths"].items() for m in item}
    assert described == set(routes())
    ids = [op["operationId"] for item in doc["paths"].values() for op in item.values()]
    assert len(ids) == len(set(ids))
    assert {op.name for op in OPERATIONS if not op.fault} <= set(ids)


def test_an_undescribed_route_is_refused(plane: tuple[Cluster, str]) -> None:
    req = urllib.request.Request(plane[1] + "/no/such/route")
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(req, timeout=30)
    assert e.value.code == 404 and "routes are" in json.loads(e.value.read())["error"]


def test_the_live_plane_answers_as_documented(plane: tuple[Cluster, str]) -> None:
    base = plane[1]
    loaded = schemathesis.openapi.from_dict(narrowed(fetch(base)))
    tried = []
    for result in loaded.get_all_operations():
        operation = result.ok()
        tried.append(operation.label)

        modes = [GenerationMode.POSITIVE]
        if operation.path not in WAITS:  # a wait without its narrowed timeout takes 10 s
            modes.append(GenerationMode.NEGATIVE)

        @given(case=st.one_of([operation.as_strategy(mode) for mode in modes]))
        @settings(max_examples=12, deadline=None, database=None, derandomize=True,
                  suppress_health_check=list(HealthCheck))
        def answers_as_documented(case: Any) -> None:
            checks = CHECKS
            if case.meta is not None and case.meta.generation.mode == GenerationMode.NEGATIVE:
                checks = (*CHECKS, negative_data_rejection)  # refused with a 4xx
            case.call_and_validate(base_url=base, checks=checks, timeout=10)

        answers_as_documented()
    assert len(tried) == len(routes()) - 1  # all but /events
