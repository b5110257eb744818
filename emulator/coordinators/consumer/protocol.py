"""The KIP-848 consumer group protocol's operations (ConsumerGroupHeartbeat: joining,
leaving, reconciling towards the target assignment, fencing, timers), as a part of the
group coordinator.

Online migration (consumer/migration.py) sits above this part: a ConsumerGroupHeartbeat
reaches ``GroupMigration.consumer_group_heartbeat`` first, which validates it here,
upgrades a classic group the heartbeat joins, and passes the heartbeat or the leave down;
a member that leaves or is fenced (its leave, its timers, a kick) goes through
``GroupMigration.fence_member``, which turns the group classic when only classic members
remain and otherwise calls ``fence_member`` here. This part calls nothing of migration.

The groups, members, their state table and the server-side assignors are in
``consumer.group``; member lookup, static members and epoch fencing are the runtime's
(``runtime.members``), shared with streams and share groups.
"""

from __future__ import annotations

from emulator.cluster.group_configs import group_value
from emulator.coordinators.consumer.group import (
    ASSIGNOR_FUNCS,
    ASSIGNORS,
    FENCED,
    STABLE_MEMBER,
    UNRELEASED,
    UNREVOKED,
    Assignment,
    ConsumerGroup,
    ConsumerMember,
    _copy,
    _is_subset,
    _owned,
    _owns_any,
    to_wire,
)
from emulator.coordinators.consumer.topic_regex import compile_topic_regex
from emulator.coordinators.groups import messages as gm
from emulator.coordinators.groups.base import GroupPart, GroupsBase
from emulator.coordinators.runtime import members as membership
from emulator.coordinators.runtime.members import LEAVE_EPOCH, STATIC_LEAVE_EPOCH
from wire.errors import ErrorCode as E
from wire.errors import KafkaError


