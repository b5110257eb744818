"""DescribeGroups (key 15), v0-6: classic groups' state, protocol and members.

Member metadata and the protocol name are shown only for a Stable group, as Kafka
does. An unknown group is "Dead" with no error before v6 and GROUP_ID_NOT_FOUND from
v6. Authorized operations (v3+), when asked for: what the authorizer allows on the
group, or every group operation without an authorizer (as Kafka).
"""

from __future__ import annotations

from emulator.handlers.authz import NOT_REQUESTED, RT, Each, Op, authorized_operations
from emulator.handlers.base import RequestContext
from wire.errors import ErrorCode as E

API_KEY = 15
VERSIONS = (0, 6)
AUTHORIZE = (Each(RT.GROUP, Op.DESCRIBE, "groups"),)
COORDINATORS = ("groups",)


def handle(ctx: RequestContext, req: dict, version: int) -> dict:
    gc = ctx.services.groups
    want_ops = version >= 3 and req["include_authorized_operations"]
    groups: list[dict[str, object]] = []
    for gid in req["groups"]:
        if gid is None or gid == "" and version >= 6:
            groups.append({"group_id": gid or "", "error_code": E.INVALID_GROUP_ID,
                           "group_state": "", "protocol_type": "", "protocol_data": ""})
            continue
        err = gc.coordinator_error(ctx.broker_id, gid)
        if err:
            groups.append({"group_id": gid, "error_code": err, "group_state": "",
                           "protocol_type": "", "protocol_data": ""})
            continue
        d = dict(gc.describe_group(gid, version))
        share = ctx.services.share_if_built
        if version >= 6 and share is not None and share.is_share_group(gid):
            d["error_message"] = f"Group {gid} is not a classic group."  # a share group
        d["authorized_operations"] = authorized_operations(ctx, RT.GROUP, gid) if want_ops \
            else NOT_REQUESTED
        groups.append(d)
    return {"throttle_time_ms": 0, "groups": groups}
