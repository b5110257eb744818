"""DeleteGroups (key 42), v0-3: delete empty groups and their committed offsets.

NON_EMPTY_GROUP while a group has members, GROUP_ID_NOT_FOUND for unknown groups,
NOT_COORDINATOR when asked of the wrong broker. v3 adds a per-group error message
(Kafka's text for the code).
"""

from __future__ import annotations

from emulator.handlers.authz import RT, Each, Op
from emulator.handlers.base import RequestContext
from wire.errors import MESSAGES, ErrorCode

API_KEY = 42
VERSIONS = (0, 3)
AUTHORIZE = (Each(RT.GROUP, Op.DELETE, "groups_names"),)
COORDINATORS = ("groups",)


def handle(ctx: RequestContext, req: dict, version: int) -> dict:
    gc = ctx.services.groups
    results = []
    for gid in req["groups_names"]:
        err = gc.coordinator_error(ctx.broker_id, gid) if gid else 0
        share = ctx.services.share_if_built
        code = share.delete_group(gid) if not err and share is not None else None
        if code is None:  # not a share group (emulator.coordinators.share.coordinator)
            code = err or gc.delete_group(gid)
        results.append({"group_id": gid, "error_code": code,
                        "error_message": MESSAGES.get(ErrorCode(code)) if code else None})
    return {"throttle_time_ms": 0, "results": results}
