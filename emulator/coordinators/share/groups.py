"""KIP-932 share groups: membership by heartbeat and the simple share assignor, pure state.

Modelled on the share half of Kafka's ``GroupMetadataManager`` and ``ShareGroup``. Like a
KIP-848 consumer group, a share group has a *group epoch* (bumped when members or
subscriptions or the subscribed topics' partition counts change) and a target assignment
computed at once for that epoch; unlike one, partitions are not owned: several members
may fetch from the same partition (the share-partition's acquisition locks keep a
record from going to two of them at once), so nothing is revoked and a member moves
straight to its target at its next heartbeat. Member states are therefore simply
"stable"; the group is Empty or Stable (Kafka's ShareGroupState).

As in Kafka 4.4, a group created by a heartbeat is at epoch 2 after it, and only
share-partitions whose state the share coordinator holds are assigned; when state is
initialized later, the next heartbeat moves the group epoch so that they are
(``_initialized_pending``). Target assignments are computed at most once per
share.assignment.interval.ms (group.share.assignment.interval.ms, 1 s), on a heartbeat
or a member's departure; meanwhile members stay at the last one, filtered by their own
subscription (a member that drops a topic loses its partitions at once, as Kafka's
ShareGroupAssignmentBuilder does).

Member epoch rules (``MEMBER_EPOCH_RULES``): 0 joins (or rejoins) with a
member id the client generated; -1 leaves; any other epoch must be the member's
current one, else FENCED_MEMBER_EPOCH; an unknown member id with a non-zero epoch is
UNKNOWN_MEMBER_ID. A member that does not heartbeat within group.share.session.timeout.ms
(45 s) is removed, and its acquired records are released (``on_member_gone``); one that
leaves keeps its share sessions (``remove_member``).

The simple assignor (Kafka's ``SimpleAssignor``, the only one Kafka ships): with at
least as many partitions as members, partitions are dealt round-robin to members
sorted by id; with more members than partitions, each member gets one partition and
partitions are shared by several members.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from emulator.cluster.metadata import Topic
from emulator.coordinators.groups import messages as gm
from emulator.coordinators.runtime import members as membership
from emulator.coordinators.runtime.deadlines import TouchedTable
from emulator.coordinators.runtime.host import ClusterHost
from emulator.coordinators.runtime.members import JOIN_EPOCH, LEAVE_EPOCH
from emulator.coordinators.share.messages import DescribedShareGroup
from wire.errors import ErrorCode as E
from wire.errors import KafkaError

if TYPE_CHECKING:
    from emulator.coordinators.groups.coordinator import GroupCoordinator

Assignment = dict[bytes, set[int]]  # topic id -> partitions

EMPTY, STABLE, DEAD = "Empty", "Stable", "Dead"
ASSIGNOR = "simple"
PROTOCOL_TYPE = "share"

# What a heartbeat's member epoch means, by (epoch class, member known?).
MEMBER_EPOCH_RULES: dict[tuple[str, bool], str] = {
    ("join", False): "create",
    ("join", True): "rejoin",
    ("leave", True): "leave",
    ("leave", False): "unknown_member",
    ("current", True): "heartbeat",  # if the epoch matches, else fenced
    ("current", False): "unknown_member",
}


@dataclass(eq=False)
class ShareMember:
    member_id: str
    rack_id: str | None = None
    client_id: str = ""
    client_host: str = ""
    subscribed_topic_names: list[str] = field(default_factory=list)
    member_epoch: int = 0
    assignment: Assignment = field(default_factory=dict)
    hb_deadline: int = 0


@dataclass(eq=False)
class ShareGroup:
    group_id: str
    group_epoch: int = 0
    assignment_epoch: int = 0
    members: dict[str, ShareMember] = field(default_factory=dict)
    target: dict[str, Assignment] = field(default_factory=dict)
    subscription_metadata: dict[str, tuple[bytes, int]] = field(default_factory=dict)
    assignment_ts: int | None = None  # when the target assignment was last computed

    type = "share"
    protocol_type = PROTOCOL_TYPE

    @property
    def is_empty(self) -> bool:
        return not self.members

    @property
    def state(self) -> str:
        return EMPTY if not self.members else STABLE

    def subscribed_topics(self) -> set[str]:
        return {t for m in self.members.values() for t in m.subscribed_topic_names}


def simple_assign(members: list[str], partitions: list[tuple[bytes, int]]
                  ) -> dict[str, Assignment]:
    """Kafka's simple share assignor for homogeneous subscriptions (see module doc)."""
    out: dict[str, Assignment] = {m: {} for m in members}
    if not members or not partitions:
        return out
    ms = sorted(members)
    if len(partitions) >= len(ms):
        for i, (tid, p) in enumerate(partitions):
            out[ms[i % len(ms)]].setdefault(tid, set()).add(p)
    else:
        for i, m in enumerate(ms):
            tid, p = partitions[i % len(partitions)]
            out[m].setdefault(tid, set()).add(p)
    return out


