"""ListConfigResources (key 74), v0-1: the resources that have configs (KIP-1142).

As a real 4.4 broker answers (measured): v0 (ListClientMetricsResources) lists client
metrics resources; v1 lists the requested types, or all supported ones when the list is
empty: client metrics (16; the emulator has none), broker loggers (8) and brokers (4)
by broker id, topics (2) by name, groups (32) by id. A type Kafka does not list gets
UNSUPPORTED_VERSION.
"""

from __future__ import annotations

from emulator.handlers.authz import ClusterOp, Op
from emulator.handlers.base import RequestContext
from wire.errors import ErrorCode as E

API_KEY = 74
VERSIONS = (0, 1)
AUTHORIZE = (ClusterOp(Op.DESCRIBE_CONFIGS),)
TOPIC, BROKER, BROKER_LOGGER, CLIENT_METRICS, GROUP = 2, 4, 8, 16, 32
ORDER = (CLIENT_METRICS, BROKER_LOGGER, BROKER, TOPIC, GROUP)


def _names(ctx: RequestContext, resource_type: int) -> list[str]:
    cluster = ctx.cluster
    if resource_type in (BROKER, BROKER_LOGGER):
        return [str(b) for b in sorted(cluster.brokers)]
    if resource_type == TOPIC:
        return sorted(cluster.topics)
    if resource_type == GROUP:
        ids: set[str] = set()
        for coordinator in (ctx.services.groups, ctx.services.share_if_built):
            if coordinator is not None:
                ids.update(coordinator.groups)
        return sorted(ids)
    return []  # CLIENT_METRICS: no client metrics subscriptions here


def handle(ctx: RequestContext, req: dict, version: int) -> dict:
    wanted = set(req["resource_types"]) if version >= 1 else {CLIENT_METRICS}
    if not wanted:
        wanted = set(ORDER)
    if not wanted <= set(ORDER):
        return {"throttle_time_ms": 0, "error_code": E.UNSUPPORTED_VERSION,
                "config_resources": []}
    return {"throttle_time_ms": 0, "error_code": E.NONE, "config_resources": [
        {"resource_name": name, "resource_type": t}
        for t in ORDER if t in wanted for name in _names(ctx, t)]}
