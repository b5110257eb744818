"""SyncGroup (key 14), v0-5: the leader hands out the assignment it computed.

A follower's SyncGroup parks (emulator/coordinators/groups/waits.py, woken only by
changes of its group) until the leader's arrives or the group starts another rebalance (REBALANCE_IN_PROGRESS). v5 checks protocol type and name
(INCONSISTENT_GROUP_PROTOCOL).
"""

from __future__ import annotations

from emulator.coordinators.classic.group import sync_error
from emulator.coordinators.groups.waits import sync_completion
from emulator.handlers.authz import RT, One, Op
from emulator.handlers.base import RequestContext, then

API_KEY = 14
VERSIONS = (0, 5)
AUTHORIZE = (One(RT.GROUP, Op.READ, "group_id"),)
COORDINATORS = ("groups",)


def _response(r: dict) -> dict:
    return dict(r, throttle_time_ms=0)


def handle(ctx: RequestContext, req: dict, version: int):
    gc = ctx.services.groups
    group_id = req["group_id"]
    err = gc.coordinator_error(ctx.broker_id, group_id)
    if err:
        return _response(dict(sync_error(err)))
    fut = gc.sync_group(
        group_id, req["member_id"], req["generation_id"],
        req["group_instance_id"] if version >= 3 else None,
        req["protocol_type"] if version >= 5 else None,
        req["protocol_name"] if version >= 5 else None,
        [(a["member_id"], a["assignment"]) for a in req["assignments"]])
    return then(sync_completion(gc, group_id, fut), _response)
