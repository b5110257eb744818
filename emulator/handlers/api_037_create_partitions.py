"""CreatePartitions (key 37), v0-3: grow a topic, optionally with manual assignments.

New partitions start empty at offset 0 (Spark checks that), with replicas placed
as Kafka's rack-unaware assignment does, or where the request says.
"""

from __future__ import annotations

from collections import Counter

from emulator.handlers.base import RequestContext
from emulator.handlers.util import error_of
from wire.errors import ErrorCode as E

API_KEY = 37
VERSIONS = (0, 3)


def handle(ctx: RequestContext, req: dict, version: int) -> dict:
    counts = Counter(t["name"] for t in req["topics"])
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
            except Exception as e:  # noqa: BLE001 - mapped to a Kafka error code
                r["error_code"], r["error_message"] = error_of(e)
        results.append(r)
    return {"throttle_time_ms": 0, "results": results}