class ConsumerProtocol(GroupPart):
    """KIP-848 operations; a part of ``GroupCoordinator``."""

    def __init__(self, gc: GroupsBase) -> None:
        super().__init__(gc)
        # regex -> (the topic set it was matched against, the names it matched)
        self._regex_cache: dict[str, tuple[tuple[int, int], list[str]]] = {}

    def consumer_cfg(self, group_id: str, key: str) -> int:
        """The group's consumer.<key> override (GROUP config resource, KIP-848), else the
        broker's group.consumer.<key>: Kafka's coordinator reads these per heartbeat
        (consumerGroupSessionTimeoutMs/HeartbeatIntervalMs), so an override changed while
        members are in the group applies from their next heartbeat."""
        state = self.state
        return int(group_value(state.config, state.group_configs.get(group_id, {}),
                               f"consumer.{key}"))

    @staticmethod
    def heartbeat_error(e: KafkaError) -> gm.GroupHeartbeatResponse:
        """A ConsumerGroupHeartbeat refused: its error, no member."""
        return {"error_code": e.code, "error_message": e.message, "member_id": None,
                "member_epoch": 0, "heartbeat_interval_ms": 0, "assignment": None}

    @staticmethod
    def validate_heartbeat(group_id: str, member_id: str, member_epoch: int,
                           instance_id: str | None, rack_id: str | None,
                           rebalance_timeout_ms: int, names: list[str] | None,
                           regex: str | None, assignor: str | None,
                           owned: list[gm.TopicPartitionsById] | None, version: int) -> None:
        """Kafka's throwIfConsumerGroupHeartbeatRequestIsInvalid: INVALID_REQUEST (and
        INVALID_REGULAR_EXPRESSION, UNSUPPORTED_ASSIGNOR) before any group is looked at."""
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
        typed: ConsumerGroup = self.gc.typed_group(group_id, create, ConsumerGroup,
                                                   "Consumer group")
        return typed

    def member_heartbeat(self, group_id: str, member_id: str, member_epoch: int,
                         instance_id: str | None, rack_id: str | None,
                         rebalance_timeout_ms: int, names: list[str] | None,
                         regex: str | None, assignor: str | None,
                         topic_partitions: list[gm.TopicPartitionsById] | None,
                         client_id: str, client_host: str, now: int
                         ) -> gm.GroupHeartbeatResponse:
        """A validated heartbeat that joins (epoch 0) or stays in the group, at ``now``:
        the member takes one step towards its target assignment. Raises KafkaError (the
        member's epoch fenced, an unknown member, the group full or of another type). A
        classic group the heartbeat joins was upgraded above, by migration, if it could
        be."""
        owned = _owned(topic_partitions)
        create = member_epoch == 0
        group = self._consumer_group(group_id, create)
        if not member_id:
            member_id = self.gc.new_kafka_uuid()
        if (create and member_id not in group.members
                and len(group.members) >= self.gc.cfg("group.consumer.max.size", 0x7FFFFFFF)):
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
            membership.add(group, member)
        self.update_group_epoch(
            group, is_new or before != (member.subscribed_topic_names,
                                        member.subscribed_topic_regex))
        old_assigned = _copy(member.assigned)
        self.reconcile(group, member, owned, now)
        member.hb_deadline = now + self.consumer_cfg(group_id, "session.timeout.ms")
        full = member_epoch == 0 or (rebalance_timeout_ms != -1 and names is not None
                                     and owned is not None)
        assignment: gm.HeartbeatAssignment | None = None
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
                self.remove_consumer_member(group, m)  # it starts over
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

    def compute_subscription_metadata(self, group: ConsumerGroup) -> dict[str, tuple[bytes, int]]:
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

    def maybe_update_target(self, group: ConsumerGroup) -> None:
        """A new target assignment for a group epoch ahead of it. Under Kafka's timing
        (--fidelity kafka; docs/fidelity.md, consumer-assignment-interval) at most one per
        consumer.assignment.interval.ms (group.consumer.assignment.interval.ms, 1000), as
        Kafka 4.3+ computes them: until then members reconcile towards the last target (a
        new member: the assignment epoch, nothing assigned) and ``tick_assignment``
        computes it when due. ``fast`` computes it at once."""
        if group.group_epoch <= group.assignment_epoch:
            return
        if self.state.fidelity.kafka_timing:
            now = self.gc.now()
            interval = self.consumer_cfg(group.group_id, "assignment.interval.ms")
            if group.assignment_ts is not None and now < group.assignment_ts + interval:
                group.assignment_due = group.assignment_ts + interval
                return
            group.assignment_ts, group.assignment_due = now, None
        self._update_target_assignment(group)

    def _update_target_assignment(self, group: ConsumerGroup) -> None:
        subs = {mid: self._member_topics(group, m) for mid, m in group.members.items()
                if m.member_epoch != LEAVE_EPOCH}
        assign = ASSIGNOR_FUNCS[group.assignor_name()]
        group.target = assign(subs, group.subscription_metadata, group.target)
        group.assignment_epoch = group.group_epoch

    def reconcile(self, group: ConsumerGroup, m: ConsumerMember, owned: Assignment | None,
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
            # revoked: on towards the target, at the same epoch if more must be revoked
            # (Kafka 4.2+ no longer bumps it by one: a partition held by two members in
            # turn at one epoch)
            if not _owns_any(owned, m.pending_revocation):
                self._next_assignment(group, m, m.member_epoch, owned, now)
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

    def leaving_member(self, group_id: str, member_id: str, instance_id: str | None
                       ) -> tuple[ConsumerGroup, ConsumerMember]:
        """The group and the member a leave (member epoch -1 or -2) names; raises
        KafkaError (GROUP_ID_NOT_FOUND, UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID)."""
        group = self._consumer_group(group_id, False)
        return group, membership.leaving_member(group, member_id, instance_id, FENCED)

    @staticmethod
    def left(member_id: str, epoch: int) -> gm.GroupHeartbeatResponse:
        """The answer to a leave: the member and the epoch it left with."""
        return {"error_code": E.NONE, "member_id": member_id, "member_epoch": epoch,
                "heartbeat_interval_ms": 0, "assignment": None}

    def leave_for_a_while(self, m: ConsumerMember, member_id: str
                          ) -> gm.GroupHeartbeatResponse:
        """A static member leaving for a while (epoch -2) keeps its partitions until its
        session expires or it comes back."""
        m.member_epoch = STATIC_LEAVE_EPOCH
        m.pending_revocation = {}
        return self.left(member_id, STATIC_LEAVE_EPOCH)

    def remove_consumer_member(self, group: ConsumerGroup, m: ConsumerMember) -> None:
        membership.remove(group, m)

    def fence_member(self, group: ConsumerGroup, m: ConsumerMember) -> None:
        """Remove a member, release its partitions and bump the group epoch. Migration
        calls it for a member that leaves or is fenced when the group stays a consumer
        group (``GroupMigration.fence_member``: otherwise it turns classic)."""
        self.remove_consumer_member(group, m)
        group.subscription_metadata = self.compute_subscription_metadata(group)
        group.group_epoch += 1
        self.maybe_update_target(group)

    def update_group_epoch(self, group: ConsumerGroup, changed: bool) -> None:
        """After a member's heartbeat: the group epoch moves when its subscriptions
        (``changed``) or the subscribed topics' metadata changed, and a new target
        assignment follows a new group epoch."""
        metadata = self.compute_subscription_metadata(group)
        if metadata != group.subscription_metadata:
            group.subscription_metadata = metadata
            changed = True
        if changed:
            group.group_epoch += 1
        self.maybe_update_target(group)

    def tick_assignment(self, group: ConsumerGroup, now: int) -> bool:
        """The group's timer of its own (``GroupMigration.tick_consumer`` runs it first):
        a target assignment whose interval ran out (--fidelity kafka). True if due."""
        if group.assignment_due is not None and now >= group.assignment_due:
            group.assignment_due = None  # the interval ran out (--fidelity kafka)
            self.maybe_update_target(group)
            return True
        return False

    @staticmethod
    def must_fence(m: ConsumerMember, now: int) -> bool:
        """A member's own timers ran out: its session, or (a member using the consumer
        protocol) the revocation it was given time for."""
        expired = now >= m.hb_deadline
        stuck = m.revocation_deadline is not None and now >= m.revocation_deadline \
            and m.state == UNREVOKED and m.classic is None
        return expired or stuck

    def describe_consumer_group(self, group: ConsumerGroup) -> gm.DescribedConsumerGroup:
        by_id = self.state.topics_by_id

        def wire(a: Assignment) -> gm.DescribedAssignment:
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
