"""What a test watches and waits for on a running cluster: the request journal, the
barriers that hold requests, and the waits (a rule's hits, a group's state, a
barrier's held requests) behind the control plane's long-polls (docs/journal.md,
docs/faults.md "Fault rules").

The journal, the barriers and the rules are sans-I/O data (emulator.control.journal,
emulator.control.barriers, emulator.faults.rules); this module is where a held request
waits and a long-poll sleeps, on the cluster's event loop. The dispatcher asks
``active`` per request (one attribute test when nothing is watched), then ``arrive``
before serving it and ``answered`` after.

A wait re-checks its condition whenever there is news (a request answered, a rule hit,
a request held) and at least every ``RECHECK_S``, since a group also changes on its own
timers (a session expiring).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from emulator.control.barriers import Barrier, Barriers
from emulator.control.journal import ENTRY_FIELDS, MAX_CAPACITY, Journal, Query, error_names
from emulator.faults.facts import Facts, request_facts
from emulator.faults.ops import FaultError
from emulator.faults.rules import RuledFaultModel, RuleInjection, parse_match
from wire.errors import ErrorCode, KafkaError

if TYPE_CHECKING:
    from emulator.cluster.state import ClusterState
    from emulator.coordinators.groups.coordinator import GroupCoordinator

log = logging.getLogger("kafka_emulator.watch")
RECHECK_S = 0.05
MAX_WAIT_MS = 60_000


@dataclass
class Visit:
    """One request between ``arrive`` and ``answered``."""

    facts: Facts
    held_ms: int = 0


class Watch:
    """The journal, the barriers and the waits of one running cluster."""

    def __init__(self, state: ClusterState, model: RuledFaultModel,
                 groups: Callable[[], GroupCoordinator | None]) -> None:
        self.state = state
        self.model = model
        self.groups = groups
        self.journal = Journal()
        self.barriers = Barriers()
        self._news = asyncio.Event()
        model.rules.on_hit.append(lambda rule: self.poke())

    @property
    def active(self) -> bool:
        """Does a request need to be looked at (journal on, or a barrier up)?"""
        return self.journal.enabled or bool(self.barriers.barriers)

    def poke(self) -> None:
        """Wake every wait to re-check its condition."""
        self._news.set()
        self._news = asyncio.Event()

    # ---- the dispatcher's hooks ----------------------------------------------------------
    async def arrive(self, broker: int, api_key: int, version: int, client_id: str | None,
                     request: dict) -> Visit:
        """Before a request is served: hold it while a barrier catches it."""
        facts = request_facts(self.state, broker, api_key, version, client_id, request)
        visit = Visit(facts)
        if not self.barriers.barriers:
            return visit
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        def release() -> None:
            if not future.done():
                future.set_result(None)

        since = self.state.now()
        barrier = self.barriers.arrive(facts, since, release)
        if barrier is None:
            return visit
        log.info("barrier %s: holding %s from %r on broker %d", barrier.id, facts.api,
                 client_id, broker)
        self.poke()
        try:
            await future
        except asyncio.CancelledError:  # the connection went away while held
            barrier.holding = [h for h in barrier.holding if h.release is not release]
            raise
        visit.held_ms = max(0, self.state.now() - since)
        return visit

    def answered(self, visit: Visit, correlation_id: int, response: object, outcome: str,
                 injected: object = None) -> None:
        """After a request is answered (or its connection closed instead)."""
        if self.journal.enabled:
            rule = injected.rule if isinstance(injected, RuleInjection) else None
            self.journal.record(self.state.now(), visit.facts, correlation_id,
                                error_names(response), outcome, rule, visit.held_ms)
        self.poke()

    def close(self) -> None:
        """The cluster stops: every held request goes on (to find its connection gone)."""
        self.barriers.release_all()

    # ---- waits ----------------------------------------------------------------------------
    async def until(self, ready: Callable[[], bool], timeout_ms: int) -> bool:
        """Wait until ``ready()`` or the timeout; whether it became ready."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + min(timeout_ms, MAX_WAIT_MS) / 1000
        while not ready():
            left = deadline - loop.time()
            if left <= 0:
                return False
            try:
                await asyncio.wait_for(self._news.wait(), min(left, RECHECK_S))
            except TimeoutError:
                pass
        return True

    def group_view(self, group_id: str) -> dict | None:
        """A group as the waits and GET /groups/{group} see it; None: no such group."""
        gc = self.groups()
        group = gc.groups.peek(group_id) if gc is not None else None
        if gc is None or group is None:
            return None
        try:
            coordinator: int | None = gc.topic.coordinator_for(group_id, create=False)
        except KafkaError:
            coordinator = None
        members = [{"member_id": m.member_id, "client_id": getattr(m, "client_id", None),
                    "group_instance_id": getattr(m, "group_instance_id", None)
                    or getattr(m, "instance_id", None)} for m in group.members.values()]
        generation = getattr(group, "generation_id", None)
        if generation is None:
            generation = getattr(group, "group_epoch", None)
        return {"group": group_id, "type": group.type, "state": group.state,
                "generation": generation, "members": members, "coordinator": coordinator}




