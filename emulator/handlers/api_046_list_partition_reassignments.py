"""ListPartitionReassignments (key 46), v0.

Served by every broker (KRaft brokers forward it to the controller). Null topics
list every reassigning partition; named topics list the given partitions that are
reassigning, skipping unknown names and indexes; topics with nothing to show are
left out; an empty topic list answers at once. Replicas is the union list (target
then removing), with the adding and removing replicas. The controller reads
committed state without a deadline, so TimeoutMs is not used.
"""

from __future__ import annotations

from typing import Any

from emulator.cluster.reassignment import list_partition_reassignments
from emulator.handlers.authz import ClusterOp, Op
from emulator.handlers.base import RequestContext
from wire.errors import ErrorCode as E

API_KEY = 46
VERSIONS = (0, 0)
AUTHORIZE = (ClusterOp(Op.DESCRIBE),)


def handle(ctx: RequestContext, req: dict, version: int) -> dict:
    body: dict[str, Any] = {"throttle_time_ms": 0, "error_code": E.NONE, "error_message": None,
                            "topics": []}
    topics = req["topics"]
    if topics is not None and not topics:
        return body
    wanted = None if topics is None else [(t["name"], t["partition_indexes"]) for t in topics]
    body["topics"] = [
        {"name": name, "partitions": [
            {"partition_index": r.index, "replicas": r.replicas,
             "adding_replicas": r.adding, "removing_replicas": r.removing} for r in found]}
        for name, found in list_partition_reassignments(ctx.cluster, wanted)]
    return body
