"""Shared fixtures of the unit tests, and the emulator's logged-exception watch.

The logged-exception watch (emulator.testing): a unit test runs the domain in-process;
whatever it makes the emulator log as an exception is our bug, so the test fails (opt
out: ``kafka_emulator_allow_exceptions``).

``make_cluster`` builds what most domain tests drive: a ClusterState of virtual brokers
on a ManualClock, in a fidelity mode, with the FaultInjector that stops brokers and
pauses followers (tests/cluster_sim.py, with ``settle`` and ``produce``). A test module
sets the broker configs all its clusters share in ``BROKER_CONFIG`` (a test's own keyword
arguments win).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import pytest
from cluster_sim import Sim, new_cluster

from emulator.cluster.clock import ManualClock
from emulator.fidelity import Fidelity
from emulator.pytest_plugin import kafka_emulator_logged_exceptions  # noqa: F401
from wire import records

MakeCluster = Callable[..., Sim]


@pytest.fixture(autouse=True)
def batches_dated_for_the_manual_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """``build_batch`` without a timestamp stamps 0 here, not the wall clock.

    The domain's tests run on a ManualClock (1_700_000_000_000 unless a test says
    otherwise), and the log refuses a record dated more than
    message.timestamp.after.max.ms (1 h) past the broker's clock (INVALID_TIMESTAMP):
    today's date is years past it. 0 is at or before every clock, which
    message.timestamp.before.max.ms (unbounded by default) accepts, and is what these
    tests were written with. Retention runs here only when a test calls it (no server's
    pass runs), and a test that calls it, or starts a server on the wall clock, passes
    its timestamps itself."""
    monkeypatch.setattr(records, "default_timestamp_ms", lambda: 0)


@pytest.fixture
def make_cluster(request: pytest.FixtureRequest) -> MakeCluster:
    """``make_cluster(brokers=3, clock=None, fidelity=None, **broker_config)``: brokers are
    a count (ids 1..n) or the ids themselves; each on host "h", port 9000 + id;
    ``fidelity`` a mode name or a Fidelity (cluster_sim.new_cluster)."""
    shared = getattr(request.module, "BROKER_CONFIG", {})

    def make(brokers: int | Iterable[int] = 3, clock: ManualClock | None = None,
             fidelity: str | Fidelity | None = None, **broker_config: str) -> Sim:
        return new_cluster(brokers, clock, fidelity=fidelity, **{**shared, **broker_config})

    return make
