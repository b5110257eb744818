"""Incremental fetch sessions (KIP-227), one cache per broker, as Kafka's FetchManager.

A consumer's full fetch (session epoch 0) creates a session: the broker remembers the
partitions and their fetch positions and answers with a session id. Later requests
name the session and the next epoch and carry only what changed (new positions, added
partitions, ``forgotten_topics_data``); the broker answers only the partitions with
something to say: records, a changed high watermark or log start offset, an error, a
diverging epoch. Partitions that answered move to the end of the session so that a
bounded response serves all in turn.

An incremental fetch reads only the partitions that may have something to say
(docs/CONTRIBUTING.md, "Cost follows what changed"): those the request named, those
whose last answer had records, an error or a diverging epoch or left records unread
(``FetchSession.pending``), and those the cluster changed since (``SessionWatch``:
``ClusterMetadata.changed(keys=...)`` marks the sessions holding a changed partition). A
partition none of these concern would answer what it answered last time, which the
session already sent, so it is left out without being read. A change that names no
partition, new read parameters (isolation level, version, the topics the principal may
read) or stale broker metadata views make the next fetch read every partition once, as
before. An idle consumer's fetch of 1,000 partitions reads none (docs/scale.md).

Request metadata, as Kafka's FetchMetadata reads it:

    epoch 0,  id 0      full fetch, open a new session
    epoch 0,  id N      full fetch: close session N, open a new one
    epoch -1, id 0      full fetch without a session (the pre-KIP-227 way)
    epoch -1, id N      close session N, full fetch without a session
    epoch E>0, id N     incremental fetch of session N: FETCH_SESSION_ID_NOT_FOUND if the
                        cache has no N, INVALID_FETCH_SESSION_EPOCH unless E is the
                        session's next epoch, FETCH_SESSION_TOPIC_ID_ERROR when the
                        request's naming (topic ids from v13) differs from the session's

The cache holds ``max.incremental.fetch.session.cache.slots`` sessions (Kafka's 1000).
When full, a new session takes the slot of the least recently used session idle for
more than ``min.incremental.fetch.session.eviction.ms`` (120 s), else of the smallest
session if the new one has more partitions (followers' sessions, "privileged", first
evict consumers' ones); otherwise it is not created and the response carries session
id 0, which clients answer with full fetches. Differs from Kafka: one cache per broker
rather than Kafka's shards of it.

Pure domain code: time comes from the caller, ids from the cluster's seeded generator.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Collection
from dataclasses import dataclass, field
from operator import attrgetter
from typing import TYPE_CHECKING, NotRequired, TypedDict

from wire.errors import ErrorCode as E

if TYPE_CHECKING:
    from emulator.cluster.metadata import ChangeKey, ClusterMetadata

INITIAL_EPOCH = 0
FINAL_EPOCH = -1
INVALID_SESSION_ID = 0


# ---- the Fetch request and answer, as this module reads them ----------------------------
# The codec decodes a request into a plain dict (wire/messages/fetch.py declares every
# field of every version); the sessions name here the fields they read of it and of the
# handler's per-partition answers, so that mypy checks each (the handler hands them
# over cast to these types).
class FetchPosition(TypedDict):
    """Where a consumer reads one partition from, and how much (FetchPartition's
    fields a session keeps)."""

    fetch_offset: int
    partition_max_bytes: int
    current_leader_epoch: int
    last_fetched_epoch: int
    log_start_offset: int


class FetchPartitionRequest(FetchPosition):
    partition: int


class TopicRef(TypedDict):
    """A topic of the request: by name before v13, by id from v13."""

    topic: NotRequired[str]
    topic_id: NotRequired[bytes]


class FetchTopicRequest(TopicRef):
    partitions: list[FetchPartitionRequest]


class ForgottenTopic(TopicRef):
    partitions: list[int]


class FetchRequest(TypedDict):
    session_id: NotRequired[int]  # v7+
    session_epoch: NotRequired[int]  # v7+
    topics: list[FetchTopicRequest]
    forgotten_topics_data: list[ForgottenTopic]


class EpochEndOffset(TypedDict):
    """Where the consumer's log diverges from the leader's (DivergingEpoch, v12+)."""

    epoch: int
    end_offset: int


class PartitionAnswer(TypedDict):
    """A partition's entry of the Fetch response, the fields a session reads (the
    handler's entry has the others too; ``diverging_epoch`` is read for its presence
    only)."""

    error_code: int
    high_watermark: int
    log_start_offset: int
    last_stable_offset: NotRequired[int]
    records: NotRequired[bytes | None]
    diverging_epoch: NotRequired[EpochEndOffset]
    preferred_read_replica: NotRequired[int]


def next_epoch(epoch: int) -> int:
    """Kafka's FetchMetadata.nextEpoch: 1, 2, ... wrapping past INT32_MAX to 1."""
    if epoch < 0:
        return FINAL_EPOCH
    return 1 if epoch == 0x7FFFFFFF else epoch + 1


