"""The share groups' wire messages as the share coordinator reads and writes them, typed.

As emulator/coordinators/groups/messages.py does for the group coordinator (whose
heartbeat answer, described assignment and listed group ShareGroupHeartbeat,
ShareGroupDescribe and ListGroups share): exactly the fields the coordinator reads or
writes, so that mypy checks each one; tests/test_coordinator_messages.py holds every
shape to the wire's declaration.
"""

from __future__ import annotations

from typing import NotRequired, TypedDict

from emulator.coordinators.groups.messages import DescribedAssignment


class DescribedShareMember(TypedDict):
    member_id: str
    rack_id: str | None
    member_epoch: int
    client_id: str
    client_host: str
    subscribed_topic_names: list[str]
    assignment: DescribedAssignment


class DescribedShareGroup(TypedDict):
    """One group of ShareGroupDescribe's answer (an unknown or invalid group: its error
    and id, a dead state where Kafka gives one)."""

    group_id: str
    error_code: int
    error_message: NotRequired[str | None]
    group_state: NotRequired[str]
    group_epoch: NotRequired[int]
    assignment_epoch: NotRequired[int]
    assignor_name: NotRequired[str]
    members: NotRequired[list[DescribedShareMember]]
    authorized_operations: NotRequired[int]


__all__ = ["DescribedShareGroup", "DescribedShareMember"]
