"""ShareFetch (key 78), v1-2: acquire records for a share-group member, with acknowledgements.

One request does three things in Kafka's order: the share session step (epoch 0 opens
a session with the listed partitions, later epochs add and forget partitions and must
match the session's epoch, -1 closes it and releases the member's records), then the
piggybacked acknowledgements (ACCEPT, RELEASE, REJECT, GAP; RENEW from v2 with
IsRenewAck, which also means "do not fetch"), then acquisition: available records of
each session partition this broker leads are locked for the group's
share.record.lock.duration.ms and sent as the stored batches plus AcquiredRecords
ranges with delivery counts. With nothing to acquire the request waits up to
MaxWaitMs (emulator/coordinators/share/waits.py: woken by its partitions and its group's
share state); a lock running out meanwhile is noticed.
Errors: SHARE_SESSION_NOT_FOUND, INVALID_SHARE_SESSION_EPOCH,
SHARE_SESSION_LIMIT_REACHED, INVALID_REQUEST at the top (with AcquisitionLockTimeoutMs 0,
as Kafka 4.4); UNKNOWN_TOPIC_ID, UNKNOWN_TOPIC_OR_PARTITION, NOT_LEADER_OR_FOLLOWER (with
the current leader) per partition; INVALID_RECORD_STATE / INVALID_REQUEST as
AcknowledgeErrorCode. A partition whose share-partition state was never initialized is
left out of the answer, or, for a fetch that waited, answered UNKNOWN_SERVER_ERROR when
the wait ends (Kafka 4.4). The final epoch (-1) closes the session even when partitions
are listed without acknowledgements, and answers only the acknowledgements.
ShareAcquireMode (v2, KIP-1206): 0 batch-optimized acquires whole batches (MaxRecords may
be exceeded), 1 record-limit acquires at most MaxRecords records (a batch may be split).
The consumer_byte_rate quota applies as to Fetch (``_throttled``): a ShareFetch reads at
most what the quota window allows, and one whose records would put the client over its
quota answers throttle_time_ms without them (client_tests/test_share_groups_raw.py).
"""

from __future__ import annotations

from emulator.coordinators.share.coordinator import NoShareState
from emulator.coordinators.share.waits import share_fetch_wait
from emulator.handlers.authz import RT, Each, One, Op
from emulator.handlers.base import RequestContext
from emulator.handlers.share_util import acknowledge_all, leader_hint, top_error
from emulator.handlers.util import quota_throttle, quota_unrecord, quota_window_bytes
from wire.errors import ErrorCode as E
from wire.errors import KafkaError

API_KEY = 78
VERSIONS = (1, 2)
AUTHORIZE = (One(RT.GROUP, Op.READ, "group_id"),
             Each(RT.TOPIC, Op.READ, "topics", name="topic"))
COORDINATORS = ("share",)


