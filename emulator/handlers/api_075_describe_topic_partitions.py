"""DescribeTopicPartitions (key 75), v0: paged topic descriptions for the Admin client.

Topics sorted by name, at most response_partition_limit partitions per response,
with a cursor to continue; no eligible leader replicas (ELR) are kept, so those
lists are empty. Topics the principal may not DESCRIBE are left out of a listing of
all topics and answered TOPIC_AUTHORIZATION_FAILED when named; topic authorized
operations are always filled, as Kafka does for this API.
"""

from __future__ import annotations

from typing import Any

from emulator.cluster.metadata_views import CURRENT
from emulator.handlers.authz import RT, Op, allowed, authorized_operations
from emulator.handlers.base import RequestContext
from wire.errors import ErrorCode as E

API_KEY = 75
VERSIONS = (0, 0)
AUTHORIZE = ()  # topics are filtered by DESCRIBE in the handler


def handle(ctx: RequestContext, req: dict, version: int) -> dict:
    cluster = ctx.cluster
    views = cluster.metadata_views
    # Under Kafka's timing, the topics as this broker's metadata has them (metadata_views)
    stale = set(views.stale_names()) if views.active else set()
    names = sorted(t["name"] for t in req["topics"]) if req["topics"] else [
        n for n in sorted(set(cluster.topics) | stale)
        if allowed(ctx, Op.DESCRIBE, RT.TOPIC, n)]
    cursor = req.get("cursor")
    start_topic, start_part = (cursor["topic_name"], cursor["partition_index"]) if cursor else (
        None, 0)
    limit = max(1, req["response_partition_limit"])
    out: list[dict[str, Any]] = []
    used = 0
    next_cursor = None
    for name in names:
        if start_topic is not None and name < start_topic:
            continue
        if not allowed(ctx, Op.DESCRIBE, RT.TOPIC, name):
            out.append({"error_code": E.TOPIC_AUTHORIZATION_FAILED, "name": name,
                        "topic_id": bytes(16), "partitions": []})
            continue
        t: Any = cluster.topics.get(name)
        img = views.view(ctx.broker_id, name) if name in stale else CURRENT
        if img is not CURRENT:
            t = img
        if t is None and not req["topics"]:
            continue  # a listing leaves out what this broker does not know
        if t is None:  # its authorized operations filled too (measured on Kafka 4.4)
            out.append({"error_code": E.UNKNOWN_TOPIC_OR_PARTITION, "name": name,
                        "topic_id": bytes(16), "partitions": [],
                        "topic_authorized_operations": authorized_operations(
                            ctx, RT.TOPIC, name)})
            continue
        first = start_part if name == start_topic else 0
        parts = []
        for index in range(first, len(t.partitions)):
            if used >= limit:
                next_cursor = {"topic_name": name, "partition_index": index}
                break
            parts.append(_partition(ctx, index, t.partitions[index]))
            used += 1
        out.append({"error_code": E.NONE, "name": name, "topic_id": t.id,
                    "is_internal": t.is_internal, "partitions": parts,
                    "topic_authorized_operations": authorized_operations(ctx, RT.TOPIC, name)})
        if next_cursor is not None:
            break
    return {"throttle_time_ms": 0, "topics": out, "next_cursor": next_cursor}


def _partition(ctx: RequestContext, index: int, p: Any) -> dict:
    """One partition (a Partition, or a PartitionImage of a broker's lagging view)."""
    return {
        "error_code": E.LEADER_NOT_AVAILABLE if p.leader < 0 else E.NONE,
        "partition_index": index, "leader_id": p.leader,
        "leader_epoch": p.leader_epoch, "replica_nodes": list(p.replicas),
        "isr_nodes": list(p.isr), "eligible_leader_replicas": [],
        "last_known_elr": [],
        "offline_replicas": [b for b in p.replicas if not ctx.cluster.is_alive(b)
                             or b in getattr(p, "offline", ())],
    }
