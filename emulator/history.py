"""A history checker for exactly-once pipelines, in the manner of Jepsen's.

An exactly-once consume-transform-produce application (read_committed consumer, a
transactional producer, offsets sent with the transaction) is run against a cluster
that fails; what happened is written down as a ``History``:

- ``inputs``: every input record, with its unique id and where it sits (partition,
  offset), as a reader of the input topic finds it at the end;
- ``attempts``: every transaction the application began, the input ids it wrote output
  for, and its outcome as the application saw it: ``committed`` (commit returned),
  ``aborted`` (abort returned) or ``unknown`` (the application lost the producer, or the
  commit failed in a way that does not say);
- ``outputs``: what a read_committed reader of the output topic finds at the end, each
  record naming the input id it came from and the attempt that wrote it;
- ``events``: anything else worth printing beside a violation (the faults, with times).

``check`` asserts what exactly-once promises, and returns every violation:

- lost: an input id with no output;
- duplicated: an input id in the output more than once;
- aborted visible: an output written by an attempt the application aborted;
- committed missing: an attempt the application saw commit whose output is not all
  there (a committed transaction undone: its offsets may be gone too, so the input was
  processed again and "lost"/"duplicated" alone would not show it);
- reordered: two records of one input partition whose outputs, in one output
  partition, are in the other order;
- unknown: an output naming an input id or an attempt the history does not have.

On a violation ``Report.text()`` prints each offending record's whole history: its
input position, every attempt that wrote it (outcome, times), every output copy, and
the events around those times. Pure: no client, no I/O; anything that can write a
History can use it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

Outcome = Literal["committed", "aborted", "unknown"]
OUTCOMES = ("committed", "aborted", "unknown")
KINDS = ("lost", "duplicated", "aborted visible", "committed missing", "reordered", "unknown")


@dataclass(frozen=True)
class InputRecord:
    id: str
    partition: int
    offset: int


@dataclass(frozen=True)
class Attempt:
    """One transaction the application began (its id is unique in the history)."""

    id: str
    outcome: Outcome
    ids: tuple[str, ...] = ()  # the input ids it wrote output for
    start_ms: float = 0.0
    end_ms: float = 0.0
    note: str = ""  # why it ended so (the error the application saw)


@dataclass(frozen=True)
class OutputRecord:
    id: str  # the input id it came from
    attempt: str  # the attempt that wrote it
    partition: int
    offset: int


@dataclass(frozen=True)
class Event:
    at_ms: float
    what: str


@dataclass
class History:
    inputs: list[InputRecord] = field(default_factory=list)
    attempts: list[Attempt] = field(default_factory=list)
    outputs: list[OutputRecord] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)


@dataclass(frozen=True)
class Violation:
    kind: str  # one of KINDS
    ids: tuple[str, ...]  # the input ids concerned
    detail: str


@dataclass
class Report:
    history: History
    violations: list[Violation]

    @property
    def ok(self) -> bool:
        return not self.violations

    def counts(self) -> dict[str, int]:
        out = dict.fromkeys(KINDS, 0)
        for v in self.violations:
            out[v.kind] += 1
        return out

    def summary(self) -> str:
        h = self.history
        committed = sum(a.outcome == "committed" for a in h.attempts)
        aborted = sum(a.outcome == "aborted" for a in h.attempts)
        head = (f"{len(h.inputs)} inputs, {len(h.outputs)} outputs, {len(h.attempts)} "
                f"attempts ({committed} committed, {aborted} aborted, "
                f"{len(h.attempts) - committed - aborted} unknown)")
        if self.ok:
            return head + ": no violation"
        return head + ": " + ", ".join(f"{n} {k}" for k, n in self.counts().items() if n)

    def text(self, limit: int = 20) -> str:
        """The summary, then each violation with its records' histories (the first
        ``limit`` violations)."""
        lines = [self.summary()]
        for v in self.violations[:limit]:
            lines.append(f"- {v.kind}: {v.detail}")
            for rid in v.ids:
                lines.extend("    " + ln for ln in record_history(self.history, rid))
        if len(self.violations) > limit:
            lines.append(f"... and {len(self.violations) - limit} more violations")
        return "\n".join(lines)


def record_history(history: History, rid: str, window_ms: float = 2000) -> list[str]:
    """Everything the history says of one input id, in time order where it has times."""
    inputs = [r for r in history.inputs if r.id == rid]
    attempts = [a for a in history.attempts if rid in a.ids]
    outputs = [o for o in history.outputs if o.id == rid]
    lines = [f"record {rid}: " + (", ".join(f"input {r.partition}@{r.offset}" for r in inputs)
                                  or "not in the input")]
    by_id = {a.id: a for a in history.attempts}
    for a in sorted(attempts, key=lambda a: a.start_ms):
        lines.append(f"  attempt {a.id} {a.outcome} ({a.start_ms:.0f}-{a.end_ms:.0f} ms)"
                     + (f": {a.note}" if a.note else ""))
    for o in outputs:
        writer = by_id.get(o.attempt)
        lines.append(f"  output {o.partition}@{o.offset} by attempt {o.attempt} "
                     f"({writer.outcome if writer else 'not in the history'})")
    if not outputs:
        lines.append("  no output")
    if attempts and history.events:
        lo = min(a.start_ms for a in attempts) - window_ms
        hi = max(a.end_ms for a in attempts) + window_ms
        near = [e for e in history.events if lo <= e.at_ms <= hi]
        lines.extend(f"  event at {e.at_ms:.0f} ms: {e.what}" for e in near)
    return lines


def check(history: History) -> Report:
    """Every violation of exactly-once the history shows (see the module docstring)."""
    violations: list[Violation] = []
    inputs: dict[str, InputRecord] = {}
    for r in history.inputs:
        if r.id in inputs:
            first = inputs[r.id]
            violations.append(Violation("duplicated", (r.id,), (
                f"{r.id} is in the input twice ({first.partition}@{first.offset} and "
                f"{r.partition}@{r.offset}): its ids are not unique")))
        else:
            inputs[r.id] = r
    attempts: dict[str, Attempt] = {}
    for a in history.attempts:
        if a.outcome not in OUTCOMES:
            raise ValueError(f"attempt {a.id}: outcome {a.outcome!r} is not one of {OUTCOMES}")
        attempts[a.id] = a
    copies: dict[str, list[OutputRecord]] = defaultdict(list)
    for o in history.outputs:
        copies[o.id].append(o)
        writer = attempts.get(o.attempt)
        if o.id not in inputs:
            violations.append(Violation("unknown", (o.id,), (
                f"output {o.partition}@{o.offset} names input {o.id}, which is not in the "
                "input")))
        if writer is None:
            violations.append(Violation("unknown", (o.id,), (
                f"output {o.partition}@{o.offset} of {o.id} names attempt {o.attempt}, which "
                "the application never began")))
        elif writer.outcome == "aborted":
            note = f" ({writer.note})" if writer.note else ""
            violations.append(Violation("aborted visible", (o.id,), (
                f"output {o.partition}@{o.offset} of {o.id} was written by attempt "
                f"{writer.id}, which aborted{note}")))
    for rid, r in inputs.items():
        got = copies.get(rid, [])
        if not got:
            violations.append(Violation("lost", (rid,), (
                f"input {rid} at {r.partition}@{r.offset} has no output")))
        elif len(got) > 1:
            where = ", ".join(f"{o.partition}@{o.offset} by {o.attempt}" for o in got)
            violations.append(Violation("duplicated", (rid,), (
                f"input {rid} at {r.partition}@{r.offset} is in the output {len(got)} times: "
                f"{where}")))
    for a in attempts.values():
        if a.outcome != "committed":
            continue
        missing = [rid for rid in a.ids
                   if not any(o.attempt == a.id for o in copies.get(rid, []))]
        if missing:
            violations.append(Violation("committed missing", tuple(missing[:5]), (
                f"attempt {a.id} committed, yet {len(missing)} of its {len(a.ids)} outputs "
                f"are not visible (first: {', '.join(missing[:5])})")))
    violations.extend(_reorderings(inputs, copies))
    return Report(history, violations)


def _reorderings(inputs: dict[str, InputRecord],
                 copies: dict[str, list[OutputRecord]]) -> Iterable[Violation]:
    """Per input partition and output partition: the outputs' offsets must rise with
    the inputs' offsets. Each record's first copy counts (a duplicate is already one
    violation); each inversion of neighbours is one violation."""
    lanes: dict[tuple[int, int], list[tuple[int, int, str]]] = defaultdict(list)
    for rid, r in inputs.items():
        got = copies.get(rid)
        if got:
            first = min(got, key=lambda o: (o.partition, o.offset))
            lanes[(r.partition, first.partition)].append((r.offset, first.offset, rid))
    for (pin, pout), lane in sorted(lanes.items()):
        lane.sort()
        for (ia, oa, a), (ib, ob, b) in zip(lane, lane[1:], strict=False):
            if ob < oa:
                yield Violation("reordered", (a, b), (
                    f"input partition {pin}: {a} ({pin}@{ia}) comes before {b} ({pin}@{ib}), "
                    f"but in output partition {pout} {a} is at {oa}, after {b} at {ob}"))


__all__ = ["Attempt", "Event", "History", "InputRecord", "OutputRecord", "Report",
           "Violation", "check", "record_history"]
