"""What the group coordinator's parts call of one another, typed.

The parts (classic/protocol.py, consumer/protocol.py, consumer/migration.py,
streams/protocol.py) are composed into ``GroupCoordinator`` and reach each other through
its core (``GroupsBase``: ``gc.classic``, ``gc.consumer``, ``gc.migration``), since each
imports the core and none may import another. These protocols name every call that
crosses between parts, with its types, so that mypy checks it and a reader finds the
whole surface in one place. Online migration sits above the classic protocol: it takes
the classic requests first (a classic member of a consumer group is its own) and calls
the classic and consumer operations below it; the classic protocol calls nothing of it.
The consumer protocol still calls up into migration (``MigrationPart``: the upgrade a
consumer heartbeat starts, the downgrade a leave does, the classic members' timers), the
one way up left between the parts. ``GroupCoordinator`` holds the concrete parts, and
mypy checks that each implements its protocol where it is assigned.
"""

from __future__ import annotations

from typing import Protocol

from emulator.coordinators.classic.group import ClassicGroup, JoinFuture, SyncFuture
from emulator.coordinators.consumer.group import Assignment, ConsumerGroup, ConsumerMember


class ClassicPart(Protocol):
    """What migration asks of the classic protocol (classic/protocol.py): the classic
    requests migration does not answer itself (it sits above the classic protocol), and
    a rebalance of the classic group a downgrade made."""

    def session_timeout_valid(self, session_timeout_ms: int) -> bool: ...

    def join_group(self, group_id: str, member_id: str, group_instance_id: str | None,
                   protocol_type: str, protocols: list[tuple[str, bytes]],
                   session_timeout_ms: int, rebalance_timeout_ms: int, *,
                   client_id: str = "", client_host: str = "", version: int = 9
                   ) -> JoinFuture: ...

    def sync_group(self, group_id: str, member_id: str, generation_id: int,
                   group_instance_id: str | None = None, protocol_type: str | None = None,
                   protocol_name: str | None = None,
                   assignments: list[tuple[str, bytes]] | None = None) -> SyncFuture: ...

    def heartbeat(self, group_id: str, member_id: str, generation_id: int,
                  group_instance_id: str | None = None) -> int: ...

    def leave_group(self, group_id: str, members: list[tuple[str, str | None]]
                    ) -> tuple[int, list[int]]: ...

    def prepare_rebalance(self, group: ClassicGroup) -> None: ...


class ConsumerPart(Protocol):
    """What migration asks of the KIP-848 consumer protocol (consumer/protocol.py)."""

    def compute_subscription_metadata(self, group: ConsumerGroup
                                      ) -> dict[str, tuple[bytes, int]]: ...

    def update_group_epoch(self, group: ConsumerGroup, changed: bool) -> None: ...

    def maybe_update_target(self, group: ConsumerGroup) -> None: ...

    def reconcile(self, group: ConsumerGroup, m: ConsumerMember, owned: Assignment | None,
                  now: int) -> None: ...

    def remove_consumer_member(self, group: ConsumerGroup, m: ConsumerMember) -> None: ...


class MigrationPart(Protocol):
    """What the consumer protocol hands to online migration (consumer/migration.py): the
    conversions a consumer heartbeat or leave starts, and the timers of the classic
    members of a consumer group. (The classic protocol calls nothing of it: migration
    takes the classic requests first and passes on those not its own.)"""

    def maybe_upgrade(self, group: ClassicGroup) -> ConsumerGroup | None: ...

    def can_downgrade_without(self, group: ConsumerGroup, leaving: ConsumerMember) -> bool: ...

    def convert_to_classic(self, group: ConsumerGroup, leaving: ConsumerMember | None,
                           rebalance: bool = True) -> ClassicGroup: ...

    def tick_classic_members(self, group: ConsumerGroup, now: int
                             ) -> ConsumerMember | None: ...


__all__ = ["ClassicPart", "ConsumerPart", "MigrationPart"]
