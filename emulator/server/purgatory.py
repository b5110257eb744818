"""Kafka's purgatory and what wakes it: parked requests, the cluster's ticks, long
operations.

A handler that cannot answer yet returns a ``Delayed`` (the domain's wait: its condition
and deadline, emulator/cluster/delayed.py): it is parked here (Kafka's purgatory) under
the partitions or groups it waits on, and re-checked when one of them changes or its
deadline passes; this is the only place that awaits one. Every change also asks for a replication tick on the
next loop turn, besides the periodic one; the log cleaner and large operations
(``Sliced``) run in time slices between the clients' requests.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import time
from collections.abc import Callable
from typing import Any

from emulator.cluster.delayed import Delayed
from emulator.cluster.metadata import ChangeKey
from emulator.cluster.state import ClusterState
from emulator.handlers.base import Sliced

log = logging.getLogger("kafka_emulator")
TICK_INTERVAL_S = 0.05
CLEANER_SLICE_S = 0.005  # the longest a request waits behind the log cleaner
STEP_SLICE_NS = 5_000_000  # ... and behind a large operation's steps (run_sliced)
# Partitions one tick visits at most (10-25 us each): 10,000 new partitions, or every
# partition after a broker change, are replicated over several loop turns.
TICK_VISITS = 250
RETENTION_INTERVAL_S = 1.0


_gc_hold = {"count": 0, "was_enabled": True}  # large operations running, process-wide


def _hold_gc() -> None:
    """No cyclic garbage collection while a large operation runs (run_sliced). Its
    objects (some 300,000 for 10,000 partitions) would trigger full collections, each a
    pause that scans every object of the process (0.1-1 s with a few such topics
    measured): the stall the slices are there to avoid. Refcounting still frees
    almost everything meanwhile."""
    if _gc_hold["count"] == 0:
        _gc_hold["was_enabled"] = gc.isenabled()
        gc.disable()
    _gc_hold["count"] += 1


def _release_gc() -> None:
    """At the end of the last large operation: freeze what exists (gc.freeze: the
    collector no longer scans it, so the new partitions never cost a pause later;
    frozen objects are still freed by refcounting, only cyclic garbage alive at this
    moment is kept) and collect as before."""
    _gc_hold["count"] -= 1
    if _gc_hold["count"] == 0:
        gc.freeze()
        if _gc_hold["was_enabled"]:
            gc.enable()


def _wake(fut: asyncio.Future) -> None:
    if not fut.done():
        fut.set_result(None)


class _Parked:
    """A parked request's place in the purgatory: registered under its keys once, for
    as long as it waits, and woken through the future of its current wait. (A request
    waiting on thousands of partitions, replicated over several budgeted ticks, would
    otherwise register every key again at each wake-up.)"""

    __slots__ = ("fut",)

    def __init__(self) -> None:
        self.fut: asyncio.Future | None = None

    def wake(self) -> None:
        if self.fut is not None and not self.fut.done():
            self.fut.set_result(None)


class Purgatory:
    """The parked requests and the ticks of one ClusterState (EmulatorServer.purgatory):
    kept together because a tick is what most often completes a parked request."""

    def __init__(self, state: ClusterState) -> None:
        self.state = state
        # Parked requests (Delayed): those waiting on any change, and those waiting on
        # given partitions (woken only when one of them changes): Kafka's purgatory keys.
        self.waiters: set[_Parked] = set()
        self.keyed: dict[ChangeKey, set[_Parked]] = {}
        self._tick_handle: asyncio.Handle | None = None
        self.tick_hooks: list[Callable[[], None]] = []
        # The domain's deadlines sooner than the next periodic tick (a transaction's
        # markers under Kafka's timing): each source answers its next due time in the
        # domain's milliseconds (state.now()), and a tick is set for it.
        self.deadline_sources: list[Callable[[], int | None]] = []
        self._wake_handle: asyncio.TimerHandle | None = None
        self._wake_at: int | None = None

    def stop(self) -> None:
        if self._tick_handle is not None:
            self._tick_handle.cancel()
        if self._wake_handle is not None:
            self._wake_handle.cancel()

    def on_change(self) -> None:
        """Wake the parked requests the change concerns, and replicate soon."""
        everything, keys = self.state.take_changes()
        woken = list(self.waiters)
        if everything:
            for parked in self.keyed.values():
                woken.extend(parked)
        else:
            keyed = self.keyed
            for k in keys:
                waiting = keyed.get(k)
                if waiting:
                    woken.extend(waiting)
        for w in woken:
            w.wake()
        if self._tick_handle is None:
            loop = asyncio.get_running_loop()
            self._tick_handle = loop.call_soon(self.tick, False)

    def tick(self, periodic: bool = True) -> None:
        """On the timer and right after a change: the domain visits only what has work
        (touched, unfinished or due partitions), so a tick costs what changed."""
        if periodic and self._tick_handle is not None:
            self._tick_handle.cancel()
        self._tick_handle = None
        try:
            self.state.tick(full=False, budget=TICK_VISITS)
            for hook in self.tick_hooks:
                hook()
        except Exception:  # noqa: BLE001 - our bug must not stop the cluster
            log.exception("cluster tick failed")
        if self.state.followers.backlog and self._tick_handle is None:
            # More partitions to visit than one tick may: the rest on the next loop turn.
            self._tick_handle = asyncio.get_running_loop().call_soon(self.tick, False)
        if self.deadline_sources:
            self._wake_for_deadlines()

    def _wake_for_deadlines(self) -> None:
        """A tick at the earliest domain deadline due before the next periodic tick, so
        that a delay of a few milliseconds (Kafka's marker delay) ends on time, not up
        to TICK_INTERVAL_S later."""
        now = self.state.now()
        dues = [d for d in (src() for src in self.deadline_sources) if d is not None]
        due = min(dues, default=None)
        if due is None or due - now >= TICK_INTERVAL_S * 1000:
            return
        if self._wake_handle is not None and self._wake_at is not None \
                and self._wake_at <= due and not self._wake_handle.cancelled():
            return  # an earlier (or the same) wake is set already
        if self._wake_handle is not None:
            self._wake_handle.cancel()
        self._wake_at = due
        self._wake_handle = asyncio.get_running_loop().call_later(
            max(0, due - now) / 1000, self._wake)

    def _wake(self) -> None:
        self._wake_handle = self._wake_at = None
        self.tick(periodic=False)

    async def periodic(self) -> None:
        last_retention = time.monotonic()
        while True:
            await asyncio.sleep(TICK_INTERVAL_S)
            self.tick()
            if time.monotonic() - last_retention >= RETENTION_INTERVAL_S:
                last_retention = time.monotonic()
                try:
                    self.state.apply_retention(full=False)
                except Exception:  # noqa: BLE001
                    log.exception("retention failed")

    async def cleaner(self) -> None:
        """Kafka's cleaner thread, cooperatively: slices of at most CLEANER_SLICE_S of
        cleaning steps, each followed by a return to the event loop so waiting
        requests are served; log.cleaner.backoff.ms between checks when idle (the
        emulator's default is 1000 ms, Kafka's 15000: --config
        log.cleaner.backoff.ms=15000 for Kafka's)."""
        while True:
            busy = self.clean_slice()
            backoff = int(self.state.config.get("log.cleaner.backoff.ms") or 1000) / 1000
            await asyncio.sleep(0 if busy else backoff)

    def clean_slice(self) -> bool:
        deadline = time.monotonic() + CLEANER_SLICE_S
        try:
            while self.state.cleaner.step():
                if time.monotonic() >= deadline:
                    return True
        except Exception:  # noqa: BLE001 - our bug must not stop the cluster
            log.exception("log cleaner step failed; the partition is marked uncleanable")
            self.state.cleaner.mark_uncleanable()
            return False
        return False

    async def run_sliced(self, s: Sliced) -> tuple[Any, int]:
        """Advance a large operation's steps STEP_SLICE_S at a time, returning to the
        event loop between slices so that every other client is served meanwhile (one
        slice is the longest anyone waits behind it). Returns its result and the time
        its slices took (for request_percentage). Abandoned (the connection or broker
        went away), the steps are closed and the domain undoes what it had built."""
        steps = s.steps
        spent = 0
        _hold_gc()
        try:
            while True:
                t0 = time.perf_counter_ns()
                deadline = t0 + STEP_SLICE_NS
                try:
                    while True:
                        next(steps)
                        if time.perf_counter_ns() >= deadline:
                            break
                except StopIteration as done:
                    return done.value, spent + time.perf_counter_ns() - t0
                spent += time.perf_counter_ns() - t0
                await asyncio.sleep(0)
        finally:
            steps.close()
            _release_gc()

    async def wait_delayed(self, d: Delayed) -> dict:
        """Re-run ``d.check`` after each change to its keys (any change when it names
        none) until it answers, or ``d.expire`` at its deadline."""
        if not d.checked:
            r = d.check()
            if r is not None:
                return r
        if self._tick_handle is not None:
            # A tick is due on the next loop turn, most often asked for by this very
            # request's change (an acks=all append whose followers are to fetch): run it
            # now, and a request it completes is answered without parking (a future, a
            # timer, and two more loop turns before the answer is written).
            self.tick()
            r = d.check()
            if r is not None:
                return r
        loop = asyncio.get_running_loop()
        parked, keys = _Parked(), d.keys
        if keys is None:
            self.waiters.add(parked)
        else:
            keyed = self.keyed
            for k in keys:
                keyed.setdefault(k, set()).add(parked)
        try:
            while True:
                remaining = d.deadline_ms - self.state.now()
                if remaining <= 0:
                    return d.expire()
                # Woken by a change it waits on, or by this timer to look at the deadline
                # (a timer handle, not asyncio.wait_for's waiter future and callbacks:
                # this runs for every acks=all produce request).
                wait_ms = min(remaining, 1000)
                if d.not_before_ms:
                    wait_ms = max(0, min(wait_ms, d.not_before_ms - self.state.now()))
                fut = parked.fut = loop.create_future()
                timer = loop.call_later(wait_ms / 1000, _wake, fut)
                try:
                    await fut
                finally:
                    timer.cancel()
                r = d.check()
                if r is not None:
                    return r
        finally:
            parked.fut = None
            if keys is None:
                self.waiters.discard(parked)
            else:
                for k in keys:
                    waiting = keyed.get(k)
                    if waiting is not None:
                        waiting.discard(parked)
                        if not waiting:
                            del keyed[k]
