"""UnregisterController (key 94), v0: remove a controller's registration (Kafka 4.4).

The emulator's quorum has one controller, the active one, so as a real 4.4 cluster
answers (measured): the active controller's id gets INVALID_REQUEST "Controller cannot
unregister itself while it is active.", any other id CONTROLLER_ID_NOT_REGISTERED
"Controller ID N is not currently registered.".
"""

from __future__ import annotations

from emulator.handlers.base import RequestContext
from wire.errors import ErrorCode as E

API_KEY = 94
VERSIONS = (0, 0)
AUTHORIZE = ()  # answers only errors: the one controller cannot unregister


def handle(ctx: RequestContext, req: dict, version: int) -> dict:
    controller_id = req["controller_id"]
    if controller_id == ctx.cluster.controller_id:
        return {"throttle_time_ms": 0, "error_code": E.INVALID_REQUEST,
                "error_message": "Controller cannot unregister itself while it is active."}
    return {"throttle_time_ms": 0, "error_code": E.CONTROLLER_ID_NOT_REGISTERED,
            "error_message": f"Controller ID {controller_id} is not currently registered."}
