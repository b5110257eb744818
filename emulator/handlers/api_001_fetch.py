"""Fetch (key 1), v4-18.

Consumers read whole stored batches up to the high watermark (the last stable
offset under read_committed, with the aborted transactions in range); max_bytes
and partition_max_bytes bound the response, except that the first batch always
comes whole (KIP-74); under ``--fidelity kafka`` the bytes left under the limit carry
the start of the next batch, cut mid-way as Kafka's are (fast: whole batches only;
docs/fidelity.md, fetch-partial-batches). min_bytes/max_wait_ms long-poll
(emulator/cluster/delayed.py ``fetch_wait``). Topic IDs from v13, DivergingEpoch from
v12 when last_fetched_epoch disagrees with the leader's epoch cache, and the current-leader hint on NOT_LEADER_OR_FOLLOWER.
Incremental fetch sessions (v7+, KIP-227) as Kafka's FetchManager keeps them
(emulator/cluster/fetch_sessions.py): a full fetch opens a session, incremental
fetches carry only changes and get only the partitions with news;
FETCH_SESSION_ID_NOT_FOUND, INVALID_FETCH_SESSION_EPOCH and
FETCH_SESSION_TOPIC_ID_ERROR as Kafka answers them. A session keeps the topic ids it
was given (v13+): once the topic is deleted its partitions answer
UNKNOWN_TOPIC_OR_PARTITION, once another topic takes the name INCONSISTENT_TOPIC_ID
(never the new topic's records); a request naming an id the broker does not know
answers UNKNOWN_TOPIC_ID. An incremental fetch reads only the
partitions of its session that may have news (``FetchContext.select``): an idle
consumer's fetch costs what changed, not the session's size, and a long-polling one
waits on its session's key, woken by a change to any of its partitions. A client over its
consumer_byte_rate quota gets throttle_time_ms (emulator/cluster/quotas.py).

Authorization is done here, not by a declared ``Each``: as KafkaApis.handleFetch, READ
on the topic is checked for every partition of the fetch context - on an incremental
fetch that is every partition the session holds, not only those the request names - so
an ACL removed mid-session answers TOPIC_AUTHORIZATION_FAILED for that partition on the
next fetch. A denied partition stays in the session (Kafka keeps it too) and gets its
data again once the ACL is back.
"""

from __future__ import annotations

from typing import Any, cast

from emulator.cluster.delayed import fetch_wait
from emulator.cluster.fetch_sessions import (
    CachedPartition,
    FetchContext,
    FetchRequest,
    PartitionAnswer,
    finish,
    new_context,
)
from emulator.cluster.partition import epoch_end_offset
from emulator.handlers.authz import RT, Op, allowed
from emulator.handlers.base import Delayed, RequestContext
from emulator.handlers.util import error_of, node_endpoint, quota_throttle
from wire.errors import ErrorCode as E
from wire.errors import KafkaError

API_KEY = 1
VERSIONS = (4, 18)
AUTHORIZE = ()  # READ on TOPIC per partition of the session, in handle (see above)
LEADER_HINT_ERRORS = (E.NOT_LEADER_OR_FOLLOWER, E.FENCED_LEADER_EPOCH)
_NO_ID = bytes(16)  # a topic named by name (Fetch v12 and older)


def any_replica_may_answer(req: dict, version: int) -> bool:
    """Whether a follower may serve this fetch: a consumer's (no replica id) Fetch v11+,
    which carries client metadata (Kafka's FetchParams.fetchOnlyLeader is false then)."""
    if version < 11:
        return False
    replica = (req.get("replica_state") or {}).get("replica_id", -1) if version >= 15 \
        else req.get("replica_id", -1)
    return replica < 0


