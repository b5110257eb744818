"""Heartbeat (key 12), v0-4: keeps a classic group member's session alive.

REBALANCE_IN_PROGRESS tells the member to rejoin; ILLEGAL_GENERATION,
UNKNOWN_MEMBER_ID and FENCED_INSTANCE_ID (v3+, static members) as Kafka answers them.
"""

from __future__ import annotations

from emulator.handlers.authz import RT, One, Op
from emulator.handlers.base import RequestContext

API_KEY = 12
VERSIONS = (0, 4)
AUTHORIZE = (One(RT.GROUP, Op.READ, "group_id"),)


def handle(ctx: RequestContext, req: dict, version: int) -> dict:
    gc = ctx.services.groups
    err = gc.coordinator_error(ctx.broker_id, req["group_id"])
    if not err:
        gc.tick()
        err = gc.heartbeat(req["group_id"], req["member_id"], req["generation_id"],
                           req["group_instance_id"] if version >= 3 else None)
    return {"throttle_time_ms": 0, "error_code": err}