@dataclass(eq=False)  # by identity: a session keeps its partitions in sets too
class CachedPartition:
    """One partition of a session: the fetch parameters last sent, and the high
    watermark and log start offset last answered (-1: answer next time). ``seq`` is its
    place in the session's order (``FetchSession.partitions``'), which answered
    partitions leave for the back."""

    topic: str | None  # None: an unknown topic id
    topic_id: bytes
    partition: int
    fetch_offset: int
    partition_max_bytes: int
    current_leader_epoch: int = -1
    last_fetched_epoch: int = -1
    log_start_offset: int = -1
    high_watermark: int = -1
    answered_log_start_offset: int = -1
    seq: int = 0

    def update(self, p: FetchPosition) -> None:
        self.fetch_offset = p["fetch_offset"]
        self.partition_max_bytes = p["partition_max_bytes"]
        self.current_leader_epoch = p["current_leader_epoch"]
        self.last_fetched_epoch = p["last_fetched_epoch"]
        self.log_start_offset = p["log_start_offset"]

    def must_respond(self, resp: PartitionAnswer) -> bool:
        """Kafka's CachedPartition.maybeUpdateResponseData, with the update."""
        must = bool(resp.get("records")) or "diverging_epoch" in resp
        if resp["high_watermark"] != self.high_watermark:
            must = True
            self.high_watermark = resp["high_watermark"]
        if resp["log_start_offset"] != self.answered_log_start_offset:
            must = True
            self.answered_log_start_offset = resp["log_start_offset"]
        if resp["error_code"] != E.NONE:
            must = True
            self.high_watermark = -1  # answer again once the error is gone
        return must


def quiet(cp: CachedPartition, resp: PartitionAnswer, isolation: int) -> bool:
    """Whether reading ``cp`` again, the cluster unchanged, would answer what
    ``resp`` answered and that answer is already sent: no records, error or diverging
    epoch, and nothing to read at its fetch offset (below the high watermark, or the
    last stable offset under read_committed). A partition with records left unread
    (the response's byte limit, or its own) is not quiet."""
    if resp["error_code"] != E.NONE or resp.get("records") or "diverging_epoch" in resp \
            or resp.get("preferred_read_replica", -1) >= 0:
        return False
    limit = resp["high_watermark"]
    if isolation == 1:
        limit = resp.get("last_stable_offset", limit)
    return bool(cp.fetch_offset >= limit)


Key = tuple[object, int]  # (topic name, or topic id from v13; partition)
_SEQ = attrgetter("seq")


@dataclass(eq=False)
class FetchSession:
    """``pending``: the partitions the next incremental fetch must read besides those the
    cluster marks meanwhile (module docstring); ``params`` and ``generation``: the read
    parameters and ``SessionWatch.generation`` of the last answer, either differing
    makes the next fetch read every partition. ``visits`` counts the partitions
    incremental fetches read (tests/test_fetch_session_cost.py)."""

    id: int
    privileged: bool
    uses_topic_ids: bool
    created_ms: int
    last_used_ms: int
    epoch: int = 1
    partitions: dict[Key, CachedPartition] = field(default_factory=dict)
    pending: set[CachedPartition] = field(default_factory=set)
    topics: dict[str | None, int] = field(default_factory=dict)  # topic -> partitions
    next_seq: int = 0
    params: object = None  # opaque here: only compared with the next request's
    generation: int = -1
    wake_key: tuple[str, int] = ("fetch session", 0)
    visits: int = 0

    @property
    def size(self) -> int:
        return len(self.partitions)

    def eviction_key(self) -> tuple[bool, int, int]:
        """Kafka's EvictableKey order: (privileged, size, id)."""
        return (self.privileged, self.size, self.id)


