"""Seeded fault schedules: the parser and a sans-I/O runner.

A fault schedule is a file of timed operations, JSON lines (or one JSON document
``{"seed": N, "faults": [...]}``)::

    {"seed": 7}
    {"at_ms": 0, "op": "pause_follower", "broker": 3}
    {"at_ms": 1500, "op": "stop_broker", "broker": "random", "jitter_ms": 200}

It is validated whole before anything runs (every error, with its line, in one
``ScheduleError``).

The document form may also carry an adversary section: the faults ``--fidelity
adversarial`` is to inject, and no others (what ``emulator.faults.shrink`` writes from a
failing run's record, and shrinks)::

    {"seed": 3, "fidelity": "adversarial",
     "adversary": [{"client_id": "rdkafka", "broker": 2, "api": "Produce", "n": 4,
                    "kind": "lost_response", "detail": "..."}]}

Each entry is a ``FaultKey`` (client id, broker, API name, n, kind: the first fields of
the adversary's ``Injected.key()``; ``detail`` is only for the reader). A cluster started
from such a schedule runs ``adversarial`` under its seed with ``Adversary.script`` set to
those keys: the request that meets a key meets that fault (what it picks, such as a
partition, still comes from the seed), nothing else fires. An empty list means no
adversary fault at all, under adversarial's timing. The section takes effect when a
cluster starts (``--fault-schedule``, ``Cluster(fault_schedule=...)``), so ``parse``
refuses it unless ``at_start``. Seeded choices (``"broker": "random"``, ``jitter_ms``) are drawn
once at parse time from ``random.Random(seed)``, so a schedule replays the same way
every run; ``"broker": "controller"`` and ``"broker": "leader:TOPIC:PARTITION"`` are
resolved when the step runs.

``ScheduleRunner`` only says which steps are due and records what became of them; the
server drives it on the cluster's loop (emulator.server.schedule), a unit test drives
it with a manual clock (``run_due``).
"""

from __future__ import annotations

import json
import random
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from emulator.cluster.state import ClusterState
from emulator.faults.injector import FaultInjector
from emulator.faults.ops import FaultError, validate_op


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


# (client_id, broker, API name, n, kind): one adversary fault, as Adversary.script holds
# it. Settings have their own keys: stale metadata ("", broker, "-", 0, "stale_metadata"),
# slow markers (transactional id, -1, "EndTxn", n, "slow_markers").
FaultKey = tuple[str, int, str, int, str]
ADVERSARY_FIELDS = ("client_id", "broker", "api", "n", "kind")
TOP_LEVEL = ("seed", "fidelity", "faults", "adversary", "comment")


@dataclass(frozen=True)
class AdversaryFault:
    """One entry of a schedule's adversary section: the fault's key, and what it did
    in the run it was recorded from (``detail``, for the reader: replay ignores it)."""

    client_id: str
    broker: int
    api: str
    n: int
    kind: str
    detail: str = ""

    def key(self) -> FaultKey:
        return (self.client_id, self.broker, self.api, self.n, self.kind)

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {f: getattr(self, f) for f in ADVERSARY_FIELDS}
        if self.detail:
            out["detail"] = self.detail
        return out

    def describe(self) -> str:
        """One line: who, where, which request, what."""
        if self.kind == "stale_metadata":
            where = f"broker {self.broker}, from the start"
        elif self.broker < 0:
            where = f"transaction {self.n} of {self.client_id!r}"
        else:
            where = f"{self.api} #{self.n} from {self.client_id!r} to broker {self.broker}"
        return f"{self.kind}: {where}" + (f": {self.detail}" if self.detail else "")


