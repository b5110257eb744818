"""The wrong-client set: each deliberately wrong program passes on ``fast`` (the
adversarial half, failing within a bounded number of seeds with the fix passing under
every seed tried, comes with --fidelity adversarial's faults).

The programs are client_tests/wrong_clients/ (README.md there tells each bug); the
cases (setup, run, checker) are wrong_clients/cases.py.
"""

from __future__ import annotations

import pytest

from client_tests.wrong_clients.cases import CASES, Case, cluster

# The fidelity modes are the emulator's: nothing to run against Kafka here.
pytestmark = pytest.mark.emulator_only

IDS = [c.name for c in CASES]


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_wrong_program_passes_on_fast(case: Case) -> None:
    """The bug hides on fast: what a green CI on a fast test broker shows."""
    with cluster("fast", 0) as c:
        assert case.run(c, False) == []
