"""ElectLeaders (key 43), v0-2 (v1: ElectionType and a top-level error code, KIP-460).

Served by every broker (forwarded to the controller in KRaft). PREFERRED and
UNCLEAN elections with the KRaft controller's codes and messages
(``emulator.cluster.election``): ELECTION_NOT_NEEDED,
PREFERRED_LEADER_NOT_AVAILABLE, ELIGIBLE_LEADERS_NOT_AVAILABLE,
UNKNOWN_TOPIC_OR_PARTITION. v0 is always PREFERRED. Null TopicPartitions means
every partition (results needing no election left out); an empty list answers at
once. An unknown election type gets INVALID_REQUEST, and TimeoutMs <= 0 (the
controller queue's deadline passed) REQUEST_TIMED_OUT, at the top level (v1+) and
on every listed partition.
"""

from __future__ import annotations

from emulator.cluster.election import elect_leaders
from emulator.handlers.authz import ClusterOp, Op
from emulator.handlers.base import RequestContext
from wire.errors import ErrorCode as E
from wire.errors import KafkaError

API_KEY = 43
VERSIONS = (0, 2)
AUTHORIZE = (ClusterOp(Op.ALTER),)


def error_response(req: dict, code: int, message: str | None = None) -> dict:
    """ElectLeadersRequest.getErrorResponse."""
    results = [{"topic": t["topic"], "partition_result": [
        {"partition_id": i, "error_code": code, "error_message": message}
        for i in t["partitions"]]} for t in (req["topic_partitions"] or [])]
    return {"throttle_time_ms": 0, "error_code": code, "replica_election_results": results}


def handle(ctx: RequestContext, req: dict, version: int) -> dict:
    tps = req["topic_partitions"]
    if tps is not None and not tps:
        return {"throttle_time_ms": 0, "error_code": E.NONE, "replica_election_results": []}
    if req["timeout_ms"] <= 0:
        return error_response(req, E.REQUEST_TIMED_OUT)
    election_type = req["election_type"] if version >= 1 else 0
    wanted = None if tps is None else [(t["topic"], t["partitions"]) for t in tps]
    try:
        out = elect_leaders(ctx.cluster, election_type, wanted)
    except KafkaError as e:
        return error_response(req, e.code, e.message)
    return {"throttle_time_ms": 0, "error_code": E.NONE, "replica_election_results": [
        {"topic": name, "partition_result": [
            {"partition_id": i, "error_code": code, "error_message": msg}
            for i, code, msg in parts]} for name, parts in out]}
