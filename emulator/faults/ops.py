"""The vocabulary of fault operations and its validation.

One operation is a JSON object (``{"op": "stop_broker", "broker": 2}``); ``OPS`` lists
each with its fields. ``validate_op`` checks one against the cluster's broker ids and
normalizes it (API keys and error codes as ints): unknown brokers, APIs, error names
and fields are refused with a message that says what is allowed. Pure: no cluster
state beyond the broker ids.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from typing import Any

from emulator.faults.match import MatchError, parse
from wire.errors import ErrorCode
from wire.messages import NAMES

BROKER, BROKERS, INT, BOOL, STR, API, ERROR, MATCH = (
    "broker", "two brokers", "int", "bool", "str", "api", "error", "match")


@dataclass(frozen=True)
class Field:
    """One field of an operation: its kind (how it is validated), whether it is
    required, what it means (the command line's help), and whether the command line
    takes it as an --option even when it is required (else required ones are
    positional)."""

    kind: str
    required: bool = False
    help: str = ""
    option: bool = False
    default: Any = None


@dataclass(frozen=True)
class FaultOp:
    summary: str
    fields: dict[str, Field] = dataclass_field(default_factory=dict)


_BROKER = Field(BROKER, True, "the broker's id")
_TOPIC = Field(STR, help="only this topic's partitions (default: all)")
_PARTITION = Field(INT, help="only this partition of --topic")
_ONLY_BROKER = Field(BROKER, help="only requests to this broker")
_CLIENT_ID = Field(STR, help="only requests of clients with this client.id")
_COUNT = Field(INT, help="how many (default 1)", default=1)
_API = Field(API, True, "API name or key, e.g. Produce or 0")
_CUT = Field(BROKERS, True, "the two brokers' ids")
_LOG_DIR = Field(STR, help="only this one of the broker's log.dirs (default: all of them)")
# What a request rule (inject_error, drop_response, observe) selects besides its API, and
# its name and hits (emulator.faults.rules; docs/faults.md, "Fault rules").
_RULE_FIELDS = {
    "group": Field(STR, help="only requests naming this group id (on its coordinator "
                   "unless --broker)"),
    "transactional_id": Field(STR, help="only requests naming this transactional id (on "
                              "its coordinator unless --broker)"),
    "match": Field(MATCH, help='only requests this predicate holds for, e.g. '
                   '\'generation_id >= 2 and client_id == "b"\' (docs/faults.md)'),
    "after": Field(INT, help="let this many matching requests through first"),
    "id": Field(STR, help="the rule's name (default r1, r2, ...): its hits are "
                "GET /rules/ID"),
}

# op -> what it does and its fields (the operations table, emulator.control.operations,
# adds how each travels over HTTP and the command line)
OPS: dict[str, FaultOp] = {
    "stop_broker": FaultOp("crash a broker", {
        "broker": _BROKER,
        "controlled": Field(BOOL, help="controlled shutdown first"),
        "fence_after_ms": Field(INT, help="the controller fences the crashed broker only "
                                "after this many ms (Kafka's broker session timeout); "
                                "default: the broker.session.timeout.ms config, else at once")}),
    "start_broker": FaultOp("start a stopped broker", {"broker": _BROKER}),
    "controlled_shutdown": FaultOp("move leadership off a broker, then stop it",
                                   {"broker": _BROKER}),
    "pause_follower": FaultOp("stop a broker's replica fetchers", {
        "broker": _BROKER, "topic": _TOPIC, "partition": _PARTITION}),
    "slow_follower": FaultOp("let a broker's fetchers fetch only every --delay-ms", {
        "broker": _BROKER,
        "delay_ms": Field(INT, True, "the fetchers fetch at most once per this many ms",
                          option=True),
        "max_bytes": Field(INT, help="bytes per fetch"), "topic": _TOPIC,
        "partition": _PARTITION}),
    "resume_follower": FaultOp("undo pause-follower and slow-follower", {
        "broker": _BROKER, "topic": _TOPIC, "partition": _PARTITION}),
    "cut_brokers": FaultOp("cut the network between two brokers", {"brokers": _CUT}),
    "heal_brokers": FaultOp("restore it", {"brokers": _CUT}),
    "cut_clients": FaultOp("cut clients off a broker", {
        "broker": _BROKER,
        "host": Field(STR, help="only the clients connecting from this address "
                      "(default: all)")}),
    "heal_clients": FaultOp("let clients reach a broker again", {"broker": _BROKER}),
    "inject_error": FaultOp("answer the next requests of an API with an error code", {
        "api": _API, "error": Field(ERROR, True, "Kafka error name or code, e.g. "
                                    "NOT_LEADER_OR_FOLLOWER"),
        "count": _COUNT, "broker": _ONLY_BROKER,
        "topic": Field(STR, help="only requests naming this topic; only its items get "
                       "the error"),
        "partition": _PARTITION, "client_id": _CLIENT_ID, **_RULE_FIELDS}),
    "add_latency": FaultOp("delay every request of an API (0 removes)", {
        "api": _API, "ms": Field(INT, True, "the delay in ms"), "broker": _ONLY_BROKER}),
    "drop_response": FaultOp("apply requests of an API but drop responses", {
        "api": _API, "count": _COUNT, "broker": _ONLY_BROKER, "client_id": _CLIENT_ID,
        "topic": Field(STR, help="only requests naming this topic"),
        "partition": _PARTITION, **_RULE_FIELDS}),
    "observe": FaultOp("count the requests a rule selects, failing none (its hits: "
                       "GET /rules/ID)", {
        "api": Field(API, help="API name or key (default: every API)"),
        "broker": _ONLY_BROKER, "client_id": _CLIENT_ID,
        "topic": Field(STR, help="only requests naming this topic"),
        "partition": _PARTITION, **_RULE_FIELDS}),
    "move_leader": FaultOp("move a partition's leader to another in-sync replica, as a "
                           "preferred-replica election or a leader's failover does", {
        "topic": Field(STR, True, "the topic"),
        "partition": Field(INT, True, "the partition"),
        "broker": Field(BROKER, help="the new leader, an in-sync replica (default: the "
                        "preferred replica if it is not leading, else the next in-sync one)",
                        option=True)}),
    # storage faults (docs/faults.md, "Storage faults"; what follows a failed write:
    # emulator.cluster.controller.log_dir_failed)
    "disk_full": FaultOp("a broker's log dir is full: its next write fails (ENOSPC) "
                         "and the dir goes offline", {
                             "broker": _BROKER, "log_dir": _LOG_DIR}),
    "fail_writes": FaultOp("writes to a broker's log dir fail (EIO): the dir goes "
                           "offline at the next one", {
                               "broker": _BROKER, "log_dir": _LOG_DIR}),
    "fail_fsyncs": FaultOp("fsyncs of a broker's log dir fail (EIO): the dir goes "
                           "offline at its next flush or checkpoint", {
                               "broker": _BROKER, "log_dir": _LOG_DIR}),
    "slow_writes": FaultOp("each write to a broker's log dir takes --delay-ms "
                           "(0 removes)", {
                               "broker": _BROKER,
                               "delay_ms": Field(INT, True, "the time each write takes, in ms",
                                                 option=True),
                               "log_dir": _LOG_DIR}),
    "heal_storage": FaultOp("end a broker's storage faults (a failed dir comes back "
                            "when the broker restarts)", {
                                "broker": _BROKER, "log_dir": _LOG_DIR}),
    "clear": FaultOp("clear every fault"),
}
# The storage faults: what each makes of a write to the directory
STORAGE_OPS = ("disk_full", "fail_writes", "fail_fsyncs", "slow_writes")
# The operations on whole brokers: each has its own HTTP route besides POST /faults.
BROKER_OPS = ("stop_broker", "start_broker", "controlled_shutdown")
SCHEDULE_FIELDS = ("at_ms", "jitter_ms")
API_KEYS = {name.lower(): key for key, name in NAMES.items()}


class FaultError(ValueError):
    """A fault operation that names something unknown or is malformed (HTTP 4xx)."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


def _api_key(value: Any) -> int:
    if isinstance(value, bool):
        raise FaultError(f"api must be an API key or name, got {value!r}")
    if isinstance(value, int):
        if value not in NAMES:
            raise FaultError(f"unknown API key {value}; known keys are {sorted(NAMES)}")
        return value
    if isinstance(value, str):
        key = API_KEYS.get(value.lower().replace("_", "").replace("-", ""))
        if key is None and value.isdigit():
            return _api_key(int(value))
        if key is None:
            names = ", ".join(NAMES[k] for k in sorted(NAMES))
            raise FaultError(f"unknown API {value!r}; known APIs are {names}")
        return key
    raise FaultError(f"api must be an API key or name, got {value!r}")


def _error_code(value: Any) -> int:
    if isinstance(value, bool):
        raise FaultError(f"error must be an error code or name, got {value!r}")
    if isinstance(value, int):
        try:
            return int(ErrorCode(value))
        except ValueError:
            raise FaultError(f"unknown error code {value}") from None
    if isinstance(value, str):
        try:
            return int(ErrorCode[value.upper()])
        except KeyError:
            raise FaultError(f"unknown error {value!r}; use a Kafka error name such as "
                             "NOT_LEADER_OR_FOLLOWER or a numeric code") from None
    raise FaultError(f"error must be an error code or name, got {value!r}")


def _broker(value: Any, broker_ids: Iterable[int], name: str = "broker") -> Any:
    ids = sorted(broker_ids)
    if isinstance(value, str) and (value in ("random", "controller")
                                   or value.startswith("leader:")):
        return value
    if isinstance(value, bool) or not isinstance(value, int):
        raise FaultError(f"{name} must be a broker id, got {value!r}")
    if value not in ids:
        raise FaultError(f"unknown broker {value}; brokers are {ids}", 404)
    return value


def validate_op(op: Any, broker_ids: Iterable[int], symbolic: bool = False,
                fields: dict[str, Field] | None = None) -> dict:
    """Check one operation; returns it normalized (API keys and error codes as ints).

    ``symbolic`` allows the schedule's broker choices ("random", "controller",
    "leader:T:P"); the direct ways in take broker ids only. ``fields`` checks the
    fields of an operation that is not a fault (emulator.control.operations) the same
    way.
    """
    if not isinstance(op, dict):
        raise FaultError(f"a fault is a JSON object, got {type(op).__name__}")
    name = op.get("op")
    if not isinstance(name, str):
        raise FaultError(f"missing \"op\"; one of {', '.join(OPS)}")
    kind = name.replace("-", "_")
    fault = OPS.get(kind)
    if fault is None:
        raise FaultError(f"unknown fault {name!r}; faults are {', '.join(OPS)}", 404)
    spec = fault.fields if fields is None else fields
    ids = list(broker_ids)
    out: dict[str, Any] = {"op": kind}
    for key, value in op.items():
        if key == "op" or (symbolic and key in SCHEDULE_FIELDS):
            continue
        if key not in spec:
            allowed = ", ".join(spec) or "no fields"
            raise FaultError(f"{kind}: unknown field {key!r} (allowed: {allowed})")
        t = spec[key].kind
        if t == BROKER:
            v = _broker(value, ids)
            if isinstance(v, str) and not symbolic:
                raise FaultError(f"{kind}: broker must be a broker id, got {value!r}")
            out[key] = v
        elif t == BROKERS:
            if not isinstance(value, list) or len(value) != 2:
                raise FaultError(f"{kind}: brokers must be a list of two broker ids")
            a, b = (_broker(v, ids, "brokers") for v in value)
            if isinstance(a, str) or isinstance(b, str):
                if not symbolic:
                    raise FaultError(f"{kind}: brokers must be broker ids")
            elif a == b:
                raise FaultError(f"{kind}: a cut needs two different brokers, got {a} twice")
            out[key] = [a, b]
        elif t == INT:
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise FaultError(f"{kind}: {key} must be a non-negative integer, got {value!r}")
            out[key] = value
        elif t == BOOL:
            if not isinstance(value, bool):
                raise FaultError(f"{kind}: {key} must be true or false, got {value!r}")
            out[key] = value
        elif t == STR:
            if not isinstance(value, str) or not value:
                raise FaultError(f"{kind}: {key} must be a non-empty string, got {value!r}")
            out[key] = value
        elif t == API:
            out[key] = _api_key(value)
        elif t == ERROR:
            out[key] = _error_code(value)
        elif t == MATCH:
            if not isinstance(value, str):
                raise FaultError(f"{kind}: match must be a string, got {value!r}")
            try:
                parse(value)
            except MatchError as e:
                raise FaultError(f"{kind}: match: {e}") from None
            out[key] = value
    for key, f in spec.items():
        if f.required and key not in out:
            raise FaultError(f"{kind}: missing field {key!r}")
    if "partition" in out and "topic" not in out:
        raise FaultError(f"{kind}: partition needs a topic")
    for key, f in spec.items():
        if f.default is not None:
            out.setdefault(key, f.default)
    return out
