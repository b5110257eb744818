"""Faults, sans I/O: what is broken, asked by the cluster and the server as they run.

One vocabulary of fault operations serves the three ways in (``Cluster.fault`` in
Python, ``POST /faults`` on the HTTP control plane, ``kafka-emulator fault`` on the
command line) and the seeded fault schedule. An operation is a JSON object::

    {"op": "stop_broker", "broker": 2}
    {"op": "inject_error", "api": "Produce", "error": "NOT_LEADER_OR_FOLLOWER",
     "count": 3, "topic": "orders", "partition": 0}

``OPS`` below lists every operation with its fields. ``validate_op`` checks one
against the cluster (unknown brokers, APIs, error names and fields are refused with
a message that says what is allowed); ``FaultModel`` holds the faults in force and
answers the hooks: the cluster's replication asks ``follower_can_fetch`` and
``fetch_budget``, the server asks ``inject_error``, ``latency_s``,
``drop_response`` and ``client_allowed``. ``FaultInjector`` applies operations to
a ``ClusterState`` (broker stops and starts through the controller), which is all a
unit test with a manual clock needs; the runtime adds the listeners.

A fault schedule is a file of timed operations, JSON lines (or one JSON document
``{"seed": N, "faults": [...]}``)::

    {"seed": 7}
    {"at_ms": 0, "op": "pause_follower", "broker": 3}
    {"at_ms": 1500, "op": "stop_broker", "broker": "random", "jitter_ms": 200}

It is validated whole before anything runs (every error, with its line, in one
``ScheduleError``). Seeded choices (``"broker": "random"``, ``jitter_ms``) are drawn
once at parse time from ``random.Random(seed)``, so a schedule replays the same way
every run; ``"broker": "controller"`` and ``"broker": "leader:TOPIC:PARTITION"`` are
resolved when the step runs.
"""

from __future__ import annotations

import json
import random
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from emulator.cluster import controller
from emulator.cluster.partition import Partition
from emulator.cluster.state import ClusterState
from wire.errors import ErrorCode
from wire.messages import NAMES

# ---- the vocabulary ---------------------------------------------------------------------
BROKER, BROKERS, INT, BOOL, STR, API, ERROR = (
    "broker", "two brokers", "int", "bool", "str", "api", "error")

# op -> {field: (kind, required)}
OPS: dict[str, dict[str, tuple[str, bool]]] = {
    "stop_broker": {"broker": (BROKER, True), "controlled": (BOOL, False),
                    "fence_after_ms": (INT, False)},
    "start_broker": {"broker": (BROKER, True)},
    "controlled_shutdown": {"broker": (BROKER, True)},
    "pause_follower": {"broker": (BROKER, True), "topic": (STR, False),
                       "partition": (INT, False)},
    "slow_follower": {"broker": (BROKER, True), "delay_ms": (INT, True),
                      "max_bytes": (INT, False), "topic": (STR, False),
                      "partition": (INT, False)},
    "resume_follower": {"broker": (BROKER, True), "topic": (STR, False),
                        "partition": (INT, False)},
    "cut_brokers": {"brokers": (BROKERS, True)},
    "heal_brokers": {"brokers": (BROKERS, True)},
    "cut_clients": {"broker": (BROKER, True), "host": (STR, False)},
    "heal_clients": {"broker": (BROKER, True)},
    "inject_error": {"api": (API, True), "error": (ERROR, True), "count": (INT, False),
                     "broker": (BROKER, False), "topic": (STR, False),
                     "partition": (INT, False)},
    "add_latency": {"api": (API, True), "ms": (INT, True), "broker": (BROKER, False)},
    "drop_response": {"api": (API, True), "count": (INT, False), "broker": (BROKER, False)},
    "clear": {},
}
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


