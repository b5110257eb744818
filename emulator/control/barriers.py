"""Barriers: hold the requests a test names until it releases them (docs/journal.md).

A race between two clients ("consumer B joins while consumer A commits") happens on a
real cluster one time in a hundred; a barrier makes it happen every time. It selects
requests as a fault rule does (API, broker, client id, group, transactional id, topic,
a predicate of the match language) and holds each one it catches before the broker
serves it; the test waits until the barrier holds what it expects, makes the other
client act, then releases. A held request is served as it would have been, only later.

Sans I/O: ``arrive`` says whether a request is held and keeps its release callback; the
server (emulator.server.watch) makes that callback wake the request's coroutine.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from emulator.faults.facts import Facts
from emulator.faults.match import Predicate
from emulator.faults.ops import FaultError
from wire.messages import NAMES


@dataclass
class Held:
    """One held request: who sent what, and how to let it go."""

    facts: Facts
    since_ms: int
    release: Callable[[], None]

    def view(self, now_ms: int) -> dict:
        f = self.facts
        return {"api": f.api, "broker": f.broker, "client_id": f.client_id,
                "held_ms": max(0, now_ms - self.since_ms)}


@dataclass
class Barrier:
    id: str
    api: int | None = None
    broker: int | None = None
    client_id: str | None = None
    group: str | None = None
    transactional_id: str | None = None
    topic: str | None = None
    match: Predicate | None = None
    count: int | None = None  # hold only the first N it selects; None: every one
    caught: int = 0
    released: int = 0
    holding: list[Held] = field(default_factory=list)

    @property
    def active(self) -> bool:
        return self.count is None or self.caught < self.count

    def selects(self, f: Facts) -> bool:
        return ((self.api is None or self.api == f.api_key)
                and (self.broker is None or self.broker == f.broker)
                and (self.client_id is None or self.client_id == f.client_id)
                and (self.group is None or self.group in f.groups)
                and (self.transactional_id is None
                     or self.transactional_id in f.transactional_ids)
                and (self.topic is None or self.topic in f.topics)
                and (self.match is None or self.match(f.lookup)))

    def release_some(self, count: int | None) -> int:
        """Let the oldest ``count`` held requests go (None: all); how many went."""
        n = len(self.holding) if count is None else min(count, len(self.holding))
        going, self.holding = self.holding[:n], self.holding[n:]
        for h in going:
            h.release()
        self.released += n
        return n

    def view(self, now_ms: int) -> dict:
        return {"id": self.id, "api": self.api,
                "api_name": NAMES.get(self.api) if self.api is not None else None,
                "broker": self.broker, "client_id": self.client_id, "group": self.group,
                "transactional_id": self.transactional_id, "topic": self.topic,
                "match": self.match.text if self.match else None, "count": self.count,
                "held": len(self.holding), "caught": self.caught, "released": self.released,
                "active": self.active, "holding": [h.view(now_ms) for h in self.holding]}


@dataclass
class Barriers:
    """Every barrier, by id; the first active one that selects a request holds it."""

    barriers: dict[str, Barrier] = field(default_factory=dict)
    next_id: int = 1

    def add(self, b: Barrier) -> Barrier:
        if not b.id:
            while f"b{self.next_id}" in self.barriers:
                self.next_id += 1
            b.id = f"b{self.next_id}"
            self.next_id += 1
        if b.id in self.barriers:
            raise FaultError(f"a barrier {b.id!r} exists already", 409)
        self.barriers[b.id] = b
        return b

    def get(self, bid: str) -> Barrier:
        b = self.barriers.get(bid)
        if b is None:
            raise FaultError(f"unknown barrier {bid!r}; barriers are "
                             f"{', '.join(self.barriers) or 'none'}", 404)
        return b

    def remove(self, bid: str) -> Barrier:
        b = self.get(bid)
        b.release_some(None)
        del self.barriers[bid]
        return b

    def arrive(self, facts: Facts, now_ms: int,
               release: Callable[[], None]) -> Barrier | None:
        """The barrier holding this request (it keeps ``release``), or None: go on."""
        for b in self.barriers.values():
            if b.active and b.selects(facts):
                b.caught += 1
                b.holding.append(Held(facts, now_ms, release))
                return b
        return None

    def release_all(self) -> None:
        for b in self.barriers.values():
            b.release_some(None)
        self.barriers.clear()


__all__ = ["Barrier", "Barriers", "Held"]
