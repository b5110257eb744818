"""AddRaftVoter (key 80), v0-1: change the KRaft voter set (KIP-853).

The emulator's metadata quorum is static (one voter, the active controller;
kraft.version 0, as ApiVersions shows by not finalizing it), so this answers as a Kafka
cluster with a static quorum does (measured on a real 4.4 broker): a cluster id that is
not this cluster's INCONSISTENT_CLUSTER_ID, otherwise UNSUPPORTED_VERSION "Cluster
doesn't support adding voter because the kraft.version feature is 0".
"""

from __future__ import annotations

from emulator.handlers.authz import ClusterOp, Op
from emulator.handlers.base import RequestContext
from wire.errors import ErrorCode as E

API_KEY = 80
VERSIONS = (0, 1)
AUTHORIZE = (ClusterOp(Op.ALTER),)


def handle(ctx: RequestContext, req: dict, version: int) -> dict:
    cluster_id = req["cluster_id"]
    if cluster_id is not None and cluster_id != ctx.cluster.cluster_id:
        return {"throttle_time_ms": 0, "error_code": E.INCONSISTENT_CLUSTER_ID,
                "error_message": f'The given id "{cluster_id}" doesn\'t match the cluster id '
                                 f'"{ctx.cluster.cluster_id}"'}
    return {"throttle_time_ms": 0, "error_code": E.UNSUPPORTED_VERSION,
            "error_message": "Cluster doesn't support adding voter because the "
                             "kraft.version feature is 0"}
