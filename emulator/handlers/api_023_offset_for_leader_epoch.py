"""OffsetForLeaderEpoch (key 23), v2-4 as Kafka 4.1 serves them.

For each partition the leader answers the end offset of the requested leader epoch
from its leader-epoch cache (LeaderEpochFileCache.endOffsetFor): the log end offset
for the current epoch; for an older one, the largest epoch at or below it and the
start offset of the next; an epoch older than every entry gets the first entry's
start; an unknown or newer one gets epoch -1 and offset -1 with no error.
Consumers use it to detect truncation after a leader change (KIP-320), followers
to find where to truncate. Errors as ReplicaManager.lastOffsetForLeaderEpoch:
UNKNOWN_TOPIC_OR_PARTITION for what does not exist, NOT_LEADER_OR_FOLLOWER from a
broker that does not lead (only the leader answers, replica or consumer alike),
FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH when current_leader_epoch is older /
newer than the partition's. With an authorizer, as Kafka:
topics without DESCRIBE are answered TOPIC_AUTHORIZATION_FAILED.
"""

from __future__ import annotations

from emulator.cluster.partition import epoch_end_offset
from emulator.handlers.authz import RT, Each, Op
from emulator.handlers.base import RequestContext
from wire.errors import ErrorCode as E
from wire.errors import KafkaError

API_KEY = 23
VERSIONS = (2, 4)
AUTHORIZE = (Each(RT.TOPIC, Op.DESCRIBE, "topics", name="topic"),)


def handle(ctx: RequestContext, req: dict, version: int) -> dict:
    cluster = ctx.cluster
    topics = []
    for t in req["topics"]:
        parts = []
        for rp in t["partitions"]:
            out = {"partition": rp["partition"], "error_code": E.NONE, "leader_epoch": -1,
                   "end_offset": -1}
            try:
                # this broker's metadata first (metadata_views: lags under Kafka's timing)
                if cluster.metadata_views.active:
                    cluster.metadata_views.check(ctx.broker_id, t["topic"], rp["partition"],
                                                 rp["current_leader_epoch"])
                p = cluster.get_partition(t["topic"], rp["partition"])
                p.check_leader(ctx.broker_id, rp["current_leader_epoch"])
                out["leader_epoch"], out["end_offset"] = epoch_end_offset(p.leader_log,
                                                                          rp["leader_epoch"])
            except KafkaError as e:
                out["error_code"] = e.code
            parts.append(out)
        topics.append({"topic": t["topic"], "partitions": parts})
    return {"throttle_time_ms": 0, "topics": topics}