def validate_op(op: Any, broker_ids: Iterable[int], symbolic: bool = False) -> dict:
    """Check one operation; returns it normalized (API keys and error codes as ints).

    ``symbolic`` allows the schedule's broker choices ("random", "controller",
    "leader:T:P"); the direct ways in take broker ids only.
    """
    if not isinstance(op, dict):
        raise FaultError(f"a fault is a JSON object, got {type(op).__name__}")
    name = op.get("op")
    if not isinstance(name, str):
        raise FaultError(f"missing \"op\"; one of {', '.join(OPS)}")
    kind = name.replace("-", "_")
    spec = OPS.get(kind)
    if spec is None:
        raise FaultError(f"unknown fault {name!r}; faults are {', '.join(OPS)}", 404)
    ids = list(broker_ids)
    out: dict[str, Any] = {"op": kind}
    for key, value in op.items():
        if key == "op" or (symbolic and key in SCHEDULE_FIELDS):
            continue
        if key not in spec:
            allowed = ", ".join(spec) or "no fields"
            raise FaultError(f"{kind}: unknown field {key!r} (allowed: {allowed})")
        t, _ = spec[key]
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
    for key, (_, required) in spec.items():
        if required and key not in out:
            raise FaultError(f"{kind}: missing field {key!r}")
    if "partition" in out and "topic" not in out:
        raise FaultError(f"{kind}: partition needs a topic")
    if kind in ("inject_error", "drop_response"):
        out.setdefault("count", 1)
    return out


# ---- the faults in force ----------------------------------------------------------------
@dataclass
class FollowerFault:
    broker: int
    topic: str | None = None
    partition: int | None = None
    paused: bool = False
    delay_ms: int = 0
    max_bytes: int | None = None

    def matches(self, p: Partition, broker: int) -> bool:
        return (broker == self.broker and (self.topic is None or self.topic == p.topic)
                and (self.partition is None or self.partition == p.index))


@dataclass
class ErrorRule:
    api: int
    error: int
    count: int
    broker: int | None = None
    topic: str | None = None
    partition: int | None = None


@dataclass
class DropRule:
    api: int
    count: int
    broker: int | None = None


_PARTITION_KEYS = ("partition_index", "partition", "index", "partition_id")


def _topic_name(state: ClusterState | None, entry: dict) -> str | None:
    for k in ("name", "topic"):
        if isinstance(entry.get(k), str) and entry[k]:
            return entry[k]
    tid = entry.get("topic_id")
    if state is not None and isinstance(tid, bytes | bytearray):
        t = state.topics_by_id.get(bytes(tid))
        return t.name if t is not None else None
    return None


def request_mentions(state: ClusterState | None, req: dict, topic: str,
                     partition: int | None) -> bool:
    """Does a decoded request name this topic (and partition)? Any API's shape."""
    for value in req.values():
        if not isinstance(value, list):
            continue
        for entry in value:
            if not isinstance(entry, dict) or _topic_name(state, entry) != topic:
                continue
            if partition is None:
                return True
            for sub in entry.values():
                if not isinstance(sub, list):
                    continue
                for x in sub:
                    if isinstance(x, int) and not isinstance(x, bool) and x == partition:
                        return True
                    if isinstance(x, dict) and any(x.get(k) == partition
                                                   for k in _PARTITION_KEYS):
                        return True
    return False


