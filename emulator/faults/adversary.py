"""``--fidelity adversarial``: every race Kafka permits, often, and replayed by a seed.

The point is to find the bugs an application shows on Kafka once a month (a producer
retrying without idempotence, a consumer committing before it processed, a rebalance
listener forgetting what was revoked): here they show within a few seeds. Each fault is
one Kafka really produces, at a point where Kafka may produce it (``RULES``, per API):

- a retriable error code answered instead of the work (``error``): NOT_LEADER_OR_FOLLOWER
  on Produce, Fetch and ListOffsets; NOT_COORDINATOR and COORDINATOR_LOAD_IN_PROGRESS on
  the group and transaction APIs; CONCURRENT_TRANSACTIONS on the transaction APIs;
  COORDINATOR_NOT_AVAILABLE on FindCoordinator; UNKNOWN_TOPIC_OR_PARTITION (metadata
  staler on the broker than on the client) and NOT_ENOUGH_REPLICAS on Produce;
- a write that landed but whose answer is an error (``landed_error``: REQUEST_TIMED_OUT
  on an acks=all Produce, Kafka's DelayedProduce expiring after the leader appended) or
  is lost (``lost_response``: the request is applied and the connection closes before
  the answer, as a broker restart or a network cut does);
- a leader moving right after a client read it (``leader_move``: after answering
  Metadata, one partition of the answer gets a new leader: its preferred replica, or the
  next in-sync one, as a preferred election or a failover does);
- a coordinator moving (``coordinator_move``: after answering a group or transaction
  request, the leader of the coordinator's partition of __consumer_offsets /
  __transaction_state moves, so the client's next request meets NOT_COORDINATOR, and,
  under Kafka's timing, a coordinator that is loading);
- a rebalance in the middle of a poll loop (``rebalance``: a classic group is made to
  rebalance as a member joining would, on a member's Heartbeat, SyncGroup, OffsetCommit
  or Fetch; ``kick``: the member is removed as its session running out would be, classic
  or KIP-848);
- a fetch session evicted from the broker's cache (``session_evicted``: the next
  incremental Fetch meets FETCH_SESSION_ID_NOT_FOUND);
- settings chosen by the seed at start (``start``): one broker's metadata much staler
  than the others' (``stale_metadata``, through the per-broker metadata views), longer
  coordinator loads after a move, and slow transaction markers for some transactions
  (``slow_markers``: the transaction stays in PrepareCommit/PrepareAbort, read_committed
  consumers wait, the producer's next transaction meets CONCURRENT_TRANSACTIONS).

Determinism. Nothing is drawn from one generator shared by every connection (thread
scheduling would reorder the draws). Each request's fate is a hash of (seed, client_id,
broker, API key, n), n counting that client's requests of that API to that broker: a
client that sends the same requests meets the same faults in the same order, whatever
the other clients do meanwhile (what a fault acts on, such as the partition a leader
move picks, comes from that request and the cluster's state; a group's rebalances and
kicks also wait ``GROUP_QUIET_MS`` after its last one, a time, so these replay exactly
only when the clients' timing does too). ``Adversary.record``
holds every fault injected, one log line each says it as it happens. Slow markers are
drawn per transaction (seed, transactional id, its n-th transaction), the stale broker
and its lag from the seed alone.

Rates (per request, ``Rule.rate``) are high enough that a wrong program fails within a
few seeds and low enough that a correct one (retries, idempotence, commits after
processing) keeps making progress: at most one fault per request, and one request in 6
to 12 of each API meets one (a batching producer sends few requests: a Produce meets a
duplicate-making fault one time in ten). ``Adversary.scale`` multiplies them per kind
(``{"all": 0.5}``, ``{"leader_move": 2}``): ``Cluster(adversary_scale=...)``,
``--adversary-scale``, ``$KAFKA_EMULATOR_ADVERSARY_SCALE``, or ``POST /adversary`` on a
running cluster, which also turns the faults off and on (for a test's setup).

Sans I/O: ``before`` decides (and makes the state changes that come before the answer),
the returned ``Plan``'s ``post`` acts on the answer; emulator/server/dispatch.py calls
both and does the network part (answering an injected error, closing the connection).
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from emulator.cluster.state import ClusterState
from emulator.faults.injector import move_leader
from emulator.faults.model import Injection, request_items
from emulator.services import Services
from wire.errors import ErrorCode as E
from wire.messages import NAMES

log = logging.getLogger("kafka_emulator")

# The kinds of fault (what ``Adversary.scale`` tunes, what the record says).
ERROR = "error"
LANDED_ERROR = "landed_error"
LOST_RESPONSE = "lost_response"
LEADER_MOVE = "leader_move"
COORDINATOR_MOVE = "coordinator_move"
REBALANCE = "rebalance"
KICK = "kick"
SESSION_EVICTED = "session_evicted"
SLOW_MARKERS = "slow_markers"
STALE_METADATA = "stale_metadata"
KINDS = (ERROR, LANDED_ERROR, LOST_RESPONSE, LEADER_MOVE, COORDINATOR_MOVE, REBALANCE, KICK,
         SESSION_EVICTED, SLOW_MARKERS, STALE_METADATA)


@dataclass(frozen=True)
class Rule:
    """One fault an API may meet: its kind, the chance per request, and for ``error``
    kinds the code and whether it goes to one partition the request names (``item``)
    or to the whole request."""

    kind: str
    rate: float
    error: int = 0
    item: bool = False
    min_version: int = 0
    acks_all: bool = False  # a Produce error Kafka answers only to acks=all


def _errors(*pairs: tuple[int, float], item: bool = False) -> tuple[Rule, ...]:
    return tuple(Rule(ERROR, rate, int(code), item) for code, rate in pairs)


# The group and transaction coordinators' answers while their partition moves or loads.
# (Heartbeat is left out: Kafka's GroupCoordinatorService answers a Heartbeat that meets
# a loading coordinator with no error.)
_COORDINATOR_ERRORS = _errors((E.NOT_COORDINATOR, 0.03), (E.COORDINATOR_LOAD_IN_PROGRESS, 0.02))
# A write to __consumer_offsets that failed (NOT_ENOUGH_REPLICAS, REQUEST_TIMED_OUT):
# Kafka's group coordinator answers it COORDINATOR_NOT_AVAILABLE.
_GROUP_WRITE = _errors((E.COORDINATOR_NOT_AVAILABLE, 0.01))
# The transaction APIs: a retried request must find the coordinator's answer the same
# (Kafka's coordinator recognises a retried InitProducerId, AddPartitionsToTxn, EndTxn).
_TXN = (*_COORDINATOR_ERRORS, Rule(ERROR, 0.03, int(E.CONCURRENT_TRANSACTIONS)),
        Rule(COORDINATOR_MOVE, 0.02), Rule(LOST_RESPONSE, 0.02))

# API key -> the faults its requests may meet, checked against what Kafka's handlers
# (KafkaApis, ReplicaManager, GroupCoordinatorService, TransactionCoordinator) return
# for that API.
RULES: dict[int, tuple[Rule, ...]] = {
    0: (  # Produce
        *_errors((E.NOT_LEADER_OR_FOLLOWER, 0.04), (E.UNKNOWN_TOPIC_OR_PARTITION, 0.01),
                 item=True),
        # the ISR below min.insync.replicas: only acks=all is refused
        Rule(ERROR, 0.015, int(E.NOT_ENOUGH_REPLICAS), item=True, acks_all=True),
        Rule(LANDED_ERROR, 0.05, int(E.REQUEST_TIMED_OUT)),
        Rule(LOST_RESPONSE, 0.05),
    ),
    1: (  # Fetch
        Rule(SESSION_EVICTED, 0.06, min_version=7),
        Rule(REBALANCE, 0.02),  # the fetching client's classic group, mid poll loop
        *_errors((E.NOT_LEADER_OR_FOLLOWER, 0.03), (E.UNKNOWN_TOPIC_OR_PARTITION, 0.01),
                 item=True),
    ),
    2: (*_errors((E.NOT_LEADER_OR_FOLLOWER, 0.05), item=True),  # ListOffsets
        # a new leader whose high watermark is not yet past its epoch's start (KIP-207)
        Rule(ERROR, 0.02, int(E.OFFSET_NOT_AVAILABLE), item=True, min_version=5)),
    3: (Rule(LEADER_MOVE, 0.12),),  # Metadata
    8: (*_COORDINATOR_ERRORS, *_GROUP_WRITE, Rule(REBALANCE, 0.03),
        Rule(COORDINATOR_MOVE, 0.02), Rule(LOST_RESPONSE, 0.02)),  # OffsetCommit
    9: _COORDINATOR_ERRORS,  # OffsetFetch
    10: _errors((E.COORDINATOR_NOT_AVAILABLE, 0.04)),  # FindCoordinator
    11: (*_COORDINATOR_ERRORS, *_GROUP_WRITE, Rule(COORDINATOR_MOVE, 0.05)),  # JoinGroup
    12: (Rule(REBALANCE, 0.08), Rule(KICK, 0.02), *_errors((E.NOT_COORDINATOR, 0.02)),
         Rule(COORDINATOR_MOVE, 0.02)),  # Heartbeat
    14: (*_COORDINATOR_ERRORS, *_GROUP_WRITE, Rule(REBALANCE, 0.03),
         Rule(COORDINATOR_MOVE, 0.03)),  # SyncGroup
    22: _TXN,  # InitProducerId (transactional ones only: see _applies)
    24: _TXN,  # AddPartitionsToTxn (a client's, v0-3)
    25: _TXN,  # AddOffsetsToTxn
    26: (*_COORDINATOR_ERRORS, Rule(COORDINATOR_MOVE, 0.02),
         Rule(LOST_RESPONSE, 0.03)),  # EndTxn
    28: (*_COORDINATOR_ERRORS,),  # TxnOffsetCommit
    68: (*_COORDINATOR_ERRORS, Rule(KICK, 0.02),
         Rule(COORDINATOR_MOVE, 0.02)),  # ConsumerGroupHeartbeat
}
# The APIs whose key names a coordinator: which field, and which coordinator.
_GROUP_KEYED = {8: "group_id", 9: "group_id", 11: "group_id", 12: "group_id",
                14: "group_id", 28: "group_id", 68: "group_id"}
_TXN_KEYED = {22: "transactional_id", 24: "transactional_id", 25: "transactional_id",
              26: "transactional_id"}


# The settings start() makes (see there): one broker's metadata lag, ms (low, high) and
# jitter; how long a coordinator loads after a move (Kafka's envelope: tens of ms; a big
# __consumer_offsets partition takes seconds); slow transaction markers (a share of
# transactions, and their delay in ms; Kafka's envelope: ~15 ms, up to ~100).
STALE_LAG_MS = (200, 1000)
# A group is made to rebalance, or loses a member, at most once per this many ms: clients
# heartbeat every few hundred ms to 3 s, and a per-request rate alone would keep a group
# with fast heartbeats rebalancing all the time (no progress), one with slow ones never.
GROUP_QUIET_MS = 3000
STALE_JITTER_MS = 200
LOAD_MS = 400
SLOW_MARKERS_RATE = 0.2
SLOW_MARKERS_MS = (100, 1000)


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


@dataclass
class Plan:
    """What ``before`` decided for one request: the dispatcher answers ``injection``
    instead of the handler's answer, closes the connection after applying the request
    when ``drop``, and hands the answer to ``after`` when ``post`` is set."""

    rule: Rule
    client_id: str
    broker: int
    api: int
    n: int
    injection: Injection | None = None
    drop: bool = False
    post: Callable[[Any], Any] | None = None


@dataclass(eq=False)
class Adversary:
    """The seeded adversary of one cluster (``Cluster.adversary``)."""

    seed: int
    state: ClusterState
    services: Services | None = None
    scale: dict[str, float] = field(default_factory=dict)  # kind (or "all") -> factor
    record: list[Injected] = field(default_factory=list)
    enabled: bool = True
    counts: dict[tuple[str, int, int], int] = field(default_factory=dict)
    txn_counts: dict[str, int] = field(default_factory=dict)  # transactions ended, per id
    disrupted_at: dict[str, int] = field(default_factory=dict)  # group -> last rebalance/kick

    # ---- the decision ----------------------------------------------------------------
    def rate(self, rule: Rule) -> float:
        return rule.rate * self.scale.get(rule.kind, 1.0) * self.scale.get("all", 1.0)

    def before(self, broker: int, api: int, version: int, client_id: str | None,
               req: dict) -> Plan | None:
        """This request's fault, if it meets one; state changes that come before the
        answer (a rebalance, an evicted session) are made here."""
        rules = RULES.get(api)
        if rules is None:
            return None
        cid = client_id or ""
        key = (cid, broker, api)
        n = self.counts.get(key, 0) + 1
        self.counts[key] = n
        if not self.enabled:
            return None
        u = draw(self.seed, cid, broker, api, n)
        for rule in rules:
            r = self.rate(rule)
            if u < r:
                if version < rule.min_version:
                    return None
                return self._plan(Plan(rule, cid, broker, api, n), version, req)
            u -= r
        return None

    def _plan(self, plan: Plan, version: int, req: dict) -> Plan | None:
        rule, api = plan.rule, plan.api
        if api in _TXN_KEYED and not req.get(_TXN_KEYED[api]):
            return None  # an idempotent producer's InitProducerId: any broker answers it
        if api == 0 and req.get("acks") == 0 and rule.kind != ERROR:
            return None  # nobody waits for an acks=0 answer
        if rule.kind == ERROR:
            if rule.acks_all and req.get("acks") != -1:
                return None
            return self._error(plan, version, req)
        if rule.kind == LANDED_ERROR:
            if req.get("acks") != -1:
                return None  # only acks=all waits for the replicas, and times out
            code = rule.error

            def timed_out(result: Any) -> Any:
                return _fail_produce(result, code)
            plan.post = timed_out
            return self._note(plan, f"{E(code).name} after the write landed")
        if rule.kind == LOST_RESPONSE:
            plan.drop = True
            return self._note(plan, "the request applied, its response lost "
                              "(connection closed)")
        if rule.kind == LEADER_MOVE:
            plan.post = lambda result: self._move_after_metadata(plan, result)
            return plan
        if rule.kind == COORDINATOR_MOVE:
            return self._coordinator_move(plan, req)
        if rule.kind in (REBALANCE, KICK):
            return self._rebalance(plan, req)
        if rule.kind == SESSION_EVICTED:
            return self._evict_session(plan, req)
        return None

    def _error(self, plan: Plan, version: int, req: dict) -> Plan | None:
        code = plan.rule.error
        if plan.rule.item:
            items = [(t, p) for t, p in request_items(self.state, req)
                     if not t.startswith("__")]
            if not items:
                return None
            topic, partition = items[int(draw(self.seed, "item", plan.client_id, plan.broker,
                                              plan.api, plan.n) * len(items))]
            plan.injection = Injection(code, topic, partition)
            return self._note(plan, f"{E(code).name} on {topic}-{partition}")
        plan.injection = Injection(code)
        return self._note(plan, E(code).name)

    # ---- acting on the cluster --------------------------------------------------------
    def _move_after_metadata(self, plan: Plan, result: Any) -> Any:
        """A leader moves right after this client learnt it: one partition of the answer
        (user topics with a live leader and another in-sync replica) moves."""
        if not isinstance(result, dict):
            return result
        candidates = []
        for t in result.get("topics") or ():
            name = t.get("name")
            if not name or t.get("error_code") or t.get("is_internal") or name.startswith("__"):
                continue
            topic = self.state.topics.get(name)
            if topic is None:
                continue
            for p in t.get("partitions") or ():
                i = p.get("partition_index")
                if isinstance(i, int) and 0 <= i < len(topic.partitions) \
                        and len(topic.partitions[i].isr) > 1:
                    candidates.append((name, i))
        if not candidates:
            return result
        name, i = candidates[int(draw(self.seed, "leader", plan.client_id, plan.broker,
                                      plan.n) * len(candidates))]
        moved = move_leader(self.state, name, i)
        if moved is not None:
            self.state.changed()
            self._note(plan, f"leader of {name}-{i} moved {moved[0]} -> {moved[1]} "
                       "after the Metadata answer")
        return result

    def _coordinator_move(self, plan: Plan, req: dict) -> Plan | None:
        services = self.services
        if services is None:
            return None
        if plan.api in _GROUP_KEYED:
            key, topic = req.get(_GROUP_KEYED[plan.api]), services.groups.topic
        else:
            key, topic = req.get(_TXN_KEYED[plan.api]), services.transactions.topic
        if not key or not topic.exists():
            return None
        partition = topic.partition_for(key)

        def move(result: Any) -> Any:
            moved = move_leader(self.state, topic.name, partition)
            if moved is not None:
                self.state.changed()
                self._note(plan, f"coordinator of {key!r} ({topic.name}-{partition}) moved "
                           f"{moved[0]} -> {moved[1]} after the answer")
            return result
        plan.post = move
        return plan

    def _rebalance(self, plan: Plan, req: dict) -> Plan | None:
        services = self.services
        if services is None:
            return None
        group_id = req.get("group_id") if plan.api != 1 else self._group_of(plan.client_id)
        if not group_id:
            return None
        now = self.state.now()
        if now - self.disrupted_at.get(group_id, -GROUP_QUIET_MS) < GROUP_QUIET_MS:
            return None  # the group's last rebalance or kick was too recent
        groups = services.groups
        done = self._disrupt(plan, req, group_id, groups)
        if done is not None:
            self.disrupted_at[group_id] = now
        return done

    def _disrupt(self, plan: Plan, req: dict, group_id: str, groups: Any) -> Plan | None:
        if plan.rule.kind == KICK:
            member = req.get("member_id") or ""
            expire = groups.consumer.expire_member if plan.api == 68 \
                else groups.classic.expire_member
            if not expire(group_id, member):
                return None
            return self._note(plan, f"member {member!r} of group {group_id!r} removed "
                              "(as its session expiring)")
        if not groups.classic.force_rebalance(group_id):
            return None
        return self._note(plan, f"group {group_id!r} made to rebalance")

    def _group_of(self, client_id: str) -> str | None:
        """The first stable classic group (by id) with a member of this client id: the
        group a fetching consumer belongs to. Looked up only when a Fetch drew a
        rebalance, so its cost (the groups) is paid once in many fetches."""
        assert self.services is not None
        table = self.services.groups.groups
        for gid in sorted(table):
            g = table.peek(gid)
            if getattr(g, "type", None) == "classic" and g.state == "Stable" and any(
                    m.client_id == client_id for m in g.members.values()):
                return str(gid)
        return None

    def _evict_session(self, plan: Plan, req: dict) -> Plan | None:
        services = self.services
        sid = req.get("session_id") or 0
        if services is None or sid <= 0 or (req.get("session_epoch") or 0) <= 0:
            return None
        if services.fetch_sessions.cache(plan.broker).remove(sid) is None:
            return None
        return self._note(plan, f"fetch session {sid} evicted")

    # ---- what lasts: set once at start ------------------------------------------------
    def start(self) -> None:
        """The faults that are settings rather than answers, chosen by the seed when the
        cluster starts: one broker's metadata much staler than the others' (Kafka's
        envelope is tens of ms, a broker with a slow metadata publisher is behind for
        longer), coordinators that take longer to load after a move, and transaction
        markers that are sometimes slow (``marker_delay``)."""
        ids = sorted(self.state.brokers)
        views = getattr(self.state, "metadata_views", None)  # per-broker metadata lag
        if views is not None and len(ids) > 1 and self.scale.get(STALE_METADATA, 1.0) > 0:
            broker = ids[int(draw(self.seed, "stale-broker") * len(ids))]
            lag = STALE_LAG_MS[0] + int(draw(self.seed, "stale-lag")
                                        * (STALE_LAG_MS[1] - STALE_LAG_MS[0]))
            views.set_lag(broker, lag, STALE_JITTER_MS)
            self._note_setting(broker, STALE_METADATA, f"broker {broker} learns metadata "
                               f"changes {lag}-{lag + STALE_JITTER_MS} ms late")
        services = self.services
        if services is None:
            return
        for topic in (services.groups.topic, services.transactions.topic):
            if hasattr(topic, "load_ms"):
                topic.load_ms = max(topic.load_ms, LOAD_MS)
        txns = services.transactions
        if hasattr(txns, "marker_delay"):
            normal = txns.marker_delay

            def marker_delay(txn: Any) -> int:
                return self._marker_delay(txn, normal(txn))
            setattr(txns, "marker_delay", marker_delay)  # noqa: B010 - the documented hook

    def _marker_delay(self, txn: Any, normal: int) -> int:
        """Kafka's marker delay, or (``SLOW_MARKERS_RATE`` of transactions, seeded by the
        transactional id and how many transactions it ended before: the producer epoch
        stays the same across transactions before transaction version 2) a slow one."""
        tid, pid = txn.transactional_id, txn.producer_id
        n = self.txn_counts.get(tid, 0) + 1
        self.txn_counts[tid] = n
        if not self.enabled or draw(self.seed, "markers", tid, n) >= (
                SLOW_MARKERS_RATE * self.scale.get(SLOW_MARKERS, 1.0)
                * self.scale.get("all", 1.0)):
            return normal
        low, high = SLOW_MARKERS_MS
        delay = low + int(draw(self.seed, "marker-ms", tid, n) * (high - low))
        f = Injected(len(self.record), self.seed, -1, tid, "EndTxn", n, SLOW_MARKERS,
                     f"markers of {tid!r}'s transaction {n} (producer {pid}) written "
                     f"{delay} ms after EndTxn")
        self._append(f)
        return max(normal, delay)

    # ---- the record ------------------------------------------------------------------
    def _note_setting(self, broker: int, kind: str, detail: str) -> None:
        self._append(Injected(len(self.record), self.seed, broker, "", "-", 0, kind, detail))

    def _append(self, f: Injected) -> None:
        self.record.append(f)
        log.info("adversary seed %d: broker %d, %s #%d from client %r: %s", f.seed, f.broker,
                 f.api, f.n, f.client_id, f.detail)

    def _note(self, plan: Plan, detail: str) -> Plan:
        self._append(Injected(len(self.record), self.seed, plan.broker, plan.client_id,
                              NAMES.get(plan.api, str(plan.api)), plan.n, plan.rule.kind,
                              detail))
        return plan

    def tune(self, enabled: bool | None = None,
             scale: str | dict[str, float] | None = None) -> dict[str, Any]:
        """Turn the per-request faults off or on and/or change rates (POST /adversary);
        returns ``describe()``. Counting goes on while off, so a request sequence after a
        setup replays only if the setup's requests were the same."""
        factors = parse_scale(scale)  # ValueError before anything changes
        if enabled is not None:
            self.enabled = enabled
        self.scale.update(factors)
        return self.describe()

    def describe(self) -> dict[str, Any]:
        """The record as JSON (GET /adversary)."""
        return {"seed": self.seed, "enabled": self.enabled, "scale": dict(self.scale),
                "injected": [f.as_dict() for f in self.record]}


def _fail_produce(result: Any, code: int) -> Any:
    """A Produce answer whose partitions all failed with ``code`` (the records stay)."""
    if not isinstance(result, dict):
        return result
    out = dict(result)
    out["responses"] = [
        {**t, "partition_responses": [
            _fail_partition(p, code) for p in t.get("partition_responses") or ()]}
        for t in result.get("responses") or ()]
    return out


def _fail_partition(p: Any, code: int) -> Any:
    """One partition of a Produce answer failed with ``code`` unless it failed already.

    The handler answers an appended partition as a ``wire.codec.Row`` (index, error
    code, base offset, ...) rather than a dict; a failed one gets Kafka's -1 offsets
    (the fields left out take their defaults, -1)."""
    if isinstance(p, tuple):
        return p if p[1] else {"index": p[0], "error_code": code, "base_offset": -1}
    return {**p, "error_code": code, "base_offset": -1} if not p.get("error_code") else p
