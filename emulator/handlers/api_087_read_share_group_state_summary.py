"""ReadShareGroupStateSummary (key 87), v0-1: a share-partition's start offset, state and
leader epochs (what DescribeShareGroupOffsets is built from); v1 adds
DeliveryCompleteCount (KIP-1226). Unlike ReadShareGroupState no leader-epoch check, and a
share-partition without state answers start offset -1 (Kafka 4.4), not an error.
"""

from __future__ import annotations

from emulator.handlers.authz import ClusterOp, Op
from emulator.handlers.base import RequestContext
from emulator.handlers.share_util import per_state_partition

API_KEY = 87
VERSIONS = (0, 1)
AUTHORIZE = (ClusterOp(Op.CLUSTER_ACTION),)


def handle(ctx: RequestContext, req: dict, version: int) -> dict:
    def apply(sc, group_id: str, topic_id: bytes, p: dict) -> dict:
        return sc.state_summary(group_id, topic_id, p["partition"])

    return per_state_partition(ctx, req, apply, known_topic=True)
