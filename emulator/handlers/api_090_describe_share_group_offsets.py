"""DescribeShareGroupOffsets (key 90), v0-1: each share-partition's start offset (SPSO).

Per group: NOT_COORDINATOR / COORDINATOR_NOT_AVAILABLE from the group's coordinator,
GROUP_ID_NOT_FOUND for unknown groups or groups of another type. Topics null means
every partition the group has state for; a partition without state answers start
offset -1. v1 adds Lag (KIP-1226): high watermark - SPSO - records already finished
(acknowledged or archived) beyond the SPSO.
"""

from __future__ import annotations

from emulator.cluster.partition import KafkaError
from emulator.handlers.authz import RT, Each, Op
from emulator.handlers.base import RequestContext

API_KEY = 90
VERSIONS = (0, 1)
AUTHORIZE = (Each(RT.GROUP, Op.DESCRIBE, "groups", name="group_id"),)


def handle(ctx: RequestContext, req: dict, version: int) -> dict:
    sc = ctx.services["share"]
    sc.tick()
    groups = []
    for g in req["groups"]:
        gid = g["group_id"]
        row = {"group_id": gid, "topics": [], "error_code": 0}
        topics = None if g["topics"] is None else \
            [(t["topic_name"], t["partitions"]) for t in g["topics"]]
        try:
            sc.gc.check_coordinator(ctx.broker_id, gid)
            row["topics"] = sc.describe_offsets(gid, topics, with_lag=version >= 1)
        except KafkaError as e:
            row.update(error_code=e.code, error_message=e.message)
        groups.append(row)
    return {"throttle_time_ms": 0, "groups": groups}
