"""What each API needs from the authorizer, declared beside its handler (Kafka's KafkaApis).

A handler module may declare ``AUTHORIZE``, a tuple of requirements, checked in order
before ``handle`` runs (and only when an authorizer is configured: without one there
is no cost and nothing changes):

    ClusterOp(Op.ALTER)                        the whole request needs ALTER on CLUSTER
                                               (else CLUSTER_AUTHORIZATION_FAILED)
    One(RT.GROUP, Op.READ, "group_id")         the resource named by a request field
                                               (null fields are skipped)
    Each(RT.TOPIC, Op.WRITE, "topic_data")     per item of a request array: denied
                                               items are taken out of the request and
                                               answered with the code (TOPIC_AUTHORI-
                                               ZATION_FAILED ...) in the response array
    Each(..., unless_cluster=Op.CREATE)        ...unless the principal holds that on CLUSTER
    Each(..., resolve=fn)                      fn(item) -> (resource type, name, op, code)
                                               or None (DescribeConfigs' mixed resources)
    Custom(fn)                                 fn(ctx, req, version) -> error code or None

Handlers whose answer depends on what is authorized (Metadata's topic filtering,
authorized-operations fields, ListGroups) call ``allowed`` / ``authorized_operations``
themselves. See docs/CONTRIBUTING.md.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from emulator.handlers.base import NO_RESPONSE, RequestContext, then
from emulator.security.acl import (
    CLUSTER_NAME,
    SUPPORTED_OPERATIONS,
    AclOperation,
    Op,
    all_operations,
)
from emulator.security.acl import ResourceType as RT
from wire.errors import MESSAGES
from wire.errors import ErrorCode as E
from wire.messages import NAMES, RESPONSES
from wire.schema import Array, Struct

# Kafka's code for a denied resource of each type.
DENIED: dict[RT, int] = {
    RT.TOPIC: E.TOPIC_AUTHORIZATION_FAILED,
    RT.GROUP: E.GROUP_AUTHORIZATION_FAILED,
    RT.CLUSTER: E.CLUSTER_AUTHORIZATION_FAILED,
    RT.TRANSACTIONAL_ID: E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
    RT.DELEGATION_TOKEN: E.DELEGATION_TOKEN_AUTHORIZATION_FAILED,
}
NOT_REQUESTED = -(2**31)  # authorized operations not asked for (Integer.MIN_VALUE)

# The error_message a refusal carries, where Kafka 4.4 sends one (measured: the
# authorization table's requests without ACLs against a real 4.4 broker). "default" is
# the code's own text (Errors.message()); "needs" is the text of the exception
# AuthHelper.authorizeClusterOperation throws, "Request <Request.toString()> needs OP
# permission." - ours names the API and principal where Kafka prints its Request object.
# Anything else: null (the client then shows the code's own text too).
DENIED_MESSAGE: dict[int, str] = {
    19: "Authorization failed.",  # CreateTopics (ControllerApis)
    20: "default", 32: "default", 33: "default", 44: "default", 61: "default",
    29: "needs", 30: "needs", 31: "needs", 43: "needs", 45: "needs", 46: "needs",
    51: "needs", 64: "needs", 94: "needs",
    # the share coordinator's state APIs and the share-group offset admin APIs (measured
    # on 4.4 by client_tests/test_share_groups_authz_kafka.py)
    83: "default", 84: "default", 85: "default", 86: "default", 87: "default",
    91: "default", 92: "default",
}
TOPIC_DENIED = "Topic authorization failed."  # Errors.TOPIC_AUTHORIZATION_FAILED.message()


def _authorizer(ctx: RequestContext) -> Any:
    sec = ctx.services.security
    return sec.authorizer if sec is not None else None


def allowed(ctx: RequestContext, op: AclOperation, rtype: RT, name: str = CLUSTER_NAME) -> bool:
    """May this request's principal do ``op`` on the resource? Always, with no authorizer."""
    a = _authorizer(ctx)
    return a is None or a.authorize(ctx.principal, ctx.client_host, op, rtype, name)


def allowed_any(ctx: RequestContext, op: AclOperation, rtype: RT) -> bool:
    """Kafka's authorizeByResourceType: ``op`` on SOME resource of the type."""
    a = _authorizer(ctx)
    return a is None or a.authorize_any(ctx.principal, ctx.client_host, op, rtype)


def authorized_operations(ctx: RequestContext, rtype: RT, name: str = CLUSTER_NAME) -> int:
    """The bit field Kafka reports; every supported operation when there is no authorizer."""
    a = _authorizer(ctx)
    if a is None:
        return all_operations(rtype)
    return a.authorized_operations(ctx.principal, ctx.client_host, rtype, name)


assert set(DENIED) <= set(SUPPORTED_OPERATIONS)


# ---- declarations ------------------------------------------------------------------
@dataclass(frozen=True)
class ClusterOp:
    op: AclOperation


