"""InitializeShareGroupState (key 83), v0: the share coordinator starts a share-partition's
state at a start offset and state epoch (sent by the group coordinator in Kafka).

FENCED_STATE_EPOCH if the state epoch is older than the stored one (an equal one
initializes again); NOT_COORDINATOR
unless this broker leads the key's __share_group_state partition.
"""

from __future__ import annotations

from emulator.handlers.authz import ClusterOp, Op
from emulator.handlers.base import RequestContext
from emulator.handlers.share_util import per_state_partition

API_KEY = 83
VERSIONS = (0, 0)
AUTHORIZE = (ClusterOp(Op.CLUSTER_ACTION),)


def handle(ctx: RequestContext, req: dict, version: int) -> dict:
    def apply(sc, group_id: str, topic_id: bytes, p: dict) -> None:
        sc.initialize_state(group_id, topic_id, p["partition"], p["state_epoch"],
                            p["start_offset"])

    return per_state_partition(ctx, req, apply, known_topic=True)
