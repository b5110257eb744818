"""DescribeQuorum (key 55), v0-2: the KRaft metadata quorum, as brokers forward it.

The emulator's metadata quorum has one voter, the active controller (its leader); the
other brokers are observers, every live one caught up to the metadata log (the
cluster's metadata version stands for its end offset). As a real 4.4 broker answers
(measured): only ``__cluster_metadata`` partition 0 is described, any other partition
gets UNKNOWN_TOPIC_OR_PARTITION with Kafka's message; v1 adds fetch and caught-up
times, v2 the voter's CONTROLLER listener. Where it differs from Kafka (the controller
is one of the brokers, directory ids zero): docs/fidelity.md, controller-is-a-broker.
"""

from __future__ import annotations

from emulator.handlers.authz import ClusterOp, Op
from emulator.handlers.base import RequestContext
from wire.errors import MESSAGES
from wire.errors import ErrorCode as E

API_KEY = 55
VERSIONS = (0, 2)
AUTHORIZE = (ClusterOp(Op.DESCRIBE),)
METADATA_TOPIC = "__cluster_metadata"


def _replica(ctx: RequestContext, broker_id: int, end: int, now: int) -> dict:
    alive = ctx.cluster.is_alive(broker_id)
    return {"replica_id": broker_id, "log_end_offset": end if alive else -1,
            "last_fetch_timestamp": now if alive else -1,
            "last_caught_up_timestamp": now if alive else -1}


def _partition(ctx: RequestContext, index: int) -> dict:
    cluster = ctx.cluster
    leader = cluster.controller_id
    end, now = cluster.version, cluster.now()
    return {"partition_index": index, "error_code": E.NONE, "leader_id": leader,
            "leader_epoch": cluster.controller_epoch, "high_watermark": end,
            "current_voters": [_replica(ctx, leader, end, now)] if leader >= 0 else [],
            "observers": [_replica(ctx, b, end, now) for b in sorted(cluster.brokers)
                          if b != leader]}


def handle(ctx: RequestContext, req: dict, version: int) -> dict:
    topics, described = [], False
    for t in req["topics"]:
        parts = []
        for p in t["partitions"]:
            index = p["partition_index"]
            if t["topic_name"] == METADATA_TOPIC and index == 0:
                parts.append(_partition(ctx, index))
                described = True
            else:
                parts.append({"partition_index": index,
                              "error_code": E.UNKNOWN_TOPIC_OR_PARTITION,
                              "error_message": MESSAGES.get(E.UNKNOWN_TOPIC_OR_PARTITION)})
        topics.append({"topic_name": t["topic_name"], "partitions": parts})
    nodes = []
    controller = ctx.cluster.brokers.get(ctx.cluster.controller_id)
    if described and controller is not None:
        nodes.append({"node_id": controller.id, "listeners": [
            {"name": "CONTROLLER", "host": controller.host, "port": controller.port}]})
    return {"error_code": E.NONE, "topics": topics, "nodes": nodes}
