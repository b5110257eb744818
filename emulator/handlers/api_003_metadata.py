"""Metadata (key 3), v0-13.

Brokers that are up, the controller id, topic IDs (v10+), leader epochs (v7+),
offline replicas (v5+), lookups by topic ID, and auto topic creation
(auto.create.topics.enable with num.partitions and default.replication.factor).
As Kafka 4.4, the request that auto-creates a topic is answered with the topic's
UNKNOWN_TOPIC_OR_PARTITION and no partitions (Kafka's broker forwards the creation to the
controller and answers before its metadata has the topic); the partitions appear in the
answers from 30 ms later (AUTO_CREATE_SHOWN_MS in emulator/cluster/topics.py: when Kafka's
brokers learn it from the controller; until then it is unknown here, by name, by id and in
an all-topics answer; client_tests/test_metadata_auto_create.py and test_kafka_go.py, on
both targets). With an authorizer,
as Kafka: topics without DESCRIBE are left out of an all-topics answer and answered
TOPIC_AUTHORIZATION_FAILED when named; auto creation needs CREATE on the cluster or
the topic; authorized operations (v8+) are filled when asked for. Under Kafka's timing
(``--fidelity kafka``) each broker answers from its own view of the topics, which learns
the controller's changes a few ms late (emulator/cluster/metadata_views.py): a topic just
created is unknown there for that while, one just deleted still listed.
"""

from __future__ import annotations

from emulator.cluster.metadata_views import CURRENT, TopicImage
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


def image_entry(img: TopicImage) -> dict:
    """A topic as a broker whose metadata lags still sees it (metadata_views)."""
    return {"error_code": E.NONE, "name": img.name, "topic_id": img.id,
            "is_internal": img.is_internal, "partitions": img.entries}


def _unknown(name: str | None) -> dict:
    return {"error_code": E.UNKNOWN_TOPIC_OR_PARTITION, "name": name, "partitions": []}


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
    views = cluster.metadata_views
    stale = views.active and bool(views.stale_names())
    requested = req["topics"]
    topics = []
    if requested is None or (version == 0 and not requested):
        topics = [topic_entry(cluster, t) for t in cluster.topics.values()
                  if allowed(ctx, Op.DESCRIBE, RT.TOPIC, t.name)
                  and not (cluster.auto_created and cluster.not_yet_shown(t.name))]
        if stale:
            topics = _as_broker_sees(ctx, topics)
    else:
        allow_auto = req["allow_auto_topic_creation"] if version >= 4 else True
        for item in requested:
            name, tid = item["name"], item.get("topic_id", ZERO_ID)
            # By id when an id is given (the Java 4.x consumer sends the id with an
            # empty, not null, name), as Kafka's broker resolves it.
            if name is None or tid != ZERO_ID:
                t = cluster.topics_by_id.get(tid)
                if stale:  # as this broker's metadata knows the id (metadata_views)
                    known = views.name_of_id(ctx.broker_id, tid)
                    if known is not CURRENT:
                        img = views.view(ctx.broker_id, known) if known else None
                        if img is None or img is CURRENT:
                            topics.append({"error_code": E.UNKNOWN_TOPIC_ID, "name": None,
                                           "topic_id": tid, "partitions": []})
                        elif not allowed(ctx, Op.DESCRIBE, RT.TOPIC, img.name):
                            topics.append(_denied(None, tid))
                        else:
                            topics.append(image_entry(img))
                        continue
                if t is not None and not allowed(ctx, Op.DESCRIBE, RT.TOPIC, t.name):
                    topics.append(_denied(None, tid))
                elif t is None or cluster.not_yet_shown(t.name):
                    topics.append({"error_code": E.UNKNOWN_TOPIC_ID, "name": None,
                                   "topic_id": tid, "partitions": []})
                else:
                    topics.append(topic_entry(cluster, t))
                continue
            if not allowed(ctx, Op.DESCRIBE, RT.TOPIC, name):
                topics.append(_denied(name))
                continue
            t = cluster.topics.get(name)
            if stale:
                img = views.view(ctx.broker_id, name)
                if img is None:  # this broker has not learned of it (or of its deletion)
                    topics.append(_unknown(name))
                    continue
                if img is not CURRENT:
                    topics.append(image_entry(img))
                    continue
            if t is not None and cluster.not_yet_shown(name):
                topics.append(_unknown(name))  # auto-created a moment ago (module doc)
                continue
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
                topics.append(_unknown(name))
            else:
                topics.append(topic_entry(cluster, t))
    return {
        "throttle_time_ms": 0,
        "brokers": live_brokers(cluster, ctx.listener),
        "cluster_id": cluster.cluster_id,
        "controller_id": reported_controller_id(cluster),
        "topics": topics,
    }


def _as_broker_sees(ctx: RequestContext, topics: list[dict]) -> list[dict]:
    """An all-topics answer as this broker's metadata has it: the topics whose changes it
    has not learned yet replaced by what it sees (metadata_views), deleted ones it still
    knows added, created ones it does not know yet left out."""
    views = ctx.cluster.metadata_views
    stale = set(views.stale_names())
    out = []
    for entry in topics:
        name = entry["name"]
        if name in stale:
            stale.discard(name)
            img = views.view(ctx.broker_id, name)
            if img is None:
                continue
            if img is not CURRENT:
                entry = image_entry(img)
        out.append(entry)
    for name in sorted(stale):  # gone from the controller, or not allowed
        img = views.view(ctx.broker_id, name)
        if img is not None and img is not CURRENT and name not in ctx.cluster.topics \
                and allowed(ctx, Op.DESCRIBE, RT.TOPIC, name):
            out.append(image_entry(img))
    return out
