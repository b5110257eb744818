"""ConsumerGroupDescribe (key 69), v0-1: KIP-848 groups' epochs, assignor, members
with their current and target assignments. GROUP_ID_NOT_FOUND for unknown or classic
groups."""

from __future__ import annotations

from emulator.handlers.base import RequestContext

API_KEY = 69
VERSIONS = (0, 1)
GROUP_OPERATIONS = (1 << 3) | (1 << 6) | (1 << 8)  # READ, DELETE, DESCRIBE
NOT_REQUESTED = -2147483648


def handle(ctx: RequestContext, req: dict, version: int) -> dict:
    gc = ctx.services["groups"]
    gc.tick()
    out = []
    for gid in req["group_ids"]:
        err = gc.coordinator_error(ctx.broker_id, gid) if gid else 0
        if err:
            out.append({"group_id": gid, "error_code": err})
            continue
        [d] = gc.describe_consumer_groups([gid])
        d["authorized_operations"] = GROUP_OPERATIONS if req["include_authorized_operations"] \
            else NOT_REQUESTED
        out.append(d)
    return {"throttle_time_ms": 0, "groups": out}
