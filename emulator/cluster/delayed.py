"""Waiting, as the domain states it: Kafka's DelayedOperation, sans I/O.

A request that cannot be answered yet (acks=all waiting for the ISR, a Fetch waiting
for min.bytes, a ShareFetch for acquirable records, a JoinGroup for the rebalance, a
topic operation for the controller) is a ``Delayed``: a condition over domain state
(``check``: the answer once it holds, None until then), a deadline and what is
answered when the deadline passes (``expire``). The domain builds them, since the
condition and the deadline are its rules (the cluster's for produce, fetch and topic
operations, the coordinators' for their joins, syncs and share fetches); the handlers
only map the domain's answer to a response (``Delayed.map``); emulator/server/
purgatory.py alone waits, re-running ``check`` when one of ``keys`` changes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Generic, TypeVar

from emulator.cluster.metadata import ChangeKey, ClusterMetadata

T = TypeVar("T")
U = TypeVar("U")


@dataclass(frozen=True, slots=True)
class Delayed(Generic[T]):
    """An answer that waits on the domain: the purgatory's unit (Kafka's DelayedOperation:
    ``check`` is its tryComplete, ``expire`` its onExpiration)."""

    check: Callable[[], T | None]
    deadline_ms: int
    expire: Callable[[], T]
    # The partitions (topic, index) or groups (emulator.coordinators.groups.base.group_key)
    # whose changes can complete it: the server re-runs ``check`` only when one of them
    # changes (or the whole cluster does). None: on every change.
    keys: frozenset[ChangeKey] | None = None
    # ``check`` has just run and answered None: the server does not run it again before
    # the first change (acks=all produce: every request parks).
    checked: bool = False
    # Not ready before this time (ms; a slow log dir's write, emulator/faults): the
    # server looks again then even if nothing changed. 0: no such time.
    not_before_ms: int = 0

    def map(self, fn: Callable[[T], U]) -> Delayed[U]:
        """The same wait answering ``fn`` of this one's answer (a handler encodes the
        domain's answer so): the condition, deadline and keys are unchanged."""
        check = self.check

        def mapped() -> U | None:
            r = check()
            return None if r is None else fn(r)

        expire = self.expire
        return Delayed(
            mapped,
            self.deadline_ms,
            lambda: fn(expire()),
            self.keys,
            self.checked,
            self.not_before_ms,
        )


def until(
    ready: Callable[[], bool], deadline_ms: int, keys: frozenset[ChangeKey] | None = None
) -> Delayed[bool]:
    """A wait for ``ready``: answers True once it holds, False at ``deadline_ms``."""
    return Delayed(lambda: True if ready() else None, deadline_ms, lambda: False, keys)


def topics_settled(
    meta: ClusterMetadata, names: Iterable[str | None], timeout_ms: int
) -> Delayed[bool] | None:
    """None when no topic of ``names`` is being created, grown or deleted in steps
    (``pending_topics``, emulator/cluster/steps.py); else the wait for that to end.
    Kafka's controller handles one topic operation after another, so a request about a
    topic another one is still building waits for it, then sees its outcome (and, a
    minute past its own timeout, is served as things are)."""
    pending = meta.pending_topics
    if not pending:
        return None
    wanted = [n for n in names if n]

    def busy() -> bool:
        return any(n in pending for n in wanted)

    if not busy():
        return None
    return until(lambda: not busy(), meta.now() + max(timeout_ms, 0) + 60_000)


def fetch_wait(
    meta: ClusterMetadata,
    read: Callable[[], tuple[T, int, bool]],
    min_bytes: int,
    max_wait_ms: int,
    keys: Callable[[], frozenset[ChangeKey] | None],
) -> T | Delayed[T]:
    """Kafka's DelayedFetch: ``read()`` (the answer, its bytes, whether a partition
    answers an error) now when it has an error, min_bytes or no wait; else read again
    after each change of ``keys()`` (asked only then) until it has, and once more at
    max_wait_ms."""
    answer, size, errors = read()
    if errors or size >= min_bytes or max_wait_ms <= 0:
        return answer
    start_version = meta.version

    def check() -> T | None:
        if meta.version == start_version:
            return None
        again, n, errs = read()
        return again if errs or n >= min_bytes else None

    return Delayed(check, meta.now() + max_wait_ms, lambda: read()[0], keys())
