"""SyncGroup (key 14), v0-5: the leader hands out the assignment it computed.

A follower's SyncGroup parks (``Delayed``, woken only by changes of its group) until the leader's arrives or the group
starts another rebalance (REBALANCE_IN_PROGRESS). v5 checks protocol type and name
(INCONSISTENT_GROUP_PROTOCOL).
"""

from __future__ import annotations

from emulator.coordinators.classic.group import sync_error
from emulator.coordinators.groups.base import group_key
from emulator.handlers.authz import RT, One, Op
from emulator.handlers.base import Delayed, RequestContext
from wire.errors import ErrorCode as E

API_KEY = 14
VERSIONS = (0, 5)
AUTHORIZE = (One(RT.GROUP, Op.READ, "group_id"),)


def _response(r: dict) -> dict:
    return dict(r, throttle_time_ms=0)


def handle(ctx: RequestContext, req: dict, version: int):
    gc = ctx.services.groups
    group_id = req["group_id"]
    err = gc.coordinator_error(ctx.broker_id, group_id)
    if err:
        return _response(sync_error(err))
    fut = gc.sync_group(
        group_id, req["member_id"], req["generation_id"],
        req["group_instance_id"] if version >= 3 else None,
        req["protocol_type"] if version >= 5 else None,
        req["protocol_name"] if version >= 5 else None,
        [(a["member_id"], a["assignment"]) for a in req["assignments"]])
    gc.tick()
    if fut.done:
        return _response(fut.value)

    def check() -> dict | None:
        gc.tick()
        return _response(fut.value) if fut.done else None

    def expire() -> dict:
        gc.tick()
        return _response(fut.value if fut.done else sync_error(E.REBALANCE_IN_PROGRESS))

    group = gc.groups.get(group_id)
    wait = (group.rebalance_timeout_ms() if group is not None else 0) * 2 + 10_000
    return Delayed(check, ctx.cluster.now() + wait, expire,
                   keys=frozenset({group_key(group_id)}))  # woken by its group's changes
