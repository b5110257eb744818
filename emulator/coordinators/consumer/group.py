"""KIP-848 consumer groups (ConsumerGroupHeartbeat): server-side assignment, pure state.

Modelled on Kafka's ``ConsumerGroup``, ``CurrentAssignmentBuilder`` and the consumer
half of ``GroupMetadataManager``. There is no join/sync barrier: every member
heartbeats, the coordinator keeps a *group epoch* (bumped when membership,
subscriptions or the subscribed topics' partition counts change), computes a
*target assignment* for that epoch with a server-side assignor (``uniform``, the
default, or ``range``), and moves each member towards its target one heartbeat at a
time:

    member state           what it waits for                       member epoch
    stable                 a newer target assignment               = target epoch
    unrevoked_partitions   the client to stop reporting the        unchanged
                           partitions it must give up
    unreleased_partitions  other members to give up partitions     = target epoch
                           it is assigned

A partition is never owned by two members at once: it is handed to its new owner only
once its previous owner has revoked it. Group state (as DescribeGroups/ListGroups
report it): Empty, Assigning (never visible here: targets are computed at once),
Reconciling (some member not at the target epoch), Stable.

Timers (checked by ``tick`` when ``consumer_due`` says one is due): the session timeout
(the group's consumer.session.timeout.ms, else group.consumer.session.timeout.ms, 45 s) fences a member that stops heartbeating; the member's rebalance timeout fences
one that does not revoke partitions in time.

Classic members inside a consumer group and the conversions both ways (online
migration) are emulator.coordinators.consumer.migration's.

Differs from Kafka: a known member rejoining with epoch 0 starts over with no
partitions.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar, Literal

from emulator.cluster.state_machines import TransitionTable
from emulator.coordinators.groups.messages import TopicPartitionsById
from wire.errors import ErrorCode as E

Assignment = dict[bytes, set[int]]  # topic id -> partitions

STABLE_MEMBER = "stable"
UNREVOKED = "unrevoked_partitions"
UNRELEASED = "unreleased_partitions"
# target state -> the states a member may enter it from (Kafka's MemberState, moved by
# CurrentAssignmentBuilder): a new target assignment can send a member from any state
# to any other, so the table is complete over the three known states; what it refuses
# is a state it does not know (Kafka's IllegalStateException: UNKNOWN_SERVER_ERROR).
_MEMBER_STATES = frozenset({STABLE_MEMBER, UNREVOKED, UNRELEASED})
MEMBER_TRANSITIONS = TransitionTable("consumer group member", {
    STABLE_MEMBER: _MEMBER_STATES,  # reached the target (or a static member rejoined)
    UNREVOKED: _MEMBER_STATES,  # must first give up partitions it still owns
    UNRELEASED: _MEMBER_STATES,  # assigned partitions other members still hold
}, E.UNKNOWN_SERVER_ERROR)
# How a static member's FENCED_INSTANCE_ID names the member holding its instance id.
FENCED = "is not the member {}."
ASSIGNORS = ("uniform", "range")


@dataclass
class ClassicMemberMetadata:
    """Kafka's ConsumerGroupMemberMetadataValue.ClassicMemberMetadata."""

    session_timeout_ms: int
    protocols: list[tuple[str, bytes]]

    @property
    def protocol_name(self) -> str:
        """The protocol the member is answered with: its first one, as Kafka does."""
        return self.protocols[0][0]


