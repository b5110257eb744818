"""Seeded fault schedules: the parser and a sans-I/O runner.

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
