"""Drive fuzz cases (wire/fuzz.py) at running brokers and watch what a user would see.

Cases go out over several connections at once, one case in flight per connection. A
case ends when its answer arrives or the broker closes the connection (both fine: Kafka
answers or closes); an answer that does not come within ``answer_timeout`` is counted
as unanswered and its connection dropped (acks=0 produce and long-poll fetches
legitimately answer late or never). Between cases a canary connection sends an ordinary
Metadata request and times it: the broker must keep serving normal clients quickly
whatever the fuzzer does. Tracebacks are the caller's to count (the emulator's log).
"""

from __future__ import annotations

import selectors
import socket
import struct
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from emulator.blocking_client import BlockingConnection
from wire.connection import frame_complete
from wire.fuzz import Case


@dataclass
class FuzzStats:
    cases: int = 0
    answered: int = 0
    closed: int = 0
    unanswered: int = 0
    canary_ms: list[float] = field(default_factory=list)
    canary_failures: int = 0
    canary_errors: list[str] = field(default_factory=list)  # why the first ones failed
    slow_cases: list[str] = field(default_factory=list)
    # a new connection not accepted within 5 s (retried up to 5 times, then raised)
    connect_failures: int = 0
    connect_errors: list[str] = field(default_factory=list)

    @property
    def canary_max_ms(self) -> float:
        return max(self.canary_ms, default=0.0)

    def canary_p99_ms(self) -> float:
        if not self.canary_ms:
            return 0.0
        s = sorted(self.canary_ms)
        return s[min(len(s) - 1, int(len(s) * 0.99))]


@dataclass(eq=False)
class _Slot:
    sock: socket.socket | None = None
    case: Case | None = None
    started: float = 0.0
    buf: bytes = b""


class Canary:
    """An ordinary client: Metadata on its own connection, timed."""

    def __init__(self, address: tuple[str, int]) -> None:
        self.address = address
        self.conn: BlockingConnection | None = None
        self.last_error = ""

    def probe(self, timeout: float = 5.0) -> float | None:
        """Milliseconds for one answered Metadata request, or None if it failed."""
        t0 = time.perf_counter()
        try:
            if self.conn is None:
                self.conn = BlockingConnection.connect(*self.address, client_id="canary",
                                                       timeout=timeout)
            self.conn.sock.settimeout(timeout)
            self.conn.call(3, 12, {"topics": None, "allow_auto_topic_creation": False})
        except (OSError, struct.error, ValueError) as e:
            self.last_error = (f"{type(e).__name__}: {e} after "
                               f"{(time.perf_counter() - t0) * 1000:.0f} ms")
            if self.conn is not None:
                self.conn.close()
            self.conn = None
            return None
        return (time.perf_counter() - t0) * 1000

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()


def drive(addresses: list[tuple[str, int]], cases: Iterable[Case], parallel: int = 8,
          answer_timeout: float = 2.0, canary_every: int = 200,
          progress: Callable[[FuzzStats], None] | None = None,
          progress_every: int = 10_000) -> FuzzStats:
    """Send every case; return what happened. ``addresses`` are the brokers' listeners."""
    stats = FuzzStats()
    sel = selectors.DefaultSelector()
    slots = [_Slot() for _ in range(parallel)]
    canary = Canary(addresses[0])
    it = iter(cases)
    exhausted = False
    n_sent = 0

    def finish(slot: _Slot, outcome: str) -> None:
        if outcome == "answered":
            stats.answered += 1
        elif outcome == "closed":
            stats.closed += 1
        else:
            stats.unanswered += 1
        stats.cases += 1
        if outcome != "answered" and slot.sock is not None:
            sel.unregister(slot.sock)
            slot.sock.close()
            slot.sock = None
        slot.case, slot.buf = None, b""
        if canary_every and stats.cases % canary_every == 0:
            ms = canary.probe()
            if ms is None:
                stats.canary_failures += 1
                if len(stats.canary_errors) < 10:
                    stats.canary_errors.append(f"after case {stats.cases}: {canary.last_error}")
            else:
                stats.canary_ms.append(ms)
        if progress is not None and stats.cases % progress_every == 0:
            progress(stats)

    def start(slot: _Slot, case: Case) -> None:
        nonlocal n_sent
        if slot.sock is None:
            address = addresses[n_sent % len(addresses)]
            for attempt in range(5):
                try:
                    slot.sock = socket.create_connection(address, timeout=5)
                    break
                except OSError as e:
                    # A broker must accept new clients whatever the fuzzer did: counted
                    # (bench/fuzz.py --check fails on it), retried, raised the 5th time.
                    stats.connect_failures += 1
                    if len(stats.connect_errors) < 10:
                        stats.connect_errors.append(
                            f"{time.strftime('%H:%M:%S')} after case {stats.cases}: "
                            f"{address[1]}: {type(e).__name__}: {e}")
                    if attempt == 4:
                        raise
                    time.sleep(0.2)
            assert slot.sock is not None
            slot.sock.setblocking(False)
            sel.register(slot.sock, selectors.EVENT_READ, slot)
        slot.case, slot.started, slot.buf = case, time.monotonic(), b""
        n_sent += 1
        try:
            slot.sock.setblocking(True)
            slot.sock.settimeout(answer_timeout)
            slot.sock.sendall(case.frame)
            slot.sock.setblocking(False)
        except OSError:
            finish(slot, "closed")

    try:
        while True:
            for slot in slots:
                if slot.case is None and not exhausted:
                    case = next(it, None)
                    if case is None:
                        exhausted = True
                    else:
                        start(slot, case)
            busy = [s for s in slots if s.case is not None]
            if not busy:
                break
            for key, _ in sel.select(timeout=0.05):
                slot = key.data
                if slot.case is None or slot.sock is None:
                    continue
                try:
                    data = slot.sock.recv(1 << 16)
                except BlockingIOError:
                    continue
                except OSError:
                    data = b""
                if not data:
                    finish(slot, "closed")
                    continue
                slot.buf += data
                if frame_complete(slot.buf):
                    finish(slot, "answered")
            now = time.monotonic()
            for slot in busy:
                if slot.case is not None and now - slot.started > answer_timeout:
                    if len(stats.slow_cases) < 20:
                        stats.slow_cases.append(slot.case.describe())
                    finish(slot, "unanswered")
    finally:
        for slot in slots:
            if slot.sock is not None:
                slot.sock.close()
        canary.close()
        sel.close()
    return stats
