"""``--fidelity adversarial``: the races Kafka permits, often, replayed by a seed, and
never an answer Kafka could not give.

The point is to find the bugs an application shows on Kafka once a month (a producer
retrying without idempotence, a consumer committing before it processed, a rebalance
listener forgetting what was revoked, a producer trusting acks=1): here they show
within a few seeds. And a red must be the client's bug: every answer a client gets is
one a real Kafka 4.4 cluster could give in some schedule consistent with what that
client has seen. So the adversary never draws an error code beside the cluster's
state. Each fault is an **event in the emulated cluster** (a leader moves, a follower
lags, a coordinator moves and loads, a session expires) or a **transport event** (a
response lost after its request took effect), and the handlers answer from the state
those events made (``KINDS``, per API in ``RULES``):

- ``leader_move``: a partition the request names gets a new leader (its preferred
  replica, or the next in-sync one: a preferred election or a failover) just before a
  Produce, Fetch or ListOffsets reaches it, or right after a Metadata answer named its
  leader. The handler then answers NOT_LEADER_OR_FOLLOWER (or FENCED_LEADER_EPOCH) from
  the state; the new leader's log is the in-sync follower's, so anything the old leader
  held above the high watermark is truncated (KIP-101), as on Kafka.
- ``leader_move_after_append``: an acks=all Produce was appended and replicated to the
  in-sync followers, and leadership moved before the old leader saw the followers'
  next fetch: the old leader's purgatory answers NOT_LEADER_OR_FOLLOWER although the
  write landed (it is in the new leader's log and stays). A retry without idempotence
  writes it twice; an idempotent one is answered with the first write's offset.
- ``unreplicated_leader_move``: an acks=1 Produce was answered, then leadership moved to
  an in-sync follower that had not fetched it yet (followers stay in the ISR up to
  replica.lag.time.max.ms behind): the old leader truncates to the new leader's log and
  the acknowledged records are gone, as acks=1 permits.
- ``follower_lag``: a partition's followers stop fetching for a while (a GC pause, a
  slow disk): acks=all waits, and a leader move meanwhile truncates what they had not
  fetched; past replica.lag.time.max.ms they leave the ISR for real (then acks=all meets
  NOT_ENOUGH_REPLICAS from the state, when the ISR is below min.insync.replicas).
- ``coordinator_move``: the leader of the group's or transactional id's partition of
  __consumer_offsets / __transaction_state moves, before the request (which then meets
  NOT_COORDINATOR from the old broker) or after its answer (the client's next request
  does); the new coordinator answers COORDINATOR_LOAD_IN_PROGRESS while it loads
  (``LOAD_MS``).
- ``lost_response``: the request is applied and the connection closes before the
  answer, as a broker restart or a network cut does.
- ``rebalance``: a classic group rebalances as a member joining would (on a member's
  Heartbeat, SyncGroup, OffsetCommit or Fetch).
- ``kick``: a member's Heartbeat is held in the network until the coordinator's own
  session timer has expired the member, then delivered (it meets UNKNOWN_MEMBER_ID
  from the state); only where the session timeout is at most ``KICK_MAX_HOLD_MS``.
- ``session_evicted``: a fetch session leaves the broker's cache (as other clients'
  sessions would push it out): the next incremental Fetch meets
  FETCH_SESSION_ID_NOT_FOUND.
- ``zombie``: a second instance of the application starts with the same
  transactional.id (InitProducerId) just before the producer's request, fencing it
  (its open transaction is aborted; the request meets PRODUCER_FENCED or
  INVALID_PRODUCER_EPOCH from the coordinator's state). Off by default: it is a
  deployment with two instances, not a race of one; ``scale={"zombie": 1}`` plays it.
- settings chosen at start (``start``): one broker's metadata much staler than the
  others' (``stale_metadata``: asked there, a topic just created is unknown, a moved
  leader is not yet known), longer coordinator loads after a move, and slow
  transaction markers for some transactions (``slow_markers``: the transaction stays
  in PrepareCommit/PrepareAbort, read_committed consumers wait, the producer's next
  transaction meets CONCURRENT_TRANSACTIONS from the coordinator's state).

Soundness is checked too: emulator/faults/soundness.py looks at every answer
(``Adversary.violations``; the pytest plugin fails the test). docs/adversary.md says all.

Determinism. Each request's fate is a hash of (seed, client_id, broker, API key, n), n
counting that client's requests of that API to that broker (never one generator shared
by every connection: threads would reorder the draws), so a client that sends the same
requests meets the same faults in the same order, whatever the other clients do (what a
fault acts on comes from that request and the cluster's state; a client's requests move
one partition at most once per ``MOVE_QUIET_REQUESTS`` of them; a group is disrupted at
most once per ``GROUP_QUIET_MS``, a time: that replays only when the timing does).
``Adversary.record`` holds every fault injected (one log line each); ``script`` replays
a chosen set of them instead of drawing (``FaultKey``; emulator/faults/shrink.py).

Rates (per request, ``Rule.rate``; emulator/faults/adversary_rules.py, docs/adversary.md)
are high enough that a wrong program fails within a few seeds and low enough that a
correct one keeps making progress; at most one fault per request. ``scale`` multiplies
them per kind (``--adversary-scale``, ``POST /adversary``, which also turns them off).

Sans I/O: ``before`` decides (and makes the state changes that come before the request
is handled), the returned ``Plan``'s ``hold_ms`` delays the request, its ``post`` acts
on the answer; emulator/server/dispatch.py calls both and does the network part
(waiting, closing the connection).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from emulator.cluster.partition import Partition
from emulator.cluster.state import ClusterState
from emulator.faults.adversary_coordinators import (
    classic_group_of,
    second_instance,
    session_hold,
    share_lock_hold,
)
from emulator.faults.adversary_rules import (
    _GROUP_KEYED,
    _TXN_KEYED,
    AFTER,
    COORDINATOR_MOVE,
    COORDINATOR_MOVE_AFTER,
    COORDINATOR_MOVE_OFFSET_FETCH,
    COORDINATOR_QUIET_REQUESTS,
    DEFAULT_SCALE,
    FAMILY,
    FOLLOWER_LAG,
    FOLLOWER_LAG_MS,
    GROUP_QUIET_MS,
    KICK,
    KICK_MAX_HOLD_MS,
    KICK_QUIET_MS,
    KINDS,
    LEADER_MOVE,
    LEADER_MOVE_AFTER_APPEND,
    LOAD_MS,
    LOST_RESPONSE,
    MOVE_QUIET_REQUESTS,
    REBALANCE,
    RULES,
    SCALE_ENV,
    SESSION_EVICTED,
    SHARE_LOCK_EXPIRY,
    SLOW_MARKERS,
    SLOW_MARKERS_MS,
    SLOW_MARKERS_RATE,
    STALE_JITTER_MS,
    STALE_LAG_MS,
    STALE_METADATA,
    STALE_SETTING,
    UNREPLICATED_LEADER_MOVE,
    ZOMBIE,
    FaultKey,
    Injected,
    Plan,
    Rule,
    appended,
    draw,
    fail_produce,
    group_key,
    metadata_partitions,
    parse_scale,
)
from emulator.faults.injector import move_leader, next_leader
from emulator.faults.model import FaultModel, FollowerFault, request_items
from emulator.faults.soundness import Snapshot, Soundness
from emulator.services import Services
from wire.errors import ErrorCode as E
from wire.messages import NAMES

log = logging.getLogger("kafka_emulator")

__all__ = ["AFTER", "COORDINATOR_MOVE", "FOLLOWER_LAG", "FOLLOWER_LAG_MS", "KICK", "KINDS",
           "LEADER_MOVE", "LEADER_MOVE_AFTER_APPEND", "LOST_RESPONSE", "REBALANCE", "RULES",
           "SCALE_ENV", "SESSION_EVICTED", "SLOW_MARKERS", "SLOW_MARKERS_MS",
           "STALE_LAG_MS", "STALE_METADATA", "UNREPLICATED_LEADER_MOVE", "ZOMBIE",
           "Adversary", "FaultKey", "Injected", "Plan", "Rule", "draw", "parse_scale"]

@dataclass(eq=False)
class Adversary:
    """The seeded adversary of one cluster (``Cluster.adversary``)."""

    seed: int
    state: ClusterState
    services: Services | None = None
    scale: dict[str, float] = field(default_factory=dict)  # kind (or "all") -> factor
    record: list[Injected] = field(default_factory=list)
    enabled: bool = True
    # Replay: when set, exactly these faults fire and nothing is drawn (shrink.py).
    script: frozenset[FaultKey] | None = None
    counts: dict[tuple[str, int, int], int] = field(default_factory=dict)
    txn_counts: dict[str, int] = field(default_factory=dict)  # transactions ended, per id
    quiet_until: dict[str, int] = field(default_factory=dict)  # group -> left alone until
    # (client, topic, partition) -> the client's request count at its last move of it
    moved_at: dict[tuple[str, str, int], int] = field(default_factory=dict)
    requests: dict[str, int] = field(default_factory=dict)  # client -> requests seen
    soundness: Soundness = field(init=False)

    def __post_init__(self) -> None:
        self.soundness = Soundness(self.state)

    @property
    def violations(self) -> list[str]:
        """Answers this cluster gave that Kafka could not have (should stay empty)."""
        return self.soundness.violations

    # ---- the decision ----------------------------------------------------------------
    def rate(self, rule: Rule) -> float:
        kind = rule.kind
        factor = self.scale.get(kind, self.scale.get(FAMILY.get(kind, kind),
                                                     DEFAULT_SCALE.get(kind, 1.0)))
        return rule.rate * factor * self.scale.get("all", 1.0)

    def before(self, broker: int, api: int, version: int, client_id: str | None,
               req: dict) -> Plan | None:
        """This request's fault, if it meets one; state changes that come before the
        request is handled (a leader or coordinator move, a rebalance, an evicted
        session) are made here."""
        rules = RULES.get(api)
        if rules is None:
            return None
        cid = client_id or ""
        key = (cid, broker, api)
        n = self.counts.get(key, 0) + 1
        self.counts[key] = n
        self.requests[cid] = self.requests.get(cid, 0) + 1
        if not self.enabled:
            return None
        u = draw(self.seed, cid, broker, api, n)
        name = NAMES[api]  # (every API of RULES has its name)
        for rule in rules:
            r = self.rate(rule)
            fk: FaultKey = (cid, broker, name, n, rule.kind)
            if self.script is not None:
                if fk not in self.script:
                    continue
            elif u >= r:
                u -= r
                continue
            if version < rule.min_version:
                return None
            return self._plan(Plan(rule, cid, broker, api, n), req)
        return None

    def _plan(self, plan: Plan, req: dict) -> Plan | None:
        rule, api = plan.rule, plan.api
        if api in _TXN_KEYED and not req.get(_TXN_KEYED[api]):
            return None  # an idempotent producer's InitProducerId: any broker answers it
        acks = req.get("acks")  # (a Produce's; no other API of RULES has one)
        if api == 0 and acks == 0:
            return None  # nobody reads an acks=0 answer
        kind = rule.kind
        if kind == LEADER_MOVE:
            if rule.when == AFTER:
                plan.post = lambda result: self._move_after_metadata(plan, result)
                return plan
            return self._move_before(plan, req)
        if kind == LEADER_MOVE_AFTER_APPEND:
            if acks != -1:
                return None  # acks=1 is answered before any follower fetches
            plan.post = lambda result: self._after_append(plan, result, landed=True)
            return plan
        if kind == UNREPLICATED_LEADER_MOVE:
            if acks != 1:
                return None  # acks=all is answered once the followers have it
            plan.post = lambda result: self._after_append(plan, result, landed=False)
            return plan
        if kind == FOLLOWER_LAG:
            return self._follower_lag(plan, req)
        if kind == LOST_RESPONSE:
            plan.drop = True
            return self._note(plan, "the request applied, its response lost "
                              "(connection closed)")
        if kind in (COORDINATOR_MOVE, COORDINATOR_MOVE_AFTER, COORDINATOR_MOVE_OFFSET_FETCH):
            return self._coordinator_move(plan, req)
        if kind in (REBALANCE, KICK):
            return self._rebalance(plan, req)
        if kind == SESSION_EVICTED:
            return self._evict_session(plan, req)
        if kind == ZOMBIE:
            return self._zombie(plan, req)
        if kind == SHARE_LOCK_EXPIRY:
            return self._share_lock_expiry(plan, req)
        return None

    # ---- leaders ----------------------------------------------------------------------
    def _movable(self, plan: Plan, topic: str, partition: int) -> Partition | None:
        """The partition, when it is a user topic's with another live in-sync replica
        to lead it, and this client's requests have not moved it lately. An internal
        topic's partition is a coordinator's, moved by its own kind; a user topic may
        be named ``__x`` too (Kafka's Topic.isInternal is a list of names)."""
        t = self.state.topics.get(topic)
        if t is None or t.is_internal or not 0 <= partition < len(t.partitions):
            return None
        p = t.partitions[partition]
        if p.leader < 0 or next_leader(self.state, p) is None \
                or not self._quiet(plan, topic, partition, MOVE_QUIET_REQUESTS):
            return None
        return p

    def _quiet(self, plan: Plan, topic: str, partition: int, quiet: int) -> bool:
        """Have ``quiet`` of this client's requests passed since they last moved it?
        (Always under a script: the run replayed made only moves that passed.)"""
        if self.script is not None:
            return True
        last = self.moved_at.get((plan.client_id, topic, partition))
        return last is None or self.requests[plan.client_id] - last >= quiet

    def _moved(self, plan: Plan, topic: str, partition: int) -> None:
        # (``before`` counted this client's request before any fault could act)
        self.moved_at[(plan.client_id, topic, partition)] = self.requests[plan.client_id]

    def _pick(self, plan: Plan, items: list[tuple[str, int]], what: str
              ) -> tuple[str, int] | None:
        """One of ``items`` that can move, chosen by the seed (sub-choice of a fault)."""
        movable = [(t, i) for t, i in items if self._movable(plan, t, i) is not None]
        if not movable:
            return None
        return movable[int(draw(self.seed, what, plan.client_id, plan.broker, plan.api,
                                plan.n) * len(movable))]

    def _move(self, plan: Plan, topic: str, partition: int, why: str) -> bool:
        moved = move_leader(self.state, topic, partition)
        if moved is None:
            return False
        self._moved(plan, topic, partition)
        self.state.changed()
        self._note(plan, f"leader of {topic}-{partition} moved {moved[0]} -> {moved[1]} "
                   f"{why}")
        return True

    def _move_before(self, plan: Plan, req: dict) -> Plan | None:
        """A partition the request names, led by this broker, gets another leader just
        before the request reaches it (a preferred election, a controlled shutdown)."""
        items = [(t, i) for t, i in dict.fromkeys(request_items(self.state, req))
                 if self._leads(plan.broker, t, i)]
        chosen = self._pick(plan, items, "item")
        if chosen is None or not self._move(plan, *chosen, "just before the request"):
            return None
        return plan

    def _leads(self, broker: int, topic: str, partition: int) -> bool:
        t = self.state.topics.get(topic)
        return t is not None and 0 <= partition < len(t.partitions) \
            and t.partitions[partition].leader == broker

    def _after_append(self, plan: Plan, result: Any, landed: bool) -> Any:
        """A Produce answered NONE for some partitions: one of them changes leader now.

        ``landed`` (acks=all): the followers have the batch (the high watermark passed
        it), the move came before the old leader learnt so, and its purgatory answers
        NOT_LEADER_OR_FOLLOWER with the new leader as the hint; the write stays.
        Otherwise (acks=1): the answer stands and the new leader is an in-sync follower
        that has not fetched the batch yet, so the old leader truncates it."""
        if not isinstance(result, dict):
            return result
        done = appended(result, self.state)
        chosen = self._pick(plan, [(t, i) for t, i in done if self._leads(plan.broker, t, i)],
                            "appended")
        if chosen is None:
            return result
        topic, index = chosen
        p = self.state.topics[topic].partitions[index]
        if landed:
            if not self._move(plan, topic, index, "after the followers fetched the write, "
                              "before its acks=all answer: NOT_LEADER_OR_FOLLOWER, the "
                              "write kept"):
                return result
            return fail_produce(result, topic, index, int(E.NOT_LEADER_OR_FOLLOWER),
                                 (p.leader, p.leader_epoch), self.state)
        end = p.log_end_offset
        self._move(plan, topic, index, f"after the acks=1 answer, before the followers "
                   f"fetched it (old leader's log end {end}, high watermark "
                   f"{p.high_watermark}: the records above are truncated)")
        return result

    def _move_after_metadata(self, plan: Plan, result: Any) -> Any:
        """A leader moves right after this client learnt it (a partition of the answer)."""
        if not isinstance(result, dict):
            return result
        chosen = self._pick(plan, metadata_partitions(result), "leader")
        if chosen is not None:
            self._move(plan, *chosen, "after the Metadata answer")
        return result

    def _follower_lag(self, plan: Plan, req: dict) -> Plan | None:
        """The followers of one partition the request names stop fetching for a while
        (FOLLOWER_LAG_MS): they stay in the ISR while replica.lag.time.max.ms allows."""
        model = self.state.faults
        if not isinstance(model, FaultModel):
            return None  # a cluster without the fault model (none pauses its followers)
        items = [(t, i) for t, i in dict.fromkeys(request_items(self.state, req))
                 if self._leads(plan.broker, t, i) and not self.state.topics[t].is_internal]
        if not items:
            return None
        topic, index = items[int(draw(self.seed, "lag", plan.client_id, plan.broker,
                                      plan.api, plan.n) * len(items))]
        p = self.state.topics[topic].partitions[index]
        followers = [b for b in p.replicas if b != p.leader]
        if not followers:
            return None
        low, high = FOLLOWER_LAG_MS
        ms = low + int(draw(self.seed, "lag-ms", plan.client_id, plan.broker, plan.n)
                       * (high - low))
        until = self.state.now() + ms
        for b in followers:
            model.followers.append(FollowerFault(b, topic, index, paused=True,
                                                 until_ms=until))
        self.state.changed()
        return self._note(plan, f"followers {followers} of {topic}-{index} stop fetching "
                          f"for {ms} ms")

    # ---- coordinators -----------------------------------------------------------------
    def _coordinator_move(self, plan: Plan, req: dict) -> Plan | None:
        services = self.services
        if services is None:
            return None
        if plan.api in _GROUP_KEYED:
            key, topic = group_key(plan.api, req), services.groups.topic
        else:
            key, topic = req.get(_TXN_KEYED[plan.api]), services.transactions.topic
        if not key or not topic.exists():
            return None
        partition = topic.partition_for(key)
        t = self.state.topics[topic.name]
        if next_leader(self.state, t.partitions[partition]) is None \
                or not self._quiet(plan, topic.name, partition, COORDINATOR_QUIET_REQUESTS):
            return None

        def move() -> bool:
            moved = move_leader(self.state, topic.name, partition)
            if moved is None:
                return False
            self._moved(plan, topic.name, partition)
            self.state.changed()
            self._note(plan, f"coordinator of {key!r} ({topic.name}-{partition}) moved "
                       f"{moved[0]} -> {moved[1]} "
                       + ("after the answer" if plan.rule.when == AFTER else
                          "before the request"))
            return True
        if plan.rule.when == AFTER:
            def after(result: Any) -> Any:
                move()
                return result
            plan.post = after
            return plan
        if t.partitions[partition].leader != plan.broker:
            return None  # the request already meets NOT_COORDINATOR: nothing to add
        return plan if move() else None

    def _zombie(self, plan: Plan, req: dict) -> Plan | None:
        """A second instance of the application fences this producer before its request
        is handled (adversary_coordinators.second_instance)."""
        tid = req.get("transactional_id")
        done = second_instance(self.services, tid) if self.services and tid else None
        if done is None:
            return None
        self.state.changed()
        return self._note(plan, done)

    def _share_lock_expiry(self, plan: Plan, req: dict) -> Plan | None:
        """The acknowledgement is held until the acknowledged records' acquisition locks
        ran out (at most KICK_MAX_HOLD_MS): they go back to be delivered again."""
        hold = share_lock_hold(self.services, req, self.state.now()) if self.services \
            else None
        if hold is None or hold[0] > KICK_MAX_HOLD_MS:
            return None
        plan.hold_ms = hold[0]
        return self._note(plan, f"the acknowledgement of {hold[1]} record(s) by member "
                          f"{req.get('member_id')!r} of share group {req.get('group_id')!r} "
                          f"held {hold[0]} ms, past their acquisition locks")

    # ---- groups -----------------------------------------------------------------------
    def _rebalance(self, plan: Plan, req: dict) -> Plan | None:
        services = self.services
        if services is None:
            return None
        group_id = req.get("group_id") if plan.api != 1 else classic_group_of(services, plan.client_id)
        if not group_id:
            return None
        now = self.state.now()
        if self.script is None and now < self.quiet_until.get(group_id, 0):
            return None  # the group's last rebalance or kick was too recent
        done = self._disrupt(plan, req, group_id, services)
        if done is not None:
            self.quiet_until[group_id] = now + (done.hold_ms + KICK_QUIET_MS
                                                if done.rule.kind == KICK else GROUP_QUIET_MS)
        return done

    def _disrupt(self, plan: Plan, req: dict, group_id: str, services: Services
                 ) -> Plan | None:
        groups = services.groups
        if plan.rule.kind == KICK:
            member = req["member_id"]  # (a decoded Heartbeat's: a string, maybe empty)
            hold = session_hold(services, group_id, member, self.state.now())
            if hold is None or hold > KICK_MAX_HOLD_MS:
                return None
            plan.hold_ms = hold
            return self._note(plan, f"the Heartbeat of member {member!r} of group "
                              f"{group_id!r} held {plan.hold_ms} ms, past its session: "
                              "the coordinator expires it")
        if not groups.classic.force_rebalance(group_id):
            return None
        return self._note(plan, f"group {group_id!r} made to rebalance")

    def _evict_session(self, plan: Plan, req: dict) -> Plan | None:
        """An incremental Fetch's session (epoch > 0) leaves the broker's cache, as other
        clients' sessions would push it out. A full Fetch (epoch 0) or a closing one
        (-1) has none to lose; session id 0 (a sessionless Fetch) is no session the
        cache holds."""
        services = self.services
        if services is None or req["session_epoch"] <= 0:
            return None
        sid = req["session_id"]
        if services.fetch_sessions.cache(plan.broker).remove(sid) is None:
            return None
        return self._note(plan, f"fetch session {sid} evicted")

    # ---- what lasts: set once at start ------------------------------------------------
    def _setting_fires(self, key: FaultKey, u: float, rate: float) -> bool:
        if self.script is not None:
            return key in self.script
        return u < rate

    def start(self) -> None:
        """The faults that are settings rather than answers, chosen by the seed when the
        cluster starts: one broker's metadata much staler than the others' (Kafka's
        envelope is tens of ms, a broker with a slow metadata publisher is behind for
        longer), coordinators that take longer to load after a move, and transaction
        markers that are sometimes slow (``marker_delay``)."""
        ids = sorted(self.state.brokers)
        if len(ids) > 1:  # (one broker has no other to be staler than)
            broker = ids[int(draw(self.seed, "stale-broker") * len(ids))]
            # (on unless scaled to 0: its rate is 1, and the draw 0)
            if self._setting_fires(("", broker, "-", 0, STALE_METADATA), 0.0,
                                   self.rate(STALE_SETTING)):
                lag = STALE_LAG_MS[0] + int(draw(self.seed, "stale-lag")
                                            * (STALE_LAG_MS[1] - STALE_LAG_MS[0]))
                self.state.metadata_views.set_lag(broker, lag, STALE_JITTER_MS)
                self._note_setting(broker, STALE_METADATA, f"broker {broker} learns "
                                   f"metadata changes {lag}-{lag + STALE_JITTER_MS} ms late")
        services = self.services
        if services is None:
            return
        for topic in (services.groups.topic, services.transactions.topic):
            topic.load_ms = max(topic.load_ms, LOAD_MS)
        txns = services.transactions
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
        rate = SLOW_MARKERS_RATE * self.scale.get(SLOW_MARKERS, 1.0) \
            * self.scale.get("all", 1.0)
        if not self.enabled or not self._setting_fires(
                (tid, -1, "EndTxn", n, SLOW_MARKERS), draw(self.seed, "markers", tid, n), rate):
            return normal
        low, high = SLOW_MARKERS_MS
        delay = low + int(draw(self.seed, "marker-ms", tid, n) * (high - low))
        f = Injected(len(self.record), self.seed, -1, tid, "EndTxn", n, SLOW_MARKERS,
                     f"markers of {tid!r}'s transaction {n} (producer {pid}) written "
                     f"{delay} ms after EndTxn")
        self._append(f)
        return max(normal, delay)

    # ---- the answers ------------------------------------------------------------------
    def snapshot(self, api: int, req: dict, broker: int) -> Snapshot | None:
        """What the soundness check needs of the state as ``broker`` gets a request."""
        return self.soundness.snapshot(api, req, broker)

    def check(self, broker: int, api: int, version: int, req: dict, result: Any,
              snap: Snapshot | None) -> None:
        """The soundness check of one answer (emulator.faults.soundness)."""
        self.soundness.check(broker, api, version, req, result, snap)

    # ---- the record ------------------------------------------------------------------
    def _note_setting(self, broker: int, kind: str, detail: str) -> None:
        self._append(Injected(len(self.record), self.seed, broker, "", "-", 0, kind, detail))

    def _append(self, f: Injected) -> None:
        self.record.append(f)
        log.info("adversary seed %d: broker %d, %s #%d from client %r: %s", f.seed, f.broker,
                 f.api, f.n, f.client_id, f.detail)

    def _note(self, plan: Plan, detail: str) -> Plan:
        self._append(Injected(len(self.record), self.seed, plan.broker, plan.client_id,
                              NAMES[plan.api], plan.n, plan.rule.kind, detail))
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
                "injected": [f.as_dict() for f in self.record], "violations": self.violations[:]}