@dataclass
class FaultModel:
    """Every fault in force; the hooks the cluster and the server call."""

    state: ClusterState | None = None
    followers: list[FollowerFault] = field(default_factory=list)
    broker_cuts: set[frozenset[int]] = field(default_factory=set)
    client_cuts: dict[int, str | None] = field(default_factory=dict)  # broker -> host/None
    errors: list[ErrorRule] = field(default_factory=list)
    latency_ms: dict[tuple[int, int | None], int] = field(default_factory=dict)
    drops: list[DropRule] = field(default_factory=list)

    # ---- cluster hooks (replication) ------------------------------------------------
    def follower_can_fetch(self, p: Partition, follower: int, now: int) -> bool:
        if frozenset((follower, p.leader)) in self.broker_cuts:
            return False
        delay = 0
        for f in self.followers:
            if f.matches(p, follower):
                if f.paused:
                    return False
                delay = max(delay, f.delay_ms)
        if delay:
            if now < p.next_fetch_ms.get(follower, 0):
                return False
            p.next_fetch_ms[follower] = now + delay
        return True

    def fetch_budget(self, p: Partition, follower: int, budget: int) -> int:
        for f in self.followers:
            if f.max_bytes is not None and f.matches(p, follower):
                budget = min(budget, f.max_bytes)
        return budget

    def tick(self, now: int) -> bool:
        return False

    # ---- server hooks (requests) ----------------------------------------------------
    def inject_error(self, broker: int, api_key: int, request: dict) -> int | None:
        for rule in self.errors:
            if rule.api != api_key or (rule.broker is not None and rule.broker != broker):
                continue
            if rule.topic is not None and not request_mentions(self.state, request,
                                                               rule.topic, rule.partition):
                continue
            rule.count -= 1
            if rule.count <= 0:
                self.errors.remove(rule)
            return rule.error
        return None

    def latency_s(self, broker: int, api_key: int) -> float:
        ms = max(self.latency_ms.get((api_key, broker), 0),
                 self.latency_ms.get((api_key, None), 0))
        return ms / 1000

    def drop_response(self, broker: int, api_key: int) -> bool:
        for rule in self.drops:
            if rule.api == api_key and (rule.broker is None or rule.broker == broker):
                rule.count -= 1
                if rule.count <= 0:
                    self.drops.remove(rule)
                return True
        return False

    def client_allowed(self, broker: int, host: str) -> bool:
        if broker not in self.client_cuts:
            return True
        h = self.client_cuts[broker]
        return h is not None and h != host

    # ---- changes ---------------------------------------------------------------------
    def apply(self, op: dict) -> None:
        """Apply a validated model operation (not the broker stops and starts)."""
        kind = op["op"]
        if kind == "pause_follower":
            self.followers.append(FollowerFault(op["broker"], op.get("topic"),
                                                op.get("partition"), paused=True))
        elif kind == "slow_follower":
            self.followers.append(FollowerFault(op["broker"], op.get("topic"),
                                                op.get("partition"), delay_ms=op["delay_ms"],
                                                max_bytes=op.get("max_bytes")))
        elif kind == "resume_follower":
            self.followers = [f for f in self.followers if not (
                f.broker == op["broker"] and (op.get("topic") is None or f.topic == op["topic"])
                and (op.get("partition") is None or f.partition == op["partition"]))]
        elif kind == "cut_brokers":
            self.broker_cuts.add(frozenset(op["brokers"]))
        elif kind == "heal_brokers":
            self.broker_cuts.discard(frozenset(op["brokers"]))
        elif kind == "cut_clients":
            self.client_cuts[op["broker"]] = op.get("host")
        elif kind == "heal_clients":
            self.client_cuts.pop(op["broker"], None)
        elif kind == "inject_error":
            self.errors.append(ErrorRule(op["api"], op["error"], op["count"], op.get("broker"),
                                         op.get("topic"), op.get("partition")))
        elif kind == "add_latency":
            key = (op["api"], op.get("broker"))
            if op["ms"]:
                self.latency_ms[key] = op["ms"]
            else:
                self.latency_ms.pop(key, None)
        elif kind == "drop_response":
            self.drops.append(DropRule(op["api"], op["count"], op.get("broker")))
        elif kind == "clear":
            self.clear()
        else:
            raise FaultError(f"{kind} is not a fault of the model")

    def clear(self) -> None:
        self.followers.clear()
        self.broker_cuts.clear()
        self.client_cuts.clear()
        self.errors.clear()
        self.latency_ms.clear()
        self.drops.clear()

    def describe(self) -> dict:
        """The faults in force, as JSON (GET /faults)."""
        return {
            "followers": [
                {k: v for k, v in vars(f).items() if v is not None} for f in self.followers],
            "broker_cuts": sorted(sorted(c) for c in self.broker_cuts),
            "client_cuts": [{"broker": b, **({"host": h} if h else {})}
                            for b, h in sorted(self.client_cuts.items())],
            "errors": [{k: v for k, v in vars(r).items() if v is not None}
                       for r in self.errors],
            "latency": [{"api": a, "ms": ms, **({"broker": b} if b is not None else {})}
                        for (a, b), ms in sorted(self.latency_ms.items(),
                                                 key=lambda kv: (kv[0][0], kv[0][1] or -1))],
            "drops": [{k: v for k, v in vars(r).items() if v is not None} for r in self.drops],
        }


# ---- applying operations to a cluster --------------------------------------------------
def resolve_broker(state: ClusterState, value: Any) -> int:
    """A schedule's symbolic broker, at the time its step runs."""
    if isinstance(value, int):
        return value
    if value == "controller":
        if state.controller_id < 0:
            raise FaultError("there is no controller (every broker is down)", 409)
        return state.controller_id
    if isinstance(value, str) and value.startswith("leader:"):
        _, _, rest = value.partition(":")
        topic, _, part = rest.rpartition(":")
        t = state.topics.get(topic)
        if t is None or not part.isdigit() or int(part) >= len(t.partitions):
            raise FaultError(f"{value}: unknown topic or partition", 404)
        leader = t.partitions[int(part)].leader
        if leader < 0:
            raise FaultError(f"{value}: the partition has no leader", 409)
        return leader
    raise FaultError(f"cannot resolve broker {value!r}")


