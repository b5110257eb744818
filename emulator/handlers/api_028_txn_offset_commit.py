"""TxnOffsetCommit (key 28), v0-6: offsets that commit with a transaction.

Sent to the group coordinator. The offsets stay pending (invisible to OffsetFetch,
UNSTABLE_OFFSET_COMMIT under require_stable) until EndTxn commits them or drops them.
v3+ carry the member id, generation and group.instance.id, checked like OffsetCommit's
(ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID). v6 names topics by id
(KIP-1319): an unknown id gets UNKNOWN_TOPIC_ID, as OffsetCommit v10 does. Under
transaction version 2, v5+ also does AddOffsetsToTxn's work (KIP-890 part 2): the group's
offsets partition joins the producer's transaction, with that call's errors.
"""

from __future__ import annotations

from emulator.handlers.authz import RT, Each, One, Op
from emulator.handlers.base import RequestContext
from emulator.handlers.util import transaction_version
from wire.errors import ErrorCode as E

API_KEY = 28
VERSIONS = (0, 6)
ZERO_ID = bytes(16)
AUTHORIZE = (
    One(RT.TRANSACTIONAL_ID, Op.WRITE, "transactional_id"),
    One(RT.GROUP, Op.READ, "group_id"),
    Each(RT.TOPIC, Op.READ, "topics"),
)
COORDINATORS = ("groups",)


def handle(ctx: RequestContext, req: dict, version: int) -> dict:
    gc = ctx.services.groups
    group_id = req["group_id"]
    known: list[tuple[int, str, list]] = []  # (index in the response, name, partitions)
    topics_out: list[dict] = []
    for t in req["topics"]:
        name = t.get("name", "")
        if version >= 6:
            topic = ctx.cluster.topics_by_id.get(t.get("topic_id", ZERO_ID))
            name = topic.name if topic is not None else None
        topics_out.append({
            "name": t.get("name", ""), "topic_id": t.get("topic_id", ZERO_ID),
            "partitions": [{"partition_index": p["partition_index"],
                            "error_code": E.UNKNOWN_TOPIC_ID} for p in t["partitions"]]})
        if name is not None:
            known.append((len(topics_out) - 1, name, t["partitions"]))
    topics = [(name, [(p["partition_index"], p["committed_offset"],
                       p["committed_leader_epoch"] if version >= 2 else -1,
                       p["committed_metadata"] or "") for p in parts])  # NO_METADATA
              for _, name, parts in known]
    err = gc.coordinator_error(ctx.broker_id, group_id)
    tc = ctx.services.transactions
    if not err and version >= 5 and tc is not None and transaction_version(ctx) >= 2:
        err = tc.add_offsets(req["transactional_id"], req["producer_id"],
                             req["producer_epoch"], group_id)
    if err:
        res = [(name, [(p[0], err) for p in parts]) for name, parts in topics]
    else:
        v3 = version >= 3
        res = gc.txn_offset_commit(
            group_id, req["producer_id"], req["member_id"] if v3 else "",
            req["generation_id_or_member_epoch"] if v3 else -1, topics,
            group_instance_id=req["group_instance_id"] if v3 else None)
    for (i, _, _), (_name, parts) in zip(known, res, strict=True):
        topics_out[i]["partitions"] = [{"partition_index": p, "error_code": c}
                                       for p, c in parts]
    return {"throttle_time_ms": 0, "topics": topics_out}
