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

MakeCluster = Callable[..., Sim]


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
