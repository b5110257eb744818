"""What the cluster's data asks of the roles that sit above it, typed.

Two things are reached through ``ClusterMetadata`` although they are built above it:
the active controller (emulator.cluster.controller, which imports leadership and
reassignment, so it cannot be imported by them) and the faults in force
(emulator.faults, a layer above the whole domain). An attribute typed ``Any`` hid
both from every check: leadership and reassignment called the controller back, and
replication and the followers called the fault model, with nothing to say which
calls existed. This module declares those seams as protocols, so that mypy checks
every call through them and a new one has to be added here, in plain sight:

- ``ControllerRole``: which broker holds the role and its epoch, its timers
  (``tick``, asked by the facade above it), and its partition and replica state
  machines (``machines``, emulator.cluster.state_machines: a leaf below their
  drivers, so leadership and reassignment move them by calling down).
- ``FaultConditions``: the fetch conditions (follower faults, broker cuts, fetch
  budgets) followers.py asks, the storage conditions (a failing or slow log dir)
  replication.py asks, and the checkpoint timer the facade's tick runs. The fault
  model (emulator.faults.model.FaultModel) implements it.

A check that finds a write failing does not act on it: it answers no, and keeps the
failure (``LogDirFailure``) for the caller to take (``take_log_dir_failures``) and tell
its ``log_dir_listeners`` (emulator.cluster.followers), which ClusterState points at
the controller's ``log_dir_failed``, as the ISR's news reaches the controller's side
through ``isr_listeners``. The controller thus never runs inside a fault check.

The data directory (emulator.storage) writes from an observer of the leader's
``Appended``, in the middle of the append; a write it cannot make it reports to the
cluster's ``LogDirFailureChannel`` (``ClusterMetadata.log_dir_failure_channel``, a call
down), which the append takes once ``emit`` has returned, the same way. The controller
thus never runs inside an event observer either.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Protocol

from emulator.cluster.partition import Partition
from emulator.cluster.state_machines import ControllerStateMachines


@dataclass(frozen=True, slots=True)
class LogDirFailure:
    """A write to a broker's log dir failed (Kafka's LogDirFailureChannel gets the
    IOException): what the controller's ``log_dir_failed`` is told."""

    broker: int
    log_dir: str
    reason: str


# Told each failed log dir in the order the checks found them (emulator.cluster.followers
# ``log_dir_listeners``); what a listener answers is ignored.
LogDirListener = Callable[[LogDirFailure], object]


class ControllerRole(Protocol):
    """The active controller as the cluster's data holds it (``ClusterMetadata.controller``)."""

    @property
    def broker_id(self) -> int: ...

    @property
    def epoch(self) -> int: ...

    @property
    def machines(self) -> ControllerStateMachines:
        """The partition and replica state machines every leadership and replica-set
        change moves (leadership.apply_change, reassignment's replicas)."""
        ...

    def tick(self, now: int) -> bool:
        """The role's timers (unclean elections, the leader rebalance); whether any
        leadership changed."""
        ...


class LogDirFailureChannel:
    """Kafka's LogDirFailureChannel: where a writer outside the domain (the data
    directory, writing from an event observer) reports a log dir it found failing,
    for the domain to tell its ``log_dir_listeners`` once the observers are done (the
    append that emitted the event, the data directory's own sync, the next tick).
    A ``WriteChecks`` like the fault model."""

    __slots__ = ("_failures",)

    def __init__(self) -> None:
        self._failures: list[LogDirFailure] = []

    def report(self, failure: LogDirFailure) -> None:
        self._failures.append(failure)

    @property
    def pending(self) -> bool:
        """Is a failure reported and not yet taken? (one attribute test per append)"""
        return bool(self._failures)

    def take_log_dir_failures(self) -> list[LogDirFailure]:
        failures, self._failures = self._failures, []
        return failures


class WriteChecks(Protocol):
    """What a check that may find a log dir failing leaves for its caller."""

    def take_log_dir_failures(self) -> list[LogDirFailure]:
        """The log dirs the checks found failing since the last call, in order (the
        caller tells them to its ``log_dir_listeners`` at once); empties the list."""
        ...


class FetchConditions(WriteChecks, Protocol):
    """What a follower's fetch asks of the faults in force (emulator.cluster.followers)."""

    @property
    def affects_fetching(self) -> bool:
        """Is any follower, broker-link or storage fault in force? When none is, the
        followers ask nothing per fetch."""
        ...

    def follower_can_fetch(self, p: Partition, follower: int, now: int) -> bool:
        """May ``follower`` fetch ``p`` now (not paused, not cut from the leader, not
        delayed, its log dir able to write)? A failing log dir answers no here, as a
        follower's append fails on Kafka, and leaves its ``LogDirFailure`` to take."""
        ...

    def fetch_budget(self, p: Partition, follower: int, budget: int) -> int:
        """The bytes ``follower`` may fetch of ``p`` this time, under ``budget``."""
        ...


class StorageConditions(WriteChecks, Protocol):
    """What the leader's append asks of the faults in force (emulator.cluster.replication)."""

    @property
    def storage(self) -> Collection[object]:
        """The storage faults in force: the append asks ``storage_write`` only when
        there are some."""
        ...

    def storage_write(self, p: Partition, broker: int, now: int) -> tuple[str | None, int]:
        """A write of ``p``'s batch on ``broker``: (the error that fails it, or None;
        when a slow write is done, else 0). A failed write leaves its
        ``LogDirFailure`` to take."""
        ...


class FaultConditions(FetchConditions, StorageConditions, Protocol):
    """The faults in force as the cluster asks them (``ClusterMetadata.faults``)."""

    def tick(self, now: int) -> bool:
        """Storage faults' checkpoints that came due; whether one failed a log dir (left,
        like a write check's, to take: the facade's tick tells the controller after)."""
        ...


__all__ = ["ControllerRole", "FaultConditions", "FetchConditions", "LogDirFailure",
           "LogDirFailureChannel", "LogDirListener", "StorageConditions", "WriteChecks"]
