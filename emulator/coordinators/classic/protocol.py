"""The classic group protocol's operations (JoinGroup, SyncGroup, Heartbeat,
LeaveGroup and their timers), as a part of the group coordinator.

The groups, members and the state table are in ``classic.group``; this module drives
them, as Kafka's GroupMetadataManager drives its ClassicGroup. Classic members of a
KIP-848 consumer group are handed to ``consumer.migration``.
"""

from __future__ import annotations

from emulator.coordinators.classic.group import (
    COMPLETING_REBALANCE,
    DEAD,
    EMPTY,
    NEW_MEMBER_JOIN_TIMEOUT_MS,
    PREPARING_REBALANCE,
    STABLE,
    ClassicGroup,
    ClassicMember,
    JoinFuture,
    SyncFuture,
    join_error,
    sync_error,
)
from emulator.coordinators.groups.base import GroupPart
from emulator.coordinators.runtime import members as membership
from wire.errors import ErrorCode as E


class ClassicProtocol(GroupPart):
    """The classic protocol's operations: a part of ``GroupCoordinator``, reaching the
    core (``now()``, ``cfg()``, ``new_member_uuid()``, ``mark_changed()``) through ``gc``;
    it reaches no other part (online migration, above it, answers the classic members of
    consumer groups before this part is asked)."""

    # ---- JoinGroup -----------------------------------------------------------------
    def session_timeout_valid(self, session_timeout_ms: int) -> bool:
        """Within group.min.session.timeout.ms and group.max.session.timeout.ms."""
        return (self.gc.cfg("group.min.session.timeout.ms", 6000) <= session_timeout_ms
                <= self.gc.cfg("group.max.session.timeout.ms", 1800000))

    def join_group(self, group_id: str, member_id: str, group_instance_id: str | None,
                   protocol_type: str, protocols: list[tuple[str, bytes]],
                   session_timeout_ms: int, rebalance_timeout_ms: int, *,
                   client_id: str = "", client_host: str = "", version: int = 9) -> JoinFuture:
        fut: JoinFuture = JoinFuture()
        if not group_id:
            fut.complete(join_error(E.INVALID_GROUP_ID, member_id))
            return fut
        if not self.session_timeout_valid(session_timeout_ms):
            fut.complete(join_error(E.INVALID_SESSION_TIMEOUT, member_id))
            return fut
        # (a classic member of a non-empty consumer group is online migration's, which
        # answers it before this part is asked: consumer.migration GroupMigration.join_group)
        group = self.groups.get(group_id)
        if group is not None and group.type != "classic":
            if not group.is_empty:
                fut.complete(join_error(E.INCONSISTENT_GROUP_PROTOCOL))
                return fut
            del self.groups[group_id]  # an empty consumer group turns classic
            group = None
        unknown = member_id == ""
        if group is None:
            if not unknown:
                fut.complete(join_error(E.UNKNOWN_MEMBER_ID, member_id))
                return fut
            group = self.groups[group_id] = ClassicGroup(group_id, self.gc.now())
            self.gc.group_created(group)
        args = (group_instance_id, protocol_type, protocols, session_timeout_ms,
                rebalance_timeout_ms, client_id, client_host, version, fut)
        if not self._accept_joining(group, member_id):
            group.remove(member_id)
            fut.complete(join_error(E.GROUP_MAX_SIZE_REACHED))
        elif unknown:
            self._join_new_member(group, *args)
        else:
            self._join_existing_member(group, member_id, *args)
        self.gc.mark_changed()
        return fut

    def _accept_joining(self, group: ClassicGroup, member_id: str) -> bool:
        max_size = self.gc.cfg("group.max.size", 0x7FFFFFFF)
        if group.state in (EMPTY, DEAD):
            return True
        if group.state == PREPARING_REBALANCE:
            m = group.members.get(member_id)
            awaiting = sum(1 for x in group.members.values() if x.awaiting_join)
            return (m is not None and m.awaiting_join) or awaiting < max_size
        return member_id in group.members or len(group.members) < max_size

    def _join_new_member(self, group: ClassicGroup, instance_id: str | None,
                         protocol_type: str, protocols: list[tuple[str, bytes]],
                         session_ms: int, rebalance_ms: int, client_id: str, client_host: str,
                         version: int, fut: JoinFuture) -> None:
        if group.state == DEAD:
            fut.complete(join_error(E.COORDINATOR_NOT_AVAILABLE))
            return
        if not group.supports_protocols(protocol_type, [n for n, _ in protocols]):
            fut.complete(join_error(E.INCONSISTENT_GROUP_PROTOCOL))
            return
        new_id = f"{instance_id if instance_id is not None else client_id}-" \
                 f"{self.gc.new_member_uuid()}"
        if instance_id is not None:
            existing = group.static_members.get(instance_id)
            if existing is not None:
                self._update_static_member(group, existing, new_id, protocols, session_ms,
                                           rebalance_ms, version, fut)
                return
        elif version >= 4:
            # KIP-394: hand out a member id and ask the client to join again with it.
            group.pending_members[new_id] = self.gc.now() + session_ms
            fut.complete(join_error(E.MEMBER_ID_REQUIRED, new_id))
            return
        self._add_member(group, new_id, instance_id, protocol_type, protocols, session_ms,
                         rebalance_ms, client_id, client_host, fut)

    def _join_existing_member(self, group: ClassicGroup, member_id: str,
                              instance_id: str | None, protocol_type: str,
                              protocols: list[tuple[str, bytes]], session_ms: int,
                              rebalance_ms: int, client_id: str, client_host: str, version: int,
                              fut: JoinFuture) -> None:
        if group.state == DEAD:
            fut.complete(join_error(E.COORDINATOR_NOT_AVAILABLE, member_id))
            return
        if not group.supports_protocols(protocol_type, [n for n, _ in protocols]):
            fut.complete(join_error(E.INCONSISTENT_GROUP_PROTOCOL, member_id))
            return
        if member_id in group.pending_members:
            self._add_member(group, member_id, instance_id, protocol_type, protocols,
                             session_ms, rebalance_ms, client_id, client_host, fut)
            return
        err = group.validate_member(member_id, instance_id)
        if err:
            fut.complete(join_error(err, member_id))
            return
        m = group.members[member_id]
        if group.state == PREPARING_REBALANCE:
            self._update_member_and_rebalance(group, m, protocols, rebalance_ms, session_ms, fut)
        elif group.state == COMPLETING_REBALANCE:
            if m.matches(protocols):
                # It missed the JoinGroup response: repeat this generation's answer.
                fut.complete(group.join_response(
                    member_id, with_members=group.leader_id == member_id))
            else:
                self._update_member_and_rebalance(group, m, protocols, rebalance_ms,
                                                  session_ms, fut)
        elif group.state == STABLE:
            if group.leader_id == member_id or not m.matches(protocols):
                # The leader's JoinGroup forces a rebalance (e.g. topic metadata changed).
                self._update_member_and_rebalance(group, m, protocols, rebalance_ms,
                                                  session_ms, fut)
            else:
                fut.complete(group.join_response(member_id, with_members=False))
        else:
            fut.complete(join_error(E.UNKNOWN_MEMBER_ID, member_id))

    def _add_member(self, group: ClassicGroup, member_id: str, instance_id: str | None,
                    protocol_type: str, protocols: list[tuple[str, bytes]], session_ms: int,
                    rebalance_ms: int, client_id: str, client_host: str,
                    fut: JoinFuture) -> None:
        m = ClassicMember(member_id, instance_id, client_id, client_host, rebalance_ms,
                          session_ms, protocol_type, list(protocols), is_new=True)
        if group.state == PREPARING_REBALANCE and group.previous_state == EMPTY:
            group.new_member_added = True
        group.add(m, fut)
        # A new member cannot heartbeat yet, and a client that gave up on its JoinGroup
        # would leave a defunct member behind: new members expire after 5 minutes.
        m.hb_deadline = self.gc.now() + NEW_MEMBER_JOIN_TIMEOUT_MS
        self._maybe_prepare_rebalance_or_complete_join(group)

    def _update_member_and_rebalance(self, group: ClassicGroup, m: ClassicMember,
                                     protocols: list[tuple[str, bytes]], rebalance_ms: int, session_ms: int, fut: JoinFuture) -> None:
        group.update_member(m, list(protocols), rebalance_ms, session_ms, fut)
        self._maybe_prepare_rebalance_or_complete_join(group)

    def _update_static_member(self, group: ClassicGroup, old_id: str, new_id: str,
                              protocols: list[tuple[str, bytes]], session_ms: int, rebalance_ms: int, version: int,
                              fut: JoinFuture) -> None:
        current_leader = group.leader_id
        m = group.replace_static_member(group.members[old_id].group_instance_id or "",
                                        old_id, new_id)
        m.hb_deadline = self.gc.now() + m.session_timeout_ms
        group.update_member(m, list(protocols), rebalance_ms, session_ms, fut)
        if group.state == STABLE:
            if group.protocol_name == group.select_protocol():
                # The static member returns to its old assignment without a rebalance.
                if version >= 9:
                    is_leader = group.leader_id == new_id
                    group.complete_join(m, group.join_response(
                        new_id, with_members=is_leader, skip_assignment=is_leader))
                else:
                    group.complete_join(m, group.join_response(
                        new_id, with_members=False, leader=current_leader))
            else:
                self._maybe_prepare_rebalance_or_complete_join(group)
        elif group.state == COMPLETING_REBALANCE:
            self.prepare_rebalance(group)
        else:
            self._maybe_complete_join_phase(group)

    # ---- rebalance machinery ----------------------------------------------------------
    def _maybe_prepare_rebalance_or_complete_join(self, group: ClassicGroup) -> None:
        if group.can_rebalance():
            self.prepare_rebalance(group)
        else:
            self._maybe_complete_join_phase(group)

    def prepare_rebalance(self, group: ClassicGroup) -> None:
        now = self.gc.now()
        if group.state == COMPLETING_REBALANCE:
            for m in group.members.values():
                m.assignment = b""
            self._propagate_assignment(group, E.REBALANCE_IN_PROGRESS)
        group.pending_sync.clear()
        group.sync_deadline = None
        initial = group.state == EMPTY
        if initial:
            delay = self.gc.cfg("group.initial.rebalance.delay.ms", 0)
            group.initial_delay = (delay, max(group.rebalance_timeout_ms() - delay, 0))
            group.join_deadline = now + delay
        group.transition(PREPARING_REBALANCE, now)
        if not initial:
            if group.has_all_members_joined():
                self._complete_join(group)
            else:
                group.initial_delay = None
                group.join_deadline = now + group.rebalance_timeout_ms()

    def _maybe_complete_join_phase(self, group: ClassicGroup) -> None:
        if (group.state == PREPARING_REBALANCE and group.previous_state != EMPTY
                and group.has_all_members_joined()):
            self._complete_join(group)

    def _complete_join(self, group: ClassicGroup) -> None:
        now = self.gc.now()
        group.join_deadline = None
        group.initial_delay = None
        for m in [m for m in group.members.values()
                  if not m.awaiting_join and m.group_instance_id is None]:
            group.remove(m.member_id)  # dynamic members that did not rejoin in time
        if group.state == DEAD:
            return
        if not group.maybe_elect_new_joined_leader() and group.members:
            # Nobody rejoined: wait another rebalance timeout for sessions to expire.
            group.join_deadline = now + group.rebalance_timeout_ms()
            return
        group.init_next_generation(now)
        if group.state == EMPTY:
            return
        for m in group.members.values():
            is_leader = group.leader_id == m.member_id
            group.complete_join(m, group.join_response(m.member_id, with_members=is_leader))
            m.hb_deadline = now + m.session_timeout_ms
            m.is_new = False
            group.pending_sync.add(m.member_id)
        group.sync_deadline = now + group.rebalance_timeout_ms()
        group.sync_generation = group.generation_id

    def _propagate_assignment(self, group: ClassicGroup, error: int) -> None:
        now = self.gc.now()
        ok = error == E.NONE
        for m in group.members.values():
            if group.complete_sync(m, {
                "error_code": error,
                "protocol_type": group.protocol_type if ok else None,
                "protocol_name": group.protocol_name if ok else None,
                "assignment": m.assignment,
            }):
                m.hb_deadline = now + m.session_timeout_ms

    def _remove_member_and_update(self, group: ClassicGroup, m: ClassicMember) -> None:
        group.complete_join(m, join_error(E.UNKNOWN_MEMBER_ID))
        group.remove(m.member_id)
        if group.state in (STABLE, COMPLETING_REBALANCE):
            self._maybe_prepare_rebalance_or_complete_join(group)
        elif group.state == PREPARING_REBALANCE and group.has_all_members_joined():
            self._complete_join(group)

    # ---- forced by --fidelity adversarial (emulator/faults/adversary.py) ---------------
    def force_rebalance(self, group_id: str) -> bool:
        """Start a rebalance of a classic group that is not rebalancing, as another
        member joining would: its members' next heartbeats answer REBALANCE_IN_PROGRESS.
        False when there is no such group or it is already rebalancing or empty."""
        group = self.groups.get(group_id)
        if group is None or group.type != "classic" or group.state not in (
                STABLE, COMPLETING_REBALANCE):
            return False
        self.prepare_rebalance(group)
        self.gc.mark_changed()
        return True

    def expire_member(self, group_id: str, member_id: str) -> bool:
        """Remove a member as its session timing out would (a long GC pause): it learns
        UNKNOWN_MEMBER_ID on its next request and the others rebalance without it."""
        group = self.groups.get(group_id)
        if not isinstance(group, ClassicGroup) or not membership.expire(
                group, member_id, lambda m: self._remove_member_and_update(group, m)):
            return False
        self.gc.mark_changed()
        return True

    # ---- SyncGroup ------------------------------------------------------------------------
    def sync_group(self, group_id: str, member_id: str, generation_id: int,
                   group_instance_id: str | None = None, protocol_type: str | None = None,
                   protocol_name: str | None = None,
                   assignments: list[tuple[str, bytes]] | None = None) -> SyncFuture:
        fut: SyncFuture = SyncFuture()
        if not group_id:
            fut.complete(sync_error(E.INVALID_GROUP_ID))
            return fut
        group = self.groups.get(group_id)  # (a consumer group's member: migration's)
        if group is None or group.type != "classic" or group.is_empty:
            fut.complete(sync_error(E.UNKNOWN_MEMBER_ID))
            return fut
        err = self._validate_sync(group, member_id, generation_id, group_instance_id,
                                  protocol_type, protocol_name)
        if err:
            fut.complete(sync_error(err))
        elif group.state == PREPARING_REBALANCE:
            fut.complete(sync_error(E.REBALANCE_IN_PROGRESS))
        elif group.state == COMPLETING_REBALANCE:
            m = group.members[member_id]
            if m.sync_future is not None:
                m.sync_future.complete(sync_error(E.REBALANCE_IN_PROGRESS))
            m.sync_future = fut
            group.pending_sync.discard(member_id)
            if not group.pending_sync:
                group.sync_deadline = None
            if group.leader_id == member_id:
                given = dict(assignments or [])
                for mid, mm in group.members.items():
                    mm.assignment = given.get(mid, b"")
                self._propagate_assignment(group, E.NONE)
                group.transition(STABLE, self.gc.now())
        elif group.state == STABLE:
            group.pending_sync.discard(member_id)
            if not group.pending_sync:
                group.sync_deadline = None
            m = group.members[member_id]
            fut.complete({"error_code": E.NONE, "protocol_type": group.protocol_type,
                          "protocol_name": group.protocol_name, "assignment": m.assignment})
        self.gc.mark_changed()
        return fut

    @staticmethod
    def _validate_sync(group: ClassicGroup, member_id: str, generation_id: int,
                       instance_id: str | None, protocol_type: str | None,
                       protocol_name: str | None) -> int:
        if group.state == DEAD:
            return E.COORDINATOR_NOT_AVAILABLE
        err = group.validate_member(member_id, instance_id)
        if err:
            return err
        if generation_id != group.generation_id:
            return E.ILLEGAL_GENERATION
        if (protocol_type is not None and protocol_type != group.protocol_type) or \
                (protocol_name is not None and protocol_name != group.protocol_name):
            return E.INCONSISTENT_GROUP_PROTOCOL
        return E.NONE

    # ---- Heartbeat --------------------------------------------------------------------------
    def heartbeat(self, group_id: str, member_id: str, generation_id: int,
                  group_instance_id: str | None = None) -> int:
        if not group_id:
            return E.INVALID_GROUP_ID
        group = self.groups.get(group_id)  # (a consumer group's member: migration's)
        if group is None or group.type != "classic":
            return E.UNKNOWN_MEMBER_ID
        if group.state == DEAD:
            return E.COORDINATOR_NOT_AVAILABLE
        err: int = group.validate_member(member_id, group_instance_id)
        if err:
            return err
        if generation_id != group.generation_id:
            return E.ILLEGAL_GENERATION
        if group.state == EMPTY:
            return E.UNKNOWN_MEMBER_ID
        m = group.members[member_id]
        m.hb_deadline = self.gc.now() + m.session_timeout_ms
        if group.state == PREPARING_REBALANCE:
            return E.REBALANCE_IN_PROGRESS
        return E.NONE

    # ---- LeaveGroup -------------------------------------------------------------------------
    def leave_group(self, group_id: str,
                    members: list[tuple[str, str | None]]) -> tuple[int, list[int]]:
        """Remove members (member id, group instance id); (top-level error, per-member)."""
        if not group_id:
            return E.INVALID_GROUP_ID, []
        group = self.groups.get(group_id)  # (a consumer group's members: migration's)
        if group is None or group.type != "classic":
            return E.NONE, [E.UNKNOWN_MEMBER_ID] * len(members)
        if group.state == DEAD:
            return E.COORDINATOR_NOT_AVAILABLE, []
        results: list[int] = []
        for member_id, instance_id in members:
            if member_id == "":
                # Administrative removal by group.instance.id.
                if instance_id is not None and instance_id in group.static_members:
                    self._remove_current_member(group, group.static_members[instance_id])
                    results.append(E.NONE)
                else:
                    results.append(E.UNKNOWN_MEMBER_ID)
            elif member_id in group.pending_members:
                group.remove(member_id)
                results.append(E.NONE)
            else:
                err = group.validate_member(member_id, instance_id)
                if not err:
                    self._remove_current_member(group, member_id)
                results.append(err)
        if any(r == E.NONE for r in results):
            if group.state in (STABLE, COMPLETING_REBALANCE):
                self._maybe_prepare_rebalance_or_complete_join(group)
            elif group.state == PREPARING_REBALANCE:
                self._maybe_complete_join_phase(group)
        self.gc.mark_changed()
        return E.NONE, results

    def _remove_current_member(self, group: ClassicGroup, member_id: str) -> None:
        m = group.members[member_id]
        group.complete_join(m, join_error(E.UNKNOWN_MEMBER_ID))
        group.remove(member_id)

    # ---- time -------------------------------------------------------------------------------
    def tick_classic(self, group: ClassicGroup, now: int) -> bool:
        """Fire every due timer of one group; True if anything changed."""
        changed = False
        for mid, deadline in list(group.pending_members.items()):
            if now >= deadline:
                group.remove(mid)
                changed = True
                if group.state == PREPARING_REBALANCE and group.has_all_members_joined():
                    self._complete_join(group)
        for m in list(group.members.values()):
            if (group.members.get(m.member_id) is m and now >= m.hb_deadline
                    and not m.satisfied_heartbeat()):
                self._remove_member_and_update(group, m)
                changed = True
        if group.join_deadline is not None and now >= group.join_deadline:
            changed = True
            if group.initial_delay is not None:
                self._try_complete_initial_rebalance(group, now)
            else:
                self._complete_join(group)
        if group.sync_deadline is not None and now >= group.sync_deadline:
            changed = True
            self._expire_pending_sync(group)
        return changed

    def _try_complete_initial_rebalance(self, group: ClassicGroup, now: int) -> None:
        delay, remaining = group.initial_delay or (0, 0)
        if group.new_member_added and remaining != 0:
            group.new_member_added = False
            new_delay = min(self.gc.cfg("group.initial.rebalance.delay.ms", 0), remaining)
            group.initial_delay = (new_delay, max(remaining - delay, 0))
            group.join_deadline = now + new_delay
        else:
            self._complete_join(group)

    def _expire_pending_sync(self, group: ClassicGroup) -> None:
        group.sync_deadline = None
        if group.sync_generation != group.generation_id:
            return
        if group.state in (COMPLETING_REBALANCE, STABLE) and group.pending_sync:
            for mid in list(group.pending_sync):
                group.remove(mid)
            self.prepare_rebalance(group)
