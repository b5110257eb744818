"""Produce (key 0): advertised v0-13 as Kafka 4.x does, served v3-13.

Kafka 4.0 advertises Produce from v0 so that librdkafka before 2.11.1 keeps
compression enabled, while rejecting v0-2 (KAFKA-18659); we do the same (a v0-2
request closes the connection). One batch per partition (v3+ rule), acks 0, 1
and -1 (acks=-1 waits for the ISR: emulator/cluster/delayed_produce.py), topic IDs from v13, and
the current-leader hint with node endpoints on NOT_LEADER_OR_FOLLOWER (v10+).
Transactional produce is checked against the transaction coordinator when one is
registered in ``ctx.services``; under transaction version 2 (the finalized
``transaction.version`` feature at 2) a v12+ transactional batch adds its partition to
the transaction itself (KIP-890 part 2); under Kafka's timing (--fidelity kafka) such a
batch arriving while the transaction's last end is still being prepared waits for it
(up to add.partitions.to.txn.retry.backoff.max.ms, 100 ms) instead of getting
CONCURRENT_TRANSACTIONS at once, as Kafka's leader retries the coordinator (measured:
answered NONE 36-89 ms later, docs/coordinator-timing.md). A client over its producer_byte_rate quota
gets throttle_time_ms (emulator/cluster/quotas.py). Every batch goes through Kafka's LogValidator checks
(emulator/log/validator.py): record count and sizes, decompression, keys on compacted
topics, timestamps, with KIP-467 per-record errors (record_errors, v8+); each refusal
is logged in one line. A compressed batch inflating past 1 MiB is validated off the
event loop by the server first (``ctx.checked``: emulator/server/offload.py).
"""

from __future__ import annotations

import logging
from typing import Any

from emulator.cluster.delayed_produce import ProduceAcks
from emulator.cluster.metadata_views import CURRENT, MetadataViews
from emulator.cluster.state import AppendResult
from emulator.coordinators.transactions.waits import until_prepared
from emulator.handlers.authz import RT, Each, One, Op
from emulator.handlers.base import NO_RESPONSE, RequestContext
from emulator.handlers.util import node_endpoint, quota_throttle, transaction_version
from wire.codec import Row
from wire.errors import ErrorCode as E
from wire.errors import KafkaError
from wire.records import ATTRIBUTES_OFFSET, HEADER_SIZE, TRANSACTIONAL_BIT

log = logging.getLogger("kafka_emulator.produce")
API_KEY = 0
VERSIONS = (0, 13)
AUTHORIZE = (
    One(RT.TRANSACTIONAL_ID, Op.WRITE, "transactional_id"),
    Each(RT.TOPIC, Op.WRITE, "topic_data"),
)
ACCEPTED = (3, 13)
LEADER_HINT_ERRORS = (E.NOT_LEADER_OR_FOLLOWER, E.FENCED_LEADER_EPOCH)


def _partition_response(ctx: RequestContext, topic: str, index: int, r: AppendResult,
                        hint: tuple[int, int] | None = None) -> dict:
    """One partition's answer; ``hint`` is the current leader this broker named when it
    refused the batch (else the one it names now)."""
    out: dict[str, Any] = {
        "index": index,
        "error_code": r.error,
        "base_offset": r.base_offset,
        "log_append_time_ms": r.log_append_time,
        "log_start_offset": r.log_start_offset,
        # Kafka sends a message only for what its LogValidator refused (a
        # RecordValidationException: hasCustomErrorMessage); OUT_OF_ORDER_SEQUENCE_NUMBER,
        # INVALID_PRODUCER_EPOCH, NOT_ENOUGH_REPLICAS, MESSAGE_TOO_LARGE... carry none
        # (measured on a 4.4 broker). The emulator's reason goes to its log instead.
        "error_message": r.message if r.error and r.reason else None,
        "record_errors": r.record_errors,
    }
    if r.error in LEADER_HINT_ERRORS:
        hint = hint or current_leader(ctx, topic, index)
        if hint is not None:
            out["current_leader"] = {"leader_id": hint[0], "leader_epoch": hint[1]}
    return out


def current_leader(ctx: RequestContext, topic: str, index: int) -> tuple[int, int] | None:
    """(leader, leader epoch) as this broker's metadata names it now (metadata_views:
    lags under Kafka's timing), for the current-leader hint."""
    hint = ctx.cluster.metadata_views.leader_hint(ctx.broker_id, topic, index)
    if hint is not None:
        return hint
    t = ctx.cluster.topics.get(topic)
    if t is not None and index < len(t.partitions):
        p = t.partitions[index]
        return p.leader, p.leader_epoch
    return None


