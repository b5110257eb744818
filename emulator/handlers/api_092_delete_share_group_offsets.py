"""DeleteShareGroupOffsets (key 92), v0: forget a share group's state for whole topics.

The next fetch starts again from share.auto.offset.reset. NON_EMPTY_GROUP while the
group has members, GROUP_ID_NOT_FOUND for unknown groups or groups of another type,
UNKNOWN_TOPIC_OR_PARTITION per unknown topic.
"""

from __future__ import annotations

from emulator.cluster.partition import KafkaError
from emulator.handlers.authz import RT, Each, One, Op
from emulator.handlers.base import RequestContext

API_KEY = 92
VERSIONS = (0, 0)
AUTHORIZE = (One(RT.GROUP, Op.DELETE, "group_id"),
             Each(RT.TOPIC, Op.READ, "topics", name="topic_name"))


def handle(ctx: RequestContext, req: dict, version: int) -> dict:
    sc = ctx.services["share"]
    sc.tick()
    gid = req["group_id"]
    names = [t["topic_name"] for t in req["topics"]]
    try:
        sc.gc.check_coordinator(ctx.broker_id, gid)
        responses = sc.delete_offsets(gid, names)
    except KafkaError as e:
        return {"throttle_time_ms": 0, "error_code": e.code, "error_message": e.message,
                "responses": []}
    return {"throttle_time_ms": 0, "error_code": 0, "responses": responses}
