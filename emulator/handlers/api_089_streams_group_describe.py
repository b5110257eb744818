"""StreamsGroupDescribe (key 89), v0-1: streams groups' state, epochs, configured topology,
members with their process, endpoint, task offsets, current and target assignments.

GROUP_ID_NOT_FOUND for unknown groups and groups of another type, NOT_COORDINATOR when
asked of the wrong broker, GROUP_AUTHORIZATION_FAILED per group without DESCRIBE.
v1's IncludeTopologyDescription: there is no topology description plugin, so a
described group's TopologyDescriptionStatus is NOT_STORED (1) when asked, NOT_REQUESTED
(0) otherwise, as Kafka 4.4 without a plugin answers; AssignorName is "sticky".
"""

from __future__ import annotations

from emulator.handlers.authz import NOT_REQUESTED, RT, Each, Op, authorized_operations
from emulator.handlers.base import RequestContext
from emulator.handlers.util import describe_groups

API_KEY = 89
NOT_STORED = 1  # TopologyDescriptionStatus: no description recorded for the group
VERSIONS = (0, 1)
AUTHORIZE = (Each(RT.GROUP, Op.DESCRIBE, "group_ids"),)
COORDINATORS = ("groups",)


def handle(ctx: RequestContext, req: dict, version: int) -> dict:
    gc = ctx.services.groups

    def describe(gid: str) -> dict:
        [typed] = gc.describe_streams_groups([gid], version)
        d = dict(typed)
        if not d["error_code"]:
            d["authorized_operations"] = authorized_operations(ctx, RT.GROUP, gid) \
                if req["include_authorized_operations"] else NOT_REQUESTED
            if req["include_topology_description"]:
                d["topology_description_status"] = NOT_STORED
        return d

    return describe_groups(ctx, req["group_ids"], gc.coordinator_error, describe)