def view_error(views: MetadataViews, broker_id: int, topic: str, index: int) -> int:
    """What this broker's metadata, when it lags (metadata_views), answers a produce
    to ``topic``-``index`` (0: it knows the broker leads it, or sees the controller's
    state)."""
    try:
        views.check(broker_id, topic, index)
    except KafkaError as e:
        return e.code
    return 0


def _has_transactional_records(req: dict) -> bool:
    """Whether a partition's batch is transactional (v3+ carries one batch per partition,
    Kafka's ProduceRequest.hasTransactionalRecords)."""
    for td in req["topic_data"]:
        for pd in td["partition_data"]:
            records = pd["records"]
            # The attributes' low byte, read in place (read_header's is_transactional
            # without building a header for every batch of every request); a batch
            # shorter than its header is the validator's to answer.
            if records and len(records) >= HEADER_SIZE \
                    and records[ATTRIBUTES_OFFSET + 1] & TRANSACTIONAL_BIT:
                return True
    return False


def _refuse_all(ctx: RequestContext, req: dict, code: int) -> dict:
    """Every partition of the request answered ``code`` (Kafka's error response)."""
    return {"responses": [
        {"name": td["name"], "topic_id": td.get("topic_id"), "partition_responses": [
            _partition_response(ctx, td["name"], pd["index"], AppendResult(code))
            for pd in td["partition_data"]]}
        for td in req["topic_data"]], "throttle_time_ms": 0, "node_endpoints": []}


def handle(ctx: RequestContext, req: dict, version: int) -> Any:
    return _produce(ctx, req, version, True)