class FetchSessionError(Exception):
    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


class SessionWatch:
    """Which sessions hold which partitions, so that a change marks only the sessions
    it concerns (``ClusterMetadata.key_watchers``), and the wake-up key of each session
    (a long-polling incremental fetch waits on its session's key, not on each of its
    partitions). A change naming no partition bumps ``generation``: every session then
    reads all its partitions once."""

    def __init__(self) -> None:
        # (topic, partition) -> the sessions' partitions for it, and their sessions
        self.holders: dict[tuple[str, int], dict[CachedPartition, FetchSession]] = {}
        self.generation = 0
        self._ids = itertools.count(1)

    def wake_key(self) -> tuple[str, int]:
        # not a partition's key: a topic name has no space
        return ("fetch session", next(self._ids))

    def add(self, session: FetchSession, cp: CachedPartition) -> None:
        if cp.topic is not None:
            self.holders.setdefault((cp.topic, cp.partition), {})[cp] = session

    def discard(self, cp: CachedPartition) -> None:
        if cp.topic is None:
            return
        key = (cp.topic, cp.partition)
        held = self.holders.get(key)
        if held is not None:
            held.pop(cp, None)
            if not held:
                del self.holders[key]

    def note(self, keys: Collection[ChangeKey] | None) -> set[ChangeKey]:
        """The cluster changed ``keys`` (None: anything): mark the sessions holding
        them; returns their wake-up keys. Costs what changed: the keys looked up (in C,
        ``dict.keys() &``), the partitions of sessions holding them marked."""
        if keys is None:
            self.generation += 1
            return set()
        holders = self.holders
        if not holders or not keys:
            return set()
        wake: set[ChangeKey] = set()
        for k in holders.keys() & keys:
            for cp, session in holders[k].items():
                session.pending.add(cp)
                wake.add(session.wake_key)
        return wake


class FetchSessionCache:
    """The sessions of one broker."""

    def __init__(self, max_slots: int, eviction_ms: int, rng: random.Random,
                 watch: SessionWatch | None = None) -> None:
        self.max_slots = max_slots
        self.eviction_ms = eviction_ms
        self.rng = rng
        self.watch = watch if watch is not None else SessionWatch()
        self.sessions: dict[int, FetchSession] = {}
        self.evictions = 0

    def get(self, session_id: int) -> FetchSession | None:
        return self.sessions.get(session_id)

    def remove(self, session_id: int) -> FetchSession | None:
        session = self.sessions.pop(session_id, None)
        if session is not None:
            self._unwatch(session)
        return session

    def _unwatch(self, session: FetchSession) -> None:
        for cp in session.partitions.values():
            self.watch.discard(cp)

    def add_partition(self, session: FetchSession, key: Key, cp: CachedPartition) -> None:
        """A partition joins the session, at its end; the next fetch reads it."""
        cp.seq = session.next_seq
        session.next_seq += 1
        session.partitions[key] = cp
        session.topics[cp.topic] = session.topics.get(cp.topic, 0) + 1
        session.pending.add(cp)
        self.watch.add(session, cp)

    def forget_partition(self, session: FetchSession, key: Key) -> None:
        cp = session.partitions.pop(key, None)
        if cp is None:
            return
        left = session.topics[cp.topic] - 1
        if left:
            session.topics[cp.topic] = left
        else:
            del session.topics[cp.topic]
        session.pending.discard(cp)
        self.watch.discard(cp)

    def touch(self, session: FetchSession, now: int) -> None:
        session.last_used_ms = now

    def maybe_create(self, now: int, privileged: bool, uses_topic_ids: bool,
                     partitions: dict[Key, CachedPartition]) -> int:
        """A new session's id, or INVALID_SESSION_ID when there is no room for it."""
        if len(self.sessions) >= self.max_slots and not self._try_evict(
                privileged, len(partitions), now):
            return INVALID_SESSION_ID
        session_id = self._new_id()
        session = self.sessions[session_id] = FetchSession(
            session_id, privileged, uses_topic_ids, now, now,
            generation=self.watch.generation, wake_key=self.watch.wake_key())
        for key, cp in partitions.items():
            self.add_partition(session, key, cp)
        return session_id

    def _new_id(self) -> int:
        while True:
            sid = self.rng.randint(1, 0x7FFFFFFF)
            if sid not in self.sessions:
                return sid

    def _try_evict(self, privileged: bool, size: int, now: int) -> bool:
        """Kafka's FetchSessionCache.tryEvict."""
        if not self.sessions:
            return False
        lru = min(self.sessions.values(), key=lambda s: s.last_used_ms)
        if lru.last_used_ms + self.eviction_ms < now:
            self.remove(lru.id)
            self.evictions += 1
            return True
        candidates = [s for s in self.sessions.values() if privileged or not s.privileged]
        if not candidates:
            return False
        smallest = min(candidates, key=FetchSession.eviction_key)
        if (privileged, size, 0) < smallest.eviction_key():
            return False  # the new session is worth less than any it could replace
        self.remove(smallest.id)
        self.evictions += 1
        return True


