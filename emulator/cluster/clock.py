"""Injected time. The domain never reads the system clock itself, so a test can
step ISR expiry, session timeouts and throttles exactly with ``ManualClock``."""

from __future__ import annotations

import time
from typing import Protocol


class Clock(Protocol):
    """What the domain reads the time from: milliseconds since the epoch."""

    def now_ms(self) -> int: ...


class SystemClock:
    """Wall-clock milliseconds (Kafka timestamps are wall-clock)."""

    def now_ms(self) -> int:
        return int(time.time() * 1000)


class ManualClock:
    """A clock that only moves when told to."""

    def __init__(self, start_ms: int = 1_700_000_000_000) -> None:
        self._now = start_ms

    def now_ms(self) -> int:
        return self._now

    def advance(self, ms: int) -> int:
        self._now += ms
        return self._now