def _produce(ctx: RequestContext, req: dict, version: int, hold: bool) -> Any:
    """The request served (``hold``: a batch adding its partition to a transaction still
    preparing its last end may wait for it first, under Kafka's timing)."""
    cluster = ctx.cluster
    acks = req["acks"]
    if req["transactional_id"] is None and _has_transactional_records(req):
        # KafkaApis.handleProduceRequest: transactional records need WRITE on the
        # request's transactional id, and a null id is never authorized
        return NO_RESPONSE if acks == 0 else _refuse_all(
            ctx, req, E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
    txn = ctx.services.transactions
    views = cluster.metadata_views
    implicit_add = version >= 12 and transaction_version(ctx) >= 2
    tid = req["transactional_id"]
    if hold and implicit_add and tid is not None and txn is not None and acks != 0 \
            and cluster.fidelity.kafka_timing and txn.preparing(tid):
        # Kafka's leader retries the coordinator's CONCURRENT_TRANSACTIONS (its
        # AddPartitionsToTxnManager, add.partitions.to.txn.retry.backoff.*): the batch
        # waits for the markers, then is served as if it came then; past the last retry
        # it gets the coordinator's answer.
        return until_prepared(txn, tid).map(lambda _: _produce(ctx, req, version, False))
    results: list[tuple[dict, list[tuple[str, int, AppendResult]]]] = []
    for td in req["topic_data"]:
        name = td["name"]
        if version >= 13:
            t = cluster.topics_by_id.get(td["topic_id"])
            name = t.name if t is not None else None
            if views.active:  # the id as this broker's metadata knows it (metadata_views)
                known = views.name_of_id(ctx.broker_id, td["topic_id"])
                name = name if known is CURRENT else known
        pds = td["partition_data"]
        if acks in (-1, 0, 1) and name is not None and not views.active \
                and (txn is None or req["transactional_id"] is None):
            # the common case: the topic's partitions appended in one call
            checked = ctx.checked
            indexes = [pd["index"] for pd in pds]
            appended = cluster.append_many(ctx.broker_id, name, zip(
                indexes, [pd["records"] for pd in pds],
                [checked.get((name, i)) for i in indexes] if checked
                else [None] * len(indexes), strict=True), acks)
            entries = [(name, i, r) for i, r in zip(indexes, appended, strict=True)]
            for _, i, r in entries:
                if r.reason:
                    log.info("broker %d: refused a batch for %s-%d from %s: %s (%s)",
                             ctx.broker_id, name, i, ctx.client_id, E(r.error).name, r.reason)
            results.append((td, entries))
            continue
        entries = []
        for pd in pds:
            idx = pd["index"]
            if acks not in (-1, 0, 1):
                r = AppendResult(E.INVALID_REQUIRED_ACKS)
            elif name is None:
                r = AppendResult(E.UNKNOWN_TOPIC_ID)
            elif views.active and (err := view_error(views, ctx.broker_id, name, idx)):
                r = AppendResult(err)
            else:
                err = txn.check_produce(req["transactional_id"], name, idx, pd["records"],
                                        implicit_add) \
                    if txn is not None and req["transactional_id"] is not None else 0
                r = AppendResult(err) if err else cluster.append(
                    ctx.broker_id, name, idx, pd["records"], acks,
                    ctx.checked.get((name, idx)) if ctx.checked else None)
                if r.reason:
                    log.info("broker %d: refused a batch for %s-%d from %s: %s (%s)",
                             ctx.broker_id, name, idx, ctx.client_id, E(r.error).name, r.reason)
            entries.append((name or "", idx, r))
        results.append((td, entries))
    # The hint of a batch refused now is the leader this broker names now. An answer
    # that waits for another partition's acks=all leaves later, when a broker whose
    # metadata lagged may know that it leads; Kafka looks the hint up as the response
    # leaves, so either is an answer it gives, and the one kept here never has a broker
    # name itself the leader of what it refused (the soundness check's rule).
    refused_hints = {(n, i): current_leader(ctx, n, i) for _, es in results for n, i, r in es
                     if r.error in LEADER_HINT_ERRORS}
    # KIP-13 producer_byte_rate: the bytes count against the quota even when refused
    quotas = ctx.services.quotas
    throttle = quota_throttle(ctx, "producer_byte_rate", sum(
        len(pd["records"] or b"") for td in req["topic_data"] for pd in td["partition_data"])
    ) if quotas is not None and quotas.quotas else 0

    if acks == 0:
        return NO_RESPONSE
    # acks=all and slow writes: what the answer waits for (Kafka's DelayedProduce)
    faults = cluster.faults
    slow_writes = faults is not None and bool(faults.storage)
    completion = None
    if acks == -1 or slow_writes:
        answered = [e for _, es in results for e in es]
        topics = cluster.topics
        completion = ProduceAcks(cluster.acks_all_done, cluster.now, acks, answered,
                                 slow_writes, {n: t.id for n in {e[0] for e in answered}
                                               if (t := topics.get(n)) is not None})
    with_start = version >= 5  # log_start_offset, the last of a partition's leading fields

    def build(timed_out: bool = False) -> dict:
        """The response, each append answered as ``completion`` says (``timed_out``: the
        wait for acks=all ran out first)."""
        responses = []
        nodes: dict[int, dict] = {}
        for td, entries in results:
            parts: list[Row | dict[str, Any]] = []
            for name, idx, r in entries:
                if completion is not None:
                    r = completion.final(name, idx, r, timed_out)
                if r.error == 0 and not r.record_errors:
                    # appended: the fields that say so, as a Row (the encoder writes the
                    # others' defaults: no message, no record errors, no leader hint)
                    parts.append(Row((idx, 0, r.base_offset, r.log_append_time,
                                      r.log_start_offset)) if with_start
                                 else Row((idx, 0, r.base_offset, r.log_append_time)))
                    continue
                named = refused_hints.get((name, idx))
                if r.error == E.NOT_LEADER_OR_FOLLOWER and r.leader_epoch >= 0:
                    # appended, then its broker stopped leading while acks=all waited:
                    # Kafka answers as it becomes a follower, naming the leader then
                    # (not the one now: leadership may have come back to this broker)
                    named = cluster.deposed_by(name, idx, r.leader_epoch) or named
                pr = _partition_response(ctx, name, idx, r, named)
                hint = pr.get("current_leader")
                leader = hint["leader_id"] if hint is not None else -1
                if leader >= 0:
                    ep = node_endpoint(cluster, leader, ctx.listener)
                    if ep:
                        nodes[leader] = ep
                parts.append(pr)
            responses.append({"name": td["name"], "topic_id": td.get("topic_id"),
                              "partition_responses": parts})
        return {"responses": responses, "throttle_time_ms": throttle,
                "node_endpoints": list(nodes.values())}

    waiting = completion.wait(req["timeout_ms"]) if completion is not None else None
    return build() if waiting is None else waiting.map(build)
