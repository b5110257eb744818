"""AlterPartitionReassignments (key 45), v0-1 (v1: AllowReplicationFactorChange, KIP-860).

Served by every broker, as KRaft brokers forward it to the active controller.
Start, change or (null replicas) cancel reassignments with the KRaft controller's
validation order, messages and replica lists (``emulator.cluster.reassignment``);
one request is applied atomically and the data then really moves. An empty topic
list succeeds at once. TimeoutMs is the controller queue's deadline: a request
that cannot start before it (TimeoutMs <= 0, or no active controller until then)
gets REQUEST_TIMED_OUT at the top level and on every partition, and changes
nothing.
"""

from __future__ import annotations

from emulator.cluster.delayed import controller_elected
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


def handle(ctx: RequestContext, req: dict, version: int):
    allow = bool(req["allow_replication_factor_change"]) if version >= 1 else True
    if not req["topics"]:
        return {"throttle_time_ms": 0, "allow_replication_factor_change": allow,
                "error_code": E.NONE, "error_message": None, "responses": []}
    if req["timeout_ms"] <= 0:
        return error_response(req, E.REQUEST_TIMED_OUT)
    if ctx.cluster.controller is not None:
        return _apply(ctx, req, allow)
    return controller_elected(ctx.cluster, req["timeout_ms"]).map(
        lambda elected: _apply(ctx, req, allow) if elected
        else error_response(req, E.REQUEST_TIMED_OUT))
