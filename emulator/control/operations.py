"""The control surface: every operation a running cluster offers people and tests, in one
table.

An ``Operation`` says its name, what it does (``summary``), its fields (kind, required,
meaning: validated by the field's kind), its HTTP route and, if it has one, its
``kafka-emulator fault`` command. Every way in reads the table:

- the HTTP control plane (emulator.server.control) matches a request to its operation
  (``match``) and lists the routes (``routes``);
- the command line (emulator.tools.fault) makes one subcommand per operation with a
  ``cli`` name, its arguments and help from the fields, and sends the request
  ``http_request`` builds;
- the testcontainers module (emulator.containers) sends the same requests;
- the pytest handle and ``Cluster`` (emulator.runtime, through emulator.control.handle)
  and the fault schedule apply the fault operations directly.

The fault operations are the fault vocabulary (emulator.faults.OPS: their fields and
validation) and what each does to the cluster is ``emulator.faults.EFFECTS``; the other
writes (reassignments, preferred elections) are below, as functions of the domain
state. The views (emulator.control.metrics, emulator.control.console) sit beside this
module. Sans I/O: whoever owns the network runs what this module describes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import quote, unquote, urlencode

from emulator.cluster.election import PREFERRED, elect_leaders
from emulator.cluster.reassignment import alter_partition_reassignments
from emulator.faults import BROKER_OPS, OPS, FaultInjector, Field
from emulator.faults.ops import API, BOOL, BROKER, INT, MATCH, STR, FaultError, validate_op

if TYPE_CHECKING:
    from emulator.cluster.state import ClusterState


class ControlError(Exception):
    """A request the control surface refuses: an HTTP status and one clear message."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class ControlTarget(Protocol):
    """What the control surface drives: a running cluster (emulator.runtime.Cluster).

    A protocol, so the server's control plane and schedule runner name no runtime
    module: the runtime starts them and hands itself in."""

    state: ClusterState
    server: Any  # the EmulatorServer (its services, for the console), None when stopped
    adversary: Any  # --fidelity adversarial's Adversary (emulator.faults.adversary), or None

    @property
    def faults(self) -> FaultInjector:
        """The fault injector, made at its first use (emulator.runtime.control)."""
        ...

    async def fault_async(self, op: dict) -> dict: ...

    async def operation_async(self, name: str, fields: dict[str, Any]) -> dict: ...

    def security_view(self) -> dict: ...


@dataclass(frozen=True)
class Operation:
    name: str
    summary: str
    method: str
    path: str  # "{id}" is the broker field, "{name}" the topic's
    fields: dict[str, Field] = dataclass_field(default_factory=dict)
    fault: bool = False  # in the fault vocabulary: Cluster.fault, POST /faults, schedules
    cli: str | None = None  # its ``kafka-emulator fault`` command
    body: tuple[str, ...] = ()  # the fields sent as the JSON body (fault ops: the op)
    query: tuple[str, ...] = ()  # the fields sent as query parameters (GET /journal)
    response: str = "object"  # its answer's schema (emulator.control.openapi.RESPONSES)
    status: int = 200  # its success status


def _fault(name: str, method: str = "POST", path: str = "/faults",
           body: tuple[str, ...] = ()) -> Operation:
    spec = OPS[name]
    return Operation(name, spec.summary, method, path, spec.fields, fault=True,
                     cli=name.replace("_", "-"), body=body)


_TOPIC = Field(STR, True, "the topic")
_PARTITION = Field(INT, True, "the partition")
_RULE = Field(STR, True, "the rule's id (r1, r2, ... unless named)")
_GROUP = Field(STR, True, "the group id")
_BARRIER = Field(STR, True, "the barrier's id (b1, b2, ... unless named)")
_TIMEOUT = Field(INT, help="give up after this many ms (default 10000, at most 60000)")
# What a barrier or a journal query selects (as a fault rule does: docs/journal.md).
_SELECT = {
    "api": Field(API, help="only this API (name or key)"),
    "broker": Field(BROKER, help="only requests to this broker"),
    "client_id": Field(STR, help="only requests of this client.id"),
    "group": Field(STR, help="only requests naming this group id"),
    "transactional_id": Field(STR, help="only requests naming this transactional id"),
    "topic": Field(STR, help="only requests naming this topic"),
    "match": Field(MATCH, help="only requests this predicate holds for (docs/faults.md, "
                   "the match language)"),
}