def _read_partition(ctx: RequestContext, cp: CachedPartition, version: int, isolation: int,
                    budget: int, first: bool, nodes: dict[int, dict],
                    denied: frozenset[str], any_replica: bool) -> dict:
    """One partition's answer, reading at most ``budget`` bytes (the first batch whole
    when ``first``); topics in ``denied`` answer TOPIC_AUTHORIZATION_FAILED; a follower
    answers from its own log when ``any_replica`` (KIP-392)."""
    cluster = ctx.cluster
    name, idx = cp.topic, cp.partition
    out = {"partition_index": idx, "error_code": E.NONE, "high_watermark": -1,
           "last_stable_offset": -1, "log_start_offset": -1, "records": b"",
           "aborted_transactions": None}
    try:
        if name is None:
            raise KafkaError(E.UNKNOWN_TOPIC_ID)
        if name in denied:
            raise KafkaError(E.TOPIC_AUTHORIZATION_FAILED)
        # this broker's metadata first (metadata_views: lags under Kafka's timing)
        if cluster.metadata_views.active:
            if version >= 13 and cluster.metadata_views.view(ctx.broker_id, name) is None:
                raise KafkaError(E.UNKNOWN_TOPIC_ID)  # an id this broker does not know yet
            cluster.metadata_views.check(ctx.broker_id, name, idx, cp.current_leader_epoch,
                                         leader=not any_replica)
        p = cluster.get_partition(name, idx)
        if cp.topic_id != _NO_ID and cluster.topics[name].id != cp.topic_id:
            # the name is another topic's now (deleted and created again): a session
            # keeps the id it was given, and Kafka's ReplicaManager.readFromLog checks
            # it against the log's (measured on Kafka 4.4: INCONSISTENT_TOPIC_ID, on
            # every incremental fetch; UNKNOWN_TOPIC_OR_PARTITION while the name is gone)
            raise KafkaError(E.INCONSISTENT_TOPIC_ID)
        if any_replica:
            # served by a follower too, up to what it has and knows to be committed
            p.check_replica(ctx.broker_id, cp.current_leader_epoch)
        else:
            p.check_leader(ctx.broker_id, cp.current_leader_epoch)
        log, hw, lso = p.replica_view(ctx.broker_id)
        offset = cp.fetch_offset
        out["high_watermark"] = hw
        out["last_stable_offset"] = lso
        out["log_start_offset"] = log.log_start_offset
        last_epoch = cp.last_fetched_epoch
        if version >= 12 and last_epoch >= 0:
            # Partition.fetchRecords: the consumer's last fetched epoch against
            # the leader-epoch cache (exactly as OffsetForLeaderEpoch answers)
            epoch, end = epoch_end_offset(log, last_epoch)
            if epoch < 0 or end < 0 or offset < log.log_start_offset:
                raise KafkaError(E.OFFSET_OUT_OF_RANGE)
            if epoch < last_epoch or end < offset:
                out["diverging_epoch"] = {"epoch": epoch, "end_offset": end}
                return out
        if offset < log.log_start_offset or offset > log.log_end_offset:
            raise KafkaError(E.OFFSET_OUT_OF_RANGE)
        limit = lso if isolation == 1 else hw
        max_bytes = min(cp.partition_max_bytes, budget)
        if cluster.fidelity.kafka_timing:
            batches = log.read(offset, max(0, max_bytes), limit, min_one=first)
            data = b"".join(batches)
            if len(data) < max_bytes:
                data += _partial_next_batch(log, offset, batches, max_bytes - len(data),
                                            limit)
        else:  # whole batches, joined in the log core (one copy, no list)
            data = log.read_bytes(offset, max(0, max_bytes), limit, first)
        out["records"] = data
        if isolation == 1:  # a list even when nothing was read (measured on Kafka 4.4)
            out["aborted_transactions"] = [
                {"producer_id": a.producer_id, "first_offset": a.first_offset}
                for a in p.aborted_between(offset, offset + 1 + len(data))
            ]
    except KafkaError as e:  # a business failure; anything else is our bug
        out["error_code"], _ = error_of(e)
        # Kafka answers a failed partition read with no offsets at all (-1)
        out["high_watermark"] = out["last_stable_offset"] = out["log_start_offset"] = -1
        if out["error_code"] in LEADER_HINT_ERRORS and name is not None:
            try:
                p = cluster.get_partition(name, idx)
                # the leader this broker's metadata names (metadata_views)
                leader, epoch = cluster.metadata_views.leader_hint(
                    ctx.broker_id, name, idx) or (p.leader, p.leader_epoch)
                out["current_leader"] = {"leader_id": leader, "leader_epoch": epoch}
                ep = node_endpoint(cluster, leader, ctx.listener)
                if ep:
                    nodes[leader] = ep
            except KafkaError:
                pass
    return out


def _partial_next_batch(log: Any, offset: int, batches: list, room: int, limit: int) -> bytes:
    """Under Kafka's fidelity, the first ``room`` bytes of the batch after ``batches``
    (below ``limit``): Kafka's LogSegment.read hands out the segment's bytes up to the
    byte limit, cutting the next batch mid-way, and clients must drop that partial batch
    (docs/fidelity.md, fetch-partial-batches). fast sends whole batches only."""
    if batches:
        last = batches[-1]
        # the batch header: base offset (int64 at 0), last offset delta (int32 at 23)
        nxt = int.from_bytes(last[0:8], "big") + int.from_bytes(last[23:27], "big") + 1
    else:
        nxt = offset
    following = log.read(nxt, 0x7FFFFFFF, limit, min_one=True)[:1]
    return bytes(following[0][:room]) if following else b""


