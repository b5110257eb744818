"""What the group coordinator's parts call of one another, typed.

The parts (classic/protocol.py, consumer/protocol.py, consumer/migration.py,
streams/protocol.py) are composed into ``GroupCoordinator`` and reach each other through
its core (``GroupsBase``: ``gc.classic``, ``gc.consumer``, ``gc.migration``), since each
imports the core and none may import another. These protocols name every call that
crosses between parts, with its types, so that mypy checks it and a reader finds the
whole surface in one place: online migration calls the classic and consumer
operations, the classic and consumer protocols hand members of the other kind to
migration. ``GroupCoordinator`` holds the concrete parts, and mypy checks that each
implements its protocol where it is assigned.
"""

from __future__ import annotations

from typing import Protocol

from emulator.coordinators.classic.group import ClassicGroup
from emulator.coordinators.consumer.group import Assignment, ConsumerGroup, ConsumerMember
from emulator.coordinators.groups.messages import JoinGroupResponse, SyncGroupResponse


class ClassicPart(Protocol):
    """What migration asks of the classic protocol (classic/protocol.py)."""

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
    """What the classic and consumer protocols hand to online migration
    (consumer/migration.py): classic members of a consumer group, and conversions."""

    def classic_join_to_consumer(self, group: ConsumerGroup, member_id: str,
                                 instance_id: str | None, protocol_type: str,
                                 protocols: list[tuple[str, bytes]], session_ms: int,
                                 rebalance_ms: int, client_id: str, client_host: str,
                                 version: int) -> JoinGroupResponse: ...

    def classic_sync_to_consumer(self, group: ConsumerGroup, member_id: str,
                                 generation_id: int, instance_id: str | None,
                                 protocol_type: str | None, protocol_name: str | None
                                 ) -> SyncGroupResponse: ...

    def classic_heartbeat_to_consumer(self, group: ConsumerGroup, member_id: str,
                                      generation_id: int, instance_id: str | None) -> int: ...

    def classic_leave_consumer(self, group: ConsumerGroup,
                               members: list[tuple[str, str | None]]) -> list[int]: ...

    def maybe_upgrade(self, group: ClassicGroup) -> ConsumerGroup | None: ...

    def can_downgrade_without(self, group: ConsumerGroup, leaving: ConsumerMember) -> bool: ...

    def convert_to_classic(self, group: ConsumerGroup, leaving: ConsumerMember | None,
                           rebalance: bool = True) -> ClassicGroup: ...

    def tick_classic_members(self, group: ConsumerGroup, now: int
                             ) -> ConsumerMember | None: ...


__all__ = ["ClassicPart", "ConsumerPart", "MigrationPart"]