@dataclass
class FaultSchedule:
    seed: int
    steps: list[ScheduledFault]
    # The adversary section (None: none; empty: adversarial with no fault injected), in
    # the order written, which the shrinker keeps as the record's order.
    adversary: tuple[AdversaryFault, ...] | None = None
    fidelity: str | None = None  # "adversarial" with an adversary section, else None
    comment: str = ""

    @property
    def script(self) -> frozenset[FaultKey] | None:
        """What ``Adversary.script`` is set to: the adversary section's keys."""
        if self.adversary is None:
            return None
        return frozenset(f.key() for f in self.adversary)

    @classmethod
    def from_record(cls, seed: int, record: Iterable[Any], comment: str = "") -> FaultSchedule:
        """A schedule of the faults an adversary injected (``Adversary.record``, or
        anything with the fields of ``Injected``), in the record's order, each once."""
        seen: set[FaultKey] = set()
        faults = []
        for f in sorted(record, key=lambda f: getattr(f, "seq", 0)):
            entry = AdversaryFault(f.client_id, f.broker, f.api, f.n, f.kind,
                                   getattr(f, "detail", ""))
            if entry.key() not in seen:
                seen.add(entry.key())
                faults.append(entry)
        return cls(seed, [], tuple(faults), "adversarial", comment)

    def with_adversary(self, faults: Iterable[AdversaryFault],
                       comment: str | None = None) -> FaultSchedule:
        """The same schedule with another adversary section (a shrinker's candidate)."""
        return FaultSchedule(self.seed, list(self.steps), tuple(faults), "adversarial",
                             self.comment if comment is None else comment)

    def to_json(self) -> str:
        """The document form, one adversary fault or step per line: what ``parse``
        reads back (``--fault-schedule FILE``)."""
        head: dict[str, Any] = {"seed": self.seed}
        if self.comment:
            head["comment"] = self.comment
        if self.fidelity:
            head["fidelity"] = self.fidelity
        parts = [json.dumps(head)[:-1]]
        if self.adversary is not None:
            rows = ",\n".join("  " + json.dumps(f.as_dict()) for f in self.adversary)
            parts.append(f'"adversary": [\n{rows}\n]' if rows else '"adversary": []')
        if self.steps:
            rows = ",\n".join("  " + json.dumps({"at_ms": s.at_ms, **s.op})
                              for s in self.steps)
            parts.append(f'"faults": [\n{rows}\n]')
        return ",\n".join(parts) + "}\n"

    @classmethod
    def parse(cls, text: str | bytes, broker_ids: Iterable[int], *,
              at_start: bool = False) -> FaultSchedule:
        """Parse and validate a whole schedule; raises ScheduleError listing every problem.
        ``at_start``: the schedule is the cluster's from its start, so it may have an
        adversary section (a running cluster's fidelity and seed are fixed)."""
        if isinstance(text, bytes):
            text = text.decode("utf-8", "replace")
        ids = sorted(broker_ids)
        entries: list[tuple[int, Any]] = []
        problems: list[str] = []
        seed = 0
        doc = None
        adversary: tuple[AdversaryFault, ...] | None = None
        fidelity: str | None = None
        comment = ""
        stripped = text.strip()
        if stripped.startswith("{"):
            try:
                doc = json.loads(stripped)  # JSON lines of several objects: not one doc
            except json.JSONDecodeError:
                doc = None
        if isinstance(doc, dict) and ("faults" in doc or "adversary" in doc):
            seed_v = doc.get("seed", 0)
            if isinstance(seed_v, bool) or not isinstance(seed_v, int):
                problems.append(f"seed must be an integer, got {seed_v!r}")
            else:
                seed = seed_v
            extra = set(doc) - set(TOP_LEVEL)
            if extra:
                problems.append(f"unknown top-level field(s) {sorted(extra)}")
            if not isinstance(doc.get("comment", ""), str):
                problems.append("comment must be a string")
            else:
                comment = doc.get("comment", "")
            if "faults" in doc:
                if not isinstance(doc["faults"], list):
                    problems.append("faults must be a list")
                else:
                    entries = [(i + 1, f) for i, f in enumerate(doc["faults"])]
            if "fidelity" in doc or "adversary" in doc:
                fidelity = "adversarial"
                if doc.get("fidelity", fidelity) != fidelity:
                    problems.append(f"fidelity: a schedule can only ask for 'adversarial' "
                                    f"(other modes are the cluster's --fidelity), got "
                                    f"{doc['fidelity']!r}")
                if not at_start:
                    problems.append("fidelity/adversary: the adversary is set when a cluster "
                                    "starts: give this schedule to --fault-schedule or "
                                    "Cluster(fault_schedule=...), not to a running cluster")
            if "adversary" in doc:
                adversary = _parse_adversary(doc["adversary"], ids, problems)
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
        if not entries and not problems and fidelity is None:
            problems.append("the schedule has no faults")
        if problems:
            raise ScheduleError(sorted(problems, key=_line_of))
        steps.sort(key=lambda s: s.at_ms)  # stable: equal times keep file order
        return cls(seed, steps, adversary, fidelity, comment)


def _parse_adversary(raw: Any, ids: list[int],
                     problems: list[str]) -> tuple[AdversaryFault, ...] | None:
    """The adversary section's entries; each problem is appended, named by its index."""
    from emulator.faults.adversary import KINDS, STALE_METADATA  # the kinds it injects
    from wire.messages import NAMES

    if not isinstance(raw, list):
        problems.append("adversary must be a list of faults")
        return None
    apis = set(NAMES.values())
    out: list[AdversaryFault] = []
    seen: dict[FaultKey, int] = {}
    for i, f in enumerate(raw):
        where = f"adversary[{i}]"
        if not isinstance(f, dict):
            problems.append(f"{where}: a fault is a JSON object with "
                            f"{', '.join(ADVERSARY_FIELDS)}")
            continue
        bad: list[str] = []
        missing = [k for k in ADVERSARY_FIELDS if k not in f]
        if missing:
            bad.append(f"missing {', '.join(missing)}")
        extra = sorted(set(f) - set(ADVERSARY_FIELDS) - {"detail"})
        if extra:
            bad.append(f"unknown field(s) {extra}")
        # A missing field is said once (above), not again as a bad value.
        cid, broker, api = f.get("client_id", ""), f.get("broker", -1), f.get("api", "-")
        n, kind, detail = f.get("n", 0), f.get("kind"), f.get("detail", "")
        if not isinstance(cid, str):
            bad.append(f"client_id must be a string, got {cid!r}")
        if "kind" in f and (not isinstance(kind, str) or kind not in KINDS):
            bad.append(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
        if isinstance(broker, bool) or not isinstance(broker, int) \
                or (broker not in ids and broker != -1):
            bad.append(f"broker must be one of {ids} (-1: a transaction's markers), "
                       f"got {broker!r}")
        if not isinstance(api, str) or (api not in apis and api != "-"):
            bad.append(f"api must be an API name such as Produce ('-' for a setting), "
                       f"got {api!r}")
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            bad.append(f"n must be a non-negative integer, got {n!r}")
        if not isinstance(detail, str):
            bad.append(f"detail must be a string, got {detail!r}")
        if kind == STALE_METADATA and isinstance(api, str) and (api, n) != ("-", 0):
            bad.append("a stale_metadata setting has api '-' and n 0")
        if bad:
            problems.extend(f"{where}: {b}" for b in bad)
            continue
        entry = AdversaryFault(cid, broker, api, n, str(kind), detail)
        if entry.key() in seen:
            problems.append(f"{where}: the same fault as adversary[{seen[entry.key()]}]")
            continue
        seen[entry.key()] = i
        out.append(entry)
    return tuple(out)


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
