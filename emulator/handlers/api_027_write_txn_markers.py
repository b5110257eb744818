"""WriteTxnMarkers (key 27), v1-2: a transaction coordinator's COMMIT/ABORT markers.

Kafka's coordinator sends this to partition leaders; the emulator's own coordinator
writes its markers in-process, so this serves tools and tests that send it directly
(Kafka's admin abortTransaction does, for hanging transactions). Per partition, as
Kafka's ReplicaManager does: UNKNOWN_TOPIC_OR_PARTITION for unknown partitions,
NOT_LEADER_OR_FOLLOWER off the leader, INVALID_PRODUCER_EPOCH for a marker older than
the producer's epoch on that partition; otherwise the control batch is appended and
the producer's open transaction there ends (read_committed readers move on). A marker
on a __consumer_offsets partition completes the producer's pending transactional
offset commits of the groups that partition holds. v2 carries the transaction
version, which changes nothing in how a marker is written.
"""

from __future__ import annotations

from emulator.coordinators.groups.base import OFFSETS_TOPIC
from emulator.handlers.authz import ClusterOp, Op
from emulator.handlers.base import RequestContext
from wire.errors import ErrorCode as E
from wire.errors import KafkaError
from wire.records import control_batch

API_KEY = 27
VERSIONS = (1, 2)
AUTHORIZE = (ClusterOp(Op.CLUSTER_ACTION),)


def handle(ctx: RequestContext, req: dict, version: int) -> dict:
    markers = []
    for m in req["markers"]:
        topics = []
        for t in m["topics"]:
            parts = [{"partition_index": i, "error_code": _write(ctx, m, t["name"], i)}
                     for i in t["partition_indexes"]]
            topics.append({"name": t["name"], "partitions": parts})
        markers.append({"producer_id": m["producer_id"], "topics": topics})
    return {"markers": markers}


def _write(ctx: RequestContext, marker: dict, topic: str, index: int) -> int:
    cluster = ctx.cluster
    t = cluster.topics.get(topic)
    if t is None or not 0 <= index < len(t.partitions):
        return E.UNKNOWN_TOPIC_OR_PARTITION
    p = t.partitions[index]
    try:
        p.check_leader(ctx.broker_id)
    except KafkaError as e:
        return e.code
    pid, epoch = marker["producer_id"], marker["producer_epoch"]
    commit = marker["transaction_result"]
    entry = p.producers.get(pid)
    if entry is not None and epoch < entry.epoch:
        return E.INVALID_PRODUCER_EPOCH
    offset = cluster.append_control(p, control_batch(commit, pid, epoch, cluster.now()))
    p.complete_txn(pid, epoch, offset, commit)
    if topic == OFFSETS_TOPIC:
        groups = ctx.services.groups
        if groups is not None:
            for group_id in [g for g in groups.pending_txn if groups.partition_for(g) == index]:
                groups.complete_txn(group_id, pid, commit)
    return E.NONE