@dataclass
class FetchContext:
    """What one Fetch request reads and how its answer is shaped (Kafka's FetchContext).

    ``kind``: "sessionless", "full" (opens a session when answered) or "incremental".
    ``partitions`` are read in order (an incremental fetch's are chosen by ``select``
    before each read); ``error`` is a top-level session error.
    """

    kind: str
    partitions: list[CachedPartition]
    session: FetchSession | None = None
    error: int = E.NONE
    watch: SessionWatch | None = None
    params: object = None  # of the last ``select``: remembered by the session when answered
    isolation: int = 0

    def topic_names(self) -> set[str]:
        """The topics this fetch may read: every topic of the session when incremental
        (counted as partitions come and go, not walked)."""
        if self.kind == "incremental" and self.session is not None:
            return {t for t in self.session.topics if t is not None}
        return {cp.topic for cp in self.partitions if cp.topic is not None}

    def select(self, params: object, isolation: int, settled: bool = True
               ) -> list[CachedPartition]:
        """The partitions to read now, in the session's order (``partitions``).

        ``params``: what else a partition's answer depends on, from the request and the
        broker (the handler's version, isolation level, whether a follower may answer,
        the topics denied); ``settled``: whether the broker's metadata views are the
        controller's (stale ones answer by time, with no change to mark). An incremental
        fetch reads the session's pending and marked partitions, or all of them after a
        change that named none, with other ``params``, or unsettled views. Called again
        for each read of a long-polling fetch: marks arrive while it waits."""
        self.params, self.isolation = params, isolation
        s = self.session
        if self.kind != "incremental" or s is None:
            return self.partitions
        watch = self.watch
        if not settled or s.params != params or (watch is not None
                                                  and s.generation != watch.generation):
            parts = list(s.partitions.values())
        else:
            parts = sorted(s.pending, key=_SEQ) if s.pending else []
        s.visits += len(parts)
        self.partitions = parts
        return parts

    def wake_keys(self) -> frozenset[ChangeKey]:
        """What a long-polling fetch waits on: its partitions, or its session's key (the
        session's partitions' changes wake it, ``SessionWatch.note``)."""
        if self.kind == "incremental" and self.session is not None:
            return frozenset((self.session.wake_key,))
        keys: set[ChangeKey] = set()
        for cp in self.partitions:
            if cp.topic is not None:
                keys.add((cp.topic, cp.partition))
        return frozenset(keys)


def _key(uses_topic_ids: bool, topic: TopicRef, partition: int) -> Key:
    return (topic["topic_id"] if uses_topic_ids else topic["topic"], partition)


