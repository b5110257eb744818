"""Exactly-once consume-transform-produce through a seeded storm of faults, every
record's history checked (client_tests/eos_history.py runs it, emulator/history.py
checks it): nothing lost, nothing duplicated, nothing from an aborted transaction
visible, no committed transaction undone, order per input partition kept.

Each seed is one test: its own emulator process with a data directory, two instances
of a confluent-kafka transactional application, and 4 faults drawn from the seed
(leader kills, group and transaction coordinator moves, network cuts, SIGKILL
restarts). ``KAFKA_EMULATOR_HISTORY_SEEDS`` picks the seeds: a count (``50`` runs
seeds 1-50), a range (``100-199``) or a list (``3,17``); the default, seeds 1 and 2, is
the README's test command's sample (about 10 s each on two cores; ten took ~100 s per
xdist worker), and the nightly job (.ci/adversary-nightly) runs 50.
bench/eos_history.py runs many and prints a table.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from client_tests.eos_history import run

# Not run with --target kafka: SIGKILL restarts of an emulator process on its data dir,
# and faults through its control plane.
pytestmark = pytest.mark.emulator_only


def seeds(spec: str | None) -> list[int]:
    """``N`` (seeds 1..N), ``A-B`` or ``A,B,C``."""
    if not spec:
        return [1, 2]
    if "-" in spec:
        a, b = spec.split("-", 1)
        return list(range(int(a), int(b) + 1))
    if "," in spec:
        return [int(s) for s in spec.split(",") if s.strip()]
    return list(range(1, int(spec) + 1))


@pytest.mark.parametrize("seed", seeds(os.environ.get("KAFKA_EMULATOR_HISTORY_SEEDS")))
def test_exactly_once_history_holds_through_the_seeds_faults(seed: int,
                                                             tmp_path: Path) -> None:
    result = run(seed, tmp_path)
    assert result.report.ok, result.text()
    history = result.report.history
    # not vacuous: records went through, transactions committed, the faults ran
    assert result.inputs > 0 and history.outputs, result.text()
    assert any(a.outcome == "committed" for a in history.attempts), result.text()
    assert len(result.windows) == 4, result.text()
    failed = [e.what for e in history.events if e.what.startswith("schedule step failed")]
    assert not failed, result.text()
    assert result.emulator_errors == 0, result.text()