def handle(ctx: RequestContext, req: dict, version: int):
    sc = ctx.services.share
    group_id, member_id = req["group_id"], req["member_id"]
    epoch = req["share_session_epoch"]
    lock_ms = sc.group_int(group_id, "share.record.lock.duration.ms") if group_id else 0
    if not group_id or not member_id:
        return top_error(E.INVALID_REQUEST, "Group id and member id must be set")
    requested = [(t["topic_id"], p["partition_index"]) for t in req["topics"]
                 for p in t["partitions"]]
    acks = [(t["topic_id"], p["partition_index"], p["acknowledgement_batches"])
            for t in req["topics"] for p in t["partitions"] if p["acknowledgement_batches"]]
    forget = [(t["topic_id"], i) for t in req["forgotten_topics_data"] for i in t["partitions"]]
    renew = version >= 2 and req["is_renew_ack"]
    record_limit = version >= 2 and req["share_acquire_mode"] == 1
    try:
        session = sc.session_for_fetch(ctx.broker_id, group_id, member_id, epoch, requested,
                                       forget, bool(acks), ctx.connection_id)
    except KafkaError as e:
        return top_error(e.code, e.message)
    nodes: dict[int, dict] = {}
    parts = acknowledge_all(ctx, sc, group_id, member_id, acks, renew, nodes,
                            ack_field="acknowledge_error")
    if session is None:
        sc.close_session(ctx.broker_id, group_id, member_id)
    if session is None or renew:
        return _body(parts, nodes, lock_ms)
    order = sorted(session.partitions)
    if order:
        shift = session.epoch % len(order)  # fairness: start at another partition each time
        order = order[shift:] + order[:shift]
    full = epoch == 0

    def attempt(final: bool, expired: bool = False) -> dict | None:
        out = {k: dict(v) for k, v in parts.items()}
        found = False
        left = max(1, req["max_records"])
        # no more than the consumer_byte_rate quota lets the client take in its window
        window = quota_window_bytes(ctx, "consumer_byte_rate")
        budget = req["max_bytes"] if window is None else min(req["max_bytes"], window)
        for key in order:
            row = out.setdefault(key, {"partition_index": key[1]})
            if left <= 0:
                continue
            try:
                data, got = sc.acquire(ctx.broker_id, group_id, member_id, key[0], key[1],
                                       left, budget, record_limit=record_limit)
            except NoShareState:
                # Kafka 4.4's share-partition cannot load state that was never
                # initialized: left out of the answer, or UNKNOWN_SERVER_ERROR (no
                # message) when a fetch that waited ends
                if expired:
                    row.update(error_code=E.UNKNOWN_SERVER_ERROR, error_message=None)
                    found = True
                elif key not in parts:
                    del out[key]
                continue
            except KafkaError as e:
                row.update(error_code=e.code, error_message=e.message)
                leader_hint(ctx, key, row, nodes)
                found = True
                continue
            if got.ranges:
                found = True
                left -= got.count
                budget = max(1, budget - len(data))
                row["records"] = data
                row["acquired_records"] = [
                    {"first_offset": a, "last_offset": b, "delivery_count": n}
                    for a, b, n in got.ranges]
        if not found and not final:
            return None
        if not full:  # an incremental session answers only what has news
            out = {k: v for k, v in out.items()
                   if v.get("records") or v.get("error_code") or k in parts}
        return _throttled(ctx, _body(out, nodes, lock_ms))

    return share_fetch_wait(
        sc, ctx.cluster, group_id, order, lambda final: attempt(final),
        lambda: attempt(final=True, expired=True) or _body(parts, nodes, lock_ms),
        req["max_wait_ms"])


def _throttled(ctx: RequestContext, body: dict) -> dict:
    """The consumer_byte_rate quota, as Kafka 4.4 applies it to ShareFetch (measured):
    the answer's records are recorded against it; when that puts the client over it,
    they are taken back and the answer says throttle_time_ms with no records (the
    acknowledgements stay). What was acquired for it stays acquired by the member, as
    on Kafka, until its lock runs out or the session closes."""
    rows = [row for t in body["responses"] for row in t["partitions"]]
    size = sum(len(row.get("records") or b"") for row in rows)
    throttle = quota_throttle(ctx, "consumer_byte_rate", size)
    if throttle > 0:
        quota_unrecord(ctx, "consumer_byte_rate", size)
        for row in rows:
            if "acquired_records" in row:
                row.update(records=b"", acquired_records=[])
        body["throttle_time_ms"] = throttle
    return body


def _body(parts: dict, nodes: dict, lock_ms: int) -> dict:
    by_topic: dict[bytes, list[dict]] = {}
    for (tid, _), row in sorted(parts.items()):
        row.setdefault("records", b"")  # not nullable from v1 (Kafka's default is null)
        by_topic.setdefault(tid, []).append(row)
    return {"throttle_time_ms": 0, "error_code": E.NONE, "acquisition_lock_timeout_ms": lock_ms,
            "responses": [{"topic_id": t, "partitions": ps} for t, ps in by_topic.items()],
            "node_endpoints": list(nodes.values())}
