"""Build an error response for any API and version from its decoded request.

Used when a fault injects an error code and when a handler fails with our own bug
(UNKNOWN_SERVER_ERROR): the client gets a well-formed response that carries the code
where Kafka puts errors for that API, on every item it asked about, never a broken
frame or an "error 0, nothing there" answer.

Driven by the wire schemas, recursively. For each response field present in the
version:

- an array of structs that can carry an error (an ``error_code`` somewhere inside)
  mirrors the request array it answers: the one of the same name, else the one named
  in ``MIRRORS``, else the only error-less request array left at that level (Produce's
  ``topic_data`` -> ``responses``). An array of primitives in the request (group ids,
  partition indexes) gives one response item per value, the value in the item's first
  key field of that type;
- key fields (``KEY_FIELDS``: names, ids, partition indexes) take the request item's
  value of the same name (or a Kafka alias: Fetch's ``partition`` is the response's
  ``partition_index``), so the client can tell which item each error belongs to;
- the code goes to the deepest items that can carry it (partition before topic before
  the top level), as Kafka answers NOT_LEADER_OR_FOLLOWER per partition and
  COORDINATOR_NOT_AVAILABLE per group; it goes to the top level when no item takes it,
  and always for the codes Kafka only uses there (``TOP_LEVEL``: fetch-session errors);
- offsets, leader and producer ids, epochs and timestamps say -1 ("unknown"), as in
  Kafka's error responses (a Produce error's ``base_offset`` is -1).

Arrays that cannot carry an error (Metadata's brokers, JoinGroup's members) stay empty.
``merge`` folds such a response for some items into the handler's response for the
others: a fault on one partition (only partition 3 answers NOT_LEADER_OR_FOLLOWER).
"""

from __future__ import annotations

import logging
from typing import Any

from wire.errors import ErrorCode as E
from wire.messages import REQUESTS, RESPONSES
from wire.schema import INT16, INT32, INT64, RECORDS, STRING, UUID, Array, Field, Struct

log = logging.getLogger("kafka_emulator")
ERROR_FIELDS = ("error_code", "partition_error_code")
MESSAGE_FIELDS = ("error_message",)
# The fields that say which item an answer is about, copied from the request item (the
# others are the answer itself: an error response knows none of them).
KEY_FIELDS = frozenset({
    "name", "topic", "topic_name", "topic_id", "partition_index", "partition", "partition_id",
    "index", "group_id", "member_id", "group_instance_id", "transactional_id", "key",
    "key_type", "resource_type", "resource_name", "log_dir", "user",
})
# Response field -> request field names holding the same value in Kafka's schemas.
ALIASES: dict[str, tuple[str, ...]] = {
    "partition_index": ("partition", "index", "partition_id"),
    "partition": ("partition_index", "index"),
    "partition_id": ("partition_index", "partition"),
    "topic_name": ("name", "topic"),
    "name": ("topic", "topic_name"),
    "topic": ("name", "topic_name"),
    "group_id": ("key",),
    "user": ("name",),
}
# Request arrays whose response arrays have other names and are not the only candidate.
# (api key, response array) -> request array; "." means the request level itself (one
# item), "a.b" the items of every ``b`` under every ``a`` (flattened), "a+b" the items
# of ``a`` then those of ``b``.
MIRRORS: dict[tuple[int, str], str] = {
    (1, "responses"): "topics",  # Fetch: not forgotten_topics_data
    (78, "responses"): "topics",  # ShareFetch: per partition, as a not-leader one is
    (34, "results"): "dirs.topics",  # AlterReplicaLogDirs: results per topic, not per dir
    (35, "results"): ".",  # DescribeLogDirs: one log dir holding the asked topics
    (51, "results"): "deletions+upsertions",  # AlterUserScramCredentials: one per user op
}
# Codes about the whole request rather than its items: Kafka answers them at the
# shallowest level that has an error field (the top level of a Fetch or an OffsetFetch
# v2-7, each group of an OffsetFetch v8+, each partition of an OffsetCommit, which has
# nothing above). A client handles them there: a Java consumer rediscovers its
# coordinator on an OffsetFetch group error, but fails on one per partition.
_COORDINATED = frozenset({8, 9, 10, 11, 12, 13, 14, 15, 16, 22, 24, 25, 26, 28, 42, 47, 65,
                          66, 68, 69})  # APIs answered by a group or transaction coordinator
