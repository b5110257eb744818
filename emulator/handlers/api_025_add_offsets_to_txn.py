"""AddOffsetsToTxn (key 25), v0-4: a group's offsets partition joins the transaction,
so that the offsets sent with TxnOffsetCommit commit or abort with it."""

from __future__ import annotations

from emulator.handlers.authz import RT, One, Op
from emulator.handlers.base import RequestContext

API_KEY = 25
VERSIONS = (0, 4)
AUTHORIZE = (
    One(RT.TRANSACTIONAL_ID, Op.WRITE, "transactional_id"),
    One(RT.GROUP, Op.READ, "group_id"),
)
COORDINATORS = ("transactions",)


def handle(ctx: RequestContext, req: dict, version: int) -> dict:
    tc = ctx.services.transactions
    err = tc.add_offsets(req["transactional_id"], req["producer_id"], req["producer_epoch"],
                         req["group_id"], broker_id=ctx.broker_id)
    return {"throttle_time_ms": 0, "error_code": err}
