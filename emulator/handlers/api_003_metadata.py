"""Metadata (key 3), v0-13.

Brokers that are up, the controller id, topic IDs (v10+), leader epochs (v7+),
offline replicas (v5+), lookups by topic ID, and auto topic creation
(auto.create.topics.enable with num.partitions and default.replication.factor).
As Kafka 4.4, the request that auto-creates a topic is answered with the topic's
UNKNOWN_TOPIC_OR_PARTITION and no partitions (Kafka's broker forwards the creation to the
controller and answers before its metadata has the topic); the partitions appear in the
next answer (client_tests/test_metadata_auto_create.py, on both targets). With an authorizer,
as Kafka: topics without DESCRIBE are left out of an all-topics answer and answered
TOPIC_AUTHORIZATION_FAILED when named; auto creation needs CREATE on the cluster or
the topic; authorized operations (v8+) are filled when asked for.
"""

from __future__ import annotations

from emulator.cluster.state import ClusterState, Topic, validate_topic_name
from emulator.handlers.authz import NOT_REQUESTED, RT, Op, allowed, authorized_operations
from emulator.handlers.base import RequestContext
from emulator.handlers.util import live_brokers, reported_controller_id
from wire.errors import ErrorCode as E
from wire.errors import KafkaError

API_KEY = 3
VERSIONS = (0, 13)
AUTHORIZE = ()  # topics are filtered by DESCRIBE in the handler, as KafkaApis does
ZERO_ID = bytes(16)


def partition_entries(cluster: ClusterState, topic: Topic) -> list[dict]:
    """Cached by the cluster per topic until one of its partitions changes (read only)."""
    return cluster.partition_metadata(topic)


def topic_entry(cluster: ClusterState, topic: Topic) -> dict:
    return {
        "error_code": E.NONE,
        "name": topic.name,
        "topic_id": topic.id,
        "is_internal": topic.is_internal,
        "partitions": partition_entries(cluster, topic),
    }


def _denied(name: str | None, tid: bytes = ZERO_ID) -> dict:
    return {"error_code": E.TOPIC_AUTHORIZATION_FAILED, "name": name, "topic_id": tid,
            "partitions": []}


def handle(ctx: RequestContext, req: dict, version: int) -> dict:
    out = _handle(ctx, req, version)
    if version >= 8:
        want = req["include_topic_authorized_operations"]
        for t in out["topics"]:
            ok = want and t["error_code"] != E.TOPIC_AUTHORIZATION_FAILED and t["name"]
            t["topic_authorized_operations"] = authorized_operations(
                ctx, RT.TOPIC, t["name"]) if ok else NOT_REQUESTED
        if version <= 10:
            out["cluster_authorized_operations"] = authorized_operations(ctx, RT.CLUSTER) \
                if req["include_cluster_authorized_operations"] else NOT_REQUESTED
    return out


def _handle(ctx: RequestContext, req: dict, version: int) -> dict:
    cluster = ctx.cluster
    requested = req["topics"]
    topics = []
    if requested is None or (version == 0 and not requested):
        topics = [topic_entry(cluster, t) for t in cluster.topics.values()
                  if allowed(ctx, Op.DESCRIBE, RT.TOPIC, t.name)]
    else:
        allow_auto = req["allow_auto_topic_creation"] if version >= 4 else True
        for item in requested:
            name, tid = item["name"], item.get("topic_id", ZERO_ID)
            # By id when an id is given (the Java 4.x consumer sends the id with an
            # empty, not null, name), as Kafka's broker resolves it.
            if name is None or tid != ZERO_ID:
                t = cluster.topics_by_id.get(tid)
                if t is not None and not allowed(ctx, Op.DESCRIBE, RT.TOPIC, t.name):
                    topics.append(_denied(None, tid))
                elif t is None:
                    topics.append({"error_code": E.UNKNOWN_TOPIC_ID, "name": None,
                                   "topic_id": tid, "partitions": []})
                else:
                    topics.append(topic_entry(cluster, t))
                continue
            if not allowed(ctx, Op.DESCRIBE, RT.TOPIC, name):
                topics.append(_denied(name))
                continue
            t = cluster.topics.get(name)
            if t is None:
                created = None
                try:
                    validate_topic_name(name)
                    creatable = allow_auto and (allowed(ctx, Op.CREATE, RT.CLUSTER) or allowed(
                        ctx, Op.CREATE, RT.TOPIC, name))
                    if allow_auto and not creatable and cluster.config.get(
                            "auto.create.topics.enable", "true") == "true":
                        topics.append(_denied(name))
                        continue
                    created = cluster.auto_create(name) if creatable else None
                except KafkaError as e:
                    topics.append({"error_code": e.code, "name": name, "partitions": []})
                    continue
                if created is not None:
                    # created now: not in this answer yet, as on Kafka (see module doc)
                    topics.append({"error_code": E.UNKNOWN_TOPIC_OR_PARTITION, "name": name,
                                   "topic_id": ZERO_ID, "is_internal": False,
                                   "partitions": []})
                    continue
            if t is None:
                topics.append({"error_code": E.UNKNOWN_TOPIC_OR_PARTITION, "name": name,
                               "partitions": []})
            else:
                topics.append(topic_entry(cluster, t))
    return {
        "throttle_time_ms": 0,
        "brokers": live_brokers(cluster, ctx.listener),
        "cluster_id": cluster.cluster_id,
        "controller_id": reported_controller_id(cluster),
        "topics": topics,
    }
