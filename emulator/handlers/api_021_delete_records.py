"""DeleteRecords (key 21), v0-2: advance each partition's log start offset.

Offset -1 means the high watermark; an offset above it gets OFFSET_OUT_OF_RANGE.
Whole batches below the new start are dropped from every replica; the low
watermark returned is the new log start offset. Must be sent to the leader.
"""

from __future__ import annotations

from emulator.handlers.authz import RT, Each, Op
from emulator.handlers.base import RequestContext
from emulator.handlers.util import error_of
from wire.errors import ErrorCode as E
from wire.errors import KafkaError

API_KEY = 21
VERSIONS = (0, 2)
AUTHORIZE = (Each(RT.TOPIC, Op.DELETE, "topics"),)


def handle(ctx: RequestContext, req: dict, version: int) -> dict:
    cluster = ctx.cluster
    topics = []
    for t in req["topics"]:
        parts = []
        for p in t["partitions"]:
            out = {"partition_index": p["partition_index"], "low_watermark": -1,
                   "error_code": E.NONE}
            try:
                # this broker's metadata first (metadata_views: lags under Kafka's timing)
                if cluster.metadata_views.active:
                    cluster.metadata_views.check(ctx.broker_id, t["name"], p["partition_index"])
                part = cluster.get_partition(t["name"], p["partition_index"])
                part.check_leader(ctx.broker_id)
                out["low_watermark"] = cluster.delete_records(t["name"], p["partition_index"],
                                                              p["offset"])
            except KafkaError as e:  # a business failure; anything else is our bug
                out["error_code"], _ = error_of(e)
            parts.append(out)
        topics.append({"name": t["name"], "partitions": parts})
    return {"throttle_time_ms": 0, "topics": topics}
