"""Helpers for the group, idempotence and transaction client tests.

The ``*Member`` classes run one real group consumer each on a thread, polling as an
application does, and record what they were assigned and what they read, so a test can
wait for a state of the group and check records for loss and duplicates. Their cluster is
conftest.py's ``group_cluster`` (GROUP_CONFIG: group timeouts short enough for a fast
suite, a 1 s minimum session timeout, KIP-848 heartbeats every 500 ms), which stops the
members a failing test left running (``stop_live``) before it stops the cluster.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
import threading
import time
import traceback
from collections.abc import Callable

from client_tests import producing
from client_tests.producing import numbered
from emulator.testing import wait_for

PARTITIONS = 6
GROUP_CONFIG = {
    "group.min.session.timeout.ms": "1000",
    "group.consumer.heartbeat.interval.ms": "500",
    "group.consumer.session.timeout.ms": "6000",
}


_live: list[Member] = []  # members started by the current test
log = logging.getLogger(__name__)

# A kafka-python poll(timeout_ms=500) that has not returned after this long is stuck
# (see KafkaPythonMember.loop): the watchdog logs where and frees it.
POLL_STALL_S = 12.0
# A kafka-python JoinGroup/SyncGroup round running this long is logged (see _watch_join):
# the tests' rounds take well under a second, the members' sessions last 30 s.
JOIN_STALL_S = 15.0


class PollStalled(Exception):
    """Raised into a kafka-python member's stuck poll() by its watchdog."""


def stop_live() -> None:
    """Stop the members the current test started (and left running)."""
    for m in _live:
        m.stopping.set()
    for m in _live:
        m.join(10)
    _live.clear()


def produce(bootstrap: str, topic: str, n: int, start: int = 0) -> list[bytes]:
    """``n`` records spread round-robin over the partitions; returns their values."""
    values = numbered(n, start, "v{:05d}")
    producing.produce(bootstrap, topic, values, partitions=PARTITIONS, start=start,
                      timeout=20, config={"linger.ms": 2})
    return values


class Member(threading.Thread):
    """One group consumer polling on its own thread."""

    def __init__(self, name: str) -> None:
        super().__init__(name=name, daemon=True)
        self.stopping = threading.Event()
        self.ready = threading.Event()
        self.lock = threading.Lock()
        self.assigned: set[int] = set()
        self.values: list[bytes] = []
        self.uncommitted: set[bytes] = set()  # read but not (yet) known committed
        self.lost_commits: set[bytes] = set()  # read, commit failed: may be read again
        self.error: BaseException | None = None
        self.revoked: list[set[int]] = []
        self.polling_since: float | None = None  # when the running poll() began
        self.stalls = 0  # polls the watchdog freed (KafkaPythonMember._watch)

    def start(self) -> None:
        _live.append(self)
        super().start()

    def stop(self) -> None:
        self.stopping.set()
        self.join(30)
        if self.error is not None:
            raise self.error

    def partitions(self) -> set[int]:
        with self.lock:
            return set(self.assigned)

    def _record(self, values: list[bytes]) -> None:
        with self.lock:
            self.values.extend(values)
            self.uncommitted.update(values)

    def _committed(self, ok: bool) -> None:
        with self.lock:
            if not ok:
                self.lost_commits |= self.uncommitted
            self.uncommitted = set()

    def run(self) -> None:
        try:
            self.loop()
        except BaseException as e:  # noqa: BLE001 - re-raised by stop()
            self.error = e