def _denied(ctx: RequestContext, fc: FetchContext) -> frozenset[str]:
    """Topics of the fetch context the principal may not READ (once per request, as
    Kafka's filterByAuthorized; nothing without an authorizer)."""
    sec = ctx.services.security
    if sec is None or sec.authorizer is None:
        return frozenset()
    return frozenset(n for n in fc.topic_names() if not allowed(ctx, Op.READ, RT.TOPIC, n))


def _read(ctx: RequestContext, req: dict, version: int, parts: list[CachedPartition],
          denied: frozenset[str], any_replica: bool
          ) -> tuple[list[dict], dict[int, dict], int, bool]:
    """The partitions ``FetchContext.select`` chose, read in order: (answers, leader
    endpoints, bytes, any error)."""
    isolation = req["isolation_level"]
    budget = req["max_bytes"] if version >= 3 else 0x7FFFFFFF
    total = 0
    errors = False
    nodes: dict[int, dict] = {}
    answers = []
    for cp in parts:
        out = _read_partition(ctx, cp, version, isolation, budget - total, total == 0, nodes,
                              denied, any_replica)
        total += len(out["records"])
        errors |= out["error_code"] != E.NONE
        answers.append(out)
    return answers, nodes, total, errors


def _respond(ctx: RequestContext, req: dict, version: int, fc: FetchContext,
             answers: list[dict], nodes: dict[int, dict]) -> dict:
    """The response body, once: a full fetch opens its session here, an incremental
    one keeps only the partitions with news."""
    if fc.error != E.NONE:
        return {"throttle_time_ms": 0, "error_code": fc.error, "session_id": 0,
                "responses": []}
    cache = ctx.services.fetch_sessions.cache(ctx.broker_id)
    session_id, pairs = finish(cache, fc, cast("list[PartitionAnswer]", answers),
                               ctx.cluster.now(), privileged=False,
                               uses_topic_ids=version >= 13)
    responses: list[dict] = []
    for cp, out in pairs:
        if not responses or responses[-1]["_key"] != (cp.topic, cp.topic_id):
            responses.append({"_key": (cp.topic, cp.topic_id), "topic": cp.topic or "",
                              "topic_id": cp.topic_id, "partitions": []})
        responses[-1]["partitions"].append(out)
    for r in responses:
        del r["_key"]
    size = sum(len(out["records"] or b"") for _, out in pairs)
    return {"throttle_time_ms": quota_throttle(ctx, "consumer_byte_rate", size),
            "error_code": E.NONE, "session_id": session_id,
            "responses": responses, "node_endpoints": list(nodes.values())}


def handle(ctx: RequestContext, req: dict, version: int):
    cluster = ctx.cluster
    resolve = ({t["topic_id"]: getattr(cluster.topics_by_id.get(t["topic_id"]), "name", None)
                for t in req["topics"]} if version >= 13 else {})
    cache = ctx.services.fetch_sessions.cache(ctx.broker_id)
    fc = new_context(cache, cast(FetchRequest, req), version, cluster.now(), resolve)
    if fc.error != E.NONE:
        return _respond(ctx, req, version, fc, [], {})
    denied = _denied(ctx, fc)
    any_replica = any_replica_may_answer(req, version)
    isolation = req["isolation_level"]
    # what a partition's answer depends on besides the partition (FetchContext.select)
    params = (version, isolation, any_replica, denied)
    views = cluster.metadata_views

    def read() -> tuple[tuple[list[dict], dict[int, dict]], int, bool]:
        parts = fc.select(params, isolation, not views.active or views.settled())
        answers, nodes, size, errors = _read(ctx, req, version, parts, denied, any_replica)
        return (answers, nodes), size, errors

    # Kafka's DelayedFetch: woken only by changes to the partitions it reads (Kafka's
    # purgatory keys), through its session's key when incremental
    out = fetch_wait(cluster, read, req["min_bytes"], req["max_wait_ms"], fc.wake_keys)
    if isinstance(out, Delayed):
        return out.map(lambda o: _respond(ctx, req, version, fc, *o))
    return _respond(ctx, req, version, fc, *out)
