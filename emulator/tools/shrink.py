"""``kafka-emulator shrink``: a failing seed shrunk to the faults that cause it.

    kafka-emulator shrink --check MODULE:FUNCTION --seed N [--brokers 3]
                          [--config KEY=VALUE ...] [--runs 3] [--confirm 3]
                          [--from SCHEDULE] [--out FILE]

``FUNCTION(cluster)`` is the client's check: it runs the client program against a
started ``emulator.Cluster`` and returns its broken promises (a list of sentences; empty:
passed); raising counts as failing. When the function has a ``cluster_options`` attribute
(a dict of ``Cluster`` arguments, such as ``config``), those are the clusters' defaults.

The command runs the check under ``--fidelity adversarial --seed N`` (up to ``--runs``
times) until it fails, takes the adversary's record of that run as a fault schedule
(emulator/faults/schedule.py: an adversary section), shrinks it (emulator/faults/shrink.py:
ddmin, each candidate judged by up to ``--runs`` replays on a fresh cluster), replays the
result ``--confirm`` times, and writes it (``--out``, default ``shrunk-seed-N.json``):
``kafka-emulator --fault-schedule FILE`` or ``Cluster(fault_schedule=...)`` replays it,
and so does the pytest plugin's ``--kafka-emulator-schedule FILE``. ``--from`` starts from a
schedule instead of a seed's run (one written earlier, to shrink it further).

Exit status: 0 when a cause was found (the shrunk schedule failed at least one of its
confirming replays), 1 when not (the check passed every run of the seed, fails without
any fault, or the record does not replay), 2 for a usage error.
"""

from __future__ import annotations

import importlib
import logging
import os
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from emulator.faults.schedule import AdversaryFault, FaultSchedule, ScheduleError
from emulator.faults.shrink import ShrinkResult, shrink
from emulator.tools.args import UsageParser, broker_count, whole

# A client's check: runs the program against the cluster, returns the broken promises.
Check = Callable[[Any], Iterable[str] | None]


@dataclass
class Outcome:
    """One run of the check: failed or not, why, and the faults the adversary injected."""

    failed: bool
    problems: list[str]
    record: list[Any] = field(default_factory=list)
    seconds: float = 0.0


def run_check(check: Check, cluster_options: dict[str, Any], *, seed: int | None = None,
              schedule: FaultSchedule | None = None) -> Outcome:
    """Start a cluster (adversarial under ``seed``, or from ``schedule``), run the check
    against it, stop it."""
    from emulator.runtime import Cluster

    options = {"brokers": 3, **cluster_options, "port": 0}
    if schedule is not None:
        options["fault_schedule"] = schedule
    else:
        options.update(fidelity="adversarial", seed=seed)
    t0 = time.monotonic()
    with Cluster(**options) as c:
        try:
            problems = [str(p) for p in (check(c) or ())]
        except Exception as e:  # the program or its check gave up: a failure too
            problems = [f"{type(e).__name__}: {e}"]
        record = list(c.adversary.record) if c.adversary is not None else []
    return Outcome(bool(problems), problems, record, time.monotonic() - t0)


@dataclass
class Report:
    """A shrink's outcome: the schedule to replay and how it was found."""

    seed: int
    start: FaultSchedule  # the failing run's record
    result: ShrinkResult[AdversaryFault] | None
    schedule: FaultSchedule | None  # the shrunk one
    first: Outcome | None  # the failing run (None: none failed)
    last_failure: Outcome | None = None  # a confirming replay that failed

    @property
    def found(self) -> bool:
        return self.result is not None and self.result.cause_found and any(
            self.result.confirmed)

    def text(self) -> str:
        """What the user reads: these faults, in this order, break the check."""
        if self.first is None:
            return f"seed {self.seed}: the check passed every run; nothing to shrink"
        assert self.result is not None
        lines = [self.result.summary()]
        if self.schedule is not None and self.result.cause_found:
            if self.result.confirmed and not any(self.result.confirmed):
                lines.append("the shrunk set did not fail again: the failure needs timing "
                             "these faults do not fix (more --runs, or a check that waits "
                             "for what it reads); the faults of the last failing candidate:")
            else:
                lines.append(_these(len(self.result.faults)) + " the check:")
            lines += [f"  {i}. {f.describe()}" for i, f in enumerate(self.result.faults, 1)]
            if self.last_failure is not None:
                lines.append("  a failing replay: " + "; ".join(self.last_failure.problems))
        return "\n".join(lines)


def _these(n: int) -> str:
    return "this fault fails" if n == 1 else f"these {n} faults, in this order, fail"


