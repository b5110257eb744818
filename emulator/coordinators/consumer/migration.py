"""Online migration between the classic and the KIP-848 consumer group protocol.

Kafka 4.x (group.consumer.migration.policy, default ``bidirectional``) lets a group
change protocol while it has members, one consumer at a time (a rolling upgrade):

upgrade     A ConsumerGroupHeartbeat (epoch 0) for a non-empty classic group that uses
            the consumer embedded protocol converts it (ConsumerGroup.fromClassicGroup):
            group epoch = assignment epoch = the classic generation; every classic
            member becomes a member *using the classic protocol* at that epoch, stable,
            with its last assignment (decoded from the SyncGroup bytes) as both current
            and target assignment and its subscription decoded from its JoinGroup
            metadata. Parked JoinGroup/SyncGroup requests are answered
            REBALANCE_IN_PROGRESS. The joining member then bumps the group epoch as
            any new member does.
classic     Classic members keep speaking JoinGroup/SyncGroup/Heartbeat/LeaveGroup;
members     the coordinator translates (GroupMetadataManager.classicGroup*ToConsumerGroup):
            JoinGroup updates the member's subscription from its metadata, reconciles it
            against the target assignment with the owned partitions it reports, and
            answers at once with generation = member epoch, protocol = the member's
            first protocol, no leader and no member list (the coordinator assigns);
            SyncGroup returns the member's assigned partitions serialized with the
            consumer protocol at the version of its metadata; Heartbeat answers
            REBALANCE_IN_PROGRESS while the member must rejoin (its epoch is behind the
            group epoch, it must revoke partitions, or partitions it waited for are
            free). Timers: session (the member's classic session timeout), join (the
            rebalance timeout after it was told to rejoin), sync (the rebalance timeout
            after its JoinGroup). Each fences the member as a heartbeat timeout does.
downgrade   When the last member using the consumer protocol leaves or is fenced and
            every remaining member uses the classic protocol, the group turns classic
            (ClassicGroup.fromConsumerGroup): Stable at generation = group epoch, the
            target assignments serialized as the members' assignments, then a
            rebalance is prepared so the members rejoin.

A failed upgrade (policy, a group not using the consumer protocol, too many members)
leaves the group classic and the heartbeat gets GROUP_ID_NOT_FOUND.
A classic static member that rejoins (new member id, same group.instance.id) in place of
the last member using the consumer protocol downgrades the group at once, without a
rebalance: it takes the replaced member's assignment.

This part sits above the classic and the consumer protocol: the requests of both reach
it first (JoinGroup, SyncGroup, Heartbeat, LeaveGroup, ConsumerGroupHeartbeat), and so do
the consumer groups' timers and every fencing of a consumer group's member, since any of
them may convert the group; it calls the public operations of the parts below it
(groups/parts.py: ``ClassicPart``, ``ConsumerPart``), and neither calls it.

Differs from Kafka: no group metadata records are written (see groups/coordinator.py).
"""

from __future__ import annotations

from emulator.coordinators.classic.group import (
    STABLE,
    ClassicGroup,
    ClassicMember,
    JoinFuture,
    SyncFuture,
    join_error,
    sync_error,
)
from emulator.coordinators.consumer.group import (
    UNRELEASED,
    UNREVOKED,
    Assignment,
    ClassicMemberMetadata,
    ConsumerGroup,
    ConsumerMember,
)
from emulator.coordinators.groups.base import GroupPart
from emulator.coordinators.groups.messages import (
    GroupHeartbeatResponse,
    JoinGroupResponse,
    SyncGroupResponse,
    TopicPartitionsById,
)
from emulator.coordinators.runtime import members as membership
from emulator.coordinators.runtime.members import LEAVE_EPOCH, STATIC_LEAVE_EPOCH
from wire.consumer_protocol import (
    ConsumerProtocolError,
    decode_assignment,
    decode_subscription,
    decode_version,
    encode_assignment,
)
from wire.errors import ErrorCode as E
from wire.errors import KafkaError

