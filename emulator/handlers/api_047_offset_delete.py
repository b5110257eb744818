"""OffsetDelete (key 47), v0: delete a group's committed offsets for some partitions.

Refused with NON_EMPTY_GROUP for a classic group with members that does not use the
consumer protocol, and per partition with GROUP_SUBSCRIBED_TO_TOPIC while the group is
subscribed to the topic; GROUP_ID_NOT_FOUND for an unknown group.
"""

from __future__ import annotations

from emulator.handlers.authz import RT, Each, One, Op
from emulator.handlers.base import RequestContext
from wire.errors import ErrorCode as E
from wire.errors import KafkaError

API_KEY = 47
VERSIONS = (0, 0)
AUTHORIZE = (One(RT.GROUP, Op.DELETE, "group_id"), Each(RT.TOPIC, Op.READ, "topics"),)
COORDINATORS = ("groups",)


def handle(ctx: RequestContext, req: dict, version: int) -> dict:
    gc = ctx.services.groups
    group_id = req["group_id"]
    err = gc.coordinator_error(ctx.broker_id, group_id)
    if err:
        return {"throttle_time_ms": 0, "error_code": err, "topics": []}
    try:
        res = gc.delete_offsets(group_id, [
            (t["name"], [p["partition_index"] for p in t["partitions"]]) for t in req["topics"]])
    except KafkaError as e:
        return {"throttle_time_ms": 0, "error_code": e.code, "topics": []}
    return {"throttle_time_ms": 0, "error_code": E.NONE, "topics": [
        {"name": name, "partitions": [{"partition_index": p, "error_code": c} for p, c in parts]}
        for name, parts in res]}