def shrink_seed(check: Check, seed: int, *, cluster_options: dict[str, Any] | None = None,
                runs: int = 3, confirm: int = 3, start: FaultSchedule | None = None,
                say: Callable[[str], None] | None = None) -> Report:
    """Find a failing run of ``check`` under ``seed`` (or take ``start``), shrink its
    faults, replay the result; ``say`` hears the progress."""
    options = dict(getattr(check, "cluster_options", {}) or {})
    options.update(cluster_options or {})
    tell = say or (lambda _line: None)
    first: Outcome | None = None
    if start is None:
        for attempt in range(1, runs + 1):
            outcome = run_check(check, options, seed=seed)
            tell(f"seed {seed}, run {attempt}: {'FAILED' if outcome.failed else 'passed'} "
                 f"({len(outcome.record)} faults, {outcome.seconds:.1f} s)"
                 + (f": {'; '.join(outcome.problems)}" if outcome.failed else ""))
            if outcome.failed:
                first = outcome
                break
        if first is None:
            return Report(seed, FaultSchedule(seed, [], (), "adversarial"), None, None, None)
        start = FaultSchedule.from_record(seed, first.record)
    else:
        seed = start.seed
        first = Outcome(True, ["(from a schedule)"])
    base = start
    failures: list[Outcome] = []

    def replay(candidate: tuple[AdversaryFault, ...]) -> bool:
        outcome = run_check(check, options, schedule=base.with_adversary(candidate))
        if outcome.failed:
            failures.append(outcome)
        return outcome.failed

    def heard(candidate: tuple[AdversaryFault, ...], failed: bool, used: int) -> None:
        tell(f"  {len(candidate):3d} fault(s): {'fails' if failed else 'passes'} "
             f"({used} run{'s' * (used > 1)})")

    result = shrink(base.adversary or (), replay, runs=runs, confirm=confirm, on_test=heard)
    schedule = None
    if result.cause_found:
        schedule = base.with_adversary(result.faults, comment=(
            f"seed {seed}: {len(result.faults)} of the {len(result.original)} faults of a "
            f"failing run, shrunk by kafka-emulator shrink (each candidate judged by up to "
            f"{runs} runs); failed {sum(result.confirmed)} of {len(result.confirmed)} "
            f"replays"))
    # The confirming replays are the last runs: the last failure is one of them.
    last = failures[-1] if any(result.confirmed) else None
    return Report(seed, start, result, schedule, first, last)


def load_check(spec: str) -> Check:
    """``MODULE:FUNCTION`` (the module found from the current directory too)."""
    module, sep, name = spec.partition(":")
    if not sep or not module or not name:
        raise ValueError(f"--check expects MODULE:FUNCTION, got {spec!r}")
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        fn = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as e:
        raise ValueError(f"--check {spec}: {e}") from None
    if not callable(fn):
        raise ValueError(f"--check {spec}: not a function")
    return fn  # type: ignore[no-any-return]


def build_parser() -> UsageParser:
    p = UsageParser(prog="kafka-emulator shrink",
                    description="Shrink a failing --fidelity adversarial seed to the "
                    "smallest set of faults that still fails a client's check, replay it, "
                    "write it as a fault schedule (docs/faults.md).")
    p.add_argument("--check", required=True, metavar="MODULE:FUNCTION",
                   help="FUNCTION(cluster) runs the client program and returns its broken "
                   "promises (empty: passed; raising: failed)")
    p.add_argument("--seed", type=whole, default=None,
                   help="the failing seed (required unless --from)")
    p.add_argument("--from", dest="start", metavar="SCHEDULE",
                   help="shrink this schedule's adversary section instead of a seed's run")
    p.add_argument("--brokers", type=broker_count, default=None,
                   help="brokers of each cluster (default: the check's, else 3)")
    p.add_argument("--config", action="append", default=[], metavar="KEY=VALUE",
                   help="broker config of each cluster (repeatable)")
    p.add_argument("--runs", type=whole, default=3,
                   help="runs a candidate may take to fail before it counts as passing "
                   "(default 3: clients are not deterministic)")
    p.add_argument("--confirm", type=whole, default=3,
                   help="replays of the shrunk schedule (default 3)")
    p.add_argument("--out", metavar="FILE", help="where the shrunk schedule goes "
                   "(default shrunk-seed-N.json)")
    p.add_argument("--verbose", action="store_true", help="the emulator's log too")
    return p


def main(argv: list[str] | None = None) -> int:
    p = build_parser()
    args = p.parse_args(argv)
    if args.seed is None and not args.start:
        p.error("give --seed N (a failing seed) or --from SCHEDULE")
    if args.runs < 1 or args.confirm < 0:
        p.error("--runs must be 1 or more, --confirm 0 or more")
    try:
        check = load_check(args.check)
        config = dict(item.split("=", 1) for item in args.config if "=" in item)
        if len(config) != len(args.config):
            raise ValueError("--config expects KEY=VALUE")
        brokers = args.brokers or getattr(check, "cluster_options", {}).get("brokers", 3)
        start = None
        if args.start:
            start = FaultSchedule.parse(Path(args.start).read_text(encoding="utf-8"),
                                        range(1, brokers + 1), at_start=True)
            if start.adversary is None:
                raise ValueError(f"--from {args.start}: the schedule has no adversary section")
    except (ValueError, OSError) as e:  # ScheduleError is a ValueError
        p.error(str(e).replace("\n", "; ") if isinstance(e, ScheduleError) else str(e))
    options: dict[str, Any] = {}
    if args.brokers is not None:
        options["brokers"] = args.brokers
    if config:
        options["config"] = {**getattr(check, "cluster_options", {}).get("config", {}),
                             **config}
    seed = args.seed if args.seed is not None else (start.seed if start else 0)
    muted = logging.root.manager.disable
    if not args.verbose:
        logging.disable(logging.WARNING)  # clients reconnecting; the report is the output
    try:
        report = shrink_seed(check, seed, cluster_options=options, runs=args.runs,
                             confirm=args.confirm, start=start,
                             say=lambda line: print(line, flush=True))
    finally:
        logging.disable(muted)
    print(report.text())
    if report.schedule is not None:
        out = Path(args.out or f"shrunk-seed-{report.seed}.json")
        out.write_text(report.schedule.to_json(), encoding="utf-8")
        print(f"wrote {out}: replay with kafka-emulator --fault-schedule {out} "
              f"(or Cluster(fault_schedule=Path({str(out)!r}).read_text()))")
    return 0 if report.found else 1


if __name__ == "__main__":
    sys.exit(main())
