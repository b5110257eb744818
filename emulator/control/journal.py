"""The request journal: what each client sent and what it was answered, for tests to
assert on (docs/journal.md).

librdkafka's mock cluster keeps such a request log in process; this one is read over
the control plane, so a test in any language can say "the third OffsetCommit of group
billing was answered REBALANCE_IN_PROGRESS" or "consumer B's JoinGroup was answered
after consumer A's OffsetCommit". An entry is written when the request is answered (or
its connection closed instead), so the journal's order is the order of answers.

Off unless asked (a request then costs one attribute test), and bounded: a ring buffer
of ``capacity`` entries whose oldest fall out (``dropped`` counts them). Sans I/O: the
server (emulator.server.watch) hands it each request's facts and answer.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field

from emulator.faults.facts import Facts
from emulator.faults.match import Predicate
from wire.errors import ErrorCode

DEFAULT_CAPACITY = 10_000
MAX_CAPACITY = 1_000_000
# The names a journal query's ``match`` may use.
ENTRY_FIELDS = ("api", "api_key", "version", "broker", "client_id", "group",
                "transactional_id", "topic", "partition", "error", "seq", "outcome",
                "injected", "correlation_id")
OUTCOMES = ("answered", "no_response", "dropped", "closed")


def error_names(response: object) -> list[str]:
    """The distinct non-zero error codes anywhere in a response, by Kafka's names."""
    codes: dict[int, None] = {}

    def walk(obj: object) -> None:
        if isinstance(obj, dict):
            for k, v in obj.items():
                if k == "error_code" and isinstance(v, int) and v:
                    codes[v] = None
                elif isinstance(v, dict | list):
                    walk(v)
        elif isinstance(obj, list):
            for x in obj:
                if isinstance(x, dict | list):
                    walk(x)

    walk(response)
    out = []
    for c in codes:
        try:
            out.append(ErrorCode(c).name)
        except ValueError:
            out.append(str(c))
    return out


@dataclass
class Entry:
    """One request and its answer."""

    seq: int
    time_ms: int
    facts: Facts
    correlation_id: int
    errors: list[str]
    outcome: str
    injected: str | None = None  # the fault rule that answered it, if one did
    held_ms: int = 0

    def lookup(self, name: str) -> Sequence[object]:
        """A name of a journal query's ``match`` (``ENTRY_FIELDS``)."""
        if name == "error":
            return self.errors or ["NONE"]
        if name == "seq":
            return [self.seq]
        if name == "outcome":
            return [self.outcome]
        if name == "injected":
            return [self.injected] if self.injected else []
        if name == "correlation_id":
            return [self.correlation_id]
        return self.facts.key_field(name) or []

    def view(self) -> dict:
        f = self.facts
        return {"seq": self.seq, "time_ms": self.time_ms, "broker": f.broker,
                "client_id": f.client_id, "api": f.api, "api_key": f.api_key,
                "version": f.version, "correlation_id": self.correlation_id,
                "topics": f.topics,
                "partitions": [{"topic": t, "partition": p} for t, p in f.partitions],
                "groups": f.groups, "transactional_ids": f.transactional_ids,
                "errors": self.errors, "injected": self.injected,
                "held_ms": self.held_ms, "outcome": self.outcome}


@dataclass
class Query:
    """A journal query's filters (GET /journal's parameters); None: any."""

    api: int | None = None
    broker: int | None = None
    client_id: str | None = None
    group: str | None = None
    transactional_id: str | None = None
    topic: str | None = None
    error: str | None = None  # a Kafka error name; NONE: answered without error
    match: Predicate | None = None
    since: int = 0
    limit: int | None = None

    def selects(self, e: Entry) -> bool:
        f = e.facts
        return (e.seq >= self.since
                and (self.api is None or f.api_key == self.api)
                and (self.broker is None or f.broker == self.broker)
                and (self.client_id is None or f.client_id == self.client_id)
                and (self.group is None or self.group in f.groups)
                and (self.transactional_id is None
                     or self.transactional_id in f.transactional_ids)
                and (self.topic is None or self.topic in f.topics)
                and (self.error is None or (not e.errors if self.error == "NONE"
                                            else self.error in e.errors))
                and (self.match is None or self.match(e.lookup)))


@dataclass
class Journal:
    """The ring buffer of entries; ``enabled`` False records nothing."""

    enabled: bool = False
    capacity: int = DEFAULT_CAPACITY
    entries: deque[Entry] = field(default_factory=lambda: deque(maxlen=DEFAULT_CAPACITY))
    next_seq: int = 0
    dropped: int = 0

    def configure(self, enabled: bool, capacity: int | None = None,
                  clear: bool = False) -> None:
        if capacity is not None and capacity != self.capacity:
            self.capacity = capacity
            kept = list(self.entries)[-capacity:]
            self.dropped += len(self.entries) - len(kept)
            self.entries = deque(kept, maxlen=capacity)
        if clear or not enabled:
            self.entries.clear()
        self.enabled = enabled

    def record(self, now_ms: int, facts: Facts, correlation_id: int, errors: list[str],
               outcome: str, injected: str | None, held_ms: int) -> Entry:
        if len(self.entries) == self.capacity:
            self.dropped += 1
        e = Entry(self.next_seq, now_ms, facts, correlation_id, errors, outcome, injected,
                  held_ms)
        self.next_seq += 1
        self.entries.append(e)
        return e

    def status(self) -> dict:
        return {"enabled": self.enabled, "capacity": self.capacity,
                "size": len(self.entries), "dropped": self.dropped,
                "next_seq": self.next_seq}

    def query(self, q: Query) -> dict:
        found = [e.view() for e in self.entries if q.selects(e)]
        if q.limit is not None:
            found = found[:q.limit]
        return {**self.status(), "entries": found}


__all__ = ["DEFAULT_CAPACITY", "ENTRY_FIELDS", "MAX_CAPACITY", "Entry", "Journal", "Query",
           "error_names"]