_WHOLE_REQUEST: list[tuple[frozenset[int], frozenset[int] | None]] = [
    (frozenset({E.FETCH_SESSION_ID_NOT_FOUND, E.INVALID_FETCH_SESSION_EPOCH,
                E.FETCH_SESSION_TOPIC_ID_ERROR}), frozenset({1})),
    (frozenset({E.NOT_COORDINATOR, E.COORDINATOR_NOT_AVAILABLE, E.COORDINATOR_LOAD_IN_PROGRESS,
                E.GROUP_AUTHORIZATION_FAILED, E.INVALID_GROUP_ID, E.GROUP_ID_NOT_FOUND}),
     _COORDINATED),
    (frozenset({E.NOT_CONTROLLER, E.CLUSTER_AUTHORIZATION_FAILED}), None),  # None: any API
]


def whole_request(key: int, code: int) -> bool:
    """Is ``code`` about the whole request for this API (placed shallowest)?"""
    return any(code in codes and (keys is None or key in keys)
               for codes, keys in _WHOLE_REQUEST)


_UNKNOWN_SUFFIXES = ("offset", "watermark", "timestamp", "leader_id", "node_id", "producer_id",
                     "controller_id", "generation_id", "producer_epoch", "leader_epoch", "port")


def _present(fields: list[Field], v: int) -> list[Field]:
    return [f for f in fields if f.present(v)]


def _struct_item(f: Field) -> Struct | None:
    t = f.type
    if isinstance(t, Array) and isinstance(t.item, Struct):
        return t.item
    return None


def carries_error(struct: Struct, v: int) -> bool:
    """Does this struct (or anything under it) have an error code field in version v?"""
    for f in _present(struct.fields, v):
        if f.name in ERROR_FIELDS:
            return True
        inner = _struct_item(f) or (f.type if isinstance(f.type, Struct) else None)
        if inner is not None and carries_error(inner, v):
            return True
    return False


def _items(req: Any, struct: Struct | None, path: str, v: int) -> tuple[list, Struct | None]:
    """The request items at ``path`` below ``req`` ("." = req itself, "a.b" flattened),
    with their struct."""
    if path == ".":
        return [req], struct
    if "+" in path:
        items: list = []
        for part in path.split("+"):
            more, struct_of = _items(req, struct, part, v)
            items += more
        return items, struct_of
    items = [req]
    for part in path.split("."):
        f = next((f for f in _present(struct.fields, v) if f.name == part),
                 None) if struct is not None else None
        struct = _struct_item(f) if f is not None else None
        nxt: list = []
        for it in items:
            value = it.get(part) if isinstance(it, dict) else None
            if isinstance(value, list):
                nxt.extend(value)
        items = nxt
    return items, struct


def _source(key: int, name: str, req: dict, req_struct: Struct | None, used: set[str],
            v: int) -> tuple[list, Struct | None]:
    """The request items a response array named ``name`` answers, and their struct
    (None for primitives); no items when nothing in the request answers to it."""
    path = MIRRORS.get((key, name))
    if path is not None:
        return _items(req, req_struct, path, v)
    arrays = {f.name: f for f in (_present(req_struct.fields, v) if req_struct else [])
              if isinstance(f.type, Array)}
    f = arrays.get(name)
    if f is None:
        left = [a for n, a in arrays.items() if n not in used]
        f = left[0] if len(left) == 1 else None
    if f is None:
        return [], None
    used.add(f.name)
    value = req.get(f.name)
    return (value if isinstance(value, list) else []), _struct_item(f)


def _unknown(f: Field) -> Any:
    """The value of a field the error response cannot know: -1 where Kafka says so."""
    if (f.type in (INT16, INT32, INT64) and f.default == 0
            and f.name.endswith(_UNKNOWN_SUFFIXES)):
        return -1
    return None


def _copy_key(f: Field, item: Any) -> Any:
    if not isinstance(item, dict) or f.name not in KEY_FIELDS:
        return None
    for name in (f.name, *ALIASES.get(f.name, ())):
        value = item.get(name)
        if value is not None and not isinstance(value, list | dict):
            return value
    return None


def _primitive_item(struct: Struct, value: Any, v: int) -> dict:
    """A request array of primitives (ids, indexes): the value goes to the first key
    field of its type in the response item."""
    want = STRING if isinstance(value, str) else UUID if isinstance(value, bytes) else None
    for f in _present(struct.fields, v):
        if f.name in ERROR_FIELDS or f.name in MESSAGE_FIELDS:
            continue
        if want is not None and f.type is want:
            return {f.name: value}
        if want is None and f.type in (INT32, INT64) and isinstance(value, int):
            return {f.name: value}
    return {}


