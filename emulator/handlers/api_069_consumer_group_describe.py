"""ConsumerGroupDescribe (key 69), v0-1: KIP-848 groups' epochs, assignor, members
with their current and target assignments. GROUP_ID_NOT_FOUND for unknown or classic
groups."""

from __future__ import annotations

from emulator.handlers.authz import NOT_REQUESTED, RT, Each, Op, authorized_operations
from emulator.handlers.base import RequestContext
from emulator.handlers.util import describe_groups

API_KEY = 69
VERSIONS = (0, 1)
AUTHORIZE = (Each(RT.GROUP, Op.DESCRIBE, "group_ids"),)
COORDINATORS = ("groups",)


def handle(ctx: RequestContext, req: dict, version: int) -> dict:
    gc = ctx.services.groups

    def describe(gid: str) -> dict:
        [typed] = gc.describe_consumer_groups([gid])
        d = dict(typed)
        d["authorized_operations"] = authorized_operations(ctx, RT.GROUP, gid) \
            if req["include_authorized_operations"] else NOT_REQUESTED
        return d

    return describe_groups(ctx, req["group_ids"], gc.coordinator_error, describe)
