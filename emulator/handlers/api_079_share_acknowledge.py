"""ShareAcknowledge (key 79), v1-2: acknowledge records acquired through ShareFetch.

The share session must exist and the epoch match (0 is INVALID_SHARE_SESSION_EPOCH: only
ShareFetch opens sessions; -1 closes the session after the acknowledgements and
releases what the member still holds). Per partition: ACCEPT, RELEASE, REJECT, GAP, and
RENEW from v2 when IsRenewAck is set (KIP-1222: the acquisition lock starts again);
INVALID_RECORD_STATE for offsets not acquired by this member, INVALID_REQUEST for
malformed batches, NOT_LEADER_OR_FOLLOWER with the current leader.
"""

from __future__ import annotations

from emulator.handlers.authz import RT, Each, One, Op
from emulator.handlers.base import RequestContext
from emulator.handlers.share_util import acknowledge_all, top_error
from wire.errors import ErrorCode as E
from wire.errors import KafkaError

API_KEY = 79
VERSIONS = (1, 2)
AUTHORIZE = (One(RT.GROUP, Op.READ, "group_id"),
             Each(RT.TOPIC, Op.READ, "topics", name="topic"))
COORDINATORS = ("share",)


def handle(ctx: RequestContext, req: dict, version: int) -> dict:
    sc = ctx.services.share
    group_id, member_id = req["group_id"], req["member_id"]
    lock_ms = sc.group_int(group_id, "share.record.lock.duration.ms") if group_id else 0
    if not group_id or not member_id:
        return top_error(E.INVALID_REQUEST, "Group id and member id must be set")
    epoch = req["share_session_epoch"]
    try:
        sc.session_for_acknowledge(ctx.broker_id, group_id, member_id, epoch)
    except KafkaError as e:
        out = top_error(e.code, e.message)
        if e.code == E.SHARE_SESSION_NOT_FOUND and not e.message:
            out["error_message"] = None  # as Kafka 4.4 (the response differential)
        return out
    acks = [(t["topic_id"], p["partition_index"], p["acknowledgement_batches"])
            for t in req["topics"] for p in t["partitions"]]
    nodes: dict[int, dict] = {}
    rows = acknowledge_all(ctx, sc, group_id, member_id, acks,
                           version >= 2 and req["is_renew_ack"], nodes, ack_field="error")
    if epoch == -1:
        sc.close_session(ctx.broker_id, group_id, member_id)
    by_topic: dict[bytes, list[dict]] = {}
    for (tid, _), row in sorted(rows.items()):
        by_topic.setdefault(tid, []).append(row)
    return {"throttle_time_ms": 0, "error_code": E.NONE, "acquisition_lock_timeout_ms": lock_ms,
            "responses": [{"topic_id": t, "partitions": ps} for t, ps in by_topic.items()],
            "node_endpoints": list(nodes.values())}
