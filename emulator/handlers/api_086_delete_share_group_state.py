"""DeleteShareGroupState (key 86), v0: drop a share-partition's persisted state (sent when
share group offsets or the group are deleted). NOT_COORDINATOR on the wrong broker.
"""

from __future__ import annotations

from emulator.handlers.authz import ClusterOp, Op
from emulator.handlers.base import RequestContext
from emulator.handlers.share_util import per_state_partition

API_KEY = 86
VERSIONS = (0, 0)
AUTHORIZE = (ClusterOp(Op.CLUSTER_ACTION),)


def handle(ctx: RequestContext, req: dict, version: int) -> dict:
    def apply(sc, group_id: str, topic_id: bytes, p: dict) -> None:
        sc.delete_state(group_id, topic_id, p["partition"])

    return per_state_partition(ctx, req, apply, known_topic=True)
