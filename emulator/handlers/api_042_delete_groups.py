"""DeleteGroups (key 42), v0-2: delete empty groups and their committed offsets.

NON_EMPTY_GROUP while a group has members, GROUP_ID_NOT_FOUND for unknown groups,
NOT_COORDINATOR when asked of the wrong broker.
"""

from __future__ import annotations

from emulator.handlers.base import RequestContext

API_KEY = 42
VERSIONS = (0, 2)


def handle(ctx: RequestContext, req: dict, version: int) -> dict:
    gc = ctx.services["groups"]
    gc.tick()
    results = []
    for gid in req["groups_names"]:
        err = gc.coordinator_error(ctx.broker_id, gid) if gid else 0
        results.append({"group_id": gid, "error_code": err or gc.delete_group(gid)})
    return {"throttle_time_ms": 0, "results": results}
