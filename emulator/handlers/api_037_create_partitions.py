"""CreatePartitions (key 37), v0-3: grow a topic, optionally with manual assignments.

New partitions start empty at offset 0 (Spark checks that), with replicas placed
as Kafka's rack-unaware assignment does, or where the request says. More than
10,000 additional partitions in one request fail it whole with POLICY_VIOLATION,
as Kafka 4.4's controller refuses them.
"""

from __future__ import annotations

from collections import Counter

from emulator.cluster import topics
from emulator.cluster.partition import KafkaError
from emulator.handlers.authz import RT, Each, Op
from emulator.handlers.base import RequestContext
from emulator.handlers.util import error_of
from wire.errors import ErrorCode as E

API_KEY = 37
VERSIONS = (0, 3)
AUTHORIZE = (Each(RT.TOPIC, Op.ALTER, "topics"),)


def handle(ctx: RequestContext, req: dict, version: int) -> dict:
    counts = Counter(t["name"] for t in req["topics"])
    try:
        topics.check_create_partitions_total(
            ctx.cluster, [(t["name"], t["count"]) for t in req["topics"]])
    except KafkaError as e:  # the whole request fails, as Kafka 4.4's controller does
        return {"throttle_time_ms": 0, "results": [
            {"name": t["name"], "error_code": e.code, "error_message": e.message}
            for t in req["topics"]]}
    results = []
    for t in req["topics"]:
        r = {"name": t["name"], "error_code": E.NONE, "error_message": None}
        if counts[t["name"]] > 1:
            r["error_code"] = E.INVALID_REQUEST
            r["error_message"] = "Duplicate topic in request."
        else:
            try:
                assignments = None
                if t["assignments"] is not None:
                    assignments = [a["broker_ids"] for a in t["assignments"]]
                ctx.cluster.create_partitions(t["name"], t["count"], assignments,
                                              req["validate_only"])
            except KafkaError as e:  # a business failure; anything else is our bug
                r["error_code"], r["error_message"] = error_of(e)
        results.append(r)
    return {"throttle_time_ms": 0, "results": results}
