"""Shared fixtures of the unit tests, and the emulator's logged-exception watch.

The logged-exception watch (emulator.testing): a unit test runs the domain in-process;
whatever it makes the emulator log as an exception is our bug, so the test fails (opt
out: ``kafka_emulator_allow_exceptions``).

``make_cluster`` builds what most domain tests drive: a ClusterState of virtual brokers
on a ManualClock, with the FaultInjector that stops brokers and pauses followers. A test
module sets the broker configs all its clusters share in ``BROKER_CONFIG`` (a test's own
keyword arguments win).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import NamedTuple

import pytest

from emulator.cluster.clock import ManualClock
from emulator.cluster.state import Broker, ClusterState
from emulator.faults import FaultInjector
from emulator.pytest_plugin import kafka_emulator_logged_exceptions  # noqa: F401


class Sim(NamedTuple):
    """A cluster on a manual clock: ``s, clock, faults = make_cluster()``."""

    state: ClusterState
    clock: ManualClock
    faults: FaultInjector


MakeCluster = Callable[..., Sim]


@pytest.fixture
def make_cluster(request: pytest.FixtureRequest) -> MakeCluster:
    """``make_cluster(brokers=3, clock=None, **broker_config)``: brokers are a count
    (ids 1..n) or the ids themselves; each on host "h", port 9000 + id."""
    shared = getattr(request.module, "BROKER_CONFIG", {})

    def make(brokers: int | Iterable[int] = 3, clock: ManualClock | None = None,
             **broker_config: str) -> Sim:
        ids = range(1, brokers + 1) if isinstance(brokers, int) else brokers
        clock = clock or ManualClock()
        state = ClusterState([Broker(i, "h", 9000 + i) for i in ids], clock=clock,
                             broker_config={**shared, **broker_config})
        return Sim(state, clock, FaultInjector(state))

    return make

