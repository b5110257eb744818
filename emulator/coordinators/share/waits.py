"""A ShareFetch's wait (emulator/cluster/delayed.py): Kafka's DelayedShareFetch.

A ShareFetch that acquired nothing waits up to its MaxWaitMs for records to acquire,
re-trying when one of its partitions changes (records, the high watermark, markers)
or its group's share state does (records released, locks run out: ``group_key``). A
lock running out meanwhile is noticed: the wait ends one millisecond after the first
lock's deadline when that comes sooner, so the released records are offered again.
The coordinator's timers (locks, sessions) run before each try.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeVar

from emulator.cluster.delayed import Delayed
from emulator.cluster.metadata import ChangeKey, ClusterMetadata
from emulator.coordinators.groups.base import group_key
from emulator.coordinators.share.coordinator import SharePartitionManager

T = TypeVar("T")


def share_fetch_wait(
    sc: SharePartitionManager,
    meta: ClusterMetadata,
    group_id: str,
    partitions: Iterable[tuple[bytes, int]],
    attempt: Callable[[bool], T | None],
    expired: Callable[[], T],
    max_wait_ms: int,
) -> T | Delayed[T]:
    """``attempt(final)`` now (final when the request does not wait: it must answer),
    or its wait for something to acquire; ``expired()`` answers when the wait ends
    empty. ``partitions`` (topic id, index): the session's, which it waits on."""
    now = meta.now()
    first = attempt(max_wait_ms <= 0)
    if first is not None:
        return first
    start_version = meta.version
    deadline = now + max_wait_ms
    lock_due = sc.next_deadline()
    if lock_due is not None and now < lock_due < deadline:
        deadline = lock_due + 1

    def check() -> T | None:
        if meta.version == start_version:
            return None
        sc.tick()
        return attempt(False)

    def expire() -> T:
        sc.tick()
        return expired()

    by_id = meta.topics_by_id
    keys: set[ChangeKey] = {(by_id[tid].name, i) for tid, i in partitions if tid in by_id}
    keys.add(group_key(group_id))
    return Delayed(check, deadline, expire, keys=frozenset(keys))
