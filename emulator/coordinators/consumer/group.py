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

from emulator.cluster.group_configs import group_value
from emulator.cluster.state_machines import TransitionTable
from emulator.coordinators.consumer.topic_regex import compile_topic_regex
from emulator.coordinators.runtime import members as membership
from emulator.coordinators.runtime.members import LEAVE_EPOCH, STATIC_LEAVE_EPOCH
from wire.errors import ErrorCode as E
from wire.errors import KafkaError

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

    type = "consumer"
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
    session, revocation or (classic members, group_migration) join/sync deadline."""
    times = []
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


def to_wire(a: Assignment) -> list[dict]:
    return [{"topic_id": t, "partitions": sorted(ps)} for t, ps in sorted(a.items()) if ps]


def _owned(topic_partitions: list[dict] | None) -> Assignment | None:
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


class ConsumerGroupOps:
    """KIP-848 operations; mixed into ``GroupCoordinator``."""

    groups: dict
    _regex_cache: dict[str, tuple[tuple[int, int], list[str]]]  # regex -> (topic set, names)

    def consumer_cfg(self, group_id: str, key: str) -> int:
        """The group's consumer.<key> override (GROUP config resource, KIP-848), else the
        broker's group.consumer.<key>: Kafka's coordinator reads these per heartbeat
        (consumerGroupSessionTimeoutMs/HeartbeatIntervalMs), so an override changed while
        members are in the group applies from their next heartbeat."""
        state = self.state  # type: ignore[attr-defined]
        return int(group_value(state.config, state.group_configs.get(group_id, {}),
                               f"consumer.{key}"))

    def consumer_group_heartbeat(
        self, group_id: str, member_id: str, member_epoch: int, *,
        instance_id: str | None = None, rack_id: str | None = None,
        rebalance_timeout_ms: int = -1, subscribed_topic_names: list[str] | None = None,
        subscribed_topic_regex: str | None = None, server_assignor: str | None = None,
        topic_partitions: list[dict] | None = None, client_id: str = "",
        client_host: str = "", version: int = 1,
    ) -> dict:
        try:
            self._validate_heartbeat(group_id, member_id, member_epoch, instance_id, rack_id,
                                     rebalance_timeout_ms, subscribed_topic_names,
                                     subscribed_topic_regex, server_assignor, topic_partitions,
                                     version)
            if member_epoch in (LEAVE_EPOCH, STATIC_LEAVE_EPOCH):
                out = self._consumer_leave(group_id, member_id, member_epoch, instance_id)
            else:
                out = self._consumer_heartbeat(
                    group_id, member_id, member_epoch, instance_id, rack_id,
                    rebalance_timeout_ms, subscribed_topic_names, subscribed_topic_regex,
                    server_assignor, _owned(topic_partitions), client_id, client_host)
        except KafkaError as e:
            return {"error_code": e.code, "error_message": e.message, "member_id": None,
                    "member_epoch": 0, "heartbeat_interval_ms": 0, "assignment": None}
        self.mark_changed()
        return out

    @staticmethod
    def _validate_heartbeat(group_id, member_id, member_epoch, instance_id, rack_id,
                            rebalance_timeout_ms, names, regex, assignor, owned,
                            version) -> None:
        def bad(msg: str) -> KafkaError:
            return KafkaError(E.INVALID_REQUEST, msg)

        if not group_id:
            raise bad("GroupId can't be empty.")
        if instance_id == "":
            raise bad("InstanceId can't be empty.")
        if rack_id == "":
            raise bad("RackId can't be empty.")
        if version >= 1 and not member_id:
            raise bad("MemberId can't be empty.")
        if member_epoch > 0 or member_epoch == LEAVE_EPOCH:
            if not member_id:
                raise bad("MemberId can't be empty.")
        elif member_epoch == 0:
            if rebalance_timeout_ms == -1:
                raise bad("RebalanceTimeoutMs must be provided in first request.")
            if owned is None or owned:
                raise bad("TopicPartitions must be empty when (re-)joining.")
            if not names and not regex:
                raise bad("SubscribedTopicNames or SubscribedTopicRegex must be set in first "
                          "request.")
        elif member_epoch == STATIC_LEAVE_EPOCH:
            if not member_id:
                raise bad("MemberId can't be empty.")
            if instance_id is None:
                raise bad("InstanceId can't be null.")
        else:
            raise bad("MemberEpoch is invalid.")
        if regex:
            compile_topic_regex(regex)  # INVALID_REGULAR_EXPRESSION, RE2/J's syntax
        if assignor is not None and assignor not in ASSIGNORS:
            raise KafkaError(E.UNSUPPORTED_ASSIGNOR, f"ServerAssignor {assignor} is not "
                             f"supported. Supported assignors: {', '.join(ASSIGNORS)}.")

    def _consumer_group(self, group_id: str, create: bool) -> ConsumerGroup:
        group = self.groups.get(group_id)
        if create and group is not None and group.type == "classic" and not group.is_empty:
            group = self.maybe_upgrade(group) or group  # online upgrade (group_migration)
        if group is None or (create and group.type == "classic" and group.is_empty):
            if not create:
                raise KafkaError(E.GROUP_ID_NOT_FOUND, f"Consumer group {group_id} not found.")
            group = self.groups[group_id] = ConsumerGroup(group_id)
            self.group_created(group)
        if group.type != "consumer":
            raise KafkaError(E.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a consumer group.")
        return group

    def _consumer_heartbeat(self, group_id, member_id, member_epoch, instance_id, rack_id,
                            rebalance_timeout_ms, names, regex, assignor, owned, client_id,
                            client_host) -> dict:
        now = self.now()
        create = member_epoch == 0
        group = self._consumer_group(group_id, create)
        if not member_id:
            member_id = self.new_kafka_uuid()
        if (create and member_id not in group.members
                and len(group.members) >= self.cfg("group.consumer.max.size", 0x7FFFFFFF)):
            raise KafkaError(E.GROUP_MAX_SIZE_REACHED, f"The consumer group has reached its "
                             f"maximum capacity of {len(group.members)} members.")
        member, is_new = self._member_for(group, member_id, member_epoch, instance_id, owned)
        before = (list(member.subscribed_topic_names), member.subscribed_topic_regex)
        if instance_id is not None:
            member.instance_id = instance_id
        if rack_id is not None:
            member.rack_id = rack_id
        if rebalance_timeout_ms != -1:
            member.rebalance_timeout_ms = rebalance_timeout_ms
        if assignor is not None:
            member.server_assignor = assignor
        if names is not None:
            member.subscribed_topic_names = list(names)
        if regex is not None:
            member.subscribed_topic_regex = regex or None
        member.client_id, member.client_host = client_id, client_host
        if is_new:
            group.members[member.member_id] = member
            if member.instance_id is not None:
                group.static_members[member.instance_id] = member.member_id
        bump = is_new or before != (member.subscribed_topic_names, member.subscribed_topic_regex)
        metadata = self._subscription_metadata(group)
        if metadata != group.subscription_metadata:
            group.subscription_metadata = metadata
            bump = True
        if bump:
            group.group_epoch += 1
        if group.group_epoch > group.assignment_epoch:
            self._update_target_assignment(group)
        old_assigned = _copy(member.assigned)
        self._reconcile(group, member, owned, now)
        member.hb_deadline = now + self.consumer_cfg(group_id, "session.timeout.ms")
        full = member_epoch == 0 or (rebalance_timeout_ms != -1 and names is not None
                                     and owned is not None)
        assignment = None
        if full or _copy(member.assigned) != old_assigned:
            assignment = {"topic_partitions": to_wire(member.assigned)}
        return {"error_code": E.NONE, "error_message": None, "member_id": member.member_id,
                "member_epoch": member.member_epoch,
                "heartbeat_interval_ms": self.consumer_cfg(group_id, "heartbeat.interval.ms"),
                "assignment": assignment}

    def _member_for(self, group: ConsumerGroup, member_id: str, epoch: int,
                    instance_id: str | None, owned: Assignment | None
                    ) -> tuple[ConsumerMember, bool]:
        if instance_id is None:
            m = group.members.get(member_id)
            if m is None:
                if epoch != 0:
                    raise membership.unknown_member(group.group_id, member_id)
                return ConsumerMember(member_id), True
            if epoch == 0:
                self._remove_consumer_member(group, m)  # it starts over
                fresh = ConsumerMember(member_id, rebalance_timeout_ms=m.rebalance_timeout_ms,
                                       server_assignor=m.server_assignor)
                return fresh, True
            self._check_member_epoch(m, epoch, owned)
            return m, False
        existing_id = group.static_members.get(instance_id)
        existing = group.members.get(existing_id) if existing_id is not None else None
        if epoch == 0:
            if existing is None:
                return ConsumerMember(member_id), True
            if existing.member_epoch != STATIC_LEAVE_EPOCH and existing.member_id != member_id:
                raise membership.unreleased_instance(member_id, instance_id, existing.member_id)
            # The static member comes back: it takes over the old member's assignment.
            membership.replace_static(group, existing, member_id, instance_id)
            existing.transition(STABLE_MEMBER)
            existing.pending_revocation = {}
            existing.partition_epochs.clear()
            existing.sync_partition_epochs()
            return existing, False
        m = membership.static_member(group, member_id, instance_id, FENCED)
        self._check_member_epoch(m, epoch, owned)
        return m, False

    @staticmethod
    def _check_member_epoch(m: ConsumerMember, epoch: int, owned: Assignment | None) -> None:
        if epoch != m.member_epoch:
            membership.check_member_epoch("consumer", m, epoch, _is_subset(owned, m.assigned))

    def _subscription_metadata(self, group: ConsumerGroup) -> dict[str, tuple[bytes, int]]:
        """The subscribed topics' ids and partition counts. Named topics are looked up,
        so a heartbeat costs its group's subscriptions, not the cluster's topics; a
        regex is matched against the topic names once per change of the topic set."""
        names = group.subscribed_topic_names()
        for m in group.members.values():
            if m.subscribed_topic_regex:
                names.update(self._regex_topics(m.subscribed_topic_regex))
        topics = self.state.topics
        out = {}
        for name in sorted(names):
            t = topics.get(name)
            if t is not None:
                out[name] = (t.id, len(t.partitions))
        return out

    def _regex_topics(self, regex: str) -> list[str]:
        """The non-internal topics whose whole name ``regex`` matches (cached per regex
        until a topic is created or deleted)."""
        cache = self._regex_cache
        version = self.state.topic_set_version
        hit = cache.get(regex)
        if hit is not None and hit[0] == version:
            return hit[1]
        r = compile_topic_regex(regex)
        found = [n for n, t in self.state.topics.items()
                 if not t.is_internal and r.fullmatch(n)]
        if len(cache) >= 1024:
            cache.clear()
        cache[regex] = (version, found)
        return found

    def _member_topics(self, group: ConsumerGroup, m: ConsumerMember) -> set[str]:
        topics = {t for t in m.subscribed_topic_names if t in group.subscription_metadata}
        if m.subscribed_topic_regex:
            r = compile_topic_regex(m.subscribed_topic_regex)
            topics |= {t for t in group.subscription_metadata if r.fullmatch(t)}
        return topics

    def _update_target_assignment(self, group: ConsumerGroup) -> None:
        subs = {mid: self._member_topics(group, m) for mid, m in group.members.items()
                if m.member_epoch != LEAVE_EPOCH}
        assign = ASSIGNOR_FUNCS[group.assignor_name()]
        group.target = assign(subs, group.subscription_metadata, group.target)
        group.assignment_epoch = group.group_epoch

    def _reconcile(self, group: ConsumerGroup, m: ConsumerMember, owned: Assignment | None,
                   now: int) -> None:
        """Kafka's CurrentAssignmentBuilder: one step towards the target assignment."""
        target_epoch = group.assignment_epoch
        if m.member_epoch == target_epoch and m.state == STABLE_MEMBER:
            return
        if m.member_epoch == STATIC_LEAVE_EPOCH:
            return
        if m.state == STABLE_MEMBER:
            self._next_assignment(group, m, m.member_epoch, owned, now)
        elif m.state == UNREVOKED:
            if not _owns_any(owned, m.pending_revocation):
                self._next_assignment(group, m, m.member_epoch + 1, owned, now)
        else:
            self._next_assignment(group, m, m.member_epoch, owned, now)

    def _next_assignment(self, group: ConsumerGroup, m: ConsumerMember, epoch: int,
                         owned: Assignment | None, now: int) -> None:
        target = group.target.get(m.member_id, {})
        assigned: Assignment = {}
        revoking: Assignment = {}
        adding: Assignment = {}
        unreleased = False
        for tid in set(target) | set(m.assigned):
            want = target.get(tid, set())
            have = m.assigned.get(tid, set())
            keep = have & want
            if keep:
                assigned[tid] = keep
            if have - keep:
                revoking[tid] = have - keep
            free = {p for p in want - keep if group.owner_epoch(tid, p, m.member_id) == -1}
            if len(free) < len(want - keep):
                unreleased = True
            if free:
                adding[tid] = free
        if revoking and _owns_any(owned, revoking):
            m.transition(UNREVOKED)
            membership.set_epoch(m, epoch)
            m.assigned = assigned
            m.pending_revocation = revoking
            m.revocation_deadline = now + m.rebalance_timeout_ms
            m.sync_partition_epochs()
            return
        for tid, ps in adding.items():
            assigned.setdefault(tid, set()).update(ps)
        m.transition(UNRELEASED if unreleased else STABLE_MEMBER)
        membership.set_epoch(m, group.assignment_epoch)
        m.assigned = assigned
        m.pending_revocation = {}
        m.revocation_deadline = None
        m.sync_partition_epochs()

    def _consumer_leave(self, group_id: str, member_id: str, epoch: int,
                        instance_id: str | None) -> dict:
        group = self._consumer_group(group_id, False)
        m = membership.leaving_member(group, member_id, instance_id, FENCED)
        if instance_id is not None and epoch == STATIC_LEAVE_EPOCH:
            # A static member leaving for a while keeps its partitions until its
            # session expires or it comes back.
            m.member_epoch = STATIC_LEAVE_EPOCH
            m.pending_revocation = {}
            return {"error_code": E.NONE, "member_id": member_id,
                    "member_epoch": STATIC_LEAVE_EPOCH, "heartbeat_interval_ms": 0,
                    "assignment": None}
        self._fence_consumer_member(group, m)
        return {"error_code": E.NONE, "member_id": member_id, "member_epoch": epoch,
                "heartbeat_interval_ms": 0, "assignment": None}

    def _remove_consumer_member(self, group: ConsumerGroup, m: ConsumerMember) -> None:
        membership.remove(group, m)

    def _fence_consumer_member(self, group: ConsumerGroup, m: ConsumerMember) -> None:
        """Remove a member, release its partitions and bump the group epoch; the group
        turns classic when only classic-protocol members remain (group_migration)."""
        if self.can_downgrade_without(group, m):
            self.convert_to_classic(group, m)
            return
        self._remove_consumer_member(group, m)
        group.subscription_metadata = self._subscription_metadata(group)
        group.group_epoch += 1
        self._update_target_assignment(group)

    def tick_consumer(self, group: ConsumerGroup, now: int) -> bool:
        changed = False
        for m in list(group.members.values()):
            if self.groups.get(group.group_id) is not group:
                break  # it turned classic
            if group.members.get(m.member_id) is not m:
                continue
            expired = now >= m.hb_deadline
            stuck = m.revocation_deadline is not None and now >= m.revocation_deadline \
                and m.state == UNREVOKED and m.classic is None
            if expired or stuck or self.tick_classic_members(group, now) is m:
                self._fence_consumer_member(group, m)
                changed = True
        return changed

    def describe_consumer_group(self, group: ConsumerGroup) -> dict:
        by_id = self.state.topics_by_id

        def wire(a: Assignment) -> dict:
            return {"topic_partitions": [
                {"topic_id": t, "topic_name": by_id[t].name if t in by_id else "",
                 "partitions": sorted(ps)}
                for t, ps in sorted(a.items()) if ps]}

        return {
            "error_code": E.NONE, "error_message": None, "group_id": group.group_id,
            "group_state": group.state, "group_epoch": group.group_epoch,
            "assignment_epoch": group.assignment_epoch, "assignor_name": group.assignor_name(),
            "members": [{
                "member_id": m.member_id, "instance_id": m.instance_id, "rack_id": m.rack_id,
                "member_epoch": m.member_epoch, "client_id": m.client_id,
                "client_host": m.client_host,
                "subscribed_topic_names": list(m.subscribed_topic_names),
                # "" without a regex, as Kafka 4.4 describes it (measured)
                "subscribed_topic_regex": m.subscribed_topic_regex or "",
                "assignment": wire(m.assigned),
                "target_assignment": wire(group.target.get(m.member_id, {})),
                "member_type": 0 if m.classic is not None else 1,  # classic / consumer
            } for m in group.members.values()],
            "authorized_operations": -2147483648,
        }
