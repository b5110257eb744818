"""DescribeShareGroupOffsets (key 90), v0-1: each share-partition's start offset (SPSO).

Per group: NOT_COORDINATOR / COORDINATOR_NOT_AVAILABLE from the group's coordinator,
GROUP_ID_NOT_FOUND for groups of another type (a group id not in use is answered as a
group without state, as Kafka 4.4). Each named topic needs DESCRIBE: the others are
answered after the rest, per partition TOPIC_AUTHORIZATION_FAILED with Kafka's message,
a zero topic id, start offset and lag -1, leader epoch 0 (as 4.4 answers). Topics null means
every partition the group has state for; a partition without state answers start
offset -1. v1 adds Lag (KIP-1226): high watermark - SPSO - records already finished
(acknowledged or archived) beyond the SPSO.
"""

from __future__ import annotations

from emulator.coordinators.share.group_offsets import describe_offsets
from emulator.handlers.authz import RT, TOPIC_DENIED, Each, Op, allowed
from emulator.handlers.base import RequestContext
from wire.errors import ErrorCode as E
from wire.errors import KafkaError

API_KEY = 90
VERSIONS = (0, 1)
AUTHORIZE = (Each(RT.GROUP, Op.DESCRIBE, "groups", name="group_id"),)
COORDINATORS = ("share",)


def handle(ctx: RequestContext, req: dict, version: int) -> dict:
    sc = ctx.services.share
    groups = []
    for g in req["groups"]:
        gid = g["group_id"]
        row = {"group_id": gid, "topics": [], "error_code": 0}
        topics = None if g["topics"] is None else \
            [(t["topic_name"], t["partitions"]) for t in g["topics"]]
        denied = [] if topics is None else \
            [(n, ps) for n, ps in topics if not allowed(ctx, Op.DESCRIBE, RT.TOPIC, n)]
        if denied:
            topics = [x for x in topics or [] if x not in denied]
        try:
            sc.gc.check_coordinator(ctx.broker_id, gid)
            row["topics"] = describe_offsets(sc, gid, topics, with_lag=version >= 1) + [
                {"topic_name": n, "topic_id": b"\x00" * 16, "partitions": [
                    {"partition_index": i, "start_offset": -1, "leader_epoch": 0, "lag": -1,
                     "error_code": E.TOPIC_AUTHORIZATION_FAILED,
                     "error_message": TOPIC_DENIED} for i in ps]} for n, ps in denied]
        except KafkaError as e:
            row.update(error_code=e.code, error_message=e.message)
        groups.append(row)
    return {"throttle_time_ms": 0, "groups": groups}
