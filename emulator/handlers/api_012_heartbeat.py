"""Heartbeat (key 12), v0-4: keeps a classic group member's session alive.

REBALANCE_IN_PROGRESS tells the member to rejoin; ILLEGAL_GENERATION,
UNKNOWN_MEMBER_ID and FENCED_INSTANCE_ID (v3+, static members) as Kafka answers them.
A coordinator still loading the group's partition (--fidelity kafka) answers NONE, as
Kafka's does ("the group is still loading, so blindly respond"): the member keeps its
session and learns of a rebalance from its next heartbeat.
"""

from __future__ import annotations

from emulator.handlers.authz import RT, One, Op
from emulator.handlers.base import RequestContext
from wire.errors import ErrorCode as E

API_KEY = 12
VERSIONS = (0, 4)
AUTHORIZE = (One(RT.GROUP, Op.READ, "group_id"),)
COORDINATORS = ("groups",)


def handle(ctx: RequestContext, req: dict, version: int) -> dict:
    gc = ctx.services.groups
    err = gc.coordinator_error(ctx.broker_id, req["group_id"])
    if err == E.COORDINATOR_LOAD_IN_PROGRESS:
        return {"throttle_time_ms": 0, "error_code": E.NONE}
    if not err:
        err = gc.heartbeat(req["group_id"], req["member_id"], req["generation_id"],
                           req["group_instance_id"] if version >= 3 else None)
    return {"throttle_time_ms": 0, "error_code": err}
