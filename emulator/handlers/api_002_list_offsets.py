"""ListOffsets (key 2), v1-11 (v0 declared for posing as old brokers only).

Earliest (-2) is the log start offset; latest (-1) the high watermark, or the last
stable offset under read_committed; max timestamp (-3) and real timestamps find the
exact record, decoding (and decompressing) only the one batch that holds it.
Without tiered storage, latest-tiered (-5) and earliest-pending-upload (-6) find no
offset (-1), as Kafka answers for a topic without remote storage. Like Kafka, a special
timestamp newer than the request version gets UNSUPPORTED_VERSION.
"""

from __future__ import annotations

from emulator.handlers.authz import RT, Each, Op
from emulator.handlers.base import RequestContext
from emulator.handlers.util import error_of
from wire.errors import ErrorCode as E
from wire.errors import KafkaError

API_KEY = 2
VERSIONS = (1, 11)
# The first request version that may carry each special timestamp (Kafka's
# ListOffsetsRequest / ReplicaManager check).
MIN_VERSION_OF = {-3: 7, -4: 8, -5: 9, -6: 11}
AUTHORIZE = (Each(RT.TOPIC, Op.DESCRIBE, "topics"),)


def handle(ctx: RequestContext, req: dict, version: int) -> dict:
    cluster = ctx.cluster
    isolation = req["isolation_level"]
    topics = []
    for t in req["topics"]:
        parts = []
        for p in t["partitions"]:
            out = {"partition_index": p["partition_index"], "error_code": E.NONE}
            if version < MIN_VERSION_OF.get(p["timestamp"], 0):
                out["error_code"] = E.UNSUPPORTED_VERSION
                parts.append(out)
                continue
            try:
                # this broker's metadata first (metadata_views: lags under Kafka's timing)
                if cluster.metadata_views.active:
                    cluster.metadata_views.check(ctx.broker_id, t["name"],
                                                 p["partition_index"], p["current_leader_epoch"])
                offset, ts, epoch = cluster.list_offset(
                    ctx.broker_id, t["name"], p["partition_index"], p["timestamp"], isolation,
                    p["current_leader_epoch"], client=req["replica_id"] < 0)
                out.update(offset=offset, timestamp=ts, leader_epoch=epoch,
                           old_style_offsets=[offset] if offset >= 0 else [])
            except KafkaError as e:  # a business failure; anything else is our bug
                out["error_code"], _ = error_of(e)
            parts.append(out)
        topics.append({"name": t["name"], "partitions": parts})
    return {"throttle_time_ms": 0, "topics": topics}
