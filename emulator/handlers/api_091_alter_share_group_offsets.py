"""AlterShareGroupOffsets (key 91), v0: set the start offsets (SPSO) of an empty share group.

What ``kafka-share-groups --reset-offsets --execute`` sends. NON_EMPTY_GROUP while the
group has members, GROUP_ID_NOT_FOUND for a group of another type,
UNKNOWN_TOPIC_OR_PARTITION per partition; in-flight state of the altered partitions is
dropped and the state epoch bumped. A group id not in use becomes an empty share group
(so offsets can be set before the first consumer starts).
"""

from __future__ import annotations

from emulator.coordinators.share.group_offsets import alter_offsets
from emulator.handlers.authz import RT, TOPIC_DENIED, One, Op, allowed
from emulator.handlers.base import RequestContext
from wire.errors import ErrorCode as E
from wire.errors import KafkaError

API_KEY = 91
VERSIONS = (0, 0)
# READ on each topic is checked in handle: a refused topic is answered with its id
AUTHORIZE = (One(RT.GROUP, Op.READ, "group_id"),)
COORDINATORS = ("share",)


def handle(ctx: RequestContext, req: dict, version: int) -> dict:
    sc = ctx.services.share
    gid = req["group_id"]
    # Kafka 4.4: topics without READ are answered TOPIC_AUTHORIZATION_FAILED per
    # partition after the others, under their topic ids (measured)
    refused = [t for t in req["topics"] if not allowed(ctx, Op.READ, RT.TOPIC, t["topic_name"])]
    zero = b"\x00" * 16
    denied = [{"topic_name": t["topic_name"], "topic_id": getattr(
        ctx.cluster.topics.get(t["topic_name"]), "id", zero), "partitions": [
        {"partition_index": p["partition_index"], "error_code": E.TOPIC_AUTHORIZATION_FAILED,
         "error_message": TOPIC_DENIED} for p in t["partitions"]]} for t in refused]
    topics = [(t["topic_name"], [(p["partition_index"], p["start_offset"])
                                 for p in t["partitions"]]) for t in req["topics"] if t not in refused]
    try:
        sc.gc.check_coordinator(ctx.broker_id, gid)
        responses = alter_offsets(sc, gid, topics)
    except KafkaError as e:
        return {"throttle_time_ms": 0, "error_code": e.code, "error_message": e.message,
                "responses": [{"topic_name": name, "partitions": [
                    {"partition_index": p, "error_code": e.code, "error_message": e.message}
                    for p, _ in parts]} for name, parts in topics]}
    return {"throttle_time_ms": 0, "error_code": 0, "responses": responses + denied}
