"""ReadShareGroupState (key 84), v0: a share-partition leader loads the persisted state
(start offset, state epoch, state batches of acknowledged/archived/available records
with delivery counts).

INVALID_REQUEST ("Read operation on uninitialized share partition not allowed.") for a
share-partition without state, FENCED_LEADER_EPOCH for a
leader epoch older than the last one seen; NOT_COORDINATOR on the wrong broker.
"""

from __future__ import annotations

from emulator.handlers.authz import ClusterOp, Op
from emulator.handlers.base import RequestContext
from emulator.handlers.share_util import per_state_partition

API_KEY = 84
VERSIONS = (0, 0)
AUTHORIZE = (ClusterOp(Op.CLUSTER_ACTION),)


def handle(ctx: RequestContext, req: dict, version: int) -> dict:
    def apply(sc, group_id: str, topic_id: bytes, p: dict) -> dict:
        sp = sc.read_state(group_id, topic_id, p["partition"], p["leader_epoch"])
        return {"state_epoch": sp.state_epoch, "start_offset": sp.start_offset,
                "state_batches": sp.state_batches()}

    return per_state_partition(ctx, req, apply)
