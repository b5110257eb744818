"""Helpers for test suites that drive an emulator (ours and users').

``wait_for``
    The one way a test waits: poll a condition until it holds or a deadline passes,
    then fail saying what it waited for. Never a fixed sleep that decides an outcome:
    a sleep is too short on a loaded CI machine and too long everywhere else.

``wait_for_async``
    The same for a test on an event loop (aiokafka's clients): ``cond`` is awaited and
    the pause between tries is ``asyncio.sleep``, so the loop keeps running.

``LoggedExceptions``
    Watches the emulator's loggers (``kafka_emulator`` and below). A handler that
    raises is our bug even though the client only sees UNKNOWN_SERVER_ERROR and may
    well retry past it, so the pytest plugin's autouse fixture
    (``kafka_emulator_logged_exceptions``) fails any test during which the emulator
    logged an exception. It sees clusters running in the test's own process (threads
    included), not ``kafka-emulator`` subprocesses.

No pytest import here: Spark jobs and scripts use ``wait_for`` outside pytest.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")
LOGGER = "kafka_emulator"


def wait_for(cond: Callable[[], T], what: str, timeout: float = 30.0,
             interval: float = 0.05) -> T:
    """Call ``cond`` until it returns something truthy and return that; after
    ``timeout`` seconds raise AssertionError naming ``what`` and the last value."""
    deadline = time.monotonic() + timeout
    while True:
        last = cond()
        if last:
            return last
        if time.monotonic() >= deadline:
            raise AssertionError(
                f"timed out after {timeout:g}s waiting for {what} (last: {last!r})")
        time.sleep(interval)


async def wait_for_async(cond: Callable[[], Awaitable[T]], what: str, timeout: float = 30.0,
                         interval: float = 0.05) -> T:
    """``wait_for`` on an event loop: await ``cond()`` until it gives something truthy
    and return that; after ``timeout`` seconds raise AssertionError naming ``what``."""
    deadline = time.monotonic() + timeout
    while True:
        last = await cond()
        if last:
            return last
        if time.monotonic() >= deadline:
            raise AssertionError(
                f"timed out after {timeout:g}s waiting for {what} (last: {last!r})")
        await asyncio.sleep(interval)


class LoggedExceptions(logging.Handler):
    """Collects the error records (``log.exception`` and worse) of the emulator's
    loggers while installed: ``with LoggedExceptions() as seen: ...; seen.records``."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []
        self._logger = logging.getLogger(LOGGER)

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)

    def __enter__(self) -> LoggedExceptions:
        self._logger.addHandler(self)
        return self

    def __exit__(self, *exc: object) -> None:
        self._logger.removeHandler(self)

    def report(self) -> str:
        """Every collected record with its traceback, for a test failure."""
        fmt = logging.Formatter("%(name)s %(levelname)s: %(message)s")
        return "\n".join(fmt.format(r) for r in self.records)


__all__ = ["LoggedExceptions", "wait_for", "wait_for_async"]
