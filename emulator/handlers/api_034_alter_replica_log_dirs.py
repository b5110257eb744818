"""AlterReplicaLogDirs (key 34), v1-2.

A broker's log directories are its ``log.dirs`` (``emulator.cluster.log_dirs``):
moving a replica it hosts to one of them succeeds at once (the logs are in memory:
no future replica copies it), a path that is not one gets LOG_DIR_NOT_FOUND, a
failed directory or a replica in one KAFKA_STORAGE_ERROR, a partition not hosted
here REPLICA_NOT_AVAILABLE (Kafka's tool retries those until the replica arrives)
and an unknown one UNKNOWN_TOPIC_OR_PARTITION. Enough for kafka-reassign-partitions
with log_dirs.

A partition named under several directories is answered once, for the last of them:
Kafka reads the request into a map of partition to directory
(AlterReplicaLogDirsRequest.partitionDirs), so a later entry replaces an earlier one.
"""

from __future__ import annotations

from emulator.cluster.log_dirs import alter_replica_log_dir
from emulator.handlers.authz import ClusterOp, Op
from emulator.handlers.base import RequestContext

API_KEY = 34
VERSIONS = (1, 2)
AUTHORIZE = (ClusterOp(Op.ALTER),)


def handle(ctx: RequestContext, req: dict, version: int) -> dict:
    wanted: dict[tuple[str, int], str] = {}
    for d in req["dirs"]:
        for t in d["topics"]:
            for i in t["partitions"]:
                wanted[(t["name"], i)] = d["path"]
    by_topic: dict[str, list[dict]] = {}
    for (name, i), path in wanted.items():
        code = alter_replica_log_dir(ctx.cluster, ctx.broker_id, path, name, i)
        by_topic.setdefault(name, []).append({"partition_index": i, "error_code": code})
    return {"throttle_time_ms": 0, "results": [
        {"topic_name": name, "partitions": parts} for name, parts in by_topic.items()]}
