"""What the group coordinator's parts call of one another, typed.

The parts (classic/protocol.py, consumer/protocol.py, consumer/migration.py,
streams/protocol.py) are composed into ``GroupCoordinator`` and reach each other through
its core (``GroupsBase``: ``gc.classic``, ``gc.consumer``, ``gc.migration``), since each
imports the core and none may import another. These protocols name every call that
crosses between parts, with its types, so that mypy checks it and a reader finds the
whole surface in one place. Online migration sits above the classic and the consumer
protocol: it takes the requests of both first (a classic member of a consumer group is
its own; a consumer heartbeat may upgrade a classic group, a leave downgrade a consumer
group), and the consumer groups' timers, and calls the classic and consumer operations
below it; neither protocol calls anything of it, so every call between the parts goes
down. ``GroupCoordinator`` holds the concrete parts, and mypy checks that each
implements its protocol where it is assigned.
"""

from __future__ import annotations

from typing import Protocol

from emulator.coordinators.classic.group import ClassicGroup, JoinFuture, SyncFuture
from emulator.coordinators.consumer.group import Assignment, ConsumerGroup, ConsumerMember
from emulator.coordinators.groups.messages import GroupHeartbeatResponse, TopicPartitionsById
from wire.errors import KafkaError


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
    """What migration asks of the KIP-848 consumer protocol (consumer/protocol.py): the
    pieces of a ConsumerGroupHeartbeat (its validation, a join or heartbeat, a leave),
    the fencing of a member that leaves the group a consumer group, the group's own
    timers, and what a classic member inside the group changes."""

    @staticmethod
    def heartbeat_error(e: KafkaError) -> GroupHeartbeatResponse: ...

    @staticmethod
    def validate_heartbeat(group_id: str, member_id: str, member_epoch: int,
                           instance_id: str | None, rack_id: str | None,
                           rebalance_timeout_ms: int, names: list[str] | None,
                           regex: str | None, assignor: str | None,
                           owned: list[TopicPartitionsById] | None, version: int) -> None: ...

    def member_heartbeat(self, group_id: str, member_id: str, member_epoch: int,
                         instance_id: str | None, rack_id: str | None,
                         rebalance_timeout_ms: int, names: list[str] | None,
                         regex: str | None, assignor: str | None,
                         topic_partitions: list[TopicPartitionsById] | None,
                         client_id: str, client_host: str, now: int
                         ) -> GroupHeartbeatResponse: ...

    def leaving_member(self, group_id: str, member_id: str, instance_id: str | None
                       ) -> tuple[ConsumerGroup, ConsumerMember]: ...

    @staticmethod
    def left(member_id: str, epoch: int) -> GroupHeartbeatResponse: ...

    def leave_for_a_while(self, m: ConsumerMember, member_id: str
                          ) -> GroupHeartbeatResponse: ...

    def fence_member(self, group: ConsumerGroup, m: ConsumerMember) -> None: ...

    def tick_assignment(self, group: ConsumerGroup, now: int) -> bool: ...

    @staticmethod
    def must_fence(m: ConsumerMember, now: int) -> bool: ...

    def compute_subscription_metadata(self, group: ConsumerGroup
                                      ) -> dict[str, tuple[bytes, int]]: ...

    def update_group_epoch(self, group: ConsumerGroup, changed: bool) -> None: ...

    def maybe_update_target(self, group: ConsumerGroup) -> None: ...

    def reconcile(self, group: ConsumerGroup, m: ConsumerMember, owned: Assignment | None,
                  now: int) -> None: ...

    def remove_consumer_member(self, group: ConsumerGroup, m: ConsumerMember) -> None: ...


__all__ = ["ClassicPart", "ConsumerPart"]
