"""Domain services beyond the partition data: group and transaction coordinators,
fetch sessions, client quotas.

``build_services`` creates them for one cluster; handlers find them in ``ctx.services``
by name ("groups", "transactions", "share", "fetch_sessions", "quotas"). Each is
optional so that the core runs without them.
"""

from __future__ import annotations

from typing import Any

from emulator.cluster.fetch_sessions import FetchSessions
from emulator.cluster.quotas import ClientQuotas
from emulator.cluster.state import ClusterState


def build_services(state: ClusterState) -> dict[str, Any]:
    services: dict[str, Any] = {}
    try:
        from emulator.coordinators.groups.coordinator import GroupCoordinator
    except ImportError:
        pass
    else:
        services["groups"] = GroupCoordinator(state)
    try:
        from emulator.coordinators.transactions.coordinator import TransactionCoordinator
    except ImportError:
        pass
    else:
        services["transactions"] = TransactionCoordinator(state, services.get("groups"))
    if "groups" in services and "transactions" in services:
        from emulator.coordinators.coordinator_log import CoordinatorLog

        services["coordinator_log"] = CoordinatorLog(state, services["groups"],
                                                     services["transactions"])
    if "groups" in services:
        from emulator.coordinators.share.coordinator import ShareCoordinator

        services["share"] = ShareCoordinator(state, services["groups"])
        from emulator.coordinators.share.state_log import ShareStateLog

        services["share_state_log"] = ShareStateLog(state, services["share"])
    services["fetch_sessions"] = FetchSessions(state)
    services["quotas"] = ClientQuotas()
    # UnregisterBroker: stopped brokers whose registration was removed (until they start)
    services["unregistered_brokers"] = set()
    return services
