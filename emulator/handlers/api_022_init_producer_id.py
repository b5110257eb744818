"""InitProducerId (key 22), v0-6: producer ids and epochs.

Without a transactional id any broker hands out a fresh producer id with epoch 0 (the
idempotent producer). With one, the transaction coordinator bumps the epoch, fencing
older producers with the same id; an ongoing transaction is aborted first and the
caller told CONCURRENT_TRANSACTIONS, to retry (then it gets another epoch). v3+ lets a
producer re-initialise with its current id and epoch (KIP-360); a stale pair gets
PRODUCER_FENCED. The two-phase-commit fields of v6 (KIP-939) are not supported: a
request with enable_2pc is answered INVALID_REQUEST; no ongoing transaction is
reported.
"""

from __future__ import annotations

from emulator.handlers.authz import RT, Custom, Op, allowed, allowed_any
from emulator.handlers.base import RequestContext
from wire.errors import ErrorCode as E

API_KEY = 22
VERSIONS = (0, 6)
COORDINATORS = ("transactions",)


def _authorize(ctx: RequestContext, req: dict, version: int) -> int | None:
    """Kafka: WRITE on the transactional id; without one IDEMPOTENT_WRITE on the cluster
    or WRITE on some topic."""
    tid = req["transactional_id"]
    if tid is not None:
        ok = allowed(ctx, Op.WRITE, RT.TRANSACTIONAL_ID, tid)
        return None if ok else E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    if allowed(ctx, Op.IDEMPOTENT_WRITE, RT.CLUSTER) or allowed_any(ctx, Op.WRITE, RT.TOPIC):
        return None
    return E.CLUSTER_AUTHORIZATION_FAILED


AUTHORIZE = (Custom(_authorize),)


def handle(ctx: RequestContext, req: dict, version: int) -> dict:
    tc = ctx.services.transactions
    out = {"throttle_time_ms": 0, "producer_id": -1, "producer_epoch": -1,
           "ongoing_txn_producer_id": -1, "ongoing_txn_producer_epoch": -1}
    if version >= 6 and req.get("enable2_pc"):
        return dict(out, error_code=E.INVALID_REQUEST)
    pid, epoch = (req["producer_id"], req["producer_epoch"]) if version >= 3 else (-1, -1)
    err, pid, epoch = tc.init_producer_id(req["transactional_id"],
                                          req["transaction_timeout_ms"], pid, epoch,
                                          broker_id=ctx.broker_id)
    return dict(out, error_code=err, producer_id=pid, producer_epoch=epoch)
