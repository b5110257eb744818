"""DeleteShareGroupOffsets (key 92), v0: forget a share group's state for whole topics.

The next fetch starts again from share.auto.offset.reset. NON_EMPTY_GROUP while the
group has members, GROUP_ID_NOT_FOUND for unknown groups or groups of another type,
UNKNOWN_TOPIC_OR_PARTITION per unknown topic. A topic without READ is answered
TOPIC_AUTHORIZATION_FAILED (Kafka's message, a zero topic id) after the others, and not at
all when the group-level answer is an error (Kafka 4.4, measured).
"""

from __future__ import annotations

from emulator.coordinators.share.group_offsets import delete_offsets
from emulator.handlers.authz import RT, TOPIC_DENIED, One, Op, allowed
from emulator.handlers.base import RequestContext
from wire.errors import ErrorCode as E
from wire.errors import KafkaError

API_KEY = 92
VERSIONS = (0, 0)
# READ on each topic is checked in handle: refusals are dropped on a group-level error
AUTHORIZE = (One(RT.GROUP, Op.DELETE, "group_id"),)
COORDINATORS = ("share",)


def handle(ctx: RequestContext, req: dict, version: int) -> dict:
    sc = ctx.services.share
    gid = req["group_id"]
    names = [t["topic_name"] for t in req["topics"]]
    refused = [n for n in names if not allowed(ctx, Op.READ, RT.TOPIC, n)]
    names = [n for n in names if n not in refused]
    try:
        sc.gc.check_coordinator(ctx.broker_id, gid)
        responses = delete_offsets(sc, gid, names)
    except KafkaError as e:
        return {"throttle_time_ms": 0, "error_code": e.code, "error_message": e.message,
                "responses": []}
    return {"throttle_time_ms": 0, "error_code": 0, "responses": responses + [
        {"topic_name": n, "topic_id": b"\x00" * 16, "error_code": E.TOPIC_AUTHORIZATION_FAILED,
         "error_message": TOPIC_DENIED} for n in refused]}