@dataclass(frozen=True)
class One:
    rtype: RT
    op: AclOperation
    field: str


@dataclass(frozen=True)
class Each:
    rtype: RT
    op: AclOperation
    array: str
    name: str = "name"  # the item's name field; string items are names themselves
    unless_cluster: AclOperation | None = None
    # (item, request) -> (resource type, name, operation, denied code), None: not checked
    resolve: Callable[[Any, dict], tuple[RT, str, AclOperation, int] | None] | None = None


@dataclass(frozen=True)
class Custom:
    check: Callable[[RequestContext, dict, int], int | None]


Requirement = ClusterOp | One | Each | Custom


def guard(api_key: int, handle: Callable[..., Any],
          requirements: tuple[Requirement, ...]) -> Callable[..., Any]:
    """``handle`` with the requirements checked first (the registry wraps each handler)."""
    if not requirements:
        return handle

    def guarded(ctx: RequestContext, req: dict, version: int) -> Any:
        if _authorizer(ctx) is None:
            return handle(ctx, req, version)
        denied: list[tuple[str, list, int]] = []
        code: int | None
        for r in requirements:
            if isinstance(r, ClusterOp):
                if not allowed(ctx, r.op, RT.CLUSTER):
                    code = E.CLUSTER_AUTHORIZATION_FAILED
                    return deny_all(api_key, version, req, code,
                                    denied_message(ctx, api_key, code, r.op))
            elif isinstance(r, One):
                name = req.get(r.field)
                if name and not allowed(ctx, r.op, r.rtype, name):
                    code = DENIED[r.rtype]
                    return deny_all(api_key, version, req, code,
                                    denied_message(ctx, api_key, code, r.op))
            elif isinstance(r, Custom):
                code = r.check(ctx, req, version)
                if code:
                    return deny_all(api_key, version, req, code,
                                    denied_message(ctx, api_key, code))
            else:
                req = _split(ctx, r, req, denied)
        result = handle(ctx, req, version)
        if not denied or result is NO_RESPONSE:
            return result
        return then(result, lambda r: _merge(api_key, version, r, denied))

    guarded.__doc__ = handle.__doc__
    return guarded


def _item_name(ctx: RequestContext, item: Any, field: str) -> str | None:
    if isinstance(item, str):
        return item
    name = item.get(field)
    topic_id = item.get("topic_id")
    if not name and topic_id and field in ("name", "topic"):
        # By topic id (Produce v13, Fetch v13+): the name field is absent ("") there
        t = ctx.cluster.topics_by_id.get(topic_id)
        name = t.name if t is not None else None
    return name


def _split(ctx: RequestContext, r: Each, req: dict, denied: list) -> dict:
    items = req.get(r.array)
    if not items:
        return req
    if r.unless_cluster is not None and allowed(ctx, r.unless_cluster, RT.CLUSTER):
        return req
    keep, out = [], []
    code = DENIED.get(r.rtype, E.CLUSTER_AUTHORIZATION_FAILED)
    name: str | None
    for item in items:
        if r.resolve is not None:
            target = r.resolve(item, req)
            if target is None:
                keep.append(item)
                continue
            rtype, name, op, code = target
        else:
            rtype, name, op = r.rtype, _item_name(ctx, item, r.name), r.op
        if name is None or allowed(ctx, op, rtype, name):
            keep.append(item)  # unknown topic ids: the handler answers UNKNOWN_TOPIC_ID
        else:
            out.append((item, code))
    if not out:
        return req
    for code in {c for _, c in out}:
        denied.append((r.array, [i for i, c in out if c == code], code))
    return {**req, r.array: keep}


# ---- building error entries from the request ---------------------------------------------
_NAME_ALIASES = ("name", "topic", "group_id", "transactional_id", "resource_name", "user",
                 "key")
_INDEX_ALIASES = ("partition_index", "index", "partition")


def _mirror(struct: Struct, item: Any, code: int, version: int,
            message: str | None = None) -> dict:
    out: dict = {}
    for f in struct.fields:
        if not f.present(version):
            continue
        n = f.name
        if n.endswith("error_code"):
            out[n] = code
        elif n == "error_message":
            out[n] = message if message is not None or f.is_nullable(version) else ""
        elif isinstance(f.type, Array) and isinstance(f.type.item, Struct):
            # Nested items carry the code too (partitions) when they have an error field;
            # other nested lists (configs, members) stay empty.
            errs = any(g.name.endswith("error_code") for g in f.type.item.fields)
            sub = _sub_items(item, f.type.item) if errs else []
            out[n] = [_mirror(f.type.item, s, code, version, message) for s in sub]
        elif isinstance(item, str) or isinstance(item, int):
            if n in _NAME_ALIASES and isinstance(item, str):
                out[n] = item
            elif n in _INDEX_ALIASES and isinstance(item, int):
                out[n] = item
        elif n in item and not isinstance(item[n], list):
            out[n] = item[n]
        elif n in _NAME_ALIASES:
            v = next((item[a] for a in _NAME_ALIASES if isinstance(item.get(a), str)), None)
            if v is not None:
                out[n] = v
        elif n in _INDEX_ALIASES:
            v = next((item[a] for a in _INDEX_ALIASES if isinstance(item.get(a), int)), None)
            if v is not None:
                out[n] = v
        elif n in ("high_watermark", "base_offset", "offset", "committed_offset",
                   "last_stable_offset", "log_start_offset", "end_offset", "leader_id"):
            out[n] = -1
    return out


