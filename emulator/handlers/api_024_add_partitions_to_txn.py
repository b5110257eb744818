"""AddPartitionsToTxn (key 24), v0-5: partitions join the producer's transaction.

v0-3 (clients) name one transaction; v4+ (KIP-890, broker to broker) batch several and
may only verify (``verify_only``: INVALID_TXN_STATE for partitions not in the
transaction). Unknown partitions get UNKNOWN_TOPIC_OR_PARTITION and the others
OPERATION_NOT_ATTEMPTED; a stale epoch PRODUCER_FENCED; a transaction still writing its
markers CONCURRENT_TRANSACTIONS.
"""

from __future__ import annotations

from emulator.handlers.authz import RT, Each, One, Op
from emulator.handlers.base import RequestContext
from wire.errors import ErrorCode as E

API_KEY = 24
VERSIONS = (0, 5)
AUTHORIZE = (
    One(RT.TRANSACTIONAL_ID, Op.WRITE, "v3_and_below_transactional_id"),
    Each(RT.TRANSACTIONAL_ID, Op.WRITE, "transactions", name="transactional_id"),
    Each(RT.TOPIC, Op.WRITE, "v3_and_below_topics"),
)
COORDINATORS = ("transactions",)


def _topic_results(results: dict[tuple[str, int], int]) -> list[dict]:
    by_topic: dict[str, list[dict]] = {}
    for (topic, p), code in results.items():
        by_topic.setdefault(topic, []).append({"partition_index": p,
                                               "partition_error_code": code})
    return [{"name": t, "results_by_partition": ps} for t, ps in by_topic.items()]


def _add(ctx: RequestContext, txn_id: str, pid: int, epoch: int, topics: list[dict],
         verify_only: bool) -> dict[tuple[str, int], int]:
    partitions = [(t["name"], p) for t in topics for p in t["partitions"]]
    return ctx.services.transactions.add_partitions(
        txn_id, pid, epoch, partitions, broker_id=ctx.broker_id, verify_only=verify_only)


def handle(ctx: RequestContext, req: dict, version: int) -> dict:
    if version < 4:
        res = _add(ctx, req["v3_and_below_transactional_id"], req["v3_and_below_producer_id"],
                   req["v3_and_below_producer_epoch"], req["v3_and_below_topics"], False)
        return {"throttle_time_ms": 0, "results_by_topic_v3_and_below": _topic_results(res)}
    out = []
    for txn in req["transactions"]:
        res = _add(ctx, txn["transactional_id"], txn["producer_id"], txn["producer_epoch"],
                   txn["topics"], txn["verify_only"])
        out.append({"transactional_id": txn["transactional_id"],
                    "topic_results": _topic_results(res)})
    return {"throttle_time_ms": 0, "error_code": E.NONE, "results_by_transaction": out}
