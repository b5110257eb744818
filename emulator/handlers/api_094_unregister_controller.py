"""UnregisterController (key 94), v0: remove a controller's registration (Kafka 4.4).

The emulator's quorum has one controller, the active one, so as a real 4.4 cluster
answers (measured): the active controller's id gets INVALID_REQUEST "Controller cannot
unregister itself while it is active.", any other id CONTROLLER_ID_NOT_REGISTERED
"Controller ID N is not currently registered.". Authorization first, as Kafka 4.4's
ControllerApis.handleUnregisterController (read in the 4.4.0 core jar; a broker forwards
the request with the caller's principal): ALTER on CLUSTER, else
CLUSTER_AUTHORIZATION_FAILED.
"""

from __future__ import annotations

from emulator.handlers.authz import ClusterOp, Op
from emulator.handlers.base import RequestContext
from wire.errors import ErrorCode as E

API_KEY = 94
VERSIONS = (0, 0)
AUTHORIZE = (ClusterOp(Op.ALTER),)


def handle(ctx: RequestContext, req: dict, version: int) -> dict:
    controller_id = req["controller_id"]
    if controller_id == ctx.cluster.controller_id:
        return {"throttle_time_ms": 0, "error_code": E.INVALID_REQUEST,
                "error_message": "Controller cannot unregister itself while it is active."}
    return {"throttle_time_ms": 0, "error_code": E.CONTROLLER_ID_NOT_REGISTERED,
            "error_message": f"Controller ID {controller_id} is not currently registered."}