def new_context(cache: FetchSessionCache, req: FetchRequest, version: int, now: int,
                resolve: dict[bytes, str | None]) -> FetchContext:
    """Kafka's FetchManager.newContext: the request's session metadata applied.

    ``resolve`` maps topic ids to names (v13+); an unknown id stays None and answers
    UNKNOWN_TOPIC_ID.
    """
    uses_ids = version >= 13
    session_id = req["session_id"] if version >= 7 else 0
    epoch = req["session_epoch"] if version >= 7 else FINAL_EPOCH
    wanted: dict[Key, CachedPartition] = {}
    for t in req["topics"]:
        name = resolve.get(t["topic_id"]) if uses_ids else t["topic"]
        for p in t["partitions"]:
            cp = CachedPartition(name, t.get("topic_id") or bytes(16), p["partition"],
                                 p["fetch_offset"], p["partition_max_bytes"])
            cp.update(p)
            wanted[_key(uses_ids, t, p["partition"])] = cp
    if epoch in (INITIAL_EPOCH, FINAL_EPOCH):
        if session_id != INVALID_SESSION_ID:
            cache.remove(session_id)
        kind = "sessionless" if epoch == FINAL_EPOCH else "full"
        return FetchContext(kind, list(wanted.values()))
    session = cache.get(session_id)
    if session is None:
        return FetchContext("error", [], error=E.FETCH_SESSION_ID_NOT_FOUND)
    if session.epoch != epoch:
        return FetchContext("error", [], error=E.INVALID_FETCH_SESSION_EPOCH)
    if session.uses_topic_ids != uses_ids:
        return FetchContext("error", [], error=E.FETCH_SESSION_TOPIC_ID_ERROR)
    for key, cp in wanted.items():
        have = session.partitions.get(key)
        if have is None:
            cache.add_partition(session, key, cp)
        else:
            have.update({"fetch_offset": cp.fetch_offset,
                         "partition_max_bytes": cp.partition_max_bytes,
                         "current_leader_epoch": cp.current_leader_epoch,
                         "last_fetched_epoch": cp.last_fetched_epoch,
                         "log_start_offset": cp.log_start_offset})
            session.pending.add(have)
    for ft in req["forgotten_topics_data"]:
        for index in ft["partitions"]:
            cache.forget_partition(session, _key(uses_ids, ft, index))
    if not session.partitions:
        cache.remove(session.id)
        return FetchContext("sessionless", list(wanted.values()))
    cache.touch(session, now)
    session.epoch = next_epoch(session.epoch)
    return FetchContext("incremental", [], session, watch=cache.watch)


def finish(cache: FetchSessionCache, ctx: FetchContext, answers: list[PartitionAnswer],
           now: int, privileged: bool, uses_topic_ids: bool
           ) -> tuple[int, list[tuple[CachedPartition, PartitionAnswer]]]:
    """(response session id, the (partition, answer) pairs to send), once per request.

    ``answers`` are the per-partition answers, in ``ctx.partitions`` order (what
    ``select`` chose). The session remembers what it sent, which partitions the next
    fetch must read again (``quiet``), and the parameters of this read.
    """
    pairs = list(zip(ctx.partitions, answers, strict=True))
    if ctx.kind == "sessionless":
        return INVALID_SESSION_ID, pairs
    if ctx.kind == "full":
        for cp, resp in pairs:
            cp.must_respond(resp)  # remember what this answer told the client
        sid = cache.maybe_create(now, privileged, uses_topic_ids,
                                 {(cp.topic_id if uses_topic_ids else cp.topic, cp.partition): cp
                                  for cp in ctx.partitions})
        created = cache.get(sid)
        if created is not None:
            created.pending = {cp for cp, resp in pairs if not quiet(cp, resp, ctx.isolation)}
            created.params = ctx.params
        return sid, pairs
    session = ctx.session
    assert session is not None
    sent = [(cp, resp) for cp, resp in pairs if cp.must_respond(resp)]
    for cp, _ in sent:  # answered partitions go to the back of the line
        key = (cp.topic_id if session.uses_topic_ids else cp.topic, cp.partition)
        session.partitions[key] = session.partitions.pop(key)
        cp.seq = session.next_seq
        session.next_seq += 1
    pending = session.pending
    pending.difference_update(ctx.partitions)
    isolation = ctx.isolation
    for cp, resp in pairs:
        if not quiet(cp, resp, isolation):
            pending.add(cp)
    session.params = ctx.params
    if ctx.watch is not None:
        session.generation = ctx.watch.generation
    return session.id, sent


class FetchSessions:
    """Every broker's cache (a session lives on the broker that created it)."""

    def __init__(self, state: ClusterMetadata) -> None:
        self.state = state
        self.caches: dict[int, FetchSessionCache] = {}
        self.watch = SessionWatch()
        state.key_watchers.append(self.watch.note)

    def cache(self, broker_id: int) -> FetchSessionCache:
        cache = self.caches.get(broker_id)
        if cache is None:
            cfg = self.state.config
            cache = self.caches[broker_id] = FetchSessionCache(
                int(cfg.get("max.incremental.fetch.session.cache.slots", 1000)),
                int(cfg.get("min.incremental.fetch.session.eviction.ms", 120000)),
                self.state.rng, self.watch)
        return cache
