"""Fetch (key 1), v4-18.

Consumers read whole stored batches up to the high watermark (the last stable
offset under read_committed, with the aborted transactions in range); max_bytes
and partition_max_bytes bound the response, except that the first batch always
comes whole (KIP-74). min_bytes/max_wait_ms long-poll through ``Delayed``. Topic
IDs from v13, DivergingEpoch from v12 when last_fetched_epoch disagrees with the
leader's epoch cache, and the current-leader hint on NOT_LEADER_OR_FOLLOWER.
Differs from Kafka: no incremental fetch sessions; session_id 0 ("no session")
is always returned, which clients accept and answer with full requests.
"""

from __future__ import annotations

from emulator.cluster.partition import KafkaError, epoch_end_offset
from emulator.handlers.base import Delayed, RequestContext
from emulator.handlers.util import error_of, node_endpoint
from wire.errors import ErrorCode as E

API_KEY = 1
VERSIONS = (4, 18)
LEADER_HINT_ERRORS = (E.NOT_LEADER_OR_FOLLOWER, E.FENCED_LEADER_EPOCH)


def _read(ctx: RequestContext, req: dict, version: int) -> tuple[dict, int, bool]:
    cluster = ctx.cluster
    isolation = req["isolation_level"]
    budget = req["max_bytes"] if version >= 3 else 0x7FFFFFFF
    total = 0
    errors = False
    responses = []
    nodes: dict[int, dict] = {}
    for t in req["topics"]:
        if version >= 13:
            topic = cluster.topics_by_id.get(t["topic_id"])
            name = topic.name if topic else None
        else:
            name = t["topic"]
        parts = []
        for fp in t["partitions"]:
            idx = fp["partition"]
            out = {"partition_index": idx, "error_code": E.NONE, "high_watermark": -1,
                   "last_stable_offset": -1, "log_start_offset": -1, "records": b"",
                   "aborted_transactions": None}
            try:
                if name is None:
                    raise KafkaError(E.UNKNOWN_TOPIC_ID)
                p = cluster.get_partition(name, idx)
                p.check_leader(ctx.broker_id, fp["current_leader_epoch"])
                log = p.leader_log
                offset = fp["fetch_offset"]
                out["high_watermark"] = p.high_watermark
                out["last_stable_offset"] = p.last_stable_offset()
                out["log_start_offset"] = log.log_start_offset
                last_epoch = fp["last_fetched_epoch"]
                if version >= 12 and last_epoch >= 0:
                    # Partition.fetchRecords: the consumer's last fetched epoch against
                    # the leader-epoch cache (exactly as OffsetForLeaderEpoch answers)
                    epoch, end = epoch_end_offset(log, last_epoch)
                    if epoch < 0 or end < 0 or offset < log.log_start_offset:
                        raise KafkaError(E.OFFSET_OUT_OF_RANGE)
                    if epoch < last_epoch or end < offset:
                        out["diverging_epoch"] = {"epoch": epoch, "end_offset": end}
                        parts.append(out)
                        continue
                if offset < log.log_start_offset or offset > log.log_end_offset:
                    raise KafkaError(E.OFFSET_OUT_OF_RANGE)
                limit = out["last_stable_offset"] if isolation == 1 else p.high_watermark
                max_bytes = min(fp["partition_max_bytes"], budget - total)
                batches = log.read(offset, max(0, max_bytes), limit, min_one=(total == 0))
                data = b"".join(batches)
                total += len(data)
                out["records"] = data
                if isolation == 1 and data:
                    out["aborted_transactions"] = [
                        {"producer_id": a.producer_id, "first_offset": a.first_offset}
                        for a in p.aborted_between(offset, offset + 1 + len(data))
                    ]
            except Exception as e:  # noqa: BLE001 - mapped to a Kafka error code
                errors = True
                out["error_code"], _ = error_of(e)
                if out["error_code"] in LEADER_HINT_ERRORS and name is not None:
                    try:
                        p = cluster.get_partition(name, idx)
                        out["current_leader"] = {"leader_id": p.leader,
                                                 "leader_epoch": p.leader_epoch}
                        ep = node_endpoint(cluster, p.leader, ctx.listener)
                        if ep:
                            nodes[p.leader] = ep
                    except KafkaError:
                        pass
            parts.append(out)
        responses.append({"topic": t.get("topic", ""), "topic_id": t.get("topic_id"),
                          "partitions": parts})
    body = {"throttle_time_ms": 0, "error_code": E.NONE, "session_id": 0,
            "responses": responses, "node_endpoints": list(nodes.values())}
    return body, total, errors


def handle(ctx: RequestContext, req: dict, version: int):
    body, total, errors = _read(ctx, req, version)
    if errors or total >= req["min_bytes"] or req["max_wait_ms"] <= 0:
        return body
    start_version = ctx.cluster.version

    def check() -> dict | None:
        if ctx.cluster.version == start_version:
            return None
        b, n, errs = _read(ctx, req, version)
        return b if errs or n >= req["min_bytes"] else None

    return Delayed(check, ctx.cluster.now() + req["max_wait_ms"],
                   lambda: _read(ctx, req, version)[0])
