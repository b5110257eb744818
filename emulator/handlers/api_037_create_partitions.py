"""CreatePartitions (key 37), v0-3: grow a topic, optionally with manual assignments.

New partitions start empty at offset 0 (Spark checks that), with replicas placed
as Kafka's rack-unaware assignment does, or where the request says. More than
10,000 additional partitions in one request fail it whole with POLICY_VIOLATION,
as Kafka 4.4's controller refuses them. A large request is built in steps between
other clients' requests and published whole (emulator/cluster/steps.py); a request
naming a topic such a step is still building waits for it.
"""

from __future__ import annotations

from collections import Counter

from emulator.cluster import topics
from emulator.cluster.steps import SLICE_FROM_PARTITIONS, Steps
from emulator.handlers.authz import RT, Each, Op
from emulator.handlers.base import Delayed, RequestContext, Sliced, sliced_if
from emulator.handlers.util import MutationQuota, after_pending, error_of
from wire.errors import ErrorCode as E
from wire.errors import KafkaError

API_KEY = 37
VERSIONS = (0, 3)
AUTHORIZE = (Each(RT.TOPIC, Op.ALTER, "topics"),)


def handle(ctx: RequestContext, req: dict, version: int) -> dict | Sliced | Delayed:
    return after_pending(ctx, (t["name"] for t in req["topics"]), lambda: _handle(ctx, req),
                         req["timeout_ms"])


def _handle(ctx: RequestContext, req: dict) -> dict | Sliced:
    cluster = ctx.cluster
    counts = Counter(t["name"] for t in req["topics"])
    try:
        topics.check_create_partitions_total(
            cluster, [(t["name"], t["count"]) for t in req["topics"]])
    except KafkaError as e:  # the whole request fails, as Kafka 4.4's controller does
        return {"throttle_time_ms": 0, "results": [
            {"name": t["name"], "error_code": e.code, "error_message": e.message}
            for t in req["topics"]]}
    added = 0
    for t in req["topics"]:
        topic = cluster.topics.get(t["name"])
        if topic is not None:
            added += max(t["count"] - len(topic.partitions), 0)
    return sliced_if(_create(ctx, req, counts), added >= SLICE_FROM_PARTITIONS)


def _create(ctx: RequestContext, req: dict, counts: Counter) -> Steps[dict]:
    """Each topic grown in steps (emulator/cluster/steps.py) and published whole. The
    new partitions count against the client's controller_mutation_rate (strict from v3)
    under --fidelity kafka."""
    quota = MutationQuota(ctx, strict=ctx.api_version >= 3)
    results = []
    for t in req["topics"]:
        r = {"name": t["name"], "error_code": E.NONE, "error_message": None}
        if counts[t["name"]] > 1:
            r["error_code"] = E.INVALID_REQUEST
            r["error_message"] = "Duplicate topic in request."
        else:
            try:
                assignments = None
                if t["assignments"] is not None:
                    assignments = [a["broker_ids"] for a in t["assignments"]]
                topic = ctx.cluster.topics.get(t["name"])
                if quota.quotas is not None and topic is not None:
                    quota.take(t["count"] - len(topic.partitions))
                yield from ctx.cluster.create_partitions_steps(
                    t["name"], t["count"], assignments, req["validate_only"])
            except KafkaError as e:  # a business failure; anything else is our bug
                r["error_code"], r["error_message"] = error_of(e)
        results.append(r)
    return {"throttle_time_ms": quota.throttle_ms, "results": results}