OPERATIONS: tuple[Operation, ...] = (
    Operation("routes", "the routes", "GET", "/"),
    Operation("cluster", "print the cluster state", "GET", "/cluster", cli="cluster"),
    Operation("topic", "one topic's partitions", "GET", "/topics/{name}",
              {"name": _TOPIC}),
    Operation("metrics", "print the Prometheus metrics", "GET", "/metrics", cli="metrics"),
    _fault("stop_broker", path="/brokers/{id}/stop", body=("controlled", "fence_after_ms")),
    _fault("start_broker", path="/brokers/{id}/start"),
    _fault("controlled_shutdown", path="/brokers/{id}/controlled-shutdown"),
    Operation("faults", "print the faults in force", "GET", "/faults", cli="list"),
    *(_fault(name) for name in OPS if name not in (*BROKER_OPS, "clear")),
    _fault("clear", method="DELETE"),
    Operation("run_schedule", "run a fault schedule file (JSON lines)", "POST",
              "/faults/schedule", {"file": Field(STR, True, "the schedule, or - for "
                                                 "standard input")}, cli="schedule"),
    Operation("schedule_status", "progress of the last schedule", "GET", "/faults/schedule",
              cli="schedule-status"),
    Operation("reassign", "start a reassignment (replicas null: cancel it)", "POST",
              "/reassignments", {"topic": _TOPIC, "partition": _PARTITION,
                                 "replicas": Field("brokers", True, "the target replicas")},
              body=("topic", "partition", "replicas")),
    Operation("cancel_reassignment", "cancel a partition's reassignment", "DELETE",
              "/reassignments", {"topic": _TOPIC, "partition": _PARTITION},
              body=("topic", "partition")),
    Operation("elect_preferred", "elect the preferred leaders (of a topic's partitions, or "
              "all)", "POST", "/elections/preferred",
              {"topic": Field(STR, help="only this topic"),
               "partitions": Field("ints", help="only these partitions of topic")},
              body=("topic", "partitions")),
    Operation("adversary", "the faults --fidelity adversarial injected, in order (seed, "
              "request, what)", "GET", "/adversary", cli="adversary"),
    Operation("tune_adversary", "turn --fidelity adversarial's faults off or on, or scale "
              "their rates", "POST", "/adversary", {
                  "off": Field(BOOL, help="inject nothing until --on (a test's setup)"),
                  "on": Field(BOOL, help="inject again"),
                  "scale": Field(STR, help="multiply the rates: KIND=FACTOR,... e.g. "
                                 "all=0.5,leader_move=2 (docs/fidelity.md)")},
              cli="adversary-tune", body=("off", "on", "scale")),
    Operation("rules", "the request rules (inject_error, drop_response, observe) and their "
              "hits", "GET", "/rules", cli="rules", response="rules"),
    Operation("rule", "one request rule and its hits", "GET", "/rules/{rule}",
              {"rule": _RULE}, cli="rule", response="rule"),
    Operation("remove_rule", "remove a request rule", "DELETE", "/rules/{rule}",
              {"rule": _RULE}, cli="remove-rule", response="removed_rule"),
    Operation("wait_rule", "wait until a rule has fired --hits times", "POST",
              "/rules/{rule}/wait", {"rule": _RULE, "hits": Field(
                  INT, help="how many hits to wait for (default 1)"), "timeout_ms": _TIMEOUT},
              cli="wait-rule", body=("hits", "timeout_ms"), response="rule_wait"),
    Operation("group", "a group's state, generation and members", "GET", "/groups/{group}",
              {"group": _GROUP}, cli="group", response="group"),
    Operation("wait_group", "wait until a group is in a state (default Stable) with "
              "--members members", "POST", "/groups/{group}/wait", {
                  "group": _GROUP,
                  "state": Field(STR, help="the state (default Stable)"),
                  "members": Field(INT, help="this many members (default: any)"),
                  "timeout_ms": _TIMEOUT},
              cli="wait-group", body=("state", "members", "timeout_ms"),
              response="group_wait"),
    Operation("journal", "the request journal: what clients sent, what they were answered",
              "GET", "/journal", {
                  **_SELECT, "error": Field(STR, help="only requests answered this error "
                                            "(a Kafka name; NONE: answered without one)"),
                  "since": Field(INT, help="only entries from this seq on"),
                  "limit": Field(INT, help="at most this many entries")},
              cli="journal", query=(*_SELECT, "error", "since", "limit"),
              response="journal"),
    Operation("journal_on", "start (or resize, or clear) the request journal", "POST",
              "/journal", {
                  "capacity": Field(INT, help="keep the last N entries (default 10000)"),
                  "clear": Field(BOOL, help="drop the entries kept so far")},
              cli="journal-on", body=("capacity", "clear"), response="journal_status"),
    Operation("journal_off", "stop the request journal and drop its entries", "DELETE",
              "/journal", cli="journal-off", response="journal_status"),
    Operation("barriers", "the barriers and the requests they hold", "GET", "/barriers",
              cli="barriers", response="barriers"),
    Operation("add_barrier", "hold the requests a barrier selects until released", "POST",
              "/barriers", {
                  **_SELECT, "id": Field(STR, help="the barrier's name (default b1, ...)"),
                  "count": Field(INT, help="hold only the first N it selects (default: "
                                 "every one until removed)")},
              cli="add-barrier", body=(*_SELECT, "id", "count"), response="barrier"),
    Operation("barrier", "one barrier and the requests it holds", "GET",
              "/barriers/{barrier}", {"barrier": _BARRIER}, cli="barrier",
              response="barrier"),
    Operation("wait_barrier", "wait until a barrier holds --held requests", "POST",
              "/barriers/{barrier}/wait", {
                  "barrier": _BARRIER,
                  "held": Field(INT, help="how many held requests to wait for (default 1)"),
                  "timeout_ms": _TIMEOUT},
              cli="wait-barrier", body=("held", "timeout_ms"), response="barrier_wait"),
    Operation("release_barrier", "let a barrier's held requests go (the oldest --count, "
              "default all); it goes on holding new ones", "POST",
              "/barriers/{barrier}/release", {
                  "barrier": _BARRIER,
                  "count": Field(INT, help="how many (default: all held)")},
              cli="release-barrier", body=("count",), response="barrier"),
    Operation("remove_barrier", "release everything a barrier holds and remove it",
              "DELETE", "/barriers/{barrier}", {"barrier": _BARRIER}, cli="remove-barrier",
              response="removed_barrier"),
    Operation("openapi", "this API, described (OpenAPI 3.1)", "GET", "/openapi.json",
              response="openapi"),
    Operation("ui", "the web console (docs/console.md)", "GET", "/ui"),
    Operation("console", "what the console shows, as JSON", "GET", "/ui/snapshot"),
    Operation("events", "the console's view pushed as server-sent events", "GET", "/events"),
)
BY_NAME = {op.name: op for op in OPERATIONS}
FAULT_ROUTE = ("POST", "/faults")  # where every fault operation may go, one or a list
_PATH_FIELDS = {"id": "broker", "name": "name", "rule": "rule", "group": "group",
                "barrier": "barrier"}


