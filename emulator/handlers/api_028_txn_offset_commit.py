"""TxnOffsetCommit (key 28), v0-5: offsets that commit with a transaction.

Sent to the group coordinator. The offsets stay pending (invisible to OffsetFetch,
UNSTABLE_OFFSET_COMMIT under require_stable) until EndTxn commits them or drops them.
v3+ carry the member id, generation and group.instance.id, checked like OffsetCommit's
(ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID).
"""

from __future__ import annotations

from emulator.handlers.base import RequestContext

API_KEY = 28
VERSIONS = (0, 5)


def handle(ctx: RequestContext, req: dict, version: int) -> dict:
    gc = ctx.services["groups"]
    group_id = req["group_id"]
    topics = [(t["name"], [(p["partition_index"], p["committed_offset"],
                            p["committed_leader_epoch"] if version >= 2 else -1,
                            p["committed_metadata"]) for p in t["partitions"]])
              for t in req["topics"]]
    err = gc.coordinator_error(ctx.broker_id, group_id)
    if err:
        res = [(name, [(p[0], err) for p in parts]) for name, parts in topics]
    else:
        gc.tick()
        v3 = version >= 3
        res = gc.txn_offset_commit(
            group_id, req["producer_id"], req["member_id"] if v3 else "",
            req["generation_id_or_member_epoch"] if v3 else -1, topics,
            group_instance_id=req["group_instance_id"] if v3 else None)
    return {"throttle_time_ms": 0, "topics": [
        {"name": name, "partitions": [{"partition_index": p, "error_code": c} for p, c in parts]}
        for name, parts in res]}
