"""The unit tests' cluster: a ClusterState of virtual brokers on a ManualClock, and the
helpers the domain tests drive it with.

One home for what the tests of the controller, reassignment, elections, the ISR and the
fidelity modes used to write each for themselves: ``new_cluster`` (brokers, clock,
fidelity mode, broker configs), ``settle`` (let replication run a few rounds) and
``produce`` (an acknowledged append to a partition's leader). A test takes its cluster
from conftest.py's ``make_cluster`` fixture, which adds the module's ``BROKER_CONFIG``;
a helper that builds clusters outside a test's arguments (per mode, in a loop) calls
``new_cluster`` itself.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

from emulator.cluster.clock import ManualClock
from emulator.cluster.partition import Partition
from emulator.cluster.replication import AppendResult
from emulator.cluster.state import Broker, ClusterState
from emulator.faults import FaultInjector
from emulator.fidelity import Fidelity
from wire.records import build_batch


class Sim(NamedTuple):
    """A cluster on a manual clock: ``s, clock, faults = make_cluster()``."""

    state: ClusterState
    clock: ManualClock
    faults: FaultInjector


def new_cluster(brokers: int | Iterable[int] = 3, clock: ManualClock | None = None, *,
                fidelity: str | Fidelity | None = None, **broker_config: str) -> Sim:
    """Brokers are a count (ids 1..n) or the ids themselves, each on host "h", port
    9000 + id; ``fidelity`` a mode name (seed 0) or a Fidelity; None is the default mode.
    The FaultInjector is the one that stops brokers and pauses followers."""
    ids = range(1, brokers + 1) if isinstance(brokers, int) else brokers
    clock = clock or ManualClock()
    mode = Fidelity(fidelity) if isinstance(fidelity, str) else fidelity
    state = ClusterState([Broker(i, "h", 9000 + i) for i in ids], clock=clock,
                         broker_config=broker_config, fidelity=mode)
    return Sim(state, clock, FaultInjector(state))


def settle(s: ClusterState, clock: ManualClock, ticks: int = 4) -> None:
    """``ticks`` rounds of replication, 10 ms apart: followers catch up, join the ISR and
    the high watermarks move, but no lag timeout (replica.lag.time.max.ms) passes."""
    for _ in range(ticks):
        clock.advance(10)
        s.tick()


def produce(s: ClusterState, p: Partition, n: int = 1, acks: int = 1,
            value: bytes = b"v") -> AppendResult:
    """``n`` records of ``value`` appended at ``p``'s leader with ``acks``; the append
    must succeed."""
    r = s.append(p.leader, p.topic, p.index, build_batch([(None, value)] * n), acks)
    assert r.error == 0, r
    return r
