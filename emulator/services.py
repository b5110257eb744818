"""Domain services beyond the partition data: the coordinators, fetch sessions, client
quotas, and what the server adds (security, the advertised API versions, features).

``build_services`` creates them for one cluster; handlers find them as attributes of
``ctx.services`` (a ``Services``). A unit test that builds one ``RequestContext`` by hand
gives only the service it exercises (``Services(groups=gc)``); the others are absent.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar, overload

from emulator.cluster.fetch_sessions import FetchSessions
from emulator.cluster.quotas import ClientQuotas
from emulator.cluster.state import ClusterState
from emulator.coordinators.coordinator_log import CoordinatorLog
from emulator.coordinators.groups.coordinator import GroupCoordinator
from emulator.coordinators.transactions.coordinator import TransactionCoordinator

if TYPE_CHECKING:
    # Built on first use (build_services): a cluster no share client talks to never
    # loads them (docs/scale.md, start-up).
    from emulator.coordinators.share.coordinator import SharePartitionManager
    from emulator.coordinators.share.state_log import ShareStateLog
    from emulator.security.config import Security
    from emulator.versions import FeatureLevels, Ranges

T = TypeVar("T")


def _absent() -> Any:
    """A service this ``Services`` was built without (None; typed as the service so that
    handlers, which run only with every service built, need no None checks)."""
    return None


class _BuiltOnFirstUse(Generic[T]):
    """A service of ``Services`` that ``build_services`` leaves to its first use:
    reading it runs ``Services.build_share`` once (when set); ``Services(share=x)`` and
    assignments set it as a plain field does. ``Services.share_if_built`` reads without
    building."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.attr = f"_{name}"

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> None: ...
    @overload
    def __get__(self, obj: Services, owner: type | None = None) -> T: ...
    def __get__(self, obj: Services | None, owner: type | None = None) -> T | None:
        if obj is None:
            return None  # the field's default (dataclasses asks the class): absent
        value: T | None = obj.__dict__.get(self.attr)
        if value is None and obj.build_share is not None:
            build, obj.build_share = obj.build_share, None
            build()
            value = obj.__dict__.get(self.attr)
        return value  # type: ignore[return-value]  # None: a Services built without it

    def __set__(self, obj: Services, value: T) -> None:
        obj.__dict__[self.attr] = value


@dataclass
class Services:
    """The services of one cluster, by role."""

    groups: GroupCoordinator = field(default_factory=_absent)
    transactions: TransactionCoordinator = field(default_factory=_absent)
    # The __consumer_offsets / __transaction_state records of the two above.
    coordinator_log: CoordinatorLog = field(default_factory=_absent)
    # Share groups (KIP-932): built on first use, see build_services.
    share: _BuiltOnFirstUse[SharePartitionManager] = _BuiltOnFirstUse()
    share_state_log: _BuiltOnFirstUse[ShareStateLog] = _BuiltOnFirstUse()
    fetch_sessions: FetchSessions = field(default_factory=_absent)
    quotas: ClientQuotas = field(default_factory=_absent)
    # UnregisterBroker: stopped brokers whose registration was removed (until they start)
    unregistered_brokers: set[int] = field(default_factory=set)
    # Set by the runtime and the server (emulator.runtime, emulator.server.app).
    security: Security | None = None
    advertised: Ranges = field(default_factory=dict)  # the API versions we advertise
    features: FeatureLevels | None = None
    # Builds share and share_state_log at the first read of either (build_services).
    build_share: Callable[[], None] | None = field(default=None, repr=False, compare=False)

    @property
    def share_if_built(self) -> SharePartitionManager | None:
        """The share coordinator if anything has built it, without building it: what a
        caller asks that only has work when share groups exist (a closed connection's
        share sessions)."""
        share: SharePartitionManager | None = self.__dict__.get("_share")
        return share


def build_services(state: ClusterState) -> Services:
    """Each constructor registers its hooks on ``state``: this order is their order.
    The share coordinator and its state log are built at their first use (a share
    request, a group listing, a data dir's replay), their hooks put where they would
    have been (after the coordinator log's): most clusters never see a share group,
    and their modules were 3% of the start's instructions."""
    s = Services()
    s.groups = GroupCoordinator(state)
    s.transactions = TransactionCoordinator(state, s.groups)
    s.coordinator_log = CoordinatorLog(state, s.groups, s.transactions)
    at_hook, at_tick = len(state.hooks), len(state.tick_hooks)

    def build_share() -> None:
        from emulator.coordinators.share.coordinator import SharePartitionManager
        from emulator.coordinators.share.state_log import ShareStateLog

        hooks, ticks = len(state.hooks), len(state.tick_hooks)
        s.share = SharePartitionManager(state, s.groups)
        s.share_state_log = ShareStateLog(state, s.share)
        # The hooks they registered go where build_services would have put them (the
        # lists only ever grow at their end, so the places are still there).
        added_hooks, added_ticks = state.hooks[hooks:], state.tick_hooks[ticks:]
        del state.hooks[hooks:], state.tick_hooks[ticks:]
        state.hooks[at_hook:at_hook] = added_hooks
        state.tick_hooks[at_tick:at_tick] = added_ticks

    s.build_share = build_share
    s.fetch_sessions = FetchSessions(state)
    s.quotas = ClientQuotas()
    return s