def resolve_op(state: ClusterState, op: dict) -> dict:
    out = dict(op)
    if "broker" in out:
        out["broker"] = resolve_broker(state, out["broker"])
    if "brokers" in out:
        out["brokers"] = [resolve_broker(state, b) for b in out["brokers"]]
        if out["brokers"][0] == out["brokers"][1]:
            raise FaultError(f"{op['op']}: both ends of the cut are broker "
                             f"{out['brokers'][0]}", 409)
    return out


def check_topic(state: ClusterState, op: dict) -> None:
    """Direct operations naming a topic or partition must name existing ones (404)."""
    topic = op.get("topic")
    if topic is None:
        return
    t = state.topics.get(topic)
    if t is None:
        raise FaultError(f"unknown topic {topic!r}", 404)
    part = op.get("partition")
    if part is not None and part >= len(t.partitions):
        raise FaultError(f"unknown partition {topic}-{part}; the topic has "
                         f"{len(t.partitions)} partition(s)", 404)


class FaultInjector:
    """Applies operations to a ClusterState; broker stops and starts go through the
    controller (the runtime also closes and reopens the listeners)."""

    def __init__(self, state: ClusterState) -> None:
        self.state = state
        self.model = FaultModel(state)
        state.faults = self.model
        self.log: list[dict] = []  # every operation applied, in order

    def validate(self, op: Any) -> dict:
        v = validate_op(op, self.state.brokers)
        check_topic(self.state, v)
        return v

    def apply(self, op: dict, validated: bool = False) -> dict:
        """Validate (unless done) and apply; returns the operation as applied."""
        op = resolve_op(self.state, op if validated else self.validate(op))
        kind = op["op"]
        if kind == "stop_broker":
            if op.get("controlled"):
                controller.controlled_shutdown(self.state, op["broker"])
                controller.broker_stopped(self.state, op["broker"])
            else:
                controller.broker_crashed(self.state, op["broker"], op.get("fence_after_ms"))
        elif kind == "controlled_shutdown":
            controller.controlled_shutdown(self.state, op["broker"])
            controller.broker_stopped(self.state, op["broker"])
        elif kind == "start_broker":
            controller.broker_started(self.state, op["broker"])
        else:
            self.model.apply(op)
        self.log.append(op)
        self.state.emit("fault", **op)
        self.state.changed()
        return op


