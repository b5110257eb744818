"""DescribeTransactions (key 65), v0: state, timeout, start time, producer id and epoch
and partitions of transactional ids this broker coordinates (NOT_COORDINATOR
otherwise, TRANSACTIONAL_ID_NOT_FOUND for unknown ids)."""

from __future__ import annotations

from emulator.handlers.authz import RT, Each, Op
from emulator.handlers.base import RequestContext

API_KEY = 65
VERSIONS = (0, 0)
AUTHORIZE = (Each(RT.TRANSACTIONAL_ID, Op.DESCRIBE, "transactional_ids"),)
COORDINATORS = ("transactions",)


def handle(ctx: RequestContext, req: dict, version: int) -> dict:
    tc = ctx.services.transactions
    return {"throttle_time_ms": 0, "transaction_states": [
        tc.describe(tid, broker_id=ctx.broker_id) for tid in req["transactional_ids"]]}
