"""DescribeLogDirs (key 35), v1-5.

The answering broker's log directories (``log.dirs``, ``emulator.cluster.log_dirs``),
each with the replicas it hosts there (or the requested ones): size in bytes and
offset lag (max(HW - LEO, 0) as the replica sees it), never a future replica. A
directory that failed (a storage fault) answers KAFKA_STORAGE_ERROR and no topics,
as Kafka's. Kafka's
reassignment tool reads it for --verify with log dirs; ``kafka-emulator reassign``
reads it for the bytes each adding replica has caught up. Where it differs from
Kafka (sizes unknown, never cordoned): docs/fidelity.md, describe-log-dirs-sizes.
"""

from __future__ import annotations

from emulator.cluster.log_dirs import describe_log_dirs
from emulator.handlers.authz import ClusterOp, Op
from emulator.handlers.base import RequestContext
from wire.errors import ErrorCode as E

API_KEY = 35
VERSIONS = (1, 5)
AUTHORIZE = (ClusterOp(Op.DESCRIBE),)


def handle(ctx: RequestContext, req: dict, version: int) -> dict:
    topics = req["topics"]
    wanted = None if topics is None else [(t["topic"], t["partitions"]) for t in topics]
    dirs = describe_log_dirs(ctx.cluster, ctx.broker_id, wanted)
    return {"throttle_time_ms": 0, "error_code": E.NONE, "results": [{
        "error_code": d.error, "log_dir": d.path, "total_bytes": -1, "usable_bytes": -1,
        "topics": [{"name": name, "partitions": [
            {"partition_index": r.partition, "partition_size": r.size,
             "offset_lag": r.offset_lag, "is_future_key": False} for r in logs]}
            for name, logs in d.topics]} for d in dirs]}
