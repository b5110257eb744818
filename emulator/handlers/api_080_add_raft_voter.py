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
from emulator.handlers.util import static_quorum_voter_change

API_KEY = 80
VERSIONS = (0, 1)
AUTHORIZE = (ClusterOp(Op.ALTER),)


def handle(ctx: RequestContext, req: dict, version: int) -> dict:
    return static_quorum_voter_change(ctx, req["cluster_id"], "adding")
