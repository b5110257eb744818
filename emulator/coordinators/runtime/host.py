"""The cluster as the coordinators use it: every member of ``ClusterState`` they touch.

The coordinators live in the cluster's internal topics (__consumer_offsets,
__transaction_state, __share_group_state) and read its topics, configs and clock; they
tell news through its events and wake parked requests through ``changed``. Naming
those members in one protocol (``ClusterState`` implements it; mypy checks that it
does) keeps the coordinators' dependency on the cluster as small as it is today and
visible: a new use of the cluster from a coordinator is added here first, where a
reviewer sees it, not through an untyped ``state`` that let any attribute through.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Protocol

from emulator.cluster.configs import ConfigDict
from emulator.cluster.events import DomainEvent
from emulator.cluster.metadata import ChangeKey, Topic
from emulator.cluster.partition import Partition
from emulator.fidelity import Fidelity


class ClusterHost(Protocol):
    """What the coordinators ask of the cluster (emulator.cluster.state.ClusterState)."""

    # ---- data: topics, configs, brokers ----------------------------------------------
    @property
    def topics(self) -> dict[str, Topic]: ...

    @property
    def topics_by_id(self) -> dict[bytes, Topic]: ...

    @property
    def topic_set_version(self) -> tuple[int, int]:
        """Changes when a topic is created or deleted (regex subscriptions' cache key)."""
        ...

    @property
    def config(self) -> ConfigDict:
        """The brokers' static configs (the coordinators' timeouts and sizes)."""
        ...

    @property
    def group_configs(self) -> dict[str, dict[str, str]]:
        """Per-group dynamic configs (IncrementalAlterConfigs on a GROUP resource)."""
        ...

    @property
    def fidelity(self) -> Fidelity: ...

    def is_alive(self, broker_id: int) -> bool: ...

    def is_running(self, broker_id: int) -> bool:
        """Alive and its process up: a crashed broker the controller has not fenced yet is
        alive (still leader in the metadata) but takes no request, a marker included."""
        ...

    def alive_brokers(self) -> list[int]:
        """The registered, unfenced brokers (the share state topic's replication factor)."""
        ...

    # ---- time and randomness -----------------------------------------------------------
    def now(self) -> int: ...

    @property
    def rng(self) -> random.Random: ...

    # ---- writing: internal topics, transaction markers ----------------------------------
    def create_topic(self, name: str, num_partitions: int = -1, replication_factor: int = -1,
                     assignments: dict[int, list[int]] | None = None,
                     configs: Mapping[str, str | None] | None = None,
                     validate_only: bool = False) -> Topic | None: ...

    def append_control(self, p: Partition, data: bytes) -> int:
        """Append a control batch (a transaction marker) as the leader."""
        ...

    # ---- news: events, wake-ups, the tick ------------------------------------------------
    @property
    def hooks(self) -> list[Callable[[str, DomainEvent], None]]:
        """The observers of domain events: the coordinators add theirs."""
        ...

    @property
    def tick_hooks(self) -> list[Callable[[int], object]]:
        """Called with the time at the end of every cluster tick: the coordinators'
        timers (sessions, rebalances, transaction timeouts, share locks)."""
        ...

    def emit(self, event: DomainEvent) -> None: ...

    def changed(self, partitions_only: bool = False,
                keys: Iterable[ChangeKey] | None = None) -> None: ...


if TYPE_CHECKING:
    from emulator.cluster.state import ClusterState

    def _cluster_state_is_a_host(state: ClusterState) -> ClusterHost:
        """mypy checks here that ClusterState implements the protocol in full."""
        return state


__all__ = ["ClusterHost"]
