"""AlterShareGroupOffsets (key 91), v0: set the start offsets (SPSO) of an empty share group.

What ``kafka-share-groups --reset-offsets --execute`` sends. NON_EMPTY_GROUP while the
group has members, GROUP_ID_NOT_FOUND for a group of another type,
UNKNOWN_TOPIC_OR_PARTITION per partition; in-flight state of the altered partitions is
dropped and the state epoch bumped. A group id not in use becomes an empty share group
(so offsets can be set before the first consumer starts).
"""

from __future__ import annotations

from emulator.cluster.partition import KafkaError
from emulator.handlers.authz import RT, Each, One, Op
from emulator.handlers.base import RequestContext

API_KEY = 91
VERSIONS = (0, 0)
AUTHORIZE = (One(RT.GROUP, Op.READ, "group_id"),
             Each(RT.TOPIC, Op.READ, "topics", name="topic_name"))


def handle(ctx: RequestContext, req: dict, version: int) -> dict:
    sc = ctx.services["share"]
    sc.tick()
    gid = req["group_id"]
    topics = [(t["topic_name"], [(p["partition_index"], p["start_offset"])
                                 for p in t["partitions"]]) for t in req["topics"]]
    try:
        sc.gc.check_coordinator(ctx.broker_id, gid)
        responses = sc.alter_offsets(gid, topics)
    except KafkaError as e:
        return {"throttle_time_ms": 0, "error_code": e.code, "error_message": e.message,
                "responses": [{"topic_name": name, "partitions": [
                    {"partition_index": p, "error_code": e.code, "error_message": e.message}
                    for p, _ in parts]} for name, parts in topics]}
    return {"throttle_time_ms": 0, "error_code": 0, "responses": responses}
