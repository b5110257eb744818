"""The operations table (emulator.control.operations): every route of the control plane
once, every fault operation in it with an effect, and the requests a client builds from
it (the command line and the testcontainers module send these)."""

from __future__ import annotations

import pytest

from emulator.control.operations import (
    BY_NAME,
    OPERATIONS,
    ControlError,
    http_request,
    match,
    routes,
)
from emulator.faults import EFFECTS, OPS
from emulator.tools.fault import build_parser


def test_the_routes_are_the_control_planes() -> None:
    assert routes() == [
        "GET /", "GET /cluster", "GET /topics/{name}", "GET /metrics",
        "POST /brokers/{id}/stop", "POST /brokers/{id}/start",
        "POST /brokers/{id}/controlled-shutdown", "GET /faults", "POST /faults",
        "DELETE /faults", "POST /faults/schedule", "GET /faults/schedule",
        "POST /reassignments", "DELETE /reassignments", "POST /elections/preferred",
        "GET /adversary", "POST /adversary", "GET /rules", "GET /rules/{rule}",
        "DELETE /rules/{rule}", "POST /rules/{rule}/wait", "GET /groups/{group}",
        "POST /groups/{group}/wait", "GET /journal", "POST /journal", "DELETE /journal",
        "GET /barriers", "POST /barriers", "GET /barriers/{barrier}",
        "POST /barriers/{barrier}/wait", "POST /barriers/{barrier}/release",
        "DELETE /barriers/{barrier}", "GET /openapi.json", "GET /ui", "GET /ui/snapshot",
        "GET /events"]


def test_every_fault_operation_is_in_the_table_with_one_effect() -> None:
    assert set(EFFECTS) == set(OPS)
    assert {op.name for op in OPERATIONS if op.fault} == set(OPS)
    assert len(OPERATIONS) == len(BY_NAME)  # one definition each


def test_match_names_the_operation_and_refuses_clearly() -> None:
    assert match("POST", "/brokers/2/stop")[0].name == "stop_broker"
    assert match("POST", "/brokers/2/stop")[1] == {"id": "2"}
    assert match("DELETE", "/faults")[0].name == "clear"
    assert match("GET", "/faults")[0].name == "faults"
    assert match("GET", "/topics/orders")[1] == {"name": "orders"}
    with pytest.raises(ControlError) as e:
        match("PUT", "/faults")
    assert e.value.status == 405 and e.value.message.endswith("use GET, POST or DELETE")
    with pytest.raises(ControlError) as e:
        match("GET", "/nowhere")
    assert e.value.status == 404 and "/cluster" in e.value.message


def test_client_requests_follow_each_operations_route() -> None:
    assert http_request("stop_broker", {"broker": 2, "controlled": True,
                                        "fence_after_ms": None}) == (
        "POST", "/brokers/2/stop", {"controlled": True})
    assert http_request("start_broker", {"broker": 3}) == ("POST", "/brokers/3/start", None)
    assert http_request("inject_error", {"api": "Produce", "error": 6, "topic": None}) == (
        "POST", "/faults", {"op": "inject_error", "api": "Produce", "error": 6})
    assert http_request("clear", {}) == ("DELETE", "/faults", None)
    assert http_request("cluster", {}) == ("GET", "/cluster", None)
    assert http_request("journal", {"group": "g 1", "since": 3, "api": None}) == (
        "GET", "/journal?group=g+1&since=3", None)
    assert http_request("wait_rule", {"rule": "a/b", "hits": 2}) == (
        "POST", "/rules/a%2Fb/wait", {"hits": 2})
    assert match("POST", "/rules/a%2Fb/wait") == (BY_NAME["wait_rule"], {"rule": "a/b"})
    assert http_request("journal_on", {"clear": True}) == ("POST", "/journal", {"clear": True})


def test_the_command_line_has_a_command_per_operation_with_one() -> None:
    p = build_parser()
    sub = next(a for a in p._actions if a.dest == "command")
    assert set(sub.choices) == {op.cli for op in OPERATIONS if op.cli}
    args = p.parse_args(["--control", "x", "slow-follower", "3", "--delay-ms", "200"])
    assert (args.operation.name, args.broker, args.delay_ms) == ("slow_follower", 3, 200)
    args = p.parse_args(["--control", "x", "cut-brokers", "1", "2"])
    assert args.brokers == [1, 2]
