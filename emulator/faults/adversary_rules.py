"""The adversary's vocabulary: its kinds of fault, where each may happen and how often
(``RULES``), the settings' ranges, the record of what it injected and the keys a replay
names (``FaultKey``). Pure data and small pure functions; emulator/faults/adversary.py
acts on them (the module docstring there says what each kind is, as Kafka's event)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from emulator.cluster.state import ClusterState
from emulator.faults.model import topic_name

# The kinds of fault (what ``Adversary.scale`` tunes, what the record says).
LEADER_MOVE = "leader_move"
LEADER_MOVE_AFTER_APPEND = "leader_move_after_append"
UNREPLICATED_LEADER_MOVE = "unreplicated_leader_move"
FOLLOWER_LAG = "follower_lag"
COORDINATOR_MOVE = "coordinator_move"  # before the request reaches the coordinator
# after the coordinator answered: a kind of its own, so that a replayed key says which
COORDINATOR_MOVE_AFTER = "coordinator_move_after_answer"
# before an OffsetFetch: a kind of its own, off by default, because librdkafka 2.16's
# group consumer hangs on it for good (docs/adversary.md): every librdkafka consumer
# test would fail on the client's bug, not the application's
COORDINATOR_MOVE_OFFSET_FETCH = "coordinator_move_before_offset_fetch"
LOST_RESPONSE = "lost_response"
REBALANCE = "rebalance"
KICK = "kick"
SESSION_EVICTED = "session_evicted"
ZOMBIE = "zombie"
SHARE_LOCK_EXPIRY = "share_lock_expiry"
SLOW_MARKERS = "slow_markers"
STALE_METADATA = "stale_metadata"
KINDS = (LEADER_MOVE, LEADER_MOVE_AFTER_APPEND, UNREPLICATED_LEADER_MOVE, FOLLOWER_LAG,
         COORDINATOR_MOVE, COORDINATOR_MOVE_AFTER, COORDINATOR_MOVE_OFFSET_FETCH,
         LOST_RESPONSE, REBALANCE, KICK,
         SESSION_EVICTED, ZOMBIE, SHARE_LOCK_EXPIRY, SLOW_MARKERS, STALE_METADATA)
# Kinds whose default factor is not 1 (``Adversary.scale`` overrides): a zombie needs a
# second instance of the application, which a test has only when it says so.
DEFAULT_SCALE = {ZOMBIE: 0.0, COORDINATOR_MOVE_OFFSET_FETCH: 0.0}
# A kind scaled with another unless named itself (``coordinator_move=2`` scales both).
FAMILY = {COORDINATOR_MOVE_AFTER: COORDINATOR_MOVE}  # (not the OffsetFetch one: named only)

# (client_id, broker, API name, n, kind): what replays a fault (``Adversary.script``).
FaultKey = tuple[str, int, str, int, str]

# When a fault acts: before the request is handled (the handler answers from the state
# it made), or on the answer.
BEFORE = "before"
AFTER = "after"


@dataclass(frozen=True)
class Rule:
    """One fault an API may meet: its kind, the chance per request, and whether it acts
    before the request is handled or on its answer."""

    kind: str
    rate: float
    when: str = BEFORE
    min_version: int = 0


# The group and transaction coordinators' partition moving before the request: the old
# broker answers NOT_COORDINATOR, the new one loads (COORDINATOR_LOAD_IN_PROGRESS).
_COORDINATOR = Rule(COORDINATOR_MOVE, 0.05)
# The transaction APIs: a retried request must find the coordinator's answer the same
# (Kafka's coordinator recognises a retried InitProducerId, AddPartitionsToTxn, EndTxn).
_TXN = (_COORDINATOR, Rule(COORDINATOR_MOVE_AFTER, 0.02, AFTER), Rule(LOST_RESPONSE, 0.02),
        Rule(ZOMBIE, 0.02))

# API key -> the faults its requests may meet; each is an event Kafka's cluster has, at
# a point where it may happen for that API.
RULES: dict[int, tuple[Rule, ...]] = {
    0: (  # Produce
        Rule(LEADER_MOVE, 0.04),
        Rule(FOLLOWER_LAG, 0.04),
        Rule(LEADER_MOVE_AFTER_APPEND, 0.05, AFTER),  # acks=all only
        Rule(UNREPLICATED_LEADER_MOVE, 0.05, AFTER),  # acks=1 only
        Rule(LOST_RESPONSE, 0.05, AFTER),
    ),
    1: (  # Fetch
        Rule(SESSION_EVICTED, 0.06, min_version=7),
        Rule(REBALANCE, 0.02),  # the fetching client's classic group, mid poll loop
        Rule(LEADER_MOVE, 0.03),
    ),
    2: (Rule(LEADER_MOVE, 0.05),),  # ListOffsets
    3: (Rule(LEADER_MOVE, 0.12, AFTER),),  # Metadata
    8: (_COORDINATOR, Rule(REBALANCE, 0.03), Rule(COORDINATOR_MOVE_AFTER, 0.02, AFTER),
        Rule(LOST_RESPONSE, 0.02)),  # OffsetCommit
    9: (Rule(COORDINATOR_MOVE_OFFSET_FETCH, 0.05),),  # OffsetFetch
    11: (Rule(COORDINATOR_MOVE, 0.05), Rule(COORDINATOR_MOVE_AFTER, 0.05, AFTER)),  # JoinGroup
    12: (Rule(REBALANCE, 0.08), Rule(KICK, 0.02), Rule(COORDINATOR_MOVE, 0.02),
         Rule(COORDINATOR_MOVE_AFTER, 0.02, AFTER)),  # Heartbeat
    14: (_COORDINATOR, Rule(REBALANCE, 0.03), Rule(COORDINATOR_MOVE_AFTER, 0.03, AFTER)),
    22: _TXN[:3],  # InitProducerId (transactional ones only: see _plan)
    24: _TXN,  # AddPartitionsToTxn (a client's, v0-3)
    25: _TXN,  # AddOffsetsToTxn
    26: (_COORDINATOR, Rule(COORDINATOR_MOVE_AFTER, 0.02, AFTER), Rule(LOST_RESPONSE, 0.03),
         Rule(ZOMBIE, 0.02)),  # EndTxn
    28: (_COORDINATOR,),  # TxnOffsetCommit
    68: (Rule(COORDINATOR_MOVE, 0.05), Rule(KICK, 0.02),
         Rule(COORDINATOR_MOVE_AFTER, 0.02, AFTER)),  # ConsumerGroupHeartbeat
    # a share consumer's acknowledgement held past its records' acquisition locks
    78: (Rule(SHARE_LOCK_EXPIRY, 0.03),),  # ShareFetch carrying acknowledgements
    79: (Rule(SHARE_LOCK_EXPIRY, 0.05),),  # ShareAcknowledge
}
# ``stale_metadata`` is a setting, not a rule of an API: one broker per seed, always,
# unless scaled to 0 (``Adversary.start``).
STALE_SETTING = Rule(STALE_METADATA, 1.0)
# The APIs whose key names a coordinator: which field, and which coordinator.
_GROUP_KEYED = {8: "group_id", 9: "group_id", 11: "group_id", 12: "group_id",
                14: "group_id", 28: "group_id", 68: "group_id"}
_TXN_KEYED = {22: "transactional_id", 24: "transactional_id", 25: "transactional_id",
              26: "transactional_id"}
_LEADER_APIS = (0, 1, 2)  # the APIs only a partition's leader serves (for a client)


# The settings start() makes (see there): one broker's metadata lag, ms (low, high) and
# jitter; how long a coordinator loads after a move (Kafka's envelope: tens of ms; a big
# __consumer_offsets partition takes seconds); slow transaction markers (a share of
# transactions, and their delay in ms; Kafka's envelope: ~15 ms, up to ~100).
STALE_LAG_MS = (200, 1000)
# A group is made to rebalance, or loses a member, at most once per this many ms: clients
# heartbeat every few hundred ms to 3 s, and a per-request rate alone would keep a group
# with fast heartbeats rebalancing all the time (no progress), one with slow ones never.
GROUP_QUIET_MS = 3000
# After a kick the group is left alone longer: the member lost a session's worth of
# time and rejoins; a second kick at once would keep a fast-heartbeating group (a
# 200 ms heartbeat draws five times a second) from ever getting back to work.
KICK_QUIET_MS = 15000
# A client's requests move one partition's leader (a user partition's, or a
# coordinator's partition) at most once per this many of that client's requests:
# Kafka's elections are events, not a steady state, and a client that refreshes its
# metadata on every NOT_LEADER_OR_FOLLOWER would otherwise meet a move per refresh and
# make no progress (a chain the first sound version showed). Counted in the client's
# own requests, not in time, so that the same request sequence meets the same faults.
MOVE_QUIET_REQUESTS = 25
COORDINATOR_QUIET_REQUESTS = 50
STALE_JITTER_MS = 200
LOAD_MS = 400
SLOW_MARKERS_RATE = 0.2
SLOW_MARKERS_MS = (100, 1000)
# How long followers stop fetching (``follower_lag``), ms: within Kafka's default
# replica.lag.time.max.ms (30 s) they stay in the ISR; a cluster configured with a
# shorter one sees them leave it.
FOLLOWER_LAG_MS = (100, 1500)
# The longest a Heartbeat is held for a ``kick`` (the member's session must run out
# meanwhile): longer sessions are not kicked, a test would wait too long.
KICK_MAX_HOLD_MS = 12000


SCALE_ENV = "KAFKA_EMULATOR_ADVERSARY_SCALE"


def parse_scale(text: str | dict[str, float] | None) -> dict[str, float]:
    """``"all=0.5,leader_move=2"`` (or a dict) as the factors ``Adversary.scale`` takes;
    ValueError names the kinds when one is unknown or a factor is not a number >= 0."""
    if text is None:
        return {}
    pairs = list(text.items()) if isinstance(text, dict) else [
        tuple(p.split("=", 1)) if "=" in p else (p, "") for p in
        (x.strip() for x in text.split(",")) if p]
    out: dict[str, float] = {}
    for kind, value in pairs:
        kind = str(kind).strip()
        if kind != "all" and kind not in KINDS:
            raise ValueError(f"unknown adversary fault kind {kind!r}; kinds are all, "
                             + ", ".join(KINDS))
        try:
            factor = float(value)
        except (TypeError, ValueError):
            raise ValueError(f"{kind}: the factor must be a number, got {value!r}") from None
        if not factor >= 0:
            raise ValueError(f"{kind}: the factor must be >= 0, got {value!r}")
        out[kind] = factor
    return out


def draw(seed: int, *parts: object) -> float:
    """A uniform number in [0, 1) that is a pure function of the seed and ``parts``."""
    h = hashlib.blake2b(repr((seed, *parts)).encode(), digest_size=8).digest()
    return int.from_bytes(h, "big") / 2.0**64


@dataclass(frozen=True)
class Injected:
    """One fault the adversary injected (``Adversary.record``)."""

    seq: int  # its place among every fault injected
    seed: int
    broker: int
    client_id: str
    api: str
    n: int  # the client's n-th request of this API to this broker
    kind: str
    detail: str

    def as_dict(self) -> dict[str, Any]:
        return dict(vars(self))

    def key(self) -> tuple[str, int, str, int, str, str]:
        """What replays exactly for the same request sequence (``seq`` may interleave
        differently between clients)."""
        return (self.client_id, self.broker, self.api, self.n, self.kind, self.detail)

    def fault_key(self) -> FaultKey:
        """The key ``Adversary.script`` replays this fault by."""
        return (self.client_id, self.broker, self.api, self.n, self.kind)


@dataclass
class Plan:
    """What ``before`` decided for one request: the dispatcher waits ``hold_ms`` before
    handling it (the request held in the network), closes the connection after applying
    the request when ``drop``, and hands the answer to ``post`` when it is set."""

    rule: Rule
    client_id: str
    broker: int
    api: int
    n: int
    drop: bool = False
    hold_ms: int = 0
    post: Callable[[Any], Any] | None = None


def group_key(api: int, req: dict) -> str | None:
    """The group a group-keyed request names (OffsetFetch v8+: the first of its groups),
    None for none (a decoded group id is a string or null)."""
    gid = req.get(_GROUP_KEYED[api])
    if not gid and api == 9:
        groups = req.get("groups") or ()
        gid = groups[0].get("group_id") if groups else None
    return gid or None


def appended(result: dict, state: ClusterState | None = None) -> list[tuple[str, int]]:
    """The (topic, partition) pairs a Produce answer says were appended (error NONE);
    ``state`` names the topics of a v13+ answer (by id: ``model.topic_name``)."""
    out = []
    for t in result.get("responses") or ():
        name = topic_name(state, t)
        for p in t.get("partition_responses") or ():
            if isinstance(p, tuple):
                index, err = p[0], p[1]
            else:
                index, err = p.get("index"), p.get("error_code")
            if not err and isinstance(name, str) and isinstance(index, int):
                out.append((name, index))
    return out


def metadata_partitions(result: dict) -> list[tuple[str, int]]:
    """The (topic, partition) pairs of user topics a Metadata answer names a leader of
    (the topics answered without an error)."""
    items: list[tuple[str, int]] = []
    for t in result.get("topics") or ():
        name = t.get("name")
        if not name or t.get("error_code") or t.get("is_internal"):
            continue
        for p in t.get("partitions") or ():
            i = p.get("partition_index")
            if isinstance(i, int):
                items.append((name, i))
    return items


def fail_produce(result: dict, topic: str, index: int, code: int,
                  leader: tuple[int, int], state: ClusterState | None = None) -> dict:
    """The Produce answer with partition ``topic``-``index`` failed with ``code`` (the
    records stay) and the current-leader hint Kafka's purgatory gives; ``state`` as
    for ``appended``."""
    out = dict(result)
    out["responses"] = [
        {**t, "partition_responses": [
            fail_partition(p, code, leader) if topic_name(state, t) == topic
            and (p[0] if isinstance(p, tuple) else p.get("index")) == index else p
            for p in t.get("partition_responses") or ()]}
        for t in result.get("responses") or ()]
    return out


def fail_partition(p: Any, code: int, leader: tuple[int, int]) -> Any:
    """One partition of a Produce answer failed with ``code``.

    The handler answers an appended partition as a ``wire.codec.Row`` (index, error
    code, base offset, ...) rather than a dict; a failed one gets Kafka's -1 offsets
    (the fields left out take their defaults, -1)."""
    index = p[0] if isinstance(p, tuple) else p.get("index")
    return {"index": index, "error_code": code, "base_offset": -1,
            "current_leader": {"leader_id": leader[0], "leader_epoch": leader[1]}}
