"""StreamsGroupHeartbeat (key 88), v0-1: the KIP-1071 streams group protocol.

Kafka Streams members join (epoch 0, with their topology), heartbeat and leave (-1;
-2 for a static member leaving for a while); the coordinator assigns tasks with its
sticky task assignor (emulator.coordinators.streams.group). v1 adds
TopologyDescriptionRequired (never set: no topology description plugin) and lets the
coordinator answer the MISSING_CLIENT_TAGS status.

As Kafka's KafkaApis: READ on the group; a topology naming an internal topic or an
invalid topic name is STREAMS_INVALID_TOPOLOGY; DESCRIBE on every topic the topology
names, else TOPIC_AUTHORIZATION_FAILED. Internal topics the coordinator finds missing
(repartition and changelog topics) are created here when the principal may CREATE
them (on the cluster or on each topic), else the MISSING_INTERNAL_TOPICS status says
"Unauthorized to CREATE on topics ...". Kafka creates them asynchronously and still
reports them missing in this response; so do we (they exist by the next heartbeat).
"""

from __future__ import annotations

from typing import cast

from emulator.cluster.metadata import INTERNAL_TOPICS, validate_topic_name
from emulator.coordinators.streams.messages import StreamsGroupHeartbeatRequest
from emulator.coordinators.streams.topology import MISSING_INTERNAL_TOPICS
from emulator.handlers.authz import RT, One, Op, allowed
from emulator.handlers.base import RequestContext
from wire.errors import ErrorCode as E
from wire.errors import KafkaError

API_KEY = 88
VERSIONS = (0, 1)
# READ on the group here; DESCRIBE on the topology's topics and CREATE for internal
# topics are checked in handle, in Kafka's order (after the topic name checks).
AUTHORIZE = (One(RT.GROUP, Op.READ, "group_id"),)
COORDINATORS = ("groups",)


def _error(code: int, message: str | None = None) -> dict:
    return {"throttle_time_ms": 0, "error_code": code, "error_message": message,
            "member_id": "", "member_epoch": 0, "heartbeat_interval_ms": 0, "status": None}


def _topology_topics(topology: dict) -> list[str]:
    names: list[str] = []
    for s in topology["subtopologies"]:
        names += s["source_topics"] + s["repartition_sink_topics"]
        names += [t["name"] for t in s["repartition_source_topics"]]
        names += [t["name"] for t in s["state_changelog_topics"]]
    return list(dict.fromkeys(names))


def _valid(name: str) -> bool:
    try:
        validate_topic_name(name)
    except KafkaError:
        return False
    return True


def handle(ctx: RequestContext, req: dict, version: int) -> dict:
    gc = ctx.services.groups
    if req["topology"] is not None:
        required = _topology_topics(req["topology"])
        internal = [t for t in required if t in INTERNAL_TOPICS]
        if internal:
            return _error(E.STREAMS_INVALID_TOPOLOGY, f"Use of Kafka internal topics "
                          f"{','.join(internal)} in a Kafka Streams topology is prohibited.")
        invalid = [t for t in required if not _valid(t)]
        if invalid:
            return _error(E.STREAMS_INVALID_TOPOLOGY,
                          f"Topic names {','.join(invalid)} are not valid topic names.")
        if not all(allowed(ctx, Op.DESCRIBE, RT.TOPIC, t) for t in required):
            return _error(E.TOPIC_AUTHORIZATION_FAILED)
    gid = req["group_id"]
    err = gc.coordinator_error(ctx.broker_id, gid) if gid else 0
    share = ctx.services.share_if_built
    if err:
        return _error(err)
    if share is not None and share.is_share_group(gid):
        return _error(E.GROUP_ID_NOT_FOUND, f"Group {gid} is not a streams group.")
    # The codec decoded req by the schema the coordinator's shape is held to.
    typed, to_create = gc.streams_group_heartbeat(
        cast(StreamsGroupHeartbeatRequest, req), client_id=ctx.client_id or "",
        client_host="/" + ctx.client_host, version=version)
    resp = dict(typed, throttle_time_ms=0)
    if to_create:
        _create_internal_topics(ctx, resp, to_create)
    return resp


def _create_internal_topics(ctx: RequestContext, resp: dict, to_create: dict) -> None:
    """KafkaApis' follow-up: create what the coordinator found missing, if allowed."""
    unauthorized = [] if allowed(ctx, Op.CREATE, RT.CLUSTER) else \
        [t for t in to_create if not allowed(ctx, Op.CREATE, RT.TOPIC, t)]
    if unauthorized:
        _append_detail(resp, f"Unauthorized to CREATE on topics {', '.join(unauthorized)}.")
        return
    failed = []
    for name, (partitions, rf, configs) in to_create.items():
        try:
            ctx.cluster.create_topic(name, partitions, rf, configs=configs)
        except KafkaError as e:
            if e.code != E.TOPIC_ALREADY_EXISTS:
                failed.append(f"{name} ({e.message or E(e.code).name})")
    if failed:
        more = f" and {len(failed) - 3} more" if len(failed) > 3 else ""
        _append_detail(resp, f"Creation failed: {', '.join(failed[:3])}{more}.", only=True)


def _append_detail(resp: dict, text: str, only: bool = False) -> None:
    statuses = resp.setdefault("status", []) if resp.get("status") is not None else []
    resp["status"] = statuses
    for s in statuses:
        if s["status_code"] == MISSING_INTERNAL_TOPICS:
            s["status_detail"] = f"{s['status_detail']}; {text}"
            return
    if not only:
        statuses.append({"status_code": MISSING_INTERNAL_TOPICS, "status_detail": text})
