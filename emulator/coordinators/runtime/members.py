"""Members of KIP-848-style groups (consumer, streams and share groups): looked up by
member id or by static instance id, fenced by member epoch, removed on leave or when
their session runs out.

Kafka's GroupMetadataManager does this the same way for the three group types, with
the group type's name in the messages ("The consumer group member has a greater member
epoch ..."); so does this module, once. A group here has ``group_id``, ``members`` (member
id -> member), ``static_members`` (instance id -> member id) and ``target`` (member id ->
target assignment); a member has ``member_id``, ``instance_id``, ``member_epoch`` and
``previous_member_epoch`` (the protocols ``MemberGroup`` and ``Member``: each function
answers the caller's own member class, which mypy checks has those fields).

One piece serves classic groups too: :func:`expire`, a member removed as its session
running out would (what the removal then does is the group kind's own).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Protocol, TypeVar

from wire.errors import ErrorCode as E
from wire.errors import KafkaError

JOIN_EPOCH = 0
LEAVE_EPOCH = -1
STATIC_LEAVE_EPOCH = -2  # a static member leaving for a while: it keeps its assignment


class Member(Protocol):
    """A KIP-848-style member, as this module reads and writes it."""

    member_id: str
    instance_id: str | None
    member_epoch: int
    previous_member_epoch: int


M = TypeVar("M", bound=Member)  # the group kind's member class
T = TypeVar("T")  # the group kind's target assignment of one member
X = TypeVar("X")  # a member of any group kind (expire)
X_co = TypeVar("X_co", covariant=True)


class MemberGroup(Protocol[M, T]):
    """A KIP-848-style group (consumer, streams), as this module reads and writes it;
    generic in its member class and target assignment, so that each function answers
    the caller's own member type."""

    group_id: str
    members: dict[str, M]
    static_members: dict[str, str]  # instance id -> member id
    target: dict[str, T]  # member id -> its target assignment


def unknown_member(group_id: str, member_id: str) -> KafkaError:
    return KafkaError(E.UNKNOWN_MEMBER_ID,
                      f"Member {member_id} is not a member of group {group_id}.")


def unknown_instance(instance_id: str) -> KafkaError:
    return KafkaError(E.UNKNOWN_MEMBER_ID, f"Instance id {instance_id} is unknown.")


def unreleased_instance(member_id: str, instance_id: str, owner: str) -> KafkaError:
    return KafkaError(E.UNRELEASED_INSTANCE_ID, f"Static member {member_id} with instance id "
                      f"{instance_id} cannot join the group because the instance id is owned "
                      f"by {owner} member.")


def static_member(group: MemberGroup[M, T], member_id: str, instance_id: str,
                  fenced: str) -> M:
    """The member that holds ``instance_id``; FENCED_INSTANCE_ID when it is not
    ``member_id`` (``fenced``: how the group type words it, formatted with the owner)."""
    mid = group.static_members.get(instance_id)
    m = group.members.get(mid) if mid is not None else None
    if m is None:
        raise unknown_instance(instance_id)
    if m.member_id != member_id:
        raise KafkaError(E.FENCED_INSTANCE_ID, f"Static member {member_id} with instance id "
                         f"{instance_id} {fenced.format(m.member_id)}")
    return m


def leaving_member(group: MemberGroup[M, T], member_id: str, instance_id: str | None,
                   fenced: str) -> M:
    """The member a leave (member epoch -1 or -2) names."""
    if instance_id is None:
        m = group.members.get(member_id)
        if m is None:
            raise unknown_member(group.group_id, member_id)
        return m
    return static_member(group, member_id, instance_id, fenced)


def check_member_epoch(kind: str, m: Member, epoch: int, owned_within_assignment: bool
                       ) -> None:
    """Kafka's throwIfMemberEpochIsInvalid: a greater epoch than the coordinator's is
    fenced; a smaller one only passes as the previous epoch with nothing owned beyond the
    assignment (the response to the last heartbeat was lost)."""
    if epoch > m.member_epoch:
        raise KafkaError(E.FENCED_MEMBER_EPOCH, f"The {kind} group member has a greater member "
                         f"epoch ({epoch}) than the one known by the group coordinator "
                         f"({m.member_epoch}). The member must abandon all its partitions and "
                         "rejoin.")
    if epoch < m.member_epoch and (epoch != m.previous_member_epoch
                                   or not owned_within_assignment):
        raise KafkaError(E.FENCED_MEMBER_EPOCH, f"The {kind} group member has a smaller member "
                         f"epoch ({epoch}) than the one known by the group coordinator "
                         f"({m.member_epoch}). The member must abandon all its partitions and "
                         "rejoin.")


def committing_member(group: MemberGroup[M, T], member_id: str, epoch: int,
                      transactional: bool, unknown: KafkaError,
                      instance_id: str | None = None) -> M | None:
    """The member an OffsetCommit/TxnOffsetCommit names (Kafka's validateOffsetCommit), or
    None when the commit needs no member: an empty group committing with a negative epoch
    (an admin's), a transactional commit naming no member id, generation nor instance id
    (a producer outside group management: naming any of them has them checked). ``unknown``:
    the group type's answer for a member it does not know."""
    if epoch < 0 and not group.members:
        return None
    if transactional and epoch == -1 and member_id == "" and instance_id is None:
        return None
    m = group.members.get(member_id)
    if m is None:
        raise unknown
    return m


def set_epoch(m: Member, epoch: int) -> None:
    """A new member epoch; the one before it stays as the previous epoch."""
    if epoch != m.member_epoch:
        m.previous_member_epoch = m.member_epoch
        m.member_epoch = epoch


def replace_static(group: MemberGroup[M, T], old: M, member_id: str, instance_id: str
                   ) -> None:
    """A static member comes back under a new member id: it takes over the old member's
    assignment (and target), at member epoch 0."""
    old_id = old.member_id
    del group.members[old_id]
    old.member_id = member_id
    old.member_epoch = old.previous_member_epoch = 0
    if old_id in group.target:
        group.target[member_id] = group.target.pop(old_id)
    group.members[member_id] = old
    group.static_members[instance_id] = member_id


def add(group: MemberGroup[M, T], m: M) -> None:
    """A new member in the group (and its static instance id)."""
    group.members[m.member_id] = m
    if m.instance_id is not None:
        group.static_members[m.instance_id] = m.member_id


def remove(group: MemberGroup[M, T], m: M) -> None:
    """Take ``m`` out of the group, its target assignment and its static instance id."""
    group.members.pop(m.member_id, None)
    group.target.pop(m.member_id, None)
    if m.instance_id is not None and group.static_members.get(m.instance_id) == m.member_id:
        del group.static_members[m.instance_id]


class WithMembers(Protocol[X_co]):
    """A group of any kind (classic ones too), as ``expire`` reads it: its members by id."""

    @property
    def members(self) -> Mapping[str, X_co]: ...


def expire(group: WithMembers[X] | None, member_id: str, remove: Callable[[X], None]) -> bool:
    """Remove member ``member_id`` of ``group`` (the caller's group of its own kind, None
    when the id names no group of that kind) as its session running out would
    (--fidelity adversarial's kick, emulator/faults/adversary.py): ``remove(member)`` is
    what that kind does when a session expires. False, with nothing done, when there is
    no such group or no such member in it."""
    if group is None:
        return False
    m = group.members.get(member_id)
    if m is None:
        return False
    remove(m)
    return True
