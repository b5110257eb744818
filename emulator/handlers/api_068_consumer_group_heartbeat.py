"""ConsumerGroupHeartbeat (key 68), v0-1: the KIP-848 consumer group protocol.

Members join (epoch 0), heartbeat (their epoch) and leave (-1; -2 for a static member
leaving for a while); the coordinator assigns partitions server-side (uniform or
range) and moves every member to its target assignment, revoking before reassigning.
v0 members get their member id from the coordinator, v1 members bring their own
(KIP-1082); v1 adds regular-expression subscriptions. The rules live in
emulator.coordinators.consumer.group.
"""

from __future__ import annotations

from emulator.handlers.authz import RT, Custom, One, Op, subscribed_topics_described
from emulator.handlers.base import RequestContext
from wire.errors import ErrorCode as E

API_KEY = 68
VERSIONS = (0, 1)
AUTHORIZE = (One(RT.GROUP, Op.READ, "group_id"), Custom(subscribed_topics_described))
COORDINATORS = ("groups",)


def handle(ctx: RequestContext, req: dict, version: int) -> dict:
    gc = ctx.services.groups
    err = gc.coordinator_error(ctx.broker_id, req["group_id"])
    share = ctx.services.share_if_built
    r: dict[str, object]
    if not err and share is not None and share.is_share_group(req["group_id"]):
        r = {"error_code": E.GROUP_ID_NOT_FOUND, "member_id": None, "member_epoch": 0,
             "error_message": f"Group {req['group_id']} is not a consumer group.",
             "heartbeat_interval_ms": 0, "assignment": None}
    elif err:
        r = {"error_code": err, "error_message": E(err).name, "member_id": None,
             "member_epoch": 0, "heartbeat_interval_ms": 0, "assignment": None}
    else:
        r = dict(gc.consumer_group_heartbeat(
            req["group_id"], req["member_id"], req["member_epoch"],
            instance_id=req["instance_id"], rack_id=req["rack_id"],
            rebalance_timeout_ms=req["rebalance_timeout_ms"],
            subscribed_topic_names=req["subscribed_topic_names"],
            subscribed_topic_regex=req["subscribed_topic_regex"] if version >= 1 else None,
            server_assignor=req["server_assignor"], topic_partitions=req["topic_partitions"],
            client_id=ctx.client_id or "", client_host="/" + ctx.client_host,
            version=version))
    return dict(r, throttle_time_ms=0)
