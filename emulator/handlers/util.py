"""Small helpers shared by handlers: error codes from exceptions, broker lists."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from emulator.cluster import config_ops
from emulator.cluster.delayed import topics_settled
from emulator.cluster.state import ClusterState
from emulator.cluster.steps import Steps
from emulator.handlers.base import RequestContext, sliced_if
from emulator.security.acl import ANONYMOUS
from wire.errors import ErrorCode as E
from wire.errors import KafkaError


def error_of(exc: KafkaError) -> tuple[int, str | None]:
    """A domain error's code and message for a response. Handlers catch KafkaError
    only: anything else is our bug, answered UNKNOWN_SERVER_ERROR by the server and
    logged (which fails the test that met it)."""
    return exc.code, exc.message


def live_brokers(cluster: ClusterState, listener: str | None = None) -> list[dict]:
    return [
        {"node_id": b.id, "host": b.host_for(listener), "port": b.port_for(listener), "rack": b.rack}
        for b in sorted(cluster.brokers.values(), key=lambda b: b.id)
        if b.alive
    ]


def reported_controller_id(cluster: ClusterState) -> int:
    """The controller id a KRaft broker puts in Metadata and DescribeCluster: not the
    controller (clients cannot reach it) but a random live broker, which forwards what
    needs the controller; -1 when none is up (Kafka's MetadataCache does the same)."""
    alive = sorted(b.id for b in cluster.brokers.values() if b.alive)
    return cluster.rng.choice(alive) if alive else -1


def node_endpoint(cluster: ClusterState, broker_id: int,
                  listener: str | None = None) -> dict | None:
    b = cluster.brokers.get(broker_id)
    if b is None:
        return None
    return {"node_id": b.id, "host": b.host_for(listener), "port": b.port_for(listener), "rack": b.rack}


def transaction_version(ctx: RequestContext) -> int:
    """The finalized ``transaction.version`` feature level the cluster runs at (2:
    transactions v2, KIP-890 part 2), as ApiVersions advertises it."""
    levels = ctx.services.features
    return levels.finalized.get("transaction.version", 0) if levels is not None else 0


def quota_throttle(ctx: RequestContext, key: str, size: int) -> int:
    """Record ``size`` bytes against the client's ``key`` quota (producer_byte_rate,
    consumer_byte_rate); the throttle_time_ms Kafka would answer (0 without a quota)."""
    quotas = ctx.services.quotas
    if quotas is None or not quotas.quotas:
        return 0
    user = ctx.principal.split(":", 1)[-1]
    return quotas.record(key, user, ctx.client_id or "", size, ctx.cluster.now())


def quota_window_bytes(ctx: RequestContext, key: str) -> int | None:
    """What the client's ``key`` quota lets it take in one quota window (None without a
    quota): Kafka bounds a consumer's fetch by it."""
    quotas = ctx.services.quotas
    if quotas is None or not quotas.quotas:
        return None
    user = ctx.principal.split(":", 1)[-1]
    most = quotas.max_in_window(key, user, ctx.client_id or "")
    return None if most is None else int(most)


def quota_unrecord(ctx: RequestContext, key: str, size: int) -> None:
    """Take back bytes ``quota_throttle`` recorded for an answer sent without them."""
    quotas = ctx.services.quotas
    if quotas is not None and quotas.quotas:
        user = ctx.principal.split(":", 1)[-1]
        quotas.unrecord(key, user, ctx.client_id or "", size, ctx.cluster.now())


def delegation_token_error(ctx: RequestContext) -> int:
    """The error every delegation-token request gets here, in Kafka's order: on
    PLAINTEXT, on SSL without a client certificate (or from a token-authenticated
    session) DELEGATION_TOKEN_REQUEST_NOT_ALLOWED (measured on a real 4.4 broker), else
    DELEGATION_TOKEN_AUTH_DISABLED: the emulator has no ``delegation.token.secret.key``,
    Kafka's default, so tokens are never enabled."""
    session = ctx.session
    protocol = session.protocol if session is not None else "PLAINTEXT"
    if protocol == "PLAINTEXT" or (protocol == "SSL" and ctx.principal == ANONYMOUS):
        return E.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED
    return E.DELEGATION_TOKEN_AUTH_DISABLED


def static_quorum_voter_change(ctx: RequestContext, cluster_id: str | None,
                               verb: str) -> dict:
    """AddRaftVoter / RemoveRaftVoter on a static KRaft quorum (kraft.version 0), as a
    real 4.4 cluster answers (measured): a foreign cluster id INCONSISTENT_CLUSTER_ID,
    otherwise UNSUPPORTED_VERSION naming the change (``verb``: "adding", "removing")."""
    if cluster_id is not None and cluster_id != ctx.cluster.cluster_id:
        return {"throttle_time_ms": 0, "error_code": E.INCONSISTENT_CLUSTER_ID,
                "error_message": f'The given id "{cluster_id}" doesn\'t match the cluster id '
                                 f'"{ctx.cluster.cluster_id}"'}
    return {"throttle_time_ms": 0, "error_code": E.UNSUPPORTED_VERSION,
            "error_message": f"Cluster doesn't support {verb} voter because the "
                             "kraft.version feature is 0"}


def after_pending(ctx: RequestContext, names: Iterable[str | None],
                  run: Callable[[], Any], timeout_ms: int) -> Any:
    """``run()`` now, or once no topic of ``names`` is being created, grown or deleted
    in steps (the cluster's wait, emulator/cluster/delayed.py ``topics_settled``)."""
    waiting = topics_settled(ctx.cluster, names, timeout_ms)
    return run() if waiting is None else waiting.map(lambda _: run())


def describe_groups(ctx: RequestContext, group_ids: list[str],
                    coordinator_error: Callable[[int, str], int],
                    describe: Callable[[str], dict]) -> dict:
    """The answer to ConsumerGroupDescribe, ShareGroupDescribe and StreamsGroupDescribe:
    per group id, this broker's coordinator error for it (NOT_COORDINATOR, ...; none for
    an empty id) or ``describe(group_id)``."""
    out = []
    for gid in group_ids:
        err = coordinator_error(ctx.broker_id, gid) if gid else 0
        out.append({"group_id": gid, "error_code": err} if err else describe(gid))
    return {"throttle_time_ms": 0, "groups": out}


def alter_config_resources(req: dict, bound: Callable[[], int],
                           apply: Callable[[dict, bool], int]) -> Any:
    """AlterConfigs and IncrementalAlterConfigs: ``apply(resource, validate_only)``
    changes one resource (and returns the records it writes), ``bound()`` is the most
    records the request could write. The record cap first (config_ops.
    over_records_per_user_op), then each resource; in steps between other clients'
    requests when there are many (a Sliced)."""
    resources = req["resources"]

    def steps() -> Steps[dict]:
        if (yield from config_ops.over_records_per_user_op(
                resources, bound(), lambda r: apply(r, True))):
            return {"throttle_time_ms": 0, "responses": config_ops.refuse_all(resources)}
        out = []
        for i, r in enumerate(resources):
            if i and i % config_ops.STEP_RESOURCES == 0:
                yield
            res = {"error_code": E.NONE, "error_message": None,
                   "resource_type": r["resource_type"], "resource_name": r["resource_name"]}
            try:
                apply(r, req["validate_only"])
            except KafkaError as e:  # a business failure; anything else is our bug
                res["error_code"], res["error_message"] = error_of(e)
            out.append(res)
        return {"throttle_time_ms": 0, "responses": out}

    return sliced_if(steps(), len(resources) > 2 * config_ops.STEP_RESOURCES)


class MutationQuota:
    """One CreateTopics, CreatePartitions or DeleteTopics request against the client's
    controller_mutation_rate (KIP-599), as Kafka's controller applies it: ``take`` the
    partitions a topic creates or deletes before acting on it; it raises
    THROTTLING_QUOTA_EXCEEDED (no message, as Kafka 4.4 answers) when the strict quota
    refuses the topic, and ``throttle_ms`` is the response's throttle_time_ms. Enforced
    under --fidelity kafka only (docs/fidelity.md, controller-mutation-quota)."""

    def __init__(self, ctx: RequestContext, strict: bool) -> None:
        quotas = ctx.services.quotas
        self.ctx, self.strict, self.throttle_ms = ctx, strict, 0
        self.quotas = quotas if (quotas is not None and ctx.cluster.fidelity.kafka_timing
                                 and quotas.enforces("controller_mutation_rate")) else None

    def take(self, partitions: int) -> None:
        if self.quotas is None or partitions <= 0:
            return
        ctx = self.ctx
        accepted, throttle = self.quotas.controller_mutation(
            ctx.principal.split(":", 1)[-1], ctx.client_id or "", partitions,
            ctx.cluster.now(), self.strict)
        self.throttle_ms = max(self.throttle_ms, throttle)
        if not accepted:
            raise KafkaError(E.THROTTLING_QUOTA_EXCEEDED, None)