UPGRADE_POLICIES = ("upgrade", "bidirectional")
DOWNGRADE_POLICIES = ("downgrade", "bidirectional")


class GroupMigration(GroupPart):
    """Conversions and classic members inside consumer groups; a part of GroupCoordinator.

    Uses the coordinator's ``groups``, ``state``, ``now()``, ``cfg()``,
    ``new_member_uuid()``, ``mark_changed()``, the consumer group operations it needs
    (``groups.parts.ConsumerPart``) and the classic ones (``ClassicPart``).
    """

    # ---- policy ----------------------------------------------------------------------
    def migration_policy(self) -> str:
        v = self.state.config.get("group.consumer.migration.policy")
        return str(v if v is not None else "bidirectional").strip().lower()

    def _topic_ids(self, tps: list[tuple[str, list[int]]]) -> Assignment:
        out: Assignment = {}
        for name, parts in tps:
            t = self.state.topics.get(name)
            if t is not None and parts:
                out.setdefault(t.id, set()).update(p for p in parts
                                                   if 0 <= p < len(t.partitions))
        return out

    def _topic_names(self, a: Assignment) -> list[tuple[str, list[int]]]:
        by_id = self.state.topics_by_id  # a lookup per assigned topic, not a scan
        return sorted((by_id[tid].name, sorted(ps)) for tid, ps in a.items()
                      if ps and tid in by_id)

    # ---- upgrade --------------------------------------------------------------------
    def maybe_upgrade(self, group: ClassicGroup) -> ConsumerGroup | None:
        """Kafka's validateOnlineUpgrade + convertToConsumerGroup; None if not allowed."""
        if self.migration_policy() not in UPGRADE_POLICIES:
            return None
        if not group.uses_consumer_protocol():
            return None
        if len(group.members) > self.gc.cfg("group.consumer.max.size", 0x7FFFFFFF):
            return None
        for m in group.members.values():
            group.complete_join(m, join_error(E.REBALANCE_IN_PROGRESS, m.member_id))
            group.complete_sync(m, sync_error(E.REBALANCE_IN_PROGRESS))
        gen = group.generation_id
        new = ConsumerGroup(group.group_id, group_epoch=gen, assignment_epoch=gen)
        now = self.gc.now()
        for m in group.members.values():
            try:
                assigned = self._topic_ids(decode_assignment(m.assignment))
                meta = m.metadata(group.protocol_name) or (m.protocols[0][1] if m.protocols
                                                           else b"")
                sub = decode_subscription(meta)
            except ConsumerProtocolError as e:
                raise KafkaError(E.GROUP_ID_NOT_FOUND, f"Cannot upgrade the classic group "
                                 f"{group.group_id} to consumer group because the embedded "
                                 "consumer protocol is malformed.") from e
            cm = ConsumerMember(
                m.member_id, instance_id=m.group_instance_id, rack_id=sub.rack_id,
                client_id=m.client_id, client_host=m.client_host,
                rebalance_timeout_ms=m.rebalance_timeout_ms,
                subscribed_topic_names=list(sub.topics), member_epoch=gen,
                previous_member_epoch=gen, assigned=assigned,
                classic=ClassicMemberMetadata(m.session_timeout_ms, list(m.protocols)),
                hb_deadline=now + m.session_timeout_ms)
            cm.sync_partition_epochs()  # held since the classic generation
            new.members[cm.member_id] = cm
            if cm.instance_id is not None:
                new.static_members[cm.instance_id] = cm.member_id
            new.target[cm.member_id] = {t: set(ps) for t, ps in assigned.items()}
        new.subscription_metadata = self.gc.consumer.compute_subscription_metadata(new)
        new.loaded_epoch = group.loaded_epoch
        self.groups[group.group_id] = new
        return new

    # ---- downgrade ------------------------------------------------------------------
    def can_downgrade_without(self, group: ConsumerGroup, leaving: ConsumerMember) -> bool:
        """validateOnlineDowngradeWithFencedMember."""
        others = [m for m in group.members.values() if m is not leaving]
        if leaving.uses_classic_protocol or not others:
            return False
        if not all(m.uses_classic_protocol for m in others):
            return False
        if self.migration_policy() not in DOWNGRADE_POLICIES:
            return False
        return len(others) <= self.gc.cfg("group.max.size", 0x7FFFFFFF)

    def convert_to_classic(self, group: ConsumerGroup, leaving: ConsumerMember | None,
                           rebalance: bool = True) -> ClassicGroup:
        """ClassicGroup.fromConsumerGroup, then (a member left) a rebalance so the members
        rejoin."""
        now = self.gc.now()
        classic = ClassicGroup(group.group_id, now, state=STABLE, protocol_type="consumer",
                               generation_id=group.group_epoch)
        for m in group.members.values():
            if m is leaving or m.classic is None:
                continue
            cm = ClassicMember(m.member_id, m.instance_id, m.client_id, m.client_host,
                               m.rebalance_timeout_ms, m.classic.session_timeout_ms,
                               "consumer", list(m.classic.protocols))
            classic.add(cm, None)
        classic.protocol_name = classic.select_protocol()
        classic.subscribed_topics = classic.compute_subscribed_topics()
        for cm in classic.members.values():
            try:
                version = decode_version(cm.metadata(classic.protocol_name))
            except ConsumerProtocolError:
                version = 0
            cm.assignment = encode_assignment(
                self._topic_names(group.target.get(cm.member_id, {})), version)
            cm.hb_deadline = now + cm.session_timeout_ms
        classic.loaded_epoch = group.loaded_epoch
        self.groups[group.group_id] = classic
        if rebalance:
            self.gc.classic.prepare_rebalance(classic)
        return classic

    # ---- the consumer protocol's requests and timers -----------------------------------
    # A ConsumerGroupHeartbeat comes here first: it is validated by the consumer protocol,
    # a joining heartbeat (epoch 0) upgrades the non-empty classic group it names, a leave
    # may turn the group classic; the rest is the consumer protocol's (``gc.consumer``),
    # which so never calls up into migration.
    def consumer_group_heartbeat(
        self, group_id: str, member_id: str, member_epoch: int, *,
        instance_id: str | None = None, rack_id: str | None = None,
        rebalance_timeout_ms: int = -1, subscribed_topic_names: list[str] | None = None,
        subscribed_topic_regex: str | None = None, server_assignor: str | None = None,
        topic_partitions: list[TopicPartitionsById] | None = None, client_id: str = "",
        client_host: str = "", version: int = 1,
    ) -> GroupHeartbeatResponse:
        consumer = self.gc.consumer
        try:
            consumer.validate_heartbeat(group_id, member_id, member_epoch, instance_id,
                                        rack_id, rebalance_timeout_ms, subscribed_topic_names,
                                        subscribed_topic_regex, server_assignor,
                                        topic_partitions, version)
            if member_epoch in (LEAVE_EPOCH, STATIC_LEAVE_EPOCH):
                out = self._consumer_leave(group_id, member_id, member_epoch, instance_id)
            else:
                now = self.gc.now()  # the heartbeat's time, read before an upgrade's
                if member_epoch == 0:
                    self._upgrade_joined(group_id)
                out = consumer.member_heartbeat(
                    group_id, member_id, member_epoch, instance_id, rack_id,
                    rebalance_timeout_ms, subscribed_topic_names, subscribed_topic_regex,
                    server_assignor, topic_partitions, client_id, client_host, now)
        except KafkaError as e:
            return consumer.heartbeat_error(e)
        self.gc.mark_changed()
        return out

    def _upgrade_joined(self, group_id: str) -> None:
        """A joining consumer heartbeat meets a non-empty classic group: the online
        upgrade, if allowed (else the group stays classic and the consumer protocol
        answers GROUP_ID_NOT_FOUND). Raises KafkaError for a malformed embedded
        protocol."""
        group = self.groups.get(group_id)
        if isinstance(group, ClassicGroup) and not group.is_empty:
            self.maybe_upgrade(group)

    def _consumer_leave(self, group_id: str, member_id: str, epoch: int,
                        instance_id: str | None) -> GroupHeartbeatResponse:
        consumer = self.gc.consumer
        group, m = consumer.leaving_member(group_id, member_id, instance_id)
        if instance_id is not None and epoch == STATIC_LEAVE_EPOCH:
            return consumer.leave_for_a_while(m, member_id)
        self.fence_member(group, m)
        return consumer.left(member_id, epoch)

    def fence_member(self, group: ConsumerGroup, m: ConsumerMember) -> None:
        """A member leaves or is fenced (its leave, its timers, a kick): the group turns
        classic when only classic-protocol members remain (the downgrade), else the
        consumer protocol removes the member and bumps the group epoch."""
        if self.can_downgrade_without(group, m):
            self.convert_to_classic(group, m)
        else:
            self.gc.consumer.fence_member(group, m)

    def expire_member(self, group_id: str, member_id: str) -> bool:
        """Fence a consumer group's member as its session running out would (--fidelity
        adversarial, emulator/faults/adversary.py): its next heartbeat meets
        UNKNOWN_MEMBER_ID and its partitions go to the others. False when there is no
        such member."""
        group = self.groups.get(group_id)
        if not isinstance(group, ConsumerGroup) or not membership.expire(
                group, member_id, lambda m: self.fence_member(group, m)):
            return False
        self.gc.mark_changed()
        return True

    def tick_consumer(self, group: ConsumerGroup, now: int) -> bool:
        """A consumer group's timers: its target assignment's interval (the consumer
        protocol's), then each member whose session or revocation ran out, or (a classic
        member) whose join or sync timer did, fenced; a fencing may turn the group
        classic, which ends the visit. True if anything fired."""
        consumer = self.gc.consumer
        changed = consumer.tick_assignment(group, now)
        for m in list(group.members.values()):
            if self.groups.get(group.group_id) is not group:
                break  # it turned classic
            if group.members.get(m.member_id) is not m:
                continue
            if consumer.must_fence(m, now) or self._classic_timer_ran_out(m, now):
                self.fence_member(group, m)
                changed = True
        return changed

    @staticmethod
    def _classic_timer_ran_out(m: ConsumerMember, now: int) -> bool:
        """A classic member's join timer (the rebalance timeout after it was told to
        rejoin) or sync timer (the rebalance timeout after its JoinGroup) expired."""
        if m.classic is None:
            return False
        return (m.join_deadline is not None and now >= m.join_deadline) or \
            (m.sync_deadline is not None and now >= m.sync_deadline)

    # ---- the classic protocol's requests ----------------------------------------------
    # JoinGroup, SyncGroup, Heartbeat and LeaveGroup come here first: a classic member of
    # a consumer group is this part's (answered at once), any other request the classic
    # protocol's (``gc.classic``), which so never calls up into migration.
    def _consumer_group(self, group_id: str) -> ConsumerGroup | None:
        """The consumer group a classic request names (an empty id names none: the
        classic protocol answers INVALID_GROUP_ID before any lookup)."""
        group = self.groups.get(group_id) if group_id else None
        return group if isinstance(group, ConsumerGroup) else None

    def join_group(self, group_id: str, member_id: str, group_instance_id: str | None,
                   protocol_type: str, protocols: list[tuple[str, bytes]],
                   session_timeout_ms: int, rebalance_timeout_ms: int, *,
                   client_id: str = "", client_host: str = "", version: int = 9) -> JoinFuture:
        classic = self.gc.classic
        group = self._consumer_group(group_id) \
            if classic.session_timeout_valid(session_timeout_ms) else None
        if group is None or group.is_empty:
            return classic.join_group(group_id, member_id, group_instance_id, protocol_type,
                                      protocols, session_timeout_ms, rebalance_timeout_ms,
                                      client_id=client_id, client_host=client_host,
                                      version=version)
        fut: JoinFuture = JoinFuture()
        try:
            fut.complete(self.classic_join_to_consumer(
                group, member_id, group_instance_id, protocol_type, protocols,
                session_timeout_ms, rebalance_timeout_ms, client_id, client_host, version))
        except KafkaError as e:
            fut.complete(join_error(e.code, member_id))
        return fut

    def sync_group(self, group_id: str, member_id: str, generation_id: int,
                   group_instance_id: str | None = None, protocol_type: str | None = None,
                   protocol_name: str | None = None,
                   assignments: list[tuple[str, bytes]] | None = None) -> SyncFuture:
        group = self._consumer_group(group_id)
        if group is None:
            return self.gc.classic.sync_group(group_id, member_id, generation_id,
                                              group_instance_id, protocol_type, protocol_name,
                                              assignments)
        fut: SyncFuture = SyncFuture()
        try:
            fut.complete(self.classic_sync_to_consumer(
                group, member_id, generation_id, group_instance_id, protocol_type,
                protocol_name))
        except KafkaError as e:
            fut.complete(sync_error(e.code))
        self.gc.mark_changed()
        return fut

    def heartbeat(self, group_id: str, member_id: str, generation_id: int,
                  group_instance_id: str | None = None) -> int:
        group = self._consumer_group(group_id)
        if group is None:
            return self.gc.classic.heartbeat(group_id, member_id, generation_id,
                                             group_instance_id)
        try:
            return self.classic_heartbeat_to_consumer(group, member_id, generation_id,
                                                      group_instance_id)
        except KafkaError as e:
            return e.code

    def leave_group(self, group_id: str,
                    members: list[tuple[str, str | None]]) -> tuple[int, list[int]]:
        group = self._consumer_group(group_id)
        if group is None:
            return self.gc.classic.leave_group(group_id, members)
        return E.NONE, self.classic_leave_consumer(group, members)

    # ---- classic members inside a consumer group ------------------------------------
    def _classic_member(self, group: ConsumerGroup, member_id: str,
                        instance_id: str | None) -> ConsumerMember:
        """validateConsumerGroupMember + throwIfMemberDoesNotUseClassicProtocol."""
        if instance_id is None:
            m = group.members.get(member_id)
            if m is None:
                raise KafkaError(E.UNKNOWN_MEMBER_ID, f"Member {member_id} is not a member "
                                 f"of group {group.group_id}.")
        else:
            mid = group.static_members.get(instance_id)
            m = group.members.get(mid) if mid is not None else None
            if m is None:
                raise KafkaError(E.UNKNOWN_MEMBER_ID, f"Member with instance id {instance_id} "
                                 f"is not a member of group {group.group_id}.")
            if m.member_id != member_id:
                raise KafkaError(E.FENCED_INSTANCE_ID, f"Static member {member_id} with "
                                 f"instance id {instance_id} is not the member {m.member_id}.")
        if m.classic is None:
            raise KafkaError(E.UNKNOWN_MEMBER_ID, f"Member {m.member_id} does not use the "
                             "classic protocol.")
        return m

    @staticmethod
    def _check_generation(m: ConsumerMember, generation_id: int) -> None:
        if m.member_epoch != generation_id:
            raise KafkaError(E.ILLEGAL_GENERATION, f"The request generation id "
                             f"{generation_id} is not equal to the member epoch "
                             f"{m.member_epoch} of member {m.member_id}.")

    @staticmethod
    def _supports_classic_protocols(group: ConsumerGroup, protocol_type: str,
                                    names: list[str]) -> bool:
        if protocol_type != "consumer":
            return False
        classic = [m.classic for m in group.members.values() if m.classic is not None]
        if not classic:
            return bool(names)
        return any(all(name in (n for n, _ in c.protocols) for c in classic)
                   for name in names)

    def classic_join_to_consumer(self, group: ConsumerGroup, member_id: str,
                                 instance_id: str | None, protocol_type: str,
                                 protocols: list[tuple[str, bytes]], session_ms: int,
                                 rebalance_ms: int, client_id: str, client_host: str,
                                 version: int) -> JoinGroupResponse:
        """classicGroupJoinToConsumerGroup: answered at once, never parked."""
        unknown = member_id == ""
        if unknown:
            member_id = self.gc.new_member_uuid()
        if (member_id not in group.members
                and len(group.members) >= self.gc.cfg("group.consumer.max.size", 0x7FFFFFFF)):
            return join_error(E.GROUP_MAX_SIZE_REACHED, member_id)
        if not self._supports_classic_protocols(group, protocol_type,
                                                [n for n, _ in protocols]):
            return join_error(E.INCONSISTENT_GROUP_PROTOCOL, member_id)
        if unknown and instance_id is None and version >= 4:
            return join_error(E.MEMBER_ID_REQUIRED, member_id)
        try:
            sub = decode_subscription(protocols[0][1])
        except ConsumerProtocolError:
            return join_error(E.UNKNOWN_SERVER_ERROR, member_id)
        replaced = group.members.get(group.static_members.get(instance_id, "")) \
            if instance_id is not None and unknown else None
        # validateOnlineDowngradeWithReplacedMemberId: the joining classic static member
        # replaces the last member using the consumer protocol
        downgrade = (replaced is not None and replaced.classic is None
                     and all(m.classic is not None for m in group.members.values()
                             if m is not replaced)
                     and self.migration_policy() in DOWNGRADE_POLICIES
                     and len(group.members) <= self.gc.cfg("group.max.size", 0x7FFFFFFF))
        member, is_new = self._classic_member_for_join(group, member_id, instance_id, unknown)
        before = list(member.subscribed_topic_names)
        if sub.rack_id is not None:
            member.rack_id = sub.rack_id
        member.rebalance_timeout_ms = rebalance_ms
        member.subscribed_topic_names = list(sub.topics)
        member.client_id, member.client_host = client_id, client_host
        member.classic = ClassicMemberMetadata(session_ms, list(protocols))
        if is_new:
            membership.add(group, member)
        self.gc.consumer.update_group_epoch(
            group, is_new or before != member.subscribed_topic_names)
        now = self.gc.now()
        self.gc.consumer.reconcile(group, member, self._topic_ids(sub.owned_partitions), now)
        member.join_deadline = None
        member.hb_deadline = now + session_ms
        member.sync_deadline = now + rebalance_ms
        if downgrade:
            # the group turns classic, Stable, the joiner with the replaced member's
            # assignment; no rebalance (it took the place of a member that was there)
            self.convert_to_classic(group, None, rebalance=False)
        self.gc.mark_changed()
        return {"error_code": E.NONE, "member_id": member.member_id,
                "generation_id": member.member_epoch, "protocol_type": "consumer",
                "protocol_name": member.classic.protocol_name, "leader": "",
                "skip_assignment": False, "members": []}

    def _classic_member_for_join(self, group: ConsumerGroup, member_id: str,
                                 instance_id: str | None, unknown: bool
                                 ) -> tuple[ConsumerMember, bool]:
        if instance_id is None:
            m = group.members.get(member_id)
            return (m, False) if m is not None else (ConsumerMember(member_id), True)
        existing_id = group.static_members.get(instance_id)
        existing = group.members.get(existing_id) if existing_id is not None else None
        if not unknown:
            if existing is None:
                raise KafkaError(E.UNKNOWN_MEMBER_ID, f"Instance id {instance_id} is unknown.")
            if existing.member_id != member_id:
                raise KafkaError(E.FENCED_INSTANCE_ID, f"Static member {member_id} with "
                                 f"instance id {instance_id} is not the member "
                                 f"{existing.member_id}.")
            return existing, False
        if existing is None:
            return ConsumerMember(member_id, instance_id=instance_id), True
        # A static member comes back with a new member id: it replaces the old one.
        target = group.target.get(existing.member_id)
        self.gc.consumer.remove_consumer_member(group, existing)
        existing.member_id = member_id
        existing.member_epoch = existing.previous_member_epoch = 0
        existing.partition_epochs.clear()
        existing.sync_partition_epochs()
        if target is not None:
            group.target[member_id] = target
        group.members[member_id] = existing
        group.static_members[instance_id] = member_id
        return existing, False

    def classic_sync_to_consumer(self, group: ConsumerGroup, member_id: str,
                                 generation_id: int, instance_id: str | None,
                                 protocol_type: str | None, protocol_name: str | None
                                 ) -> SyncGroupResponse:
        """classicGroupSyncToConsumerGroup: the member's assignment, serialized."""
        m = self._classic_member(group, member_id, instance_id)
        self._check_generation(m, generation_id)
        assert m.classic is not None
        if protocol_type is not None and protocol_type != "consumer":
            raise KafkaError(E.INCONSISTENT_GROUP_PROTOCOL, f"The protocol type "
                             f"{protocol_type} from member {m.member_id} request is not "
                             "equal to the group protocol type consumer.")
        if protocol_name is not None and protocol_name != m.classic.protocol_name:
            raise KafkaError(E.INCONSISTENT_GROUP_PROTOCOL, f"The protocol name "
                             f"{protocol_name} from member {m.member_id} request is not "
                             f"equal to the protocol name {m.classic.protocol_name} "
                             "returned in the join response.")
        now = self.gc.now()
        if group.group_epoch > m.member_epoch and m.state != UNREVOKED:
            if m.join_deadline is None:
                m.join_deadline = now + m.rebalance_timeout_ms
            raise KafkaError(E.REBALANCE_IN_PROGRESS, f"A new rebalance is triggered in group "
                             f"{group.group_id} and member {m.member_id} should rejoin to "
                             "catch up.")
        m.sync_deadline = None
        m.hb_deadline = now + m.classic.session_timeout_ms
        try:
            version = decode_version(m.classic.protocols[0][1])
        except ConsumerProtocolError:
            version = 0
        return {"error_code": E.NONE, "protocol_type": protocol_type,
                "protocol_name": protocol_name,
                "assignment": encode_assignment(self._topic_names(m.assigned), version)}

    def classic_heartbeat_to_consumer(self, group: ConsumerGroup, member_id: str,
                                      generation_id: int, instance_id: str | None) -> int:
        """classicGroupHeartbeatToConsumerGroup: REBALANCE_IN_PROGRESS asks for a rejoin."""
        m = self._classic_member(group, member_id, instance_id)
        self._check_generation(m, generation_id)
        assert m.classic is not None
        now = self.gc.now()
        m.hb_deadline = now + m.classic.session_timeout_ms
        if (m.member_epoch < group.group_epoch or m.state == UNREVOKED
                or (m.state == UNRELEASED and not self._waiting_on_unreleased(group, m))):
            if m.join_deadline is None:
                m.join_deadline = now + m.rebalance_timeout_ms
            return E.REBALANCE_IN_PROGRESS
        return E.NONE

    @staticmethod
    def _waiting_on_unreleased(group: ConsumerGroup, m: ConsumerMember) -> bool:
        for tid, parts in group.target.get(m.member_id, {}).items():
            have = m.assigned.get(tid, set())
            for p in parts:
                if p not in have and group.owner_epoch(tid, p, m.member_id) != -1:
                    return True
        return False

    def classic_leave_consumer(self, group: ConsumerGroup,
                               members: list[tuple[str, str | None]]) -> list[int]:
        """classicGroupLeaveToConsumerGroup: per-member codes; the epoch is bumped once."""
        results = []
        left: list[ConsumerMember] = []
        for member_id, instance_id in members:
            try:
                if instance_id is not None and member_id == "":
                    mid = group.static_members.get(instance_id)
                    member_id = mid if mid is not None else ""
                m = self._classic_member(group, member_id, instance_id)
            except KafkaError as e:
                results.append(e.code)
                continue
            self.gc.consumer.remove_consumer_member(group, m)
            left.append(m)
            results.append(E.NONE)
        if left:
            group.subscription_metadata = self.gc.consumer.compute_subscription_metadata(group)
            group.group_epoch += 1
            self.gc.consumer.maybe_update_target(group)
            self.gc.mark_changed()
        return results

