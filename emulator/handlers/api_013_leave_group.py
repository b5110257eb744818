"""LeaveGroup (key 13), v0-5: members leave a classic group (batched from v3).

v0-2 name one member and carry its error at the top level; v3+ list members (by member
id, or by group.instance.id alone for an administrative removal) with an error each.
The group rebalances the remaining members.
"""

from __future__ import annotations

from emulator.handlers.authz import RT, One, Op
from emulator.handlers.base import RequestContext
from wire.errors import ErrorCode as E

API_KEY = 13
VERSIONS = (0, 5)
AUTHORIZE = (One(RT.GROUP, Op.READ, "group_id"),)
COORDINATORS = ("groups",)


def handle(ctx: RequestContext, req: dict, version: int) -> dict:
    gc = ctx.services.groups
    group_id = req["group_id"]
    members: list[tuple[str, str | None]]
    if version < 3:
        members = [(req["member_id"], None)]
    else:
        members = [(m["member_id"], m["group_instance_id"]) for m in req["members"]]
    err = gc.coordinator_error(ctx.broker_id, group_id)
    results: list[int] = []
    if not err:
        err, results = gc.leave_group(group_id, members)
    if version < 3:
        top = err or (results[0] if results else E.NONE)
        return {"throttle_time_ms": 0, "error_code": top}
    return {"throttle_time_ms": 0, "error_code": err, "members": [
        {"member_id": mid, "group_instance_id": iid, "error_code": code}
        for (mid, iid), code in zip(members, results, strict=True)] if not err else []}
