"""OffsetFetch (key 9), v1-10: committed offsets of one group (v1-7) or many (v8+).

``topics`` null (v2+) asks for every committed offset of the group. require_stable
(v7+) answers UNSTABLE_OFFSET_COMMIT for partitions with offsets pending in an open
transaction. KIP-848 members may name themselves (v9+: member id and epoch, checked
as UNKNOWN_MEMBER_ID / STALE_MEMBER_EPOCH). v10 names topics by id. An unknown group
has no offsets (-1), as in Kafka. Group-level errors go to the top-level error code
(v2+) or, for v1, to every partition.

Topics need DESCRIBE (KafkaApis.fetchOffsetsForGroup): named ones the principal may not
describe answer TOPIC_AUTHORIZATION_FAILED per partition (after the others, as Kafka
appends them), and an all-topics fetch leaves them out.
"""

from __future__ import annotations

from emulator.handlers.authz import RT, Each, One, Op, allowed
from emulator.handlers.base import RequestContext
from wire.errors import ErrorCode as E
from wire.errors import KafkaError

API_KEY = 9
VERSIONS = (1, 10)
AUTHORIZE = (
    One(RT.GROUP, Op.DESCRIBE, "group_id"),
    Each(RT.GROUP, Op.DESCRIBE, "groups", name="group_id"),
)
ZERO_ID = bytes(16)
COORDINATORS = ("groups",)


def _fetch_group(ctx: RequestContext, group_id: str, topics: list[dict] | None,
                 require_stable: bool, member_id: str | None, member_epoch: int,
                 version: int) -> tuple[int, list[dict]]:
    """(group error, response topics) for one group."""
    gc = ctx.services.groups
    cluster = ctx.cluster
    by_id = version >= 10
    wanted: list[tuple[dict, str | None]] | None = None
    if topics is not None:
        wanted = []
        for t in topics:
            if by_id:
                topic = cluster.topics_by_id.get(t.get("topic_id", ZERO_ID))
                wanted.append((t, topic.name if topic is not None else None))
            else:
                wanted.append((t, t["name"]))
    denied: list[tuple[dict, str]] = []
    if wanted is not None and ctx.services.security is not None:
        denied = [(t, n) for t, n in wanted
                  if n is not None and not allowed(ctx, Op.DESCRIBE, RT.TOPIC, n)]
        wanted = [(t, n) for t, n in wanted if (t, n) not in denied]
    err = gc.coordinator_error(ctx.broker_id, group_id)
    if not err:
        try:
            found = gc.fetch_offsets(
                group_id, None if wanted is None else
                [(name, list(t["partition_indexes"])) for t, name in wanted if name is not None],
                require_stable=require_stable, member_id=member_id, member_epoch=member_epoch)
        except KafkaError as e:
            err = e.code
    if err:
        if version >= 2:
            return err, []
        return E.NONE, [{"name": t["name"], "partitions": [
            {"partition_index": p, "committed_offset": -1, "committed_leader_epoch": -1,
             "metadata": "", "error_code": err} for p in t["partition_indexes"]]}
            for t, _ in [*(wanted or []), *denied]]
    out = []
    if wanted is None:
        for topic_name, parts in found:
            if not allowed(ctx, Op.DESCRIBE, RT.TOPIC, topic_name):
                continue
            topic = cluster.topics.get(topic_name)
            out.append({"name": topic_name, "topic_id": topic.id if topic is not None else ZERO_ID,
                        "partitions": parts})
        return E.NONE, out
    results = iter(found)
    for t, name in wanted:
        if name is None:
            out.append({"name": "", "topic_id": t.get("topic_id", ZERO_ID), "partitions": [
                {"partition_index": p, "committed_offset": -1, "committed_leader_epoch": -1,
                 "metadata": "", "error_code": E.UNKNOWN_TOPIC_ID}
                for p in t["partition_indexes"]]})
        else:
            _, parts = next(results)
            out.append({"name": name, "topic_id": t.get("topic_id", ZERO_ID),
                        "partitions": parts})
    for t, name in denied:
        out.append({"name": name, "topic_id": t.get("topic_id", ZERO_ID), "partitions": [
            {"partition_index": p, "committed_offset": -1, "committed_leader_epoch": -1,
             "metadata": "", "error_code": E.TOPIC_AUTHORIZATION_FAILED}
            for p in t["partition_indexes"]]})
    return E.NONE, out


def handle(ctx: RequestContext, req: dict, version: int) -> dict:
    stable = req["require_stable"] if version >= 7 else False
    if version < 8:
        err, topics = _fetch_group(ctx, req["group_id"], req["topics"], stable, None, -1,
                                   version)
        for t in topics:  # v1-7's topics have no id field (the v8+ shape names one)
            t.pop("topic_id", None)
        return {"throttle_time_ms": 0, "topics": topics, "error_code": err}
    groups = []
    for g in req["groups"]:
        member_id = g.get("member_id") if version >= 9 else None
        epoch = g.get("member_epoch", -1) if version >= 9 else -1
        err, topics = _fetch_group(ctx, g["group_id"], g["topics"], stable, member_id, epoch,
                                   version)
        groups.append({"group_id": g["group_id"], "topics": topics, "error_code": err})
    return {"throttle_time_ms": 0, "groups": groups}