def _sub_items(item: Any, struct: Struct) -> list:
    """The request's nested list that a response array mirrors (partitions...)."""
    if not isinstance(item, dict):
        return []
    lists = [v for v in item.values() if isinstance(v, list)]
    return lists[0] if lists else []


def _first_struct_array(struct: Struct, version: int) -> Any:
    for f in struct.fields:
        if f.present(version) and isinstance(f.type, Array) and isinstance(f.type.item, Struct):
            return f
    return None


def denied_message(ctx: RequestContext | None, api_key: int, code: int,
                   op: AclOperation | None = None) -> str | None:
    """The error_message Kafka sends with a refusal of this API (DENIED_MESSAGE)."""
    kind = DENIED_MESSAGE.get(api_key)
    if kind == "default":
        return MESSAGES.get(E(code))
    if kind == "needs" and op is not None:
        who = f", principal={ctx.principal}" if ctx is not None else ""
        return f"Request {NAMES.get(api_key, api_key)}(apiKey={api_key}{who}) needs " \
               f"{op.name} permission."
    return kind if kind != "needs" else None


def deny_all(api_key: int, version: int, req: dict, code: int,
             message: str | None = None) -> dict:
    """A response refusing the whole request: the top-level code where the response has
    one, and the code on every item the request named (as Kafka answers); ``message``
    where the response has an error message (null where nullable, else empty)."""
    msg = RESPONSES[api_key].msg
    out: dict = {}
    top = False
    for f in msg.struct.fields:
        if f.name == "error_code" and f.present(version):
            out["error_code"], top = code, True
        elif f.name == "error_message" and f.present(version):
            out["error_message"] = message if message is not None or f.is_nullable(version) \
                else ""
    f = _first_struct_array(msg.struct, version)
    if f is not None:
        src = next((v for v in req.values() if isinstance(v, list)), None)
        if src:
            out[f.name] = [_mirror(f.type.item, x, code, version, message) for x in src]
        elif not top:
            out[f.name] = []
    return out


def _merge(api_key: int, version: int, result: dict, denied: list) -> dict:
    f = _first_struct_array(RESPONSES[api_key].msg.struct, version)
    if f is None:
        return result
    entries = list(result.get(f.name) or [])
    for _, items, code in denied:
        message = denied_message(None, api_key, code)
        entries.extend(_mirror(f.type.item, x, code, version, message) for x in items)
    return {**result, f.name: entries}


def subscribed_topics_described(ctx: RequestContext, req: dict, version: int) -> int | None:
    """Consumer and share group heartbeats (KafkaApis, 4.4 measured): a member may
    subscribe by name only to topics it may DESCRIBE (it must not learn of the others);
    any other fails the whole heartbeat, TOPIC_AUTHORIZATION_FAILED, message null."""
    names = req.get("subscribed_topic_names") or []
    if all(allowed(ctx, Op.DESCRIBE, RT.TOPIC, t) for t in names):
        return None
    return E.TOPIC_AUTHORIZATION_FAILED


def config_resource(op: AclOperation) -> Callable[[Any, dict], Any]:
    """DescribeConfigs/AlterConfigs: topics need ``op`` on the topic, groups on the group,
    brokers, broker loggers and client metrics on CLUSTER (Kafka's ConfigResource types)."""

    def resolve(item: dict, req: dict) -> tuple[RT, str, AclOperation, int] | None:
        t = item["resource_type"]
        if t == 2:
            return RT.TOPIC, item["resource_name"], op, E.TOPIC_AUTHORIZATION_FAILED
        if t == 32:
            return RT.GROUP, item["resource_name"], op, E.GROUP_AUTHORIZATION_FAILED
        if t in (4, 8, 16):
            return RT.CLUSTER, CLUSTER_NAME, op, E.CLUSTER_AUTHORIZATION_FAILED
        return None

    return resolve


__all__ = ["ClusterOp", "Custom", "Each", "One", "Op", "RT", "allowed", "allowed_any",
           "authorized_operations", "denied_message", "deny_all", "guard", "NOT_REQUESTED",
           "TOPIC_DENIED", "subscribed_topics_described"]
