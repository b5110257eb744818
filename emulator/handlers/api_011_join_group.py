"""JoinGroup (key 11), v0-9: the classic group protocol's rebalance barrier.

The request parks (emulator/coordinators/groups/waits.py, woken only by changes of its
group) until the group's join phase completes: every known member has rejoined, or the
rebalance timeout expired, or (an empty group) group.initial.rebalance.delay.ms passed. v4+ first answers MEMBER_ID_REQUIRED with a
member id to rejoin with (KIP-394); group.instance.id (v5+) makes a static member;
v9 lets a returning static leader skip the assignment. The coordinator's rules live
in emulator.coordinators.classic.group.
"""

from __future__ import annotations

from emulator.coordinators.classic.group import join_error
from emulator.coordinators.groups.waits import join_completion
from emulator.handlers.authz import RT, One, Op
from emulator.handlers.base import RequestContext, then

API_KEY = 11
VERSIONS = (0, 9)
AUTHORIZE = (One(RT.GROUP, Op.READ, "group_id"),)
COORDINATORS = ("groups",)


def _response(r: dict, version: int) -> dict:
    out = dict(r, throttle_time_ms=0)
    if version < 7 and out.get("protocol_name") is None:
        out["protocol_name"] = ""
    out["members"] = [dict(m) for m in out.get("members", [])]
    return out


def handle(ctx: RequestContext, req: dict, version: int):
    gc = ctx.services.groups
    group_id, member_id = req["group_id"], req["member_id"]
    err = gc.coordinator_error(ctx.broker_id, group_id)
    if err:
        return _response(dict(join_error(err, member_id)), version)
    session = req["session_timeout_ms"]
    rebalance = req["rebalance_timeout_ms"] if version >= 1 else session
    fut = gc.join_group(
        group_id, member_id, req["group_instance_id"] if version >= 5 else None,
        req["protocol_type"], [(p["name"], p["metadata"]) for p in req["protocols"]],
        session, rebalance, client_id=ctx.client_id or "",
        client_host="/" + ctx.client_host, version=version)
    return then(join_completion(gc, group_id, member_id, fut, rebalance, session),
                lambda r: _response(r, version))
