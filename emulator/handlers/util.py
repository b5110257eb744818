"""Small helpers shared by handlers: error codes from exceptions, broker lists."""

from __future__ import annotations

from emulator.cluster.partition import KafkaError
from emulator.cluster.state import ClusterState
from emulator.handlers.base import RequestContext


def error_of(exc: KafkaError) -> tuple[int, str | None]:
    """A domain error's code and message for a response. Handlers catch KafkaError
    only: anything else is our bug, answered UNKNOWN_SERVER_ERROR by the server and
    logged (which fails the test that met it)."""
    return exc.code, exc.message


def live_brokers(cluster: ClusterState, listener: str | None = None) -> list[dict]:
    return [
        {"node_id": b.id, "host": b.host, "port": b.port_for(listener), "rack": b.rack}
        for b in sorted(cluster.brokers.values(), key=lambda b: b.id)
        if b.alive
    ]


def node_endpoint(cluster: ClusterState, broker_id: int,
                  listener: str | None = None) -> dict | None:
    b = cluster.brokers.get(broker_id)
    if b is None:
        return None
    return {"node_id": b.id, "host": b.host, "port": b.port_for(listener), "rack": b.rack}


def transaction_version(ctx: RequestContext) -> int:
    """The finalized ``transaction.version`` feature level the cluster runs at (2:
    transactions v2, KIP-890 part 2), as ApiVersions advertises it."""
    levels = ctx.services.get("features")
    return levels.finalized.get("transaction.version", 0) if levels is not None else 0


def quota_throttle(ctx: RequestContext, key: str, size: int) -> int:
    """Record ``size`` bytes against the client's ``key`` quota (producer_byte_rate,
    consumer_byte_rate); the throttle_time_ms Kafka would answer (0 without a quota)."""
    quotas = ctx.services.get("quotas")
    if quotas is None or not quotas.quotas:
        return 0
    user = ctx.principal.split(":", 1)[-1]
    return quotas.record(key, user, ctx.client_id or "", size, ctx.cluster.now())
