"""Domain services beyond the partition data: the coordinators, fetch sessions, client
quotas, and what the server adds (security, the advertised API versions, features).

``build_services`` creates them for one cluster; handlers find them as attributes of
``ctx.services`` (a ``Services``). A unit test that builds one ``RequestContext`` by hand
gives only the service it exercises (``Services(groups=gc)``); the others are absent.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from emulator.cluster.fetch_sessions import FetchSessions
from emulator.cluster.quotas import ClientQuotas
from emulator.cluster.state import ClusterState
from emulator.coordinators.coordinator_log import CoordinatorLog
from emulator.coordinators.groups.coordinator import GroupCoordinator
from emulator.coordinators.share.coordinator import SharePartitionManager
from emulator.coordinators.share.state_log import ShareStateLog
from emulator.coordinators.transactions.coordinator import TransactionCoordinator

if TYPE_CHECKING:
    from emulator.security.config import Security
    from emulator.versions import FeatureLevels, Ranges


def _absent() -> Any:
    """A service this ``Services`` was built without (None; typed as the service so that
    handlers, which run only with every service built, need no None checks)."""
    return None


@dataclass
class Services:
    """The services of one cluster, by role."""

    groups: GroupCoordinator = field(default_factory=_absent)
    transactions: TransactionCoordinator = field(default_factory=_absent)
    # The __consumer_offsets / __transaction_state records of the two above.
    coordinator_log: CoordinatorLog = field(default_factory=_absent)
    share: SharePartitionManager = field(default_factory=_absent)
    share_state_log: ShareStateLog = field(default_factory=_absent)
    fetch_sessions: FetchSessions = field(default_factory=_absent)
    quotas: ClientQuotas = field(default_factory=_absent)
    # UnregisterBroker: stopped brokers whose registration was removed (until they start)
    unregistered_brokers: set[int] = field(default_factory=set)
    # Set by the runtime and the server (emulator.runtime, emulator.server.app).
    security: Security | None = None
    advertised: Ranges = field(default_factory=dict)  # the API versions we advertise
    features: FeatureLevels | None = None


def build_services(state: ClusterState) -> Services:
    """Each constructor registers its hooks on ``state``: this order is their order."""
    s = Services()
    s.groups = GroupCoordinator(state)
    s.transactions = TransactionCoordinator(state, s.groups)
    s.coordinator_log = CoordinatorLog(state, s.groups, s.transactions)
    s.share = SharePartitionManager(state, s.groups)
    s.share_state_log = ShareStateLog(state, s.share)
    s.fetch_sessions = FetchSessions(state)
    s.quotas = ClientQuotas()
    return s