# ---- the operations of the table (emulator.control.operations) served here ---------------
WATCH_OPS = ("rules", "rule", "remove_rule", "wait_rule", "group", "wait_group", "journal",
             "journal_on", "journal_off", "barriers", "add_barrier", "barrier", "wait_barrier",
             "release_barrier", "remove_barrier")
DEFAULT_TIMEOUT_MS = 10_000


def _positive(f: dict[str, Any], name: str, default: int) -> int:
    value = f.get(name, default)
    if not isinstance(value, int) or value < 1:
        raise FaultError(f"{name} must be at least 1, got {value!r}")
    return value


async def run(watch: Watch, name: str, f: dict[str, Any]) -> dict:
    """One operation, its fields checked (``check_fields``); FaultError for a refusal."""
    rules = watch.model.rules
    timeout = min(f.get("timeout_ms", DEFAULT_TIMEOUT_MS), MAX_WAIT_MS)
    if name == "rules":
        return {"rules": rules.describe()}
    if name == "rule":
        return rules.get(f["rule"]).view()
    if name == "remove_rule":
        return {"removed": rules.remove(f["rule"]).view()}
    if name == "wait_rule":
        rule, hits = rules.get(f["rule"]), _positive(f, "hits", 1)
        reached = await watch.until(lambda: rule.hits >= hits, timeout)
        return {"reached": reached, "rule": rule.view()}
    if name in ("group", "wait_group"):
        return await _group(watch, name, f, timeout)
    if name.startswith("journal"):
        return _journal(watch, name, f)
    return await _barrier(watch, name, f, timeout)


async def _group(watch: Watch, name: str, f: dict[str, Any], timeout: int) -> dict:
    gid = f["group"]
    if name == "group":
        view = watch.group_view(gid)
        if view is None:
            raise FaultError(f"unknown group {gid!r}", 404)
        return view
    state = str(f.get("state", "Stable"))
    members = f.get("members")

    def ready() -> bool:
        v = watch.group_view(gid)
        return v is not None and str(v["state"]).lower() == state.lower() and (
            members is None or len(v["members"]) == members)

    reached = await watch.until(ready, timeout)
    return {"reached": reached, "group": watch.group_view(gid)}


def _journal(watch: Watch, name: str, f: dict[str, Any]) -> dict:
    j = watch.journal
    if name == "journal_off":
        j.configure(False)
        return j.status()
    if name == "journal_on":
        capacity = f.get("capacity")
        if capacity is not None and not 1 <= capacity <= MAX_CAPACITY:
            raise FaultError(f"capacity must be 1 to {MAX_CAPACITY}, got {capacity}")
        j.configure(True, capacity, bool(f.get("clear")))
        return j.status()
    q = Query(f.get("api"), f.get("broker"), f.get("client_id"), f.get("group"),
              f.get("transactional_id"), f.get("topic"), f.get("error"),
              parse_match(f["match"], ENTRY_FIELDS) if "match" in f else None,
              f.get("since", 0), f.get("limit"))
    if q.error is not None and q.error != "NONE" and q.error not in ErrorCode.__members__:
        raise FaultError(f"unknown error {q.error!r}; use a Kafka error name or NONE")
    return j.query(q)


async def _barrier(watch: Watch, name: str, f: dict[str, Any], timeout: int) -> dict:
    bs, now = watch.barriers, watch.state.now
    if name == "barriers":
        return {"barriers": [b.view(now()) for b in bs.barriers.values()]}
    if name == "add_barrier":
        count = f.get("count")
        if count is not None:
            _positive(f, "count", 1)
        b = bs.add(Barrier(f.get("id", ""), f.get("api"), f.get("broker"), f.get("client_id"),
                           f.get("group"), f.get("transactional_id"), f.get("topic"),
                           parse_match(f["match"]) if "match" in f else None, count))
        return b.view(now())
    b = bs.get(f["barrier"])
    if name == "barrier":
        return b.view(now())
    if name == "wait_barrier":
        held = _positive(f, "held", 1)
        reached = await watch.until(lambda: len(b.holding) >= held, timeout)
        return {"reached": reached, "barrier": b.view(now())}
    if name == "release_barrier":
        b.release_some(f.get("count"))
        return b.view(now())
    if name == "remove_barrier":
        return {"removed": bs.remove(b.id).view(now())}
    raise FaultError(f"unknown operation {name!r}", 404)


__all__ = ["MAX_WAIT_MS", "WATCH_OPS", "Visit", "Watch", "run"]