class ShareGroupsHost(Protocol):
    """What the share groups' membership asks of the share coordinator that composes it
    (emulator.coordinators.share.coordinator, which imports this module): its cluster,
    tables and configs, the share-partitions' state, and the news of a change. Typed
    here so that each call back up is one mypy checks and a reader sees listed."""

    @property
    def state(self) -> ClusterHost: ...

    @property
    def groups(self) -> TouchedTable[str, ShareGroup]: ...

    @property
    def gc(self) -> GroupCoordinator:
        """The group coordinator: share groups share its group-id namespace."""
        ...

    def cfg(self, key: str, default: int | None = None) -> int: ...

    def group_int(self, group_id: str, key: str) -> int: ...

    def initialize_subscribed(self, group: ShareGroup) -> None: ...

    def share_state_initialized(self, group_id: str, topic_id: bytes, index: int) -> bool: ...

    def on_member_gone(self, group_id: str, member_id: str) -> None: ...

    def mark_changed(self) -> None: ...


class ShareGroups:
    """Share group membership; a part of the share coordinator (``share.coordinator``).

    Reads the share groups (``groups``), the group coordinator (``gc``, whose groups
    share the group-id namespace) and, through ``sc``, the configs and the
    share-partitions' state."""

    def __init__(self, sc: ShareGroupsHost) -> None:
        self.sc = sc  # the share coordinator: configs, share-partition state, sessions
        self.state = sc.state
        self.groups = sc.groups
        self.gc: GroupCoordinator = sc.gc



    def _topics(self) -> dict[str, Topic]:
        return self.state.topics

    def _now(self) -> int:
        now: int = self.state.now()
        return now

    def share_group(self, group_id: str, create: bool = False) -> ShareGroup:
        """The share group ``group_id``; GROUP_ID_NOT_FOUND if absent or of another type."""
        group: ShareGroup | None = self.groups.get(group_id)
        if group is not None:
            return group
        other = self.gc.groups.get(group_id)
        if other is not None and other.state != DEAD:
            raise KafkaError(E.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a share group.")
        if not create:
            raise KafkaError(E.GROUP_ID_NOT_FOUND, f"Group {group_id} not found.")
        # Kafka 4.4: a share group created by a heartbeat is at epoch 2 after that first
        # heartbeat (one more than the later joins' single step), so it starts at 1 here
        group = self.groups[group_id] = ShareGroup(group_id, group_epoch=1, assignment_epoch=1)
        return group

    # ---- heartbeat ---------------------------------------------------------------------
    def share_group_heartbeat(self, group_id: str, member_id: str, member_epoch: int, *,
                              rack_id: str | None, subscribed_topic_names: list[str] | None,
                              client_id: str = "", client_host: str = ""
                              ) -> gm.GroupHeartbeatResponse:
        """ShareGroupHeartbeat; returns the response body (errors included)."""
        try:
            return self._heartbeat(group_id, member_id, member_epoch, rack_id,
                                   subscribed_topic_names, client_id, client_host)
        except KafkaError as e:
            return {"error_code": e.code, "error_message": e.message or E(e.code).name,
                    "member_id": None, "member_epoch": 0, "heartbeat_interval_ms": 0,
                    "assignment": None}

    def _heartbeat(self, group_id: str, member_id: str, member_epoch: int,
                   rack_id: str | None, topics: list[str] | None, client_id: str,
                   client_host: str) -> gm.GroupHeartbeatResponse:
        if not group_id:
            raise KafkaError(E.INVALID_REQUEST, "GroupId can't be empty.")
        if not member_id:
            raise KafkaError(E.INVALID_REQUEST, "MemberId can't be empty.")
        if member_epoch < LEAVE_EPOCH:
            raise KafkaError(E.INVALID_REQUEST, f"MemberEpoch is invalid: {member_epoch}.")
        if member_epoch == JOIN_EPOCH and not topics:
            raise KafkaError(E.INVALID_REQUEST,
                             "SubscribedTopicNames must be set in first request.")
        now = self._now()
        kind = "join" if member_epoch == JOIN_EPOCH else \
            "leave" if member_epoch == LEAVE_EPOCH else "current"
        group = self.share_group(group_id, create=kind == "join")
        member = group.members.get(member_id)
        action = MEMBER_EPOCH_RULES[(kind, member is not None)]
        if action == "unknown_member":
            raise membership.unknown_member(group_id, member_id)
        if action == "leave":
            self.remove_member(group, member_id, left=True)
            return {"error_code": E.NONE, "member_id": member_id, "member_epoch": LEAVE_EPOCH,
                    "heartbeat_interval_ms": 0, "assignment": None}
        if action == "heartbeat" and member is not None and member_epoch != member.member_epoch:
            raise KafkaError(E.FENCED_MEMBER_EPOCH,
                             f"The share group member has a different epoch "
                             f"({member.member_epoch}) than the request ({member_epoch}).")
        if action == "create":
            if len(group.members) >= self.sc.cfg("group.share.max.size", 200):
                raise KafkaError(E.GROUP_MAX_SIZE_REACHED,
                                 f"The share group has reached its maximum capacity of "
                                 f"{len(group.members)} members.")
            member = group.members[member_id] = ShareMember(member_id)
        assert member is not None
        bump = action == "create"
        member.client_id, member.client_host = client_id, client_host
        if rack_id is not None:
            member.rack_id = rack_id
        resubscribed = topics is not None and \
            sorted(set(topics)) != member.subscribed_topic_names
        if resubscribed:
            assert topics is not None  # resubscribed says so
            member.subscribed_topic_names = sorted(set(topics))
            bump = True
        if group.assignment_epoch >= group.group_epoch and self._initialized_pending(group):
            bump = True  # share-partitions initialized since the target was computed
        if self._refresh_metadata(group) or bump:
            group.group_epoch += 1
        if group.assignment_epoch != group.group_epoch:
            self._maybe_compute_target(group, now)
        self.sc.initialize_subscribed(group)  # InitializeShareGroupState, as Kafka's does
        previous, before = member.member_epoch, member.assignment
        if action != "heartbeat" or member.member_epoch != group.assignment_epoch \
                or resubscribed:
            # Kafka's ShareGroupAssignmentBuilder: the target, filtered by the member's
            # subscription - a member that drops a topic loses its partitions in this
            # very answer, not at the next target assignment (which may wait for
            # share.assignment.interval.ms)
            member.member_epoch = group.assignment_epoch
            member.assignment = self._subscribed_only(
                group, member, group.target.get(member_id, {}))
        member.hb_deadline = now + self.sc.group_int(group_id, "share.session.timeout.ms")
        self.sc.mark_changed()
        send = action != "heartbeat" or previous != member.member_epoch or \
            before != member.assignment
        return {"error_code": E.NONE, "member_id": member_id,
                "member_epoch": member.member_epoch,
                "heartbeat_interval_ms": self.sc.group_int(group_id, "share.heartbeat.interval.ms"),
                "assignment": {"topic_partitions": [
                    {"topic_id": tid, "partitions": sorted(ps)}
                    for tid, ps in sorted(member.assignment.items())]} if send else None}

    def _subscribed_only(self, group: ShareGroup, member: ShareMember,
                         assignment: Assignment) -> Assignment:
        """``assignment`` without the topics ``member`` no longer subscribes to."""
        topics = self._topics()
        ids = {topics[n].id for n in member.subscribed_topic_names if n in topics}
        if all(tid in ids for tid in assignment):
            return assignment
        return {tid: ps for tid, ps in assignment.items() if tid in ids}


    def _refresh_metadata(self, group: ShareGroup) -> bool:
        """A subscribed topic created, deleted or grown: True (the group epoch must move)."""
        topics = self._topics()
        meta = {name: (topics[name].id, len(topics[name].partitions))
                for name in group.subscribed_topics() if name in topics}
        if meta == group.subscription_metadata:
            return False
        group.subscription_metadata = meta
        return True


    def _initialized_pending(self, group: ShareGroup) -> bool:
        """Kafka's initializedAssignmentPending: a subscribed topic has initialized
        share-partitions that the target assignment does not cover exactly, so the group
        epoch must move for them to be assigned."""
        if not group.members:
            return False
        assigned: dict[bytes, set[int]] = {}
        for a in group.target.values():
            for tid, ps in a.items():
                assigned.setdefault(tid, set()).update(ps)
        for tid, n in group.subscription_metadata.values():
            ready = {p for p in range(n)
                     if self.sc.share_state_initialized(group.group_id, tid, p)}
            if ready and ready != assigned.get(tid, set()):
                return True
        return False

    def _maybe_compute_target(self, group: ShareGroup, now: int) -> None:
        """A new target assignment, at most one per share.assignment.interval.ms
        (group.share.assignment.interval.ms, 1 s), as Kafka 4.4 computes them: meanwhile
        members stay at the last one (a new member: nothing assigned, at its epoch)."""
        interval = self.sc.group_int(group.group_id, "share.assignment.interval.ms")
        if group.assignment_ts is not None and now < group.assignment_ts + interval:
            return
        self._compute_target(group)
        group.assignment_ts = now

    def _compute_target(self, group: ShareGroup) -> None:
        # Only share-partitions with initialized state are assigned (Kafka 4.4's
        # topicAssignablePartitionsMap): a member's first heartbeat on a new topic gets
        # nothing, a later one - after the group coordinator initialized the state - gets
        # the partitions.
        partitions = [(tid, p) for _, (tid, n) in sorted(group.subscription_metadata.items())
                      for p in range(n)
                      if self.sc.share_state_initialized(group.group_id, tid, p)]
        by_topics: dict[tuple[str, ...], list[str]] = {}
        for m in group.members.values():
            by_topics.setdefault(tuple(m.subscribed_topic_names), []).append(m.member_id)
        target: dict[str, Assignment] = {}
        # Members with the same subscription share its partitions (homogeneous per set).
        for names, mids in by_topics.items():
            ids = {group.subscription_metadata[n][0] for n in names
                   if n in group.subscription_metadata}
            target.update(simple_assign(mids, [tp for tp in partitions if tp[0] in ids]))
        group.target = target
        group.assignment_epoch = group.group_epoch

    def remove_member(self, group: ShareGroup, member_id: str, left: bool = False) -> None:
        """A member leaves (``left``: its heartbeat at epoch -1) or is fenced.

        Leaving does not touch the member's share sessions or acquired records: on Kafka
        the group coordinator does not tell the share-partition leaders, and a consumer
        closing sends its last acknowledgements and final-epoch requests around its leave
        heartbeat, which must land (client_tests/test_share_groups_raw.py, both targets).
        Its sessions close with the final epoch, or its locks run out. A fenced member
        (its session timed out) is gone: its sessions close and its records are released."""
        if group.members.pop(member_id, None) is None:
            return
        group.target.pop(member_id, None)
        group.group_epoch += 1
        self._refresh_metadata(group)
        self._maybe_compute_target(group, self._now())
        if not left:
            self.sc.on_member_gone(group.group_id, member_id)
        self.sc.mark_changed()

    # ---- describe / list -------------------------------------------------------------
    def describe_share_groups(self, group_ids: list[str]) -> list[DescribedShareGroup]:
        out: list[DescribedShareGroup] = []
        for gid in group_ids:
            if not gid:
                out.append({"group_id": gid, "error_code": E.INVALID_GROUP_ID,
                            "error_message": "The group id is invalid."})
                continue
            try:
                group = self.share_group(gid)
            except KafkaError as e:
                out.append({"group_id": gid, "error_code": e.code, "error_message": e.message,
                            "group_state": DEAD})
                continue
            out.append(self._describe(group))
        return out

    def _describe(self, group: ShareGroup) -> DescribedShareGroup:
        by_id = self.state.topics_by_id
        return {
            "group_id": group.group_id, "error_code": E.NONE, "group_state": group.state,
            "group_epoch": group.group_epoch, "assignment_epoch": group.assignment_epoch,
            "assignor_name": ASSIGNOR,
            "members": [{
                "member_id": m.member_id, "rack_id": m.rack_id, "member_epoch": m.member_epoch,
                "client_id": m.client_id, "client_host": m.client_host,
                "subscribed_topic_names": m.subscribed_topic_names,
                "assignment": {"topic_partitions": [
                    {"topic_id": tid, "topic_name": by_id[tid].name if tid in by_id else "",
                     "partitions": sorted(ps)}
                    for tid, ps in sorted(m.assignment.items())]},
            } for m in group.members.values()],
        }

    def list_share_groups(self, states: list[str] | None = None,
                          types: list[str] | None = None,
                          broker_id: int | None = None) -> list[gm.ListedGroup]:
        """ListGroups rows for share groups (filtered like GroupCoordinator.list_groups)."""
        wanted_states = {s.strip().lower() for s in states or []}
        wanted_types = {t.strip().lower() for t in types or []}
        if wanted_types and "share" not in wanted_types:
            return []
        out: list[gm.ListedGroup] = []
        for gid, group in self.groups.items():
            if wanted_states and group.state.lower() not in wanted_states:
                continue
            if not self.gc.topic.coordinated_by(broker_id, gid):
                continue
            out.append({"group_id": gid, "protocol_type": PROTOCOL_TYPE,
                        "group_state": group.state, "group_type": "share"})
        return out