class KafkaPythonMember(Member):
    def __init__(self, name: str, bootstrap: str, topic: str, group: str, **conf) -> None:
        super().__init__(name)
        # kafka-python's leader may compute the assignment before its metadata knows
        # the topic (the emulator's rebalance delay is 0, as in testcontainers' Kafka);
        # it rejoins on the next metadata refresh, so keep that refresh short. loop()
        # also learns the topic's partitions before it subscribes (see there).
        # session_timeout_ms 30 s: kafka-python heartbeats from a thread of the test's
        # process, which a loaded 2-core machine starved past a 3 s session, and once
        # past 10 s with the first pass running beside the Kafka pass (a member expelled,
        # UNKNOWN_MEMBER_ID at its LeaveGroup, the balance never reached: seen on both
        # targets); members leave by LeaveGroup, no test waits out a session.
        self.conf = dict(bootstrap_servers=bootstrap, group_id=group,
                         auto_offset_reset="earliest", enable_auto_commit=False,
                         session_timeout_ms=30000, heartbeat_interval_ms=300,
                         metadata_max_age_ms=1000, client_id=name, **conf)
        self.topic = topic
        # the join task _watch_join last saw, when, and whether it was logged
        self._join_seen: tuple[object, float, bool] | None = None

    def loop(self) -> None:
        from kafka import KafkaConsumer
        from kafka.errors import CommitFailedError, KafkaError

        c = KafkaConsumer(**self.conf)
        # Knowing the partitions before the first JoinGroup spares the group the
        # empty-assignment-then-rejoin round above. That round is legal and the
        # emulator answers it correctly, but kafka-python 3.0.12 hung in it about one
        # run in 30 on a loaded machine: after the second SyncGroup its poll() blocked
        # for good in Fetcher.send_fetches (net.run waiting on the IO thread), with no
        # OffsetFetch or heartbeat sent, while the IO thread went on refreshing
        # metadata. Seen in CI and reproduced here under CPU load with a thread dump.
        with contextlib.suppress(AssertionError):  # then subscribe anyway, as before
            wait_for(lambda: c.partitions_for_topic(self.topic), "the topic's metadata",
                     timeout=30)
        c.subscribe([self.topic])
        self.ready.set()
        watchdog = threading.Thread(target=self._watch, args=(c,), daemon=True,
                                    name=f"{self.name}-watchdog")
        watchdog.start()
        try:
            while not self.stopping.is_set():
                # Each poll() makes several cross-thread calls into kafka-python's IO
                # thread, where the hang described above lives; a longer wait means
                # fewer of them (poll returns as soon as records arrive anyway).
                self.polling_since = time.monotonic()
                try:
                    batches = c.poll(timeout_ms=500)
                except PollStalled:
                    continue  # freed by the watchdog: poll again, the group goes on
                finally:
                    self.polling_since = None
                with self.lock:
                    self.assigned = {tp.partition for tp in c.assignment()}
                got = [r.value for rs in batches.values() for r in rs]
                if got:
                    self._record(got)
                    try:
                        c.commit()
                        self._committed(True)
                    except (CommitFailedError, KafkaError):
                        self._committed(False)
        finally:
            self.stopping.set()
            c.close()

    def _watch(self, consumer: object) -> None:
        """Free this member's poll() when kafka-python 3.0.12 loses its cross-thread call.

        The same hang as in loop(), met mid-test too: in the rebalance after another
        member left, a member's foreground poll() waited for good on a call its IO
        thread never ran, so it sent no JoinGroup; the IO thread sends no heartbeat
        while the group rebalances, so the coordinator expelled the member after its
        session timeout and the group never balanced (a test of the Kafka pass failed
        so). That is the client's fault on either target, not an answer to check, so
        here a poll() stuck past POLL_STALL_S is logged with its stack and failed with
        PollStalled, and the member polls again; kafka-python's own thread-safe way out
        of a stuck net.run, failing its pending waiters, is what frees it.
        """
        while not self.stopping.wait(1.0):
            self._watch_join(consumer)
            since = self.polling_since
            if since is None or time.monotonic() - since < POLL_STALL_S:
                continue
            frame = sys._current_frames().get(self.ident or -1)
            stack = "".join(traceback.format_stack(frame)) if frame else "(gone)"
            log.warning("%s: poll() stuck for %.0f s, freeing it; its stack:\n%s",
                        self.name, time.monotonic() - since, stack)
            self.stalls += 1
            net = getattr(consumer, "_net", None)
            fail = getattr(net, "_fail_pending_waiters", None)
            if fail is None:
                log.warning("%s: this kafka-python has no _fail_pending_waiters", self.name)
                return
            fail(PollStalled(f"{self.name}: poll() stuck for {POLL_STALL_S:g} s"))
            self.polling_since = None


    def _watch_join(self, consumer: object) -> None:
        """Say where a JoinGroup/SyncGroup round has waited past JOIN_STALL_S.

        kafka-python stops heartbeating while its join task runs, and poll() returns
        every 500 ms meanwhile, so a join task that never ends (a lost cross-thread step
        like the one in _watch, or an answer that never comes) shows as nothing but a
        member expelled after its session: the Kafka pass once saw a classic member
        fenced (UNKNOWN_MEMBER_ID at its LeaveGroup) while the group never balanced,
        with no poll stuck. Logged once per task, with the task's state, the member's
        and the awaits it is parked in; it is not freed (no fault shown yet to free).
        """
        coordinator = getattr(consumer, "_coordinator", None)
        task = getattr(coordinator, "_join_task", None)
        if task is None or task.is_done:
            self._join_seen = None
            return
        now = time.monotonic()
        seen = self._join_seen
        if seen is None or seen[0] is not task:
            self._join_seen = (task, now, False)
            return
        if seen[2] or now - seen[1] < JOIN_STALL_S:
            return
        self._join_seen = (task, seen[1], True)
        state, awaits = _join_task_frames(coordinator)
        log.warning("%s: its JoinGroup/SyncGroup round has run %.0f s (task %s, member "
                    "state %s, %s); parked in:\n  %s", self.name, now - seen[1], state,
                    getattr(coordinator, "state", "?"),
                    getattr(coordinator, "_generation", "?"),
                    "\n  ".join(awaits) or "(no task found)")


