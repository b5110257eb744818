"""ListGroups (key 16), v0-5: the groups this broker coordinates.

States filter (v4+, case-insensitive: Empty, PreparingRebalance, CompletingRebalance,
Stable for classic groups; Empty, Assigning, Reconciling, Stable for consumer
groups; Empty, Stable for share groups) and types filter (v5+: classic, consumer, share). Clients ask every broker and merge.
Without DESCRIBE on CLUSTER only the groups the principal may DESCRIBE are listed.
While this broker loads a __consumer_offsets partition (--fidelity kafka, after it
became its leader) the answer is COORDINATOR_LOAD_IN_PROGRESS and no groups, as Kafka's
group coordinator answers a listing with a partition still loading.
"""

from __future__ import annotations

from emulator.handlers.authz import RT, Op, allowed
from emulator.handlers.base import RequestContext
from wire.errors import ErrorCode as E

API_KEY = 16
VERSIONS = (0, 5)
AUTHORIZE = ()  # groups are filtered by DESCRIBE in the handler (CLUSTER DESCRIBE shows all)
COORDINATORS = ("groups",)


def handle(ctx: RequestContext, req: dict, version: int) -> dict:
    gc = ctx.services.groups
    if gc.topic.loading_here(ctx.broker_id):
        return {"throttle_time_ms": 0, "error_code": E.COORDINATOR_LOAD_IN_PROGRESS,
                "groups": []}
    groups = gc.list_groups(req["states_filter"] if version >= 4 else None,
                            req["types_filter"] if version >= 5 else None,
                            broker_id=ctx.broker_id)
    if (share := ctx.services.share_if_built) is not None:
        groups += share.list_share_groups(
            req["states_filter"] if version >= 4 else None,
            req["types_filter"] if version >= 5 else None, broker_id=ctx.broker_id)
    if not allowed(ctx, Op.DESCRIBE, RT.CLUSTER):
        groups = [g for g in groups if allowed(ctx, Op.DESCRIBE, RT.GROUP, g["group_id"])]
    return {"throttle_time_ms": 0, "error_code": E.NONE, "groups": groups}
