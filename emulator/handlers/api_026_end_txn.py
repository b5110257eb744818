"""EndTxn (key 26), v0-5: commit or abort the producer's transaction.

COMMIT or ABORT markers are written into every partition of the transaction before
the answer (a partition without a leader keeps the transaction in Prepare* until it has
one). A retried EndTxn of a completed transaction succeeds; the wrong outcome or no
transaction is INVALID_TXN_STATE; a stale epoch PRODUCER_FENCED. v5 is transaction
version 2 (KIP-890 part 2): the epoch is bumped at every end and the answer carries the
producer id and epoch the next transaction uses.
"""

from __future__ import annotations

from emulator.handlers.authz import RT, One, Op
from emulator.handlers.base import RequestContext

API_KEY = 26
VERSIONS = (0, 5)
AUTHORIZE = (One(RT.TRANSACTIONAL_ID, Op.WRITE, "transactional_id"),)
COORDINATORS = ("transactions",)


def handle(ctx: RequestContext, req: dict, version: int) -> dict:
    tc = ctx.services.transactions
    err, pid, epoch = tc.end_txn(req["transactional_id"], req["producer_id"],
                                 req["producer_epoch"], req["committed"],
                                 broker_id=ctx.broker_id, tv2=version >= 5)
    return {"throttle_time_ms": 0, "error_code": err, "producer_id": pid,
            "producer_epoch": epoch}