# ---- schedules ---------------------------------------------------------------------------
class ScheduleError(ValueError):
    """A fault schedule with errors; ``problems`` lists each with its line."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("fault schedule rejected:\n" + "\n".join(problems))
        self.problems = problems


@dataclass(frozen=True)
class ScheduledFault:
    at_ms: int  # after the schedule starts, jitter drawn
    op: dict
    line: int


@dataclass
class FaultSchedule:
    seed: int
    steps: list[ScheduledFault]

    @classmethod
    def parse(cls, text: str | bytes, broker_ids: Iterable[int]) -> FaultSchedule:
        """Parse and validate a whole schedule; raises ScheduleError listing every problem."""
        if isinstance(text, bytes):
            text = text.decode("utf-8", "replace")
        ids = sorted(broker_ids)
        entries: list[tuple[int, Any]] = []
        problems: list[str] = []
        seed = 0
        doc = None
        stripped = text.strip()
        if stripped.startswith("{") and "\n{" not in stripped:
            try:
                doc = json.loads(stripped)
            except json.JSONDecodeError:
                doc = None
        if isinstance(doc, dict) and "faults" in doc:
            seed_v = doc.get("seed", 0)
            if isinstance(seed_v, bool) or not isinstance(seed_v, int):
                problems.append(f"seed must be an integer, got {seed_v!r}")
            else:
                seed = seed_v
            extra = set(doc) - {"seed", "faults"}
            if extra:
                problems.append(f"unknown top-level field(s) {sorted(extra)}")
            if not isinstance(doc["faults"], list):
                problems.append("faults must be a list")
            else:
                entries = [(i + 1, f) for i, f in enumerate(doc["faults"])]
        else:
            for n, raw in enumerate(text.splitlines(), 1):
                line = raw.strip()
                if not line or line.startswith("#"):
                    continue
                try:
                    obj = json.loads(line)
                except json.JSONDecodeError as e:
                    problems.append(f"line {n}: not JSON ({e.msg})")
                    continue
                if isinstance(obj, dict) and set(obj) == {"seed"}:
                    if entries:
                        problems.append(f"line {n}: the seed line must come first")
                    elif isinstance(obj["seed"], bool) or not isinstance(obj["seed"], int):
                        problems.append(f"line {n}: seed must be an integer")
                    else:
                        seed = obj["seed"]
                    continue
                entries.append((n, obj))
        rng = random.Random(seed)
        steps: list[ScheduledFault] = []
        for n, obj in entries:
            try:
                if not isinstance(obj, dict):
                    raise FaultError("a step is a JSON object")
                at = obj.get("at_ms")
                if isinstance(at, bool) or not isinstance(at, int) or at < 0:
                    raise FaultError(f"at_ms must be a non-negative integer, got {at!r}")
                jitter = obj.get("jitter_ms", 0)
                if isinstance(jitter, bool) or not isinstance(jitter, int) or jitter < 0:
                    raise FaultError(f"jitter_ms must be a non-negative integer, got {jitter!r}")
                op = validate_op({k: v for k, v in obj.items()}, ids, symbolic=True)
            except FaultError as e:
                problems.append(f"line {n}: {e}")
                continue
            at += rng.randint(0, jitter) if jitter else 0
            if op.get("broker") == "random":
                op["broker"] = rng.choice(ids)
            if "brokers" in op:
                op["brokers"] = [rng.choice(ids) if b == "random" else b for b in op["brokers"]]
            steps.append(ScheduledFault(at, op, n))
        if not entries and not problems:
            problems.append("the schedule has no faults")
        if problems:
            raise ScheduleError(sorted(problems, key=_line_of))
        steps.sort(key=lambda s: s.at_ms)  # stable: equal times keep file order
        return cls(seed, steps)


def _line_of(problem: str) -> int:
    head = problem.split(":", 1)[0]
    return int(head[5:]) if head.startswith("line ") and head[5:].isdigit() else 0


class ScheduleRunner:
    """Which steps are due; the caller applies them (pure, driven by any clock)."""

    def __init__(self, schedule: FaultSchedule, start_ms: int) -> None:
        self.schedule = schedule
        self.start_ms = start_ms
        self.pending: deque[ScheduledFault] = deque(schedule.steps)
        self.applied: list[dict] = []  # {"at_ms", "op", "line", "error"?, "cluster"?}

    @property
    def done(self) -> bool:
        return not self.pending

    def next_due_ms(self) -> int | None:
        return self.start_ms + self.pending[0].at_ms if self.pending else None

    def due(self, now_ms: int) -> list[ScheduledFault]:
        out = []
        while self.pending and self.start_ms + self.pending[0].at_ms <= now_ms:
            out.append(self.pending.popleft())
        return out

    def record(self, step: ScheduledFault, applied: dict | None, error: str | None,
               snapshot: dict | None) -> None:
        entry: dict[str, Any] = {"at_ms": step.at_ms, "line": step.line,
                                 "op": applied or step.op}
        if error:
            entry["error"] = error
        if snapshot is not None:
            entry["cluster"] = snapshot
        self.applied.append(entry)

    def status(self) -> dict:
        return {"seed": self.schedule.seed, "steps": len(self.schedule.steps),
                "applied": self.applied, "pending": len(self.pending), "done": self.done}


def run_due(injector: FaultInjector, runner: ScheduleRunner, now_ms: int,
            snapshot: Callable[[ClusterState], dict] | None = None) -> list[dict]:
    """Apply the steps due at ``now_ms`` to a ClusterState (no listeners): a manual-
    clock replay. A step that cannot run (its broker is already down...) is recorded
    with its error and the schedule goes on, as it would live."""
    out = []
    for step in runner.due(now_ms):
        try:
            applied, error = injector.apply(step.op, validated=True), None
        except FaultError as e:
            applied, error = None, str(e)
        runner.record(step, applied, error,
                      snapshot(injector.state) if snapshot is not None else None)
        out.append(runner.applied[-1])
    return out


__all__ = [
    "BROKER_OPS", "OPS", "FaultError", "FaultInjector", "FaultModel", "FaultSchedule",
    "ScheduleError", "ScheduleRunner", "ScheduledFault", "check_topic", "request_mentions",
    "resolve_op", "run_due", "validate_op",
]
