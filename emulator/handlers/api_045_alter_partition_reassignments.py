"""AlterPartitionReassignments (key 45), v0-1 (v1: AllowReplicationFactorChange, KIP-860).

Served by every broker, as KRaft brokers forward it to the active controller.
Start, change or (null replicas) cancel reassignments with the KRaft controller's
validation order, messages and replica lists (``emulator.cluster.reassignment``);
one request is applied atomically and the data then really moves. An empty topic
list succeeds at once. TimeoutMs is the controller queue's deadline: Kafka's
controller times out an event whose deadline has passed before it runs, which one
of TimeoutMs <= 0 always has (REQUEST_TIMED_OUT at the top level and on every
partition, nothing changed); the emulator's controller has no queue, so any later
deadline is met. Kafka's controller quorum stands apart from the brokers, so the
request is served even while no broker is registered (every one unregistered
under ``--fidelity kafka``), when the emulator has no broker to hold its
controller role: the request needs no more than the metadata.
"""

from __future__ import annotations

from emulator.cluster.reassignment import alter_partition_reassignments
from emulator.handlers.authz import ClusterOp, Op
from emulator.handlers.base import RequestContext
from wire.errors import ErrorCode as E

API_KEY = 45
VERSIONS = (0, 1)
AUTHORIZE = (ClusterOp(Op.ALTER),)


def error_response(req: dict, code: int, message: str | None = None) -> dict:
    """AlterPartitionReassignmentsRequest.getErrorResponse."""
    return {"throttle_time_ms": 0, "error_code": code, "error_message": message,
            "responses": [{"name": t["name"], "partitions": [
                {"partition_index": p["partition_index"], "error_code": code,
                 "error_message": message} for p in t["partitions"]]}
                for t in req["topics"]]}


def _apply(ctx: RequestContext, req: dict, allow: bool) -> dict:
    topics = [(t["name"], [(p["partition_index"], p["replicas"]) for p in t["partitions"]])
              for t in req["topics"]]
    results = alter_partition_reassignments(ctx.cluster, topics, allow)
    return {"throttle_time_ms": 0, "allow_replication_factor_change": allow,
            "error_code": E.NONE, "error_message": None,
            "responses": [{"name": tr.name, "partitions": [
                {"partition_index": r.index, "error_code": r.error_code,
                 "error_message": r.error_message} for r in tr.partitions]}
                for tr in results]}


def handle(ctx: RequestContext, req: dict, version: int) -> dict:
    # v0 has no AllowReplicationFactorChange: the decoded request holds its default,
    # true, which is what KIP-860 makes of a v0 request
    allow = bool(req["allow_replication_factor_change"])
    if not req["topics"]:
        return {"throttle_time_ms": 0, "allow_replication_factor_change": allow,
                "error_code": E.NONE, "error_message": None, "responses": []}
    if req["timeout_ms"] <= 0:
        return error_response(req, E.REQUEST_TIMED_OUT)
    return _apply(ctx, req, allow)
