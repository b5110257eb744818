"""Classic consumer groups (JoinGroup, SyncGroup, Heartbeat, LeaveGroup): a pure state machine.

Modelled on Kafka's ``ClassicGroup`` and the classic half of ``GroupMetadataManager``
(the group coordinator of Kafka 3.7+). The broker does not understand the protocol
metadata: it passes it through, picks a protocol every member supports (by vote),
picks the leader (the first member to join; a rejoining member if the old leader did
not rejoin), and hands the leader's assignment out to the members.

State table (``ClassicGroupState``):

    Empty               -> PreparingRebalance   a member joins
    PreparingRebalance  -> CompletingRebalance  every known member rejoined, or the
                                                rebalance timeout expired
                        -> Empty                no member left when the join completes
    CompletingRebalance -> Stable               the leader's SyncGroup
                        -> PreparingRebalance   a join with new metadata, a leave, an
                                                expiry, a missing SyncGroup
    Stable              -> PreparingRebalance   the leader rejoins, a member's metadata
                                                changes, a member leaves or expires
    any                 -> Dead                 the group is deleted

Timers, as deadlines that ``tick(now)`` checks when ``classic_due`` says one is due
(no asyncio here):
    member heartbeat    session.timeout.ms since the last heartbeat (5 minutes for a new
                        member until its first join completes); members parked in a
                        JoinGroup or SyncGroup are kept alive
    pending member      a member id handed out with MEMBER_ID_REQUIRED expires after the
                        session timeout unless it rejoins
    join phase          the rebalance timeout (or group.initial.rebalance.delay.ms for
                        an empty group, extended while new members keep arriving)
    pending sync        every member must send SyncGroup within the rebalance timeout

A parked JoinGroup or SyncGroup is a ``Future`` that a later event completes; the
group coordinator's waits (emulator/coordinators/groups/waits.py) watch it.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import ClassVar, Generic, Literal, TypeVar

from emulator.cluster.state_machines import TransitionTable
from emulator.coordinators.groups.messages import (
    JoinGroupMember,
    JoinGroupResponse,
    SyncGroupResponse,
)
from wire.errors import ErrorCode as E

EMPTY = "Empty"
PREPARING_REBALANCE = "PreparingRebalance"
COMPLETING_REBALANCE = "CompletingRebalance"
STABLE = "Stable"
DEAD = "Dead"

# target state -> the states it may be entered from (Kafka's ClassicGroupState)
VALID_PREVIOUS: dict[str, frozenset[str]] = {
    EMPTY: frozenset({PREPARING_REBALANCE}),
    PREPARING_REBALANCE: frozenset({STABLE, COMPLETING_REBALANCE, EMPTY}),
    COMPLETING_REBALANCE: frozenset({PREPARING_REBALANCE}),
    STABLE: frozenset({COMPLETING_REBALANCE}),
    DEAD: frozenset({STABLE, PREPARING_REBALANCE, COMPLETING_REBALANCE, EMPTY, DEAD}),
}
# ClassicGroup.assertValidTransition throws IllegalStateException, which the coordinator
# answers with UNKNOWN_SERVER_ERROR; its message is kept.
CLASSIC_GROUP_TRANSITIONS = TransitionTable(
    "classic group", VALID_PREVIOUS, E.UNKNOWN_SERVER_ERROR,
    lambda group, current, target, valid: (
        f"Group {group} should be in the [{', '.join(valid)}] states before moving to "
        f"{target} state. "
        f"Instead it is in {current} state."))

NEW_MEMBER_JOIN_TIMEOUT_MS = 5 * 60 * 1000  # Kafka's classicGroupNewMemberJoinTimeoutMs
CONSUMER_PROTOCOL_TYPE = "consumer"


R = TypeVar("R")


class Future(Generic[R]):
    """A response that a later event completes (a parked JoinGroup or SyncGroup)."""

    __slots__ = ("result",)

    def __init__(self, result: R | None = None) -> None:
        self.result = result

    @property
    def value(self) -> R:
        """The response, once ``done``."""
        if self.result is None:
            raise RuntimeError("the future is not done")
        return self.result

    def complete(self, value: R) -> bool:
        if self.result is not None:
            return False
        self.result = value
        return True

    @property
    def done(self) -> bool:
        return self.result is not None


# A parked JoinGroup's answer, and a parked SyncGroup's.
JoinFuture = Future[JoinGroupResponse]
SyncFuture = Future[SyncGroupResponse]


def join_error(code: int, member_id: str = "") -> JoinGroupResponse:
    return {"error_code": code, "member_id": member_id, "generation_id": -1,
            "protocol_type": None, "protocol_name": None, "leader": "",
            "skip_assignment": False, "members": []}


def sync_error(code: int) -> SyncGroupResponse:
    return {"error_code": code, "protocol_type": None, "protocol_name": None,
            "assignment": b""}


@dataclass(eq=False)
class ClassicMember:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    session_timeout_ms: int
    protocol_type: str
    protocols: list[tuple[str, bytes]]
    assignment: bytes = b""
    join_future: JoinFuture | None = None
    sync_future: SyncFuture | None = None
    is_new: bool = False
    hb_deadline: int = 0

    @property
    def awaiting_join(self) -> bool:
        return self.join_future is not None

    @property
    def awaiting_sync(self) -> bool:
        return self.sync_future is not None

    def satisfied_heartbeat(self) -> bool:
        """Members parked in a rebalance need no heartbeat, except new ones."""
        if self.is_new:
            return False
        return self.awaiting_join or self.awaiting_sync

    def protocol_names(self) -> list[str]:
        return [n for n, _ in self.protocols]

    def metadata(self, protocol: str | None) -> bytes:
        for name, meta in self.protocols:
            if name == protocol:
                return meta
        return b""

    def vote(self, candidates: set[str]) -> str:
        return next(n for n, _ in self.protocols if n in candidates)

    def matches(self, protocols: list[tuple[str, bytes]]) -> bool:
        return self.protocols == protocols


@dataclass(eq=False)
class ClassicGroup:
    group_id: str
    state_ts: int
    state: str = EMPTY
    previous_state: str = DEAD
    protocol_type: str | None = None
    protocol_name: str | None = None
    generation_id: int = 0
    leader_id: str | None = None
    members: dict[str, ClassicMember] = field(default_factory=dict)
    static_members: dict[str, str] = field(default_factory=dict)
    pending_members: dict[str, int] = field(default_factory=dict)  # member id -> deadline
    pending_sync: set[str] = field(default_factory=set)
    new_member_added: bool = False
    join_deadline: int | None = None
    initial_delay: tuple[int, int] | None = None  # (delay, remaining) of an initial rebalance
    sync_deadline: int | None = None
    sync_generation: int = -1
    subscribed_topics: set[str] | None = None
    loaded_epoch: tuple[int, int] | None = None  # coordinator (leader, epoch) last seen

    type: ClassVar[Literal["classic"]] = "classic"

    # ---- views ---------------------------------------------------------------
    @property
    def is_empty(self) -> bool:
        return self.state == EMPTY

    def in_state(self, *states: str) -> bool:
        return self.state in states

    def can_rebalance(self) -> bool:
        return self.state in VALID_PREVIOUS[PREPARING_REBALANCE]

    def has_all_members_joined(self) -> bool:
        return (all(m.awaiting_join for m in self.members.values())
                and not self.pending_members)

    def rebalance_timeout_ms(self) -> int:
        return max((m.rebalance_timeout_ms for m in self.members.values()), default=0)

    def uses_consumer_protocol(self) -> bool:
        return self.protocol_type == CONSUMER_PROTOCOL_TYPE

    def is_subscribed_to(self, topic: str) -> bool:
        if self.subscribed_topics is not None:
            return topic in self.subscribed_topics
        return self.uses_consumer_protocol()

    def supports_protocols(self, protocol_type: str, names: list[str]) -> bool:
        if self.state == EMPTY:
            return bool(protocol_type) and bool(names)
        n = len(self.members)
        return self.protocol_type == protocol_type and any(
            sum(1 for m in self.members.values() if name in m.protocol_names()) == n
            for name in names)

    def select_protocol(self) -> str:
        names = [set(m.protocol_names()) for m in self.members.values()]
        candidates = set.intersection(*names) if names else set()
        votes: dict[str, int] = {}
        for m in self.members.values():
            v = m.vote(candidates)
            votes[v] = votes.get(v, 0) + 1
        return max(votes.items(), key=lambda kv: kv[1])[0]

    def validate_member(self, member_id: str, instance_id: str | None) -> int:
        if instance_id is not None:
            existing = self.static_members.get(instance_id)
            if existing is None:
                return E.UNKNOWN_MEMBER_ID
            if existing != member_id:
                return E.FENCED_INSTANCE_ID
        if member_id not in self.members:
            return E.UNKNOWN_MEMBER_ID
        return E.NONE

    def current_members(self) -> list[JoinGroupMember]:
        return [{"member_id": m.member_id, "group_instance_id": m.group_instance_id,
                 "metadata": m.metadata(self.protocol_name)} for m in self.members.values()]

    def join_response(self, member_id: str, *, with_members: bool, leader: str | None = None,
                      skip_assignment: bool = False) -> JoinGroupResponse:
        return {"error_code": E.NONE, "member_id": member_id,
                "generation_id": self.generation_id, "protocol_type": self.protocol_type,
                "protocol_name": self.protocol_name,
                # a member answered: the group has members, so a leader (never "")
                "leader": (self.leader_id or "") if leader is None else leader,
                "skip_assignment": skip_assignment,
                "members": self.current_members() if with_members else []}

    # ---- membership ------------------------------------------------------------
    def transition(self, state: str, now: int) -> None:
        """Move to ``state`` if the table allows it; a domain error otherwise."""
        CLASSIC_GROUP_TRANSITIONS.check(self.group_id, self.state, state)
        self.previous_state, self.state, self.state_ts = self.state, state, now

    def add(self, m: ClassicMember, fut: JoinFuture | None) -> None:
        if m.group_instance_id is not None:
            self.static_members[m.group_instance_id] = m.member_id
        if not self.members:
            self.protocol_type = m.protocol_type
        if self.leader_id is None:
            self.leader_id = m.member_id
        self.members[m.member_id] = m
        m.join_future = fut
        self.pending_members.pop(m.member_id, None)

    def remove(self, member_id: str) -> None:
        m = self.members.pop(member_id, None)
        if m is not None and m.group_instance_id is not None:
            self.static_members.pop(m.group_instance_id, None)
        if self.leader_id == member_id:
            self.leader_id = next(iter(self.members), None)
        self.pending_members.pop(member_id, None)
        self.pending_sync.discard(member_id)

    def update_member(self, m: ClassicMember, protocols: list[tuple[str, bytes]],
                      rebalance_timeout_ms: int, session_timeout_ms: int,
                      fut: JoinFuture | None) -> None:
        m.protocols = protocols
        m.rebalance_timeout_ms = rebalance_timeout_ms
        m.session_timeout_ms = session_timeout_ms
        if m.join_future is not None and fut is not None and m.join_future is not fut:
            # A retried JoinGroup (the client reconnected): the old request is gone.
            m.join_future.complete(join_error(E.REBALANCE_IN_PROGRESS, m.member_id))
        m.join_future = fut

    def complete_join(self, m: ClassicMember, response: JoinGroupResponse) -> bool:
        if m.join_future is None:
            return False
        m.join_future.complete(response)
        m.join_future = None
        return True

    def complete_sync(self, m: ClassicMember, response: SyncGroupResponse) -> bool:
        if m.sync_future is None:
            return False
        m.sync_future.complete(response)
        m.sync_future = None
        return True

    def replace_static_member(self, instance_id: str, old_id: str, new_id: str) -> ClassicMember:
        """A static member came back with a new member id: fence whoever holds the old one."""
        old = self.members.pop(old_id)
        self.complete_join(old, join_error(E.FENCED_INSTANCE_ID, old_id))
        self.complete_sync(old, sync_error(E.FENCED_INSTANCE_ID))
        new = ClassicMember(new_id, old.group_instance_id, old.client_id, old.client_host,
                            old.rebalance_timeout_ms, old.session_timeout_ms, old.protocol_type,
                            old.protocols, old.assignment)
        self.members[new_id] = new
        if self.leader_id == old_id:
            self.leader_id = new_id
        self.static_members[instance_id] = new_id
        if old_id in self.pending_sync:
            self.pending_sync.discard(old_id)
            self.pending_sync.add(new_id)
        return new

    def maybe_elect_new_joined_leader(self) -> bool:
        if self.leader_id is None:
            return False
        leader = self.members[self.leader_id]
        if leader.awaiting_join:
            return True
        for m in self.members.values():
            if m.awaiting_join:
                self.leader_id = m.member_id
                return True
        return False

    def init_next_generation(self, now: int) -> None:
        self.generation_id += 1
        if self.members:
            self.protocol_name = self.select_protocol()
            self.subscribed_topics = self.compute_subscribed_topics()
            self.transition(COMPLETING_REBALANCE, now)
        else:
            self.protocol_name = None
            self.subscribed_topics = self.compute_subscribed_topics()
            self.transition(EMPTY, now)
        self.pending_sync.clear()

    def compute_subscribed_topics(self) -> set[str] | None:
        """The topics of the consumer protocol's subscriptions (for OffsetDelete)."""
        if self.protocol_type != CONSUMER_PROTOCOL_TYPE:
            return None
        if not self.members:
            return set()
        if self.protocol_name is None:
            return None
        topics: set[str] = set()
        for m in self.members.values():
            parsed = parse_subscription_topics(m.metadata(self.protocol_name))
            if parsed is None:
                return None
            topics.update(parsed)
        return topics


def classic_due(group: ClassicGroup) -> int | None:
    """When ``tick_classic`` next has something to do for ``group``: its earliest
    deadline (None: nothing until an operation). A member parked in a JoinGroup or
    SyncGroup needs no heartbeat, so its session does not count; it can only stop
    being parked through an operation on the group, which reschedules it."""
    times = list(group.pending_members.values())
    times += [m.hb_deadline for m in group.members.values() if not m.satisfied_heartbeat()]
    if group.join_deadline is not None:
        times.append(group.join_deadline)
    if group.sync_deadline is not None:
        times.append(group.sync_deadline)
    return min(times) if times else None


def parse_subscription_topics(data: bytes) -> list[str] | None:
    """Topics of a ConsumerProtocolSubscription (version prefix, then v0's topic array)."""
    try:
        pos = 2  # version
        (n,) = struct.unpack_from(">i", data, pos)
        pos += 4
        out = []
        for _ in range(max(0, n)):
            (ln,) = struct.unpack_from(">h", data, pos)
            pos += 2
            out.append(bytes(data[pos:pos + ln]).decode())
            pos += ln
        return out
    except (struct.error, UnicodeDecodeError):
        return None
