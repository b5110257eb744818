"""The group coordinator's waits (emulator/cluster/delayed.py): a JoinGroup parked until
its group's join phase completes (Kafka's DelayedJoin), a follower's SyncGroup until
the leader's assignment arrives (its pending sync).

Each is the group's ``Future`` (emulator/coordinators/classic/group.py) watched under
the group's change key: only a change of that group (an operation on it, one of its
timers, a coordinator move) can complete it. The coordinator's timers are run first
(``tick``): a join may complete on a timer its own request armed (an empty group's
group.initial.rebalance.delay.ms of 0), a wait on one that came due meanwhile.
"""

from __future__ import annotations

from typing import TypeVar

from emulator.cluster.delayed import Delayed
from emulator.coordinators.classic.group import (
    ClassicGroup,
    Future,
    JoinFuture,
    SyncFuture,
    join_error,
    sync_error,
)
from emulator.coordinators.groups.base import group_key
from emulator.coordinators.groups.coordinator import GroupCoordinator
from emulator.coordinators.groups.messages import JoinGroupResponse, SyncGroupResponse
from wire.errors import ErrorCode as E

# A classic group's answer (JoinGroup's or SyncGroup's), as the coordinator makes it.
Answer = TypeVar("Answer", JoinGroupResponse, SyncGroupResponse)


def _waiting(
    gc: GroupCoordinator, group_id: str, fut: Future[Answer], wait_ms: int, expired: Answer
) -> Delayed[Answer]:
    def check() -> Answer | None:
        gc.tick()
        return fut.value if fut.done else None

    def expire() -> Answer:
        gc.tick()
        return fut.value if fut.done else expired

    return Delayed(check, gc.now() + wait_ms, expire, keys=frozenset({group_key(group_id)}))


def join_completion(
    gc: GroupCoordinator,
    group_id: str,
    member_id: str,
    fut: JoinFuture,
    rebalance_timeout_ms: int,
    session_timeout_ms: int,
) -> JoinGroupResponse | Delayed[JoinGroupResponse]:
    """The JoinGroup's answer now, or its wait: until the join phase completes (every
    known member rejoined, the rebalance timeout, or an empty group's initial delay),
    REBALANCE_IN_PROGRESS if it has not well after the longest of the two timeouts."""
    gc.tick()
    if fut.done:
        return fut.value
    wait = 2 * max(rebalance_timeout_ms, session_timeout_ms) + 10_000
    return _waiting(gc, group_id, fut, wait, join_error(E.REBALANCE_IN_PROGRESS, member_id))


def sync_completion(gc: GroupCoordinator, group_id: str, fut: SyncFuture
                    ) -> SyncGroupResponse | Delayed[SyncGroupResponse]:
    """The SyncGroup's answer now, or its wait: until the leader's assignment arrives
    or the group starts another rebalance (REBALANCE_IN_PROGRESS, as at the end of a
    wait of twice the rebalance timeout)."""
    gc.tick()
    if fut.done:
        return fut.value
    group = gc.groups.get(group_id)
    wait = (group.rebalance_timeout_ms() if isinstance(group, ClassicGroup) else 0) * 2 + 10_000
    return _waiting(gc, group_id, fut, wait, sync_error(E.REBALANCE_IN_PROGRESS))
