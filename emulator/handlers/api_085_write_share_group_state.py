"""WriteShareGroupState (key 85), v0-1: a share-partition leader persists its start offset
and state batches; the batches are merged over the stored ones (v1 carries
DeliveryCompleteCount, which is recomputed here from the state).

FENCED_STATE_EPOCH / FENCED_LEADER_EPOCH for older epochs, INVALID_REQUEST
without state, NOT_COORDINATOR on the wrong broker.
"""

from __future__ import annotations

from emulator.handlers.authz import ClusterOp, Op
from emulator.handlers.base import RequestContext
from emulator.handlers.share_util import per_state_partition

API_KEY = 85
VERSIONS = (0, 1)
AUTHORIZE = (ClusterOp(Op.CLUSTER_ACTION),)


def handle(ctx: RequestContext, req: dict, version: int) -> dict:
    def apply(sc, group_id: str, topic_id: bytes, p: dict) -> None:
        sc.write_state(group_id, topic_id, p["partition"], p["state_epoch"],
                       p["leader_epoch"], p["start_offset"], p["state_batches"])

    return per_state_partition(ctx, req, apply)
