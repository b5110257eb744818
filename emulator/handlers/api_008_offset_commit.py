"""OffsetCommit (key 8), v2-10: committed offsets, kept by the group coordinator.

Classic members commit with their generation (ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID,
FENCED_INSTANCE_ID, REBALANCE_IN_PROGRESS while the group completes a rebalance);
KIP-848 members with their member epoch (v9+, STALE_MEMBER_EPOCH); generation -1
commits for a group without members (a "simple" group, created if needed). Unknown
topics or partitions get UNKNOWN_TOPIC_OR_PARTITION (UNKNOWN_TOPIC_ID from v10, which
names topics by id), metadata over offset.metadata.max.bytes (4096)
OFFSET_METADATA_TOO_LARGE. The retention time of v2-4 is ignored: offsets do not
expire here.
"""

from __future__ import annotations

from emulator.handlers.authz import RT, Each, One, Op
from emulator.handlers.base import RequestContext
from wire.errors import ErrorCode as E

API_KEY = 8
VERSIONS = (2, 10)
AUTHORIZE = (One(RT.GROUP, Op.READ, "group_id"), Each(RT.TOPIC, Op.READ, "topics"),)
ZERO_ID = bytes(16)


def handle(ctx: RequestContext, req: dict, version: int) -> dict:
    gc = ctx.services["groups"]
    cluster = ctx.cluster
    group_id = req["group_id"]
    known: list[tuple[int, str, list]] = []  # (index in the response, name, partitions)
    topics_out: list[dict] = []
    for t in req["topics"]:
        name = t.get("name", "")
        if version >= 10:
            topic = cluster.topics_by_id.get(t.get("topic_id", ZERO_ID))
            name = topic.name if topic is not None else None
        parts = t["partitions"]
        entry = {"name": t.get("name", ""), "topic_id": t.get("topic_id", ZERO_ID),
                 "partitions": [{"partition_index": p["partition_index"],
                                 "error_code": E.UNKNOWN_TOPIC_ID} for p in parts]}
        topics_out.append(entry)
        if name is not None:
            known.append((len(topics_out) - 1, name, parts))
    err = gc.coordinator_error(ctx.broker_id, group_id)
    if err:
        results = [[(p["partition_index"], err) for p in parts] for _, _, parts in known]
    else:
        gc.tick()
        committed = gc.commit_offsets(
            group_id, req["member_id"], req["generation_id_or_member_epoch"],
            [(name, [(p["partition_index"], p["committed_offset"],
                      p["committed_leader_epoch"], p["committed_metadata"]) for p in parts])
             for _, name, parts in known],
            group_instance_id=req["group_instance_id"] if version >= 7 else None,
            version=version)
        results = [res for _, res in committed]
    for (i, _, _), res in zip(known, results, strict=True):
        topics_out[i]["partitions"] = [{"partition_index": p, "error_code": code}
                                       for p, code in res]
    return {"throttle_time_ms": 0, "topics": topics_out}