@dataclass(eq=False)
class ConsumerMember:
    member_id: str
    instance_id: str | None = None
    rack_id: str | None = None
    client_id: str = ""
    client_host: str = ""
    rebalance_timeout_ms: int = 300000
    subscribed_topic_names: list[str] = field(default_factory=list)
    subscribed_topic_regex: str | None = None
    server_assignor: str | None = None
    member_epoch: int = 0
    previous_member_epoch: int = 0
    state: str = STABLE_MEMBER
    assigned: Assignment = field(default_factory=dict)
    pending_revocation: Assignment = field(default_factory=dict)
    hb_deadline: int = 0
    revocation_deadline: int | None = None
    # A member that speaks the classic protocol (JoinGroup/SyncGroup/Heartbeat) inside a
    # consumer group (online migration, emulator.coordinators.consumer.migration): its session
    # timeout and JoinGroup protocols; None for a KIP-848 member.
    # (topic id, partition) -> the member epoch since which it holds it (assigned or
    # pending revocation): Kafka 4.4's assignment epochs, which let a commit carrying an
    # older epoch through for partitions held since then
    partition_epochs: dict[tuple[bytes, int], int] = field(default_factory=dict)
    classic: ClassicMemberMetadata | None = None
    join_deadline: int | None = None  # classic member told to rejoin must do so by then
    sync_deadline: int | None = None  # classic member that joined must sync by then

    @property
    def uses_classic_protocol(self) -> bool:
        return self.classic is not None

    def sync_partition_epochs(self) -> None:
        """Partitions newly held get the current member epoch; released ones are gone."""
        held = {(t, p) for a in (self.assigned, self.pending_revocation)
                for t, ps in a.items() for p in ps}
        for tp in [tp for tp in self.partition_epochs if tp not in held]:
            del self.partition_epochs[tp]
        for tp in held:
            self.partition_epochs.setdefault(tp, self.member_epoch)

    def transition(self, target: str) -> None:
        """Move to ``target`` if MEMBER_TRANSITIONS allows it (a domain error otherwise)."""
        MEMBER_TRANSITIONS.check(self.member_id, self.state, target)
        self.state = target


@dataclass(eq=False)
class ConsumerGroup:
    group_id: str
    group_epoch: int = 0
    assignment_epoch: int = 0
    members: dict[str, ConsumerMember] = field(default_factory=dict)
    static_members: dict[str, str] = field(default_factory=dict)  # instance id -> member id
    target: dict[str, Assignment] = field(default_factory=dict)
    subscription_metadata: dict[str, tuple[bytes, int]] = field(default_factory=dict)
    loaded_epoch: tuple[int, int] | None = None
    # Under --fidelity kafka (docs/fidelity.md, consumer-assignment-interval): when the
    # last target assignment was computed, and when the one a newer group epoch waits
    # for is due (consumer.assignment.interval.ms after it); None in fast.
    assignment_ts: int | None = None
    assignment_due: int | None = None

    type: ClassVar[Literal["consumer"]] = "consumer"
    protocol_type = "consumer"

    @property
    def is_empty(self) -> bool:
        return not self.members

    @property
    def state(self) -> str:
        if not self.members:
            return "Empty"
        if self.group_epoch != self.assignment_epoch:
            return "Assigning"
        for m in self.members.values():
            if m.member_epoch != self.assignment_epoch or m.state != STABLE_MEMBER:
                return "Reconciling"
        return "Stable"

    def assignor_name(self) -> str:
        votes: dict[str, int] = {}
        for m in self.members.values():
            if m.server_assignor:
                votes[m.server_assignor] = votes.get(m.server_assignor, 0) + 1
        return max(votes.items(), key=lambda kv: kv[1])[0] if votes else ASSIGNORS[0]

    def owner_epoch(self, topic_id: bytes, partition: int, exclude: str) -> int:
        """The epoch of the member that still holds a partition, or -1 if it is free."""
        for m in self.members.values():
            if m.member_id == exclude:
                continue
            if partition in m.assigned.get(topic_id, ()) or \
                    partition in m.pending_revocation.get(topic_id, ()):
                return m.member_epoch
        return -1

    def subscribed_topic_names(self) -> set[str]:
        return {t for m in self.members.values() for t in m.subscribed_topic_names}

    def is_subscribed_to(self, topic: str) -> bool:
        return topic in self.subscription_metadata or topic in self.subscribed_topic_names()


def consumer_due(group: ConsumerGroup) -> int | None:
    """When ``tick_consumer`` next has something to do for ``group``: the earliest
    session, revocation or (classic members, consumer.migration) join/sync deadline, or
    the target assignment waiting for its interval (--fidelity kafka)."""
    times = [] if group.assignment_due is None else [group.assignment_due]
    for m in group.members.values():
        times.append(m.hb_deadline)
        if m.classic is None:
            if m.revocation_deadline is not None and m.state == UNREVOKED:
                times.append(m.revocation_deadline)
        else:
            if m.join_deadline is not None:
                times.append(m.join_deadline)
            if m.sync_deadline is not None:
                times.append(m.sync_deadline)
    return min(times) if times else None