def routes() -> list[str]:
    """Every route once, in the table's order (GET / answers this)."""
    return list(dict.fromkeys(f"{op.method} {op.path}" for op in OPERATIONS))


def _pattern(path: str) -> re.Pattern[str]:
    return re.compile("^" + re.sub(r"\\{(\w+)\\}", r"(?P<\1>[^/]+)", re.escape(path)) + "$")


_PATTERNS = [(op, _pattern(op.path)) for op in OPERATIONS]


def match(method: str, path: str) -> tuple[Operation, dict[str, str]]:
    """The operation a request names and its path parameters (as text); ControlError
    404 when no route has this path, 405 when the path has no such method."""
    allowed = []
    for op, pattern in _PATTERNS:
        m = pattern.match(path)
        if m is None:
            continue
        if op.method == method:
            # POST /faults: the first fault operation there; the body says which
            return op, {k: unquote(v) for k, v in m.groupdict().items()}
        allowed.append(op.method)
    if allowed:
        *rest, last = dict.fromkeys(allowed)
        raise ControlError(405, f"{method} is not allowed on {path}; use "
                           + (f"{', '.join(rest)} or {last}" if rest else last))
    known = sorted({op.path for op in OPERATIONS})
    raise ControlError(404, f"no route {method} {path}; routes are {', '.join(known)}")


def http_request(name: str, args: dict[str, Any]) -> tuple[str, str, Any]:
    """(method, path, JSON body or None) of one operation with these arguments, for a
    client of the control plane (the command line, the testcontainers module)."""
    op = BY_NAME[name]
    path = re.sub(r"\{(\w+)\}", lambda m: quote(str(args[_PATH_FIELDS[m.group(1)]]), safe=""),
                  op.path)
    given = {k: v for k, v in args.items() if v is not None}
    if op.fault and (op.method, op.path) == FAULT_ROUTE:
        return op.method, path, {"op": name, **given}
    body = {k: given[k] for k in op.body if k in given}
    if op.query:
        pairs = [(k, str(given[k]).lower() if isinstance(given[k], bool) else str(given[k]))
                 for k in op.query if k in given]
        path += ("?" + urlencode(pairs)) if pairs else ""
    return op.method, path, body if op.body else None


