"""ShareGroupHeartbeat (key 76), v1: join, stay in and leave a KIP-932 share group.

Members join with epoch 0 and a member id they generated, heartbeat with their
current epoch and leave with -1; the coordinator (the group's __consumer_offsets
leader) answers with the member epoch and, when it changed, the member's assignment
from the simple share assignor. Errors as Kafka: INVALID_REQUEST for an empty group or
member id or a first heartbeat without topics, UNKNOWN_MEMBER_ID, FENCED_MEMBER_EPOCH,
GROUP_ID_NOT_FOUND for a group of another type, GROUP_MAX_SIZE_REACHED
(group.share.max.size). The rules live in emulator.coordinators.share.groups.
"""

from __future__ import annotations

from emulator.handlers.authz import RT, Custom, One, Op, subscribed_topics_described
from emulator.handlers.base import RequestContext
from wire.errors import ErrorCode as E

API_KEY = 76
VERSIONS = (1, 1)
AUTHORIZE = (One(RT.GROUP, Op.READ, "group_id"), Custom(subscribed_topics_described))
COORDINATORS = ("share",)


def handle(ctx: RequestContext, req: dict, version: int) -> dict:
    sc = ctx.services.share
    err = sc.gc.coordinator_error(ctx.broker_id, req["group_id"]) if req["group_id"] else 0
    if err:
        r = {"error_code": err, "error_message": E(err).name, "member_id": None,
             "member_epoch": 0, "heartbeat_interval_ms": 0, "assignment": None}
    else:
        r = dict(sc.share_group_heartbeat(
            req["group_id"], req["member_id"], req["member_epoch"], rack_id=req["rack_id"],
            subscribed_topic_names=req["subscribed_topic_names"],
            client_id=ctx.client_id or "", client_host="/" + ctx.client_host))
    return dict(r, throttle_time_ms=0)
