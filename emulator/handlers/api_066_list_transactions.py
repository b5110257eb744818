"""ListTransactions (key 66), v0-2: the transactions this broker coordinates.

Filters: states (unknown names are echoed in unknown_state_filters), producer ids,
duration (v1: running longer than, in ms) and a transactional id pattern (v2, a
regular expression; Python's syntax, where Kafka uses Java's). Only transactional ids
the principal may DESCRIBE are listed, as Kafka filters them.
"""

from __future__ import annotations

from emulator.handlers.authz import RT, Op, allowed
from emulator.handlers.base import RequestContext

API_KEY = 66
VERSIONS = (0, 2)
AUTHORIZE = ()  # transactional ids are filtered by DESCRIBE in the handler
COORDINATORS = ("transactions",)


def handle(ctx: RequestContext, req: dict, version: int) -> dict:
    tc = ctx.services.transactions
    err, unknown, txns = tc.list_transactions(
        broker_id=ctx.broker_id, states=req["state_filters"],
        producer_ids=req["producer_id_filters"],
        duration_ms=req["duration_filter"] if version >= 1 else -1,
        pattern=req["transactional_id_pattern"] if version >= 2 else None)
    txns = [t for t in txns
            if allowed(ctx, Op.DESCRIBE, RT.TRANSACTIONAL_ID, t["transactional_id"])]
    return {"throttle_time_ms": 0, "error_code": err, "unknown_state_filters": unknown,
            "transaction_states": txns}
