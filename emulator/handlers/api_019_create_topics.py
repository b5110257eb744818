"""CreateTopics (key 19), v2-7.

Partitions and replication factor (or -1 for the broker defaults), manual
replica assignments, topic configs, validate_only; v5+ answers with the created
topic's partitions, replication factor and configs, v7+ with its topic ID. Any
broker accepts it (KRaft brokers forward to the controller). Duplicate names in
one request get INVALID_REQUEST, as Kafka does; a request for more than 10,000
partitions in all fails whole with POLICY_VIOLATION (the controller's
MAX_PARTITIONS_PER_BATCH). A large request is created in steps between other
clients' requests (emulator/cluster/steps.py), each topic published whole; a
request naming a topic such steps are still building or deleting waits for them.
"""

from __future__ import annotations

from collections import Counter

from emulator.cluster import config_ops, topics
from emulator.cluster.metadata import MAX_RECORDS_PER_USER_OP
from emulator.cluster.steps import SLICE_FROM_PARTITIONS, Steps
from emulator.handlers.authz import RT, Each, Op, allowed
from emulator.handlers.base import Delayed, RequestContext, Sliced, sliced_if
from emulator.handlers.util import MutationQuota, after_pending, error_of
from wire.errors import ErrorCode as E
from wire.errors import KafkaError

API_KEY = 19
VERSIONS = (2, 7)
AUTHORIZE = (Each(RT.TOPIC, Op.CREATE, "topics", unless_cluster=Op.CREATE),)


def handle(ctx: RequestContext, req: dict, version: int) -> dict | Sliced | Delayed:
    return after_pending(ctx, (t["name"] for t in req["topics"]), lambda: _handle(ctx, req),
                         req["timeout_ms"])


def _handle(ctx: RequestContext, req: dict) -> dict | Sliced:
    cluster = ctx.cluster
    counts = Counter(t["name"] for t in req["topics"])
    dups = sorted(n for n, c in counts.items() if c > 1)
    try:
        topics.check_create_topics_total(
            cluster, [(t["num_partitions"], len(t["assignments"])) for t in req["topics"]])
        wanted = [t for t in req["topics"] if t["name"] not in dups]
        if _records(ctx, wanted, exact=False) > MAX_RECORDS_PER_USER_OP:
            topics.check_records_per_user_op(_records(ctx, wanted, exact=True))
    except KafkaError as e:  # the whole request fails, as the controller's createTopics does
        return {"throttle_time_ms": 0, "topics": [
            {"name": t["name"], "error_code": e.code, "error_message": e.message,
             "num_partitions": -1, "replication_factor": -1, "configs": []}
            for t in req["topics"]]}
    large = sum(max(t["num_partitions"], len(t["assignments"])) for t in wanted) \
        >= SLICE_FROM_PARTITIONS
    return sliced_if(_create(ctx, req, dups), large)


def _create(ctx: RequestContext, req: dict, dups: list[str]) -> Steps[dict]:
    """The topics created one after another, each in steps (a large request is run by
    the server between other clients' requests: emulator/cluster/steps.py). Each new
    topic's partitions count against the client's controller_mutation_rate (strict from
    v6) under --fidelity kafka."""
    cluster = ctx.cluster
    quota = MutationQuota(ctx, strict=ctx.api_version >= 6)
    results = []
    for t in req["topics"]:
        name = t["name"]
        out = {"name": name, "error_code": E.NONE, "error_message": None,
               "num_partitions": -1, "replication_factor": -1, "configs": []}
        if name in dups:
            out["error_code"] = E.INVALID_REQUEST
            out["error_message"] = (f"Create topics request from client `{ctx.client_id}` "
                                    "contains multiple entries for the following topics: "
                                    + ", ".join(dups))
            results.append(out)
            continue
        try:
            assignments = {a["partition_index"]: a["broker_ids"] for a in t["assignments"]}
            configs = {c["name"]: c["value"] for c in t["configs"]}
            if quota.quotas is not None and name not in cluster.topics:
                quota.take(t["num_partitions"] if t["num_partitions"] > 0
                           else len(assignments) or int(cluster.config["num.partitions"]))
            topic = yield from cluster.create_topic_steps(
                name, t["num_partitions"], t["replication_factor"], assignments, configs,
                req["validate_only"])
            if topic is not None:
                out["topic_id"] = topic.id
                out["num_partitions"] = len(topic.partitions)
                out["replication_factor"] = len(topic.partitions[0].replicas)
                out["configs"] = [
                    {"name": e.name, "value": e.value, "read_only": e.read_only,
                     "config_source": e.source, "is_sensitive": False}
                    for e in config_ops.describe(cluster, config_ops.TOPIC, name, None,
                                                 ctx.broker_id)
                ]
            else:
                n = t["num_partitions"] if t["num_partitions"] > 0 else len(assignments) or int(
                    cluster.config["num.partitions"])
                out["num_partitions"] = n
                rf = t["replication_factor"]
                out["replication_factor"] = rf if rf > 0 else (
                    len(next(iter(assignments.values()))) if assignments
                    else int(cluster.config["default.replication.factor"]))
        except KafkaError as e:  # a business failure; anything else is our bug
            out["error_code"], out["error_message"] = error_of(e)
        if out["error_code"] == E.NONE and not allowed(ctx, Op.DESCRIBE_CONFIGS, RT.TOPIC, name):
            # Kafka's controller answers a creator without DESCRIBE_CONFIGS on the topic
            # no partitions, factor or configs, and TOPIC_AUTHORIZATION_FAILED as the
            # topic's config code (measured on a real 4.4); the topic is created.
            out.update(topic_config_error_code=E.TOPIC_AUTHORIZATION_FAILED,
                       num_partitions=-1, replication_factor=-1, configs=[])
        results.append(out)
    return {"throttle_time_ms": quota.throttle_ms, "topics": results}


def _records(ctx: RequestContext, wanted: list[dict], exact: bool) -> int:
    """The metadata records creating ``wanted`` would write: an upper bound, or (exact)
    counting only the topics that pass validation, as Kafka's controller does."""
    n = 0
    for t in wanted:
        configs = {c["name"]: c["value"] for c in t["configs"]}
        parts = len(t["assignments"]) or (
            t["num_partitions"] if t["num_partitions"] != -1
            else int(ctx.cluster.config["num.partitions"]))
        if exact:
            try:
                ctx.cluster.create_topic(
                    t["name"], t["num_partitions"], t["replication_factor"],
                    {a["partition_index"]: a["broker_ids"] for a in t["assignments"]},
                    configs, validate_only=True)
            except KafkaError:
                continue
        n += topics.topic_records(max(parts, 0), configs)
    return n