def _join_task_frames(coordinator: object) -> tuple[str, list[str]]:
    """The state of kafka-python's IO-thread task running ``coordinator``'s
    ``_do_join_and_sync_async``, and the awaits it is parked in, innermost last.
    (The join future kafka-python keeps does not name its task: found by a scan of the
    heap, once per stall logged.)"""
    import gc

    def chain(coro: object) -> list[object]:
        out = []
        while coro is not None:
            frame = getattr(coro, "cr_frame", None) or getattr(coro, "gi_frame", None)
            if frame is not None:
                out.append(frame)
            coro = getattr(coro, "cr_await", None) or getattr(coro, "gi_yieldfrom", None)
        return out

    for obj in gc.get_objects():
        if type(obj).__name__ != "Task" or not type(obj).__module__.startswith("kafka."):
            continue
        frames, stack = [], getattr(obj, "_stack", None)
        while stack:
            frames = chain(stack[0]) + frames
            stack = stack[1]
        if any(f.f_code.co_name == "_do_join_and_sync_async"
               and f.f_locals.get("self") is coordinator for f in frames):
            return (str(getattr(obj, "state", "?")),
                    [f"{f.f_code.co_filename}:{f.f_lineno} {f.f_code.co_name}"
                     for f in frames])
    return "(not found)", []


