"""Incremental fetch sessions (KIP-227), one cache per broker, as Kafka's FetchManager.

A consumer's full fetch (session epoch 0) creates a session: the broker remembers the
partitions and their fetch positions and answers with a session id. Later requests
name the session and the next epoch and carry only what changed (new positions, added
partitions, ``forgotten_topics_data``); the broker reads every partition of the session
and answers only the partitions with something to say: records, a changed high
watermark or log start offset, an error, a diverging epoch. Partitions that answered
move to the end of the session so that a bounded response serves all in turn.

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

import random
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from wire.errors import ErrorCode as E

if TYPE_CHECKING:
    from emulator.cluster.metadata import ClusterMetadata

INITIAL_EPOCH = 0
FINAL_EPOCH = -1
INVALID_SESSION_ID = 0


def next_epoch(epoch: int) -> int:
    """Kafka's FetchMetadata.nextEpoch: 1, 2, ... wrapping past INT32_MAX to 1."""
    if epoch < 0:
        return FINAL_EPOCH
    return 1 if epoch == 0x7FFFFFFF else epoch + 1


@dataclass
class CachedPartition:
    """One partition of a session: the fetch parameters last sent, and the high
    watermark and log start offset last answered (-1: answer next time)."""

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

    def update(self, p: dict[str, Any]) -> None:
        self.fetch_offset = p["fetch_offset"]
        self.partition_max_bytes = p["partition_max_bytes"]
        self.current_leader_epoch = p["current_leader_epoch"]
        self.last_fetched_epoch = p["last_fetched_epoch"]
        self.log_start_offset = p["log_start_offset"]

    def must_respond(self, resp: dict[str, Any]) -> bool:
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


Key = tuple[object, int]  # (topic name, or topic id from v13; partition)


@dataclass(eq=False)
class FetchSession:
    id: int
    privileged: bool
    uses_topic_ids: bool
    created_ms: int
    last_used_ms: int
    epoch: int = 1
    partitions: dict[Key, CachedPartition] = field(default_factory=dict)

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


class FetchSessionCache:
    """The sessions of one broker."""

    def __init__(self, max_slots: int, eviction_ms: int, rng: random.Random) -> None:
        self.max_slots = max_slots
        self.eviction_ms = eviction_ms
        self.rng = rng
        self.sessions: dict[int, FetchSession] = {}
        self.evictions = 0

    def get(self, session_id: int) -> FetchSession | None:
        return self.sessions.get(session_id)

    def remove(self, session_id: int) -> FetchSession | None:
        return self.sessions.pop(session_id, None)

    def touch(self, session: FetchSession, now: int) -> None:
        session.last_used_ms = now

    def maybe_create(self, now: int, privileged: bool, uses_topic_ids: bool,
                     partitions: dict[Key, CachedPartition]) -> int:
        """A new session's id, or INVALID_SESSION_ID when there is no room for it."""
        if len(self.sessions) >= self.max_slots and not self._try_evict(
                privileged, len(partitions), now):
            return INVALID_SESSION_ID
        session_id = self._new_id()
        self.sessions[session_id] = FetchSession(
            session_id, privileged, uses_topic_ids, now, now, partitions=partitions)
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
            del self.sessions[lru.id]
            self.evictions += 1
            return True
        candidates = [s for s in self.sessions.values() if privileged or not s.privileged]
        if not candidates:
            return False
        smallest = min(candidates, key=FetchSession.eviction_key)
        if (privileged, size, 0) < smallest.eviction_key():
            return False  # the new session is worth less than any it could replace
        del self.sessions[smallest.id]
        self.evictions += 1
        return True


@dataclass
class FetchContext:
    """What one Fetch request reads and how its answer is shaped (Kafka's FetchContext).

    ``kind``: "sessionless", "full" (opens a session when answered) or "incremental".
    ``partitions`` are read in order; ``error`` is a top-level session error.
    """

    kind: str
    partitions: list[CachedPartition]
    session: FetchSession | None = None
    error: int = E.NONE


def _key(uses_topic_ids: bool, topic: dict[str, Any], partition: int) -> Key:
    return (topic["topic_id"] if uses_topic_ids else topic["topic"], partition)


def new_context(cache: FetchSessionCache, req: dict[str, Any], version: int, now: int,
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
            session.partitions[key] = cp
        else:
            have.update({"fetch_offset": cp.fetch_offset,
                         "partition_max_bytes": cp.partition_max_bytes,
                         "current_leader_epoch": cp.current_leader_epoch,
                         "last_fetched_epoch": cp.last_fetched_epoch,
                         "log_start_offset": cp.log_start_offset})
    for t in req["forgotten_topics_data"]:
        for index in t["partitions"]:
            session.partitions.pop(_key(uses_ids, t, index), None)
    if not session.partitions:
        cache.remove(session.id)
        return FetchContext("sessionless", list(wanted.values()))
    cache.touch(session, now)
    session.epoch = next_epoch(session.epoch)
    return FetchContext("incremental", list(session.partitions.values()), session)


def finish(cache: FetchSessionCache, ctx: FetchContext, answers: list[dict[str, Any]],
           now: int, privileged: bool, uses_topic_ids: bool
           ) -> tuple[int, list[tuple[CachedPartition, dict[str, Any]]]]:
    """(response session id, the (partition, answer) pairs to send), once per request.

    ``answers`` are the per-partition answers, in ``ctx.partitions`` order.
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
        return sid, pairs
    session = ctx.session
    assert session is not None
    sent = [(cp, resp) for cp, resp in pairs if cp.must_respond(resp)]
    for cp, _ in sent:  # answered partitions go to the back of the line
        key = (cp.topic_id if session.uses_topic_ids else cp.topic, cp.partition)
        session.partitions[key] = session.partitions.pop(key)
    return session.id, sent


class FetchSessions:
    """Every broker's cache (a session lives on the broker that created it)."""

    def __init__(self, state: ClusterMetadata) -> None:
        self.state = state
        self.caches: dict[int, FetchSessionCache] = {}

    def cache(self, broker_id: int) -> FetchSessionCache:
        cache = self.caches.get(broker_id)
        if cache is None:
            cfg = self.state.config
            cache = self.caches[broker_id] = FetchSessionCache(
                int(cfg.get("max.incremental.fetch.session.cache.slots", 1000)),
                int(cfg.get("min.incremental.fetch.session.eviction.ms", 120000)),
                self.state.rng)
        return cache