def read_fields(op: Operation, params: dict[str, str], data: object,
                query: dict[str, list[str]], brokers: Iterable[int]) -> dict[str, Any]:
    """The fields of a request to an operation that is not a fault (its path parameters,
    its JSON body or its query), checked by kind as fault fields are; ControlError 400
    says what is wrong."""
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ControlError(400, "a JSON object is required")
    given: dict[str, Any] = {k: v for k, v in data.items() if v is not None}
    unknown = sorted(set(given) - set(op.body))
    for k, values in query.items():
        if k not in op.query:
            unknown.append(k)
            continue
        text = values[-1]
        kind = op.fields[k].kind
        given[k] = (int(text) if kind in (INT, BROKER) and text.lstrip("-").isdigit()
                    else {"true": True, "false": False}.get(text, text) if kind == BOOL
                    else text)
    if unknown:
        allowed = ", ".join((*op.body, *op.query)) or "none"
        raise ControlError(400, f"{op.name}: unknown field(s) {', '.join(unknown)} "
                           f"(allowed: {allowed})")
    for name, text in params.items():
        given[_PATH_FIELDS.get(name, name)] = text
    return check_fields(op, given, brokers)


def check_fields(op: Operation, given: dict[str, Any], brokers: Iterable[int]) -> dict[str, Any]:
    """An operation's fields checked by kind (as a fault's are: emulator.faults.ops) and
    normalized (API names as keys); ControlError says what is wrong."""
    given = {k: v for k, v in given.items() if v is not None}
    try:
        out = validate_op({"op": "clear", **given}, brokers, fields=op.fields)
    except FaultError as e:
        raise ControlError(e.status, str(e).replace("clear: ", f"{op.name}: ", 1)) from None
    out.pop("op", None)
    return out


# ---- the writes that are not faults -------------------------------------------------------
def _int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def reassign(state: ClusterState, data: Any, cancel: bool) -> dict:
    """POST /reassignments (``{"topic", "partition", "replicas"}``, replicas null
    cancels) or DELETE (``{"topic", "partition"}``): AlterPartitionReassignments for
    one partition, answered with the partition's replica sets after it."""
    if not isinstance(data, dict):
        raise ControlError(400, "a JSON object is required")
    topic, index = data.get("topic"), data.get("partition")
    if not isinstance(topic, str) or not isinstance(index, int) or isinstance(index, bool):
        raise ControlError(400, "topic (a string) and partition (an integer) are required")
    target: list[int] | None = None if cancel else data.get("replicas")
    if target is not None and (not isinstance(target, list) or not all(map(_int, target))):
        raise ControlError(400, "replicas must be a list of broker ids (null cancels)")
    result = alter_partition_reassignments(state, [(topic, [(index, target)])])
    r = result[0].partitions[0]
    state.changed()
    if r.error_code:
        raise ControlError(400, f"error {r.error_code}: {r.error_message}")
    p = state.topics[topic].partitions[index]
    return {"topic": topic, "partition": index, "replicas": list(p.replicas),
            "adding": list(p.adding_replicas), "removing": list(p.removing_replicas),
            "isr": list(p.isr), "leader": p.leader}


def elect_preferred(state: ClusterState, data: Any) -> dict:
    """POST /elections/preferred: ``{"topic": T, "partitions": [..]}``, or ``{}`` for
    every partition (ElectLeaders, PREFERRED)."""
    if not isinstance(data, dict):
        raise ControlError(400, "a JSON object is required")
    wanted = None
    if data.get("topic") is not None:
        topic = data["topic"]
        t = state.topics.get(topic) if isinstance(topic, str) else None
        if t is None:
            raise ControlError(404, f"unknown topic {topic!r}")
        parts = data.get("partitions", list(range(len(t.partitions))))
        if not isinstance(parts, list) or not all(map(_int, parts)):
            raise ControlError(400, "partitions must be a list of integers")
        wanted = [(topic, parts)]
    out = elect_leaders(state, PREFERRED, wanted)
    state.changed()
    return {"results": [{"topic": t, "partition": i, "error_code": code,
                         "error_message": msg} for t, rs in out for i, code, msg in rs]}


__all__ = ["BY_NAME", "OPERATIONS", "ControlError", "ControlTarget", "Operation",
           "check_fields", "elect_preferred", "http_request", "match", "read_fields", "reassign",
           "routes"]
