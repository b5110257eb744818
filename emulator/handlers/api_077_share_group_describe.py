"""ShareGroupDescribe (key 77), v1: share groups' state, epochs, members and assignments.

GROUP_ID_NOT_FOUND for unknown groups ("Group X not found.") and groups of another
type ("Group X is not a share group."), NOT_COORDINATOR when asked of the wrong broker.
"""

from __future__ import annotations

from emulator.handlers.authz import RT, Each, Op, authorized_operations
from emulator.handlers.base import RequestContext
from emulator.handlers.util import describe_groups

API_KEY = 77
VERSIONS = (1, 1)
AUTHORIZE = (Each(RT.GROUP, Op.DESCRIBE, "group_ids"),)
COORDINATORS = ("share",)


def handle(ctx: RequestContext, req: dict, version: int) -> dict:
    sc = ctx.services.share

    def describe(gid: str) -> dict:
        (row,) = sc.describe_share_groups([gid])
        if req["include_authorized_operations"] and not row["error_code"]:
            row["authorized_operations"] = authorized_operations(ctx, RT.GROUP, gid)
        return dict(row)

    return describe_groups(ctx, req["group_ids"], sc.gc.coordinator_error, describe)