class _Builder:
    def __init__(self, key: int, version: int, code: int, message: str | None) -> None:
        self.key = key
        self.v = version
        self.code = code
        self.message = message
        self.shallow = whole_request(key, code)

    def build(self, struct: Struct, req_struct: Struct | None, req: Any) -> tuple[dict, bool]:
        """The response struct for one request item; True if the code was placed."""
        v = self.v
        out: dict[str, Any] = {}
        placed = False
        used: set[str] = set()
        fields = _present(struct.fields, v)
        stop = self.shallow and any(f.name in ERROR_FIELDS for f in fields)
        for f in fields:
            inner = _struct_item(f)
            if inner is not None:
                if stop or not carries_error(inner, v):
                    continue
                src, req_inner = _source(self.key, f.name, req if isinstance(req, dict) else {},
                                         req_struct, used, v)
                if not src:
                    continue
                items = []
                for x in src:
                    if isinstance(x, dict):
                        body, ok = self.build(inner, req_inner, x)
                    else:
                        body, ok = self.build(inner, None, {})
                        body.update(_primitive_item(inner, x, v))
                    items.append(body)
                    placed = placed or ok
                out[f.name] = items
            elif f.name not in ERROR_FIELDS and f.name not in MESSAGE_FIELDS:
                value = _copy_key(f, req)
                if value is None:
                    value = _unknown(f)
                if value is None and f.type is RECORDS:
                    # Kafka answers an error with no records (MemoryRecords.EMPTY), not
                    # null ones: librdkafka fails to parse a null record set
                    value = b""
                if value is not None:
                    out[f.name] = value
        if not placed:
            for f in fields:
                if f.name in ERROR_FIELDS:
                    out[f.name] = self.code
                    placed = True
                    if self.message is not None:
                        for m in fields:
                            if m.name in MESSAGE_FIELDS:
                                out[m.name] = self.message
        return out, placed


def build_error_response(key: int, version: int, req: dict, code: int,
                         message: str | None = None) -> tuple[dict, bool]:
    """(response, per_item): per_item is False when the code went to the top level
    (or nowhere: an API without any error field)."""
    b = _Builder(key, version, int(code), message)
    req_struct = REQUESTS[key].msg.struct if key in REQUESTS else None
    resp_struct = RESPONSES[key].msg.struct
    body, _ = b.build(resp_struct, req_struct, req)
    top = any(f.name in ERROR_FIELDS and f.name in body
              for f in _present(resp_struct.fields, version))
    return body, not top


def error_response(key: int, version: int, req: dict, code: int,
                   message: str | None = None) -> dict:
    """The response to ``req`` answering ``code`` where Kafka would put it."""
    return build_error_response(key, version, req, code, message)[0]


def safe_error_response(key: int, version: int, req: dict, code: int,
                        message: str | None = None) -> dict:
    """``error_response`` that never raises: the UNKNOWN_SERVER_ERROR path must not fail
    on top of the bug it reports. Should building from the request fail, the code goes
    to the top level if the API has one there, else the body is empty (all defaults)."""
    try:
        return error_response(key, version, req, code, message)
    except Exception:  # noqa: BLE001 - our bug too; log it and answer what we can
        log.exception("building the error response for API key %d v%d failed", key, version)
    try:
        fields = _present(RESPONSES[key].msg.struct.fields, version)
        return {f.name: code for f in fields if f.name in ERROR_FIELDS}
    except Exception:  # noqa: BLE001
        return {}


IDENTITY = ("name", "topic", "topic_name", "topic_id", "group_id", "transactional_id",
            "resource_name", "key", "log_dir")


def _same(a: dict, b: dict) -> bool:
    keys = [k for k in IDENTITY if k in a and k in b]
    return bool(keys) and all(a[k] == b[k] for k in keys)


def merge(response: dict, errors: dict) -> dict:
    """Fold the per-item error response for some request items into the handler's
    response for the others (in place; returns ``response``)."""
    for k, value in errors.items():
        if not isinstance(value, list):
            continue
        into = response.setdefault(k, [])
        for item in value:
            match = next((x for x in into if isinstance(x, dict) and isinstance(item, dict)
                          and _same(x, item)), None)
            if match is None:
                into.append(item)
            else:
                merge(match, item)
    return response


__all__ = ["build_error_response", "carries_error", "error_response", "merge",
           "safe_error_response"]