class ConfluentMember(Member):
    def __init__(self, name: str, bootstrap: str, topic: str, group: str, **conf) -> None:
        super().__init__(name)
        self.conf = {"bootstrap.servers": bootstrap, "group.id": group,
                     "auto.offset.reset": "earliest", "enable.auto.commit": False,
                     "client.id": name, **conf}
        if self.conf.get("group.protocol") != "consumer":
            self.conf.setdefault("session.timeout.ms", 3000)
            self.conf.setdefault("heartbeat.interval.ms", 300)
        self.topic = topic

    def loop(self) -> None:
        from confluent_kafka import Consumer, KafkaException

        c = Consumer(self.conf)

        def on_assign(consumer, parts) -> None:
            with self.lock:
                self.assigned |= {p.partition for p in parts}

        def on_revoke(consumer, parts) -> None:
            with self.lock:
                gone = {p.partition for p in parts}
                self.revoked.append(gone)
                self.assigned -= gone

        def on_lost(consumer, parts) -> None:
            with self.lock:
                self.assigned -= {p.partition for p in parts}

        c.subscribe([self.topic], on_assign=on_assign, on_revoke=on_revoke, on_lost=on_lost)
        self.ready.set()
        try:
            while not self.stopping.is_set():
                msgs = c.consume(100, 0.1)
                got = []
                for m in msgs:
                    if m.error() is None:
                        got.append(m.value())
                if got:
                    self._record(got)
                    try:
                        c.commit(asynchronous=False)
                        self._committed(True)
                    except KafkaException:
                        self._committed(False)
        finally:
            c.close()


class AioKafkaMember(Member):
    def __init__(self, name: str, bootstrap: str, topic: str, group: str, **conf) -> None:
        super().__init__(name)
        self.conf = dict(bootstrap_servers=bootstrap, group_id=group,
                         auto_offset_reset="earliest", enable_auto_commit=False,
                         session_timeout_ms=3000, heartbeat_interval_ms=300,
                         client_id=name, **conf)
        self.topic = topic

    def loop(self) -> None:
        asyncio.run(self._loop())

    async def _loop(self) -> None:
        from aiokafka import AIOKafkaConsumer
        from aiokafka.errors import CommitFailedError, KafkaError

        c = AIOKafkaConsumer(self.topic, **self.conf)
        await c.start()
        self.ready.set()
        try:
            while not self.stopping.is_set():
                batches = await c.getmany(timeout_ms=100)
                with self.lock:
                    self.assigned = {tp.partition for tp in c.assignment()}
                got = [r.value for rs in batches.values() for r in rs]
                if got:
                    self._record(got)
                    try:
                        await c.commit()
                        self._committed(True)
                    except (CommitFailedError, KafkaError):
                        self._committed(False)
        finally:
            await c.stop()


class Balance:
    """What ``balanced`` saw: true when balanced; its repr names each member's partitions,
    so a wait that timed out says where the group stood, not only ``False``."""

    def __init__(self, members: list[Member], sizes: list[int]) -> None:
        self.parts = {m.name: sorted(m.partitions()) for m in members}
        every = [p for ps in self.parts.values() for p in ps]
        self.ok = sorted(len(ps) for ps in self.parts.values()) == sorted(sizes) and \
            sorted(every) == list(range(PARTITIONS))
        self.stalls = {m.name: m.stalls for m in members if m.stalls}

    def __bool__(self) -> bool:
        return self.ok

    def __repr__(self) -> str:
        stalls = f", polls freed {self.stalls}" if self.stalls else ""
        return f"{'balanced' if self.ok else 'not balanced'}: {self.parts}{stalls}"


def balanced(members: list[Member], sizes: list[int]) -> Callable[[], Balance]:
    """True once the members own every partition exactly once, with these counts."""

    def check() -> Balance:
        return Balance(members, sizes)

    return check


def check_no_loss(produced: list[bytes], members: list[Member]) -> None:
    """Every record was read; any record read twice had not been committed."""
    seen: dict[bytes, int] = {}
    for m in members:
        for v in m.values:
            seen[v] = seen.get(v, 0) + 1
    missing = set(produced) - set(seen)
    assert not missing, f"{len(missing)} records never read, e.g. {sorted(missing)[:5]}"
    may_repeat = set().union(*(m.lost_commits | m.uncommitted for m in members))
    dups = {v for v, n in seen.items() if n > 1}
    assert dups <= may_repeat, f"committed records read again: {sorted(dups - may_repeat)[:5]}"
