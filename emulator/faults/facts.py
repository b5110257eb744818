"""What a request is about, read once from its decoded body: the key fields fault rules,
barriers and the request journal select on.

A rule that targets a group, a transactional id or a topic must find them in every API
that carries them, whatever the shape (``group_id`` at the top of JoinGroup, inside
``groups`` in OffsetFetch v8+, a FindCoordinator ``key`` of key_type 0 or its
``coordinator_keys``; a transactional id in EndTxn or in each ``transactions`` entry of
AddPartitionsToTxn v4+; topics by name or, from Fetch v13 on, by id). Doing it here,
once per request, keeps the rules, the barriers and the journal agreeing on what a
request names. Pure: no I/O; the topic ids are resolved against the cluster's state.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from emulator.cluster.state import ClusterState
from emulator.faults.model import request_items, topic_name
from wire.messages import NAMES

FIND_COORDINATOR = 10
_GROUP_KEYS = ("group_id",)
_GROUP_LISTS = ("groups", "groups_names", "group_ids")
_TXN_KEYS = ("transactional_id",)
_TXN_LISTS = ("transactional_ids",)
_TOPIC_LISTS = ("topic_names",)  # DeleteTopics v0-5: a list of names


@dataclass
class Facts:
    """One request's key fields and its decoded body (the match language's names)."""

    broker: int
    api_key: int
    version: int
    client_id: str | None
    request: dict
    topics: list[str] = field(default_factory=list)
    partitions: list[tuple[str, int]] = field(default_factory=list)
    groups: list[str] = field(default_factory=list)
    transactional_ids: list[str] = field(default_factory=list)

    @property
    def api(self) -> str:
        return NAMES.get(self.api_key, str(self.api_key))

    def lookup(self, name: str) -> Sequence[object]:
        """The values of a name of the match language (emulator.faults.match): a key
        field, else a path into the decoded request (``request.`` forces that)."""
        if name.startswith("request."):
            return path_values(self.request, name[len("request."):])
        key = self.key_field(name)
        return key if key is not None else path_values(self.request, name)

    def key_field(self, name: str) -> Sequence[object] | None:
        if name == "api":
            return [self.api]
        if name == "api_key":
            return [self.api_key]
        if name == "version":
            return [self.version]
        if name == "broker":
            return [self.broker]
        if name == "client_id":
            return [self.client_id or ""]
        if name == "group":
            return self.groups
        if name == "transactional_id":
            return self.transactional_ids
        if name == "topic":
            return self.topics
        if name == "partition":
            return [p for _, p in self.partitions]
        return None


KEY_FIELDS = ("api", "api_key", "version", "broker", "client_id", "group",
              "transactional_id", "topic", "partition")


def path_values(obj: object, path: str) -> list[object]:
    """Every value a dotted path reaches in a decoded request; a list on the way is
    entered element by element (``topics.partitions.partition_index``)."""
    current: list[object] = [obj]
    for part in path.split("."):
        nxt: list[object] = []
        for value in current:
            for item in (value if isinstance(value, list) else [value]):
                if isinstance(item, dict) and part in item:
                    nxt.append(item[part])
        current = nxt
    out: list[object] = []
    for value in current:
        out.extend(value if isinstance(value, list) else [value])
    return [v.hex() if isinstance(v, bytes | bytearray) else v for v in out]


def _collect(obj: dict, found: dict[str, list[str]]) -> None:
    for k, v in obj.items():
        if isinstance(v, str) and v:
            if k in _GROUP_KEYS:
                found["groups"].append(v)
            elif k in _TXN_KEYS:
                found["txns"].append(v)
        elif isinstance(v, list):
            if k in _GROUP_LISTS and all(isinstance(x, str) for x in v):
                found["groups"].extend(x for x in v if x)
            elif k in _TXN_LISTS:
                found["txns"].extend(x for x in v if isinstance(x, str) and x)
            elif k in _TOPIC_LISTS:
                found["topics"].extend(x for x in v if isinstance(x, str) and x)
            for x in v:
                if isinstance(x, dict):
                    _collect(x, found)


def _unique(values: list[str]) -> list[str]:
    return list(dict.fromkeys(values))


def request_facts(state: ClusterState | None, broker: int, api_key: int, version: int,
                  client_id: str | None, request: dict) -> Facts:
    """The key fields of one decoded request (any API, any version)."""
    found: dict[str, list[str]] = {"groups": [], "txns": [], "topics": []}
    if api_key == FIND_COORDINATOR:
        keys = request.get("coordinator_keys") or (
            [request["key"]] if isinstance(request.get("key"), str) else [])
        target = "txns" if request.get("key_type") == 1 else "groups"
        found[target].extend(k for k in keys if isinstance(k, str) and k)
    else:
        _collect(request, found)
    partitions = list(dict.fromkeys(request_items(state, request)))
    topics = [t for t, _ in partitions] + found["topics"]
    # topic entries without partitions (Metadata, CreateTopics, DeleteTopics v6+)
    for v in request.values():
        if isinstance(v, list):
            topics.extend(t for x in v if isinstance(x, dict)
                          for t in [topic_name(state, x)] if t is not None)
    if api_key in _NO_TOPIC_ENTRIES:
        topics = [t for t, _ in partitions]
    return Facts(broker, api_key, version, client_id, request, _unique(topics), partitions,
                 _unique(found["groups"]), _unique(found["txns"]))


# APIs whose top-level list entries carry a ``name`` that is not a topic's.
_NO_TOPIC_ENTRIES = frozenset({
    11,  # JoinGroup: protocols[].name
    32, 33,  # DescribeConfigs, AlterConfigs: resources[] (topics, brokers, ...)
    44,  # IncrementalAlterConfigs
    48, 49,  # DescribeClientQuotas, AlterClientQuotas
    50, 51,  # DescribeUserScramCredentials, AlterUserScramCredentials
    57,  # UpdateFeatures
})


__all__ = ["KEY_FIELDS", "Facts", "path_values", "request_facts"]
