"""A failing seed of a wrong program shrinks to its cause.

The wrong program of client_tests/wrong_clients/ whose run is shortest (a second or
two): a producer that retries without idempotence, whose bug needs a Produce that was
written and whose answer never came (a lost response, a leader moving after the
append). Find a seed under which it fails with its bug's symptom, shrink the
adversary's record of that run (``kafka-emulator shrink``'s driver,
emulator/tools/shrink.py), and check what a user is promised: the empty schedule passes
(the faults are the cause), the shrunk schedule is a few faults, and replayed on a fresh
cluster (``Cluster(fault_schedule=...)``) it still fails with the bug's symptom.

Every wrong program is also a function of this module, named as its module
(``producer_retries``, ``acks1_durable``, ...): a check in the form ``kafka-emulator
shrink --check`` takes (``FUNCTION(cluster) -> its bug's broken promises``)::

    kafka-emulator shrink --check client_tests.test_shrink_wrong_clients:producer_retries \\
        --seed 3

(``retriable_as_fatal`` runs ~12 s and records 30-50 faults: minutes to shrink;
``create_then_use`` fails with no fault at all under adversarial's Kafka timing, which
the shrinker says.)
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from client_tests.wrong_clients.cases import CASES, CONFIG, Case
from emulator import Cluster
from emulator.faults.schedule import FaultSchedule
from emulator.tools.shrink import Report, run_check, shrink_seed

# The fidelity modes are the emulator's: nothing to run against Kafka here.
pytestmark = pytest.mark.emulator_only

CASE = {c.name: c for c in CASES}
SEEDS = 20  # the bound the wrong programs are held to: each fails within 20 seeds
MOST_FAULTS = 5  # "a few faults"


def _check(case: Case) -> Callable[[Cluster], list[str]]:
    """The wrong program's run as a shrink check: only its bug's own symptom counts
    (a run that failed otherwise, e.g. a reader that gave up, is not this bug)."""

    def check(cluster: Cluster) -> list[str]:
        try:
            problems = case.run(cluster, False)
        except Exception as e:  # e.g. the checker could not read to the end in time
            print(f"{case.name}: the run gave up ({type(e).__name__}: {e}): not its "
                  f"symptom {case.symptom!r}")
            return []
        return [p for p in problems if case.symptom in p]
    check.__name__ = case.name
    check.cluster_options = {"brokers": 3, "config": CONFIG}  # type: ignore[attr-defined]
    return check


def _options(check: Callable[[Cluster], list[str]]) -> dict[str, Any]:
    return dict(getattr(check, "cluster_options", {}))


# Every wrong program as a check, named as its module: --check THIS_MODULE:NAME.
for _case in CASES:
    globals()[_case.name] = _check(_case)
producer_retries = _check(CASE["producer_retries"])


def _first_failing_seed(check: Callable[[Cluster], list[str]]) -> int:
    for seed in range(SEEDS):
        if run_check(check, _options(check), seed=seed).failed:
            return seed
    pytest.fail(f"{check.__name__}: no seed of 0..{SEEDS - 1} failed with its symptom")


def test_a_failing_seed_shrinks_to_a_few_faults_that_still_fail(tmp_path: Path) -> None:
    check = producer_retries
    seed = _first_failing_seed(check)
    lines: list[str] = []
    report: Report = shrink_seed(check, seed, runs=2, confirm=2, say=lines.append)
    print("\n".join(lines))
    print(report.text())
    result = report.result
    assert result is not None and report.schedule is not None, report.text()
    # The empty schedule (adversarial timing, no fault) passed: the faults are the cause.
    assert result.tests[0] == (0, False), result.tests
    assert not result.empty_fails and result.full_fails, report.text()
    assert 1 <= len(result.faults) <= MOST_FAULTS, report.text()
    assert len(result.faults) < len(result.original) or len(result.original) <= MOST_FAULTS
    assert any(result.confirmed), report.text()
    # Written, read back, replayed on a fresh cluster: fails again with the symptom
    # (up to 3 runs: the clients' timing is theirs).
    path = tmp_path / "shrunk.json"
    path.write_text(report.schedule.to_json())
    schedule = FaultSchedule.parse(path.read_text(), [1, 2, 3], at_start=True)
    assert schedule.script == report.schedule.script and schedule.seed == seed
    replays = []
    for _ in range(3):
        outcome = run_check(check, _options(check), schedule=schedule)
        replays.append(outcome)
        if outcome.failed:
            break
    assert replays[-1].failed, [o.problems for o in replays]
    # Every fault the replay injected is one of the schedule's.
    assert {f.fault_key() for f in replays[-1].record} <= schedule.script
