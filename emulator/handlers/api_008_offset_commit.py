"""OffsetCommit (key 8), v2-10: committed offsets, kept by the group coordinator.

Classic members commit with their generation (ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID,
FENCED_INSTANCE_ID, REBALANCE_IN_PROGRESS while the group completes a rebalance);
KIP-848 members with their member epoch (v9+, STALE_MEMBER_EPOCH); generation -1
commits for a group without members (a "simple" group, created if needed). Unknown
topics or partitions get UNKNOWN_TOPIC_OR_PARTITION (UNKNOWN_TOPIC_ID from v10, which
names topics by id), metadata over offset.metadata.max.bytes (4096)
OFFSET_METADATA_TOO_LARGE. The retention time of v2-4 is ignored: offsets do not
expire here.

Unknown topics and partitions are answered before the group coordinator sees the
request, as KafkaApis.handleOffsetCommitRequest does: they get their error even when the
member's generation is wrong, and the response lists them first (per topic, then the
coordinator's answers are merged in, topics it alone answers after the rest), the order
a real Kafka 4.4 answers in.
"""

from __future__ import annotations

from emulator.handlers.authz import RT, Each, One, Op
from emulator.handlers.base import RequestContext
from wire.errors import ErrorCode as E

API_KEY = 8
VERSIONS = (2, 10)
AUTHORIZE = (One(RT.GROUP, Op.READ, "group_id"), Each(RT.TOPIC, Op.READ, "topics"),)
ZERO_ID = bytes(16)
COORDINATORS = ("groups",)


def handle(ctx: RequestContext, req: dict, version: int) -> dict:
    gc = ctx.services.groups
    cluster = ctx.cluster
    group_id = req["group_id"]
    # KafkaApis' response builder: topic -> its entry, in the order errors were added.
    out: dict[tuple[str, bytes], dict] = {}

    def add(t: dict, partitions: list[tuple[int, int]]) -> None:
        key = (t.get("name", ""), t.get("topic_id", ZERO_ID))
        entry = out.setdefault(key, {"name": key[0], "topic_id": key[1], "partitions": []})
        entry["partitions"].extend({"partition_index": p, "error_code": code}
                                   for p, code in partitions)

    known: list[tuple[dict, str, list]] = []  # (request topic, name, valid partitions)
    for t in req["topics"]:
        name = t.get("name", "")
        parts = t["partitions"]
        if version >= 10:
            topic = cluster.topics_by_id.get(t.get("topic_id", ZERO_ID))
            if topic is None:
                add(t, [(p["partition_index"], E.UNKNOWN_TOPIC_ID) for p in parts])
                continue
            name = topic.name
        topic = cluster.topics.get(name)
        count = len(topic.partitions) if topic is not None else 0
        valid: list[dict] = []
        unknown: list[dict] = []
        for p in parts:  # one pass (a dict-by-dict `not in valid` was O(n^2))
            (valid if 0 <= p["partition_index"] < count else unknown).append(p)
        if unknown:
            add(t, [(p["partition_index"], E.UNKNOWN_TOPIC_OR_PARTITION) for p in unknown])
        if valid:
            known.append((t, name, valid))
    if not known:
        return {"throttle_time_ms": 0, "topics": list(out.values())}
    err = gc.coordinator_error(ctx.broker_id, group_id)
    if err:
        results = [[(p["partition_index"], err) for p in parts] for _, _, parts in known]
    else:
        committed = gc.commit_offsets(
            group_id, req["member_id"], req["generation_id_or_member_epoch"],
            [(name, [(p["partition_index"], p["committed_offset"],
                      p["committed_leader_epoch"],
                      # null metadata is stored as "" (Kafka's NO_METADATA; measured)
                      p["committed_metadata"] or "") for p in parts])
             for _, name, parts in known],
            group_instance_id=req["group_instance_id"] if version >= 7 else None,
            version=version)
        results = [res for _, res in committed]
    for (t, _, _), res in zip(known, results, strict=True):
        add(t, res)
    return {"throttle_time_ms": 0, "topics": list(out.values())}
