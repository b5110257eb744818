"""Pieces ShareFetch (78) and ShareAcknowledge (79) share: acknowledgements per
partition, the current-leader hint, top-level error bodies."""

from __future__ import annotations

from emulator.handlers.base import RequestContext
from emulator.handlers.util import node_endpoint
from wire.errors import ErrorCode as E
from wire.errors import KafkaError

LEADER_HINT_ERRORS = (E.NOT_LEADER_OR_FOLLOWER, E.FENCED_LEADER_EPOCH)


def top_error(code: int, message: str | None) -> dict:
    """A request-level error: Kafka 4.4 then answers AcquisitionLockTimeoutMs 0."""
    return {"throttle_time_ms": 0, "error_code": code, "error_message": message or E(code).name,
            "acquisition_lock_timeout_ms": 0, "responses": [], "node_endpoints": []}


def leader_hint(ctx: RequestContext, key: tuple[bytes, int], row: dict, nodes: dict) -> None:
    """NOT_LEADER_OR_FOLLOWER: tell the client who leads now (KIP-951)."""
    if row.get("error_code") not in LEADER_HINT_ERRORS and \
            row.get("acknowledge_error_code") not in LEADER_HINT_ERRORS:
        return
    topic = ctx.cluster.topics_by_id.get(key[0])
    if topic is None or not 0 <= key[1] < len(topic.partitions):
        return
    p = topic.partitions[key[1]]
    row["current_leader"] = {"leader_id": p.leader, "leader_epoch": p.leader_epoch}
    ep = node_endpoint(ctx.cluster, p.leader)
    if ep:
        nodes[p.leader] = ep


def acknowledge_all(ctx: RequestContext, sc, group_id: str, member_id: str,
                    acks: list[tuple[bytes, int, list[dict]]], renew: bool, nodes: dict,
                    ack_field: str) -> dict[tuple[bytes, int], dict]:
    """Apply every partition's acknowledgement batches; the result rows by partition.

    ``ack_field`` is "acknowledge_error" (ShareFetch) or "error" (ShareAcknowledge).
    """
    out: dict[tuple[bytes, int], dict] = {}
    for tid, idx, batches in acks:
        row = out[(tid, idx)] = {"partition_index": idx, f"{ack_field}_code": E.NONE}
        try:
            sc.acknowledge(ctx.broker_id, group_id, member_id, tid, idx,
                           [(b["first_offset"], b["last_offset"], b["acknowledge_types"])
                            for b in batches], renew)
        except KafkaError as e:
            row[f"{ack_field}_code"] = e.code
            row[f"{ack_field}_message"] = e.message
            leader_hint(ctx, (tid, idx), row, nodes)
    return out


def per_state_partition(ctx: RequestContext, req: dict, apply,
                        known_topic: bool = False) -> dict:
    """The share coordinator APIs (83-87): ``apply(group, topic id, partition row)`` per
    partition, after checking this broker is that share-partition's share coordinator
    and, with ``known_topic``, that the topic exists (Kafka 4.4's Initialize, Delete and
    ReadSummary answer UNKNOWN_TOPIC_OR_PARTITION for a topic id it does not know;
    measured by client_tests/test_share_groups_authz_kafka.py)."""
    sc = ctx.services.share
    results = []
    for t in req["topics"]:
        rows = []
        for p in t["partitions"]:
            row = {"partition": p["partition"], "error_code": E.NONE}
            try:
                if not req["group_id"]:
                    raise KafkaError(E.INVALID_REQUEST, "Group id must be set")
                sc.check_state_coordinator(ctx.broker_id, req["group_id"], t["topic_id"],
                                           p["partition"])
                if known_topic and t["topic_id"] not in ctx.cluster.topics_by_id:
                    raise KafkaError(E.UNKNOWN_TOPIC_OR_PARTITION)
                row.update(apply(sc, req["group_id"], t["topic_id"], p) or {})
            except KafkaError as e:
                row.update(error_code=e.code, error_message=e.message or E(e.code).name)
            rows.append(row)
        results.append({"topic_id": t["topic_id"], "partitions": rows})
    return {"results": results}