# ---- assignors ------------------------------------------------------------------------
def _uniform(subs: dict[str, set[str]], topics: dict[str, tuple[bytes, int]],
             current: dict[str, Assignment]) -> dict[str, Assignment]:
    """Balanced and sticky: members keep what they had up to their fair share."""
    members = sorted(subs)
    out: dict[str, set[tuple[bytes, int]]] = {m: set() for m in members}
    partitions = [(tid, p, name) for name, (tid, n) in sorted(topics.items()) for p in range(n)]
    eligible = {(tid, p): [m for m in members if name in subs[m]] for tid, p, name in partitions}
    homogeneous = len({frozenset(s) for s in subs.values()}) <= 1
    taken: set[tuple[bytes, int]] = set()
    if homogeneous and members:
        quota, extra = divmod(len(partitions), len(members))
        over: list[str] = []
        for m in members:
            mine = sorted((tid, p) for tid, ps in current.get(m, {}).items() for p in ps
                          if (tid, p) in eligible and (tid, p) not in taken)
            keep = mine[:quota]
            if len(mine) > quota:
                over.append(m)
            out[m].update(keep)
            taken.update(keep)
        for m in over:  # members that had more keep one more while extras last
            if extra <= 0:
                break
            mine = sorted((tid, p) for tid, ps in current.get(m, {}).items() for p in ps
                          if (tid, p) in eligible and (tid, p) not in taken)
            if mine:
                out[m].add(mine[0])
                taken.add(mine[0])
                extra -= 1
        free = [(tid, p) for tid, p, _ in partitions if (tid, p) not in taken]
        for m in members:
            while len(out[m]) < quota and free:
                out[m].add(free.pop(0))
        for m in members:
            if not free or extra <= 0:
                break
            if len(out[m]) == quota:
                out[m].add(free.pop(0))
                extra -= 1
    else:
        for m in members:
            for tid, ps in current.get(m, {}).items():
                for p in ps:
                    if m in eligible.get((tid, p), ()) and (tid, p) not in taken:
                        out[m].add((tid, p))
                        taken.add((tid, p))
        for tid, p, _ in partitions:
            if (tid, p) in taken or not eligible[(tid, p)]:
                continue
            best = min(eligible[(tid, p)], key=lambda m: (len(out[m]), m))
            out[best].add((tid, p))
    return {m: _group(parts) for m, parts in out.items()}


def _range(subs: dict[str, set[str]], topics: dict[str, tuple[bytes, int]],
           current: dict[str, Assignment]) -> dict[str, Assignment]:
    """Per topic, contiguous ranges of partitions in member-id order."""
    out: dict[str, Assignment] = {m: {} for m in subs}
    for name, (tid, n) in sorted(topics.items()):
        members = sorted(m for m, s in subs.items() if name in s)
        if not members:
            continue
        quota, extra = divmod(n, len(members))
        start = 0
        for i, m in enumerate(members):
            count = quota + (1 if i < extra else 0)
            if count:
                out[m][tid] = set(range(start, start + count))
            start += count
    return out


def _group(parts: set[tuple[bytes, int]]) -> Assignment:
    out: Assignment = {}
    for tid, p in parts:
        out.setdefault(tid, set()).add(p)
    return out


ASSIGNOR_FUNCS = {"uniform": _uniform, "range": _range}


def _copy(a: Assignment) -> Assignment:
    return {t: set(ps) for t, ps in a.items() if ps}


def to_wire(a: Assignment) -> list[TopicPartitionsById]:
    return [{"topic_id": t, "partitions": sorted(ps)} for t, ps in sorted(a.items()) if ps]


def _owned(topic_partitions: list[TopicPartitionsById] | None) -> Assignment | None:
    if topic_partitions is None:
        return None
    return {tp["topic_id"]: set(tp["partitions"]) for tp in topic_partitions}


def _is_subset(owned: Assignment | None, target: Assignment) -> bool:
    if owned is None:
        return False
    return all(ps <= target.get(t, set()) for t, ps in owned.items())


def _owns_any(owned: Assignment | None, revoking: Assignment) -> bool:
    if owned is None:
        return True
    return any(ps & revoking.get(t, set()) for t, ps in owned.items())
