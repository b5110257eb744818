"""The share-partition manager, and the share groups' way in to the group coordinator's
and the share coordinator's parts (``SharePartitionManager``).

Kafka splits share groups over three parts, and so do the APIs here:
- the group coordinator (membership: ShareGroupHeartbeat, ShareGroupDescribe, the
  admin offsets APIs 90-92, ListGroups/DeleteGroups) - the leader of the group's
  ``__consumer_offsets`` partition, exactly as for consumer groups (membership is the
  part ``share.groups.ShareGroups``, the offsets admin APIs ``share.group_offsets``,
  group deletion is here);
- the share-partition leader (ShareFetch, ShareAcknowledge) - the topic partition's
  leader, holding share sessions (``ShareSession``) and the in-flight records of each
  ``SharePartition`` (here; the records' state machine is ``share.partition``);
- the share coordinator (Initialize/Read/Write/Delete/ReadSummary ShareGroupState, keys
  83-87; the part ``share.state.ShareStateCoordinator``) - the leader of the
  ``__share_group_state`` partition chosen by
  ``abs(hash("group:topicId:partition")) % share.coordinator.state.topic.num.partitions``,
  persisting each share-partition's SPSO, state epoch and state batches.

The emulator keeps one ``SharePartition`` per (group, topic id, partition), which *is*
the persisted state; the leader's cache is the same object, reloaded when the
partition's leader epoch changes (acquisitions dropped, as an unpersisted cache would
lose them). So share state survives a leader move and a coordinator move.

Configs (emulator.cluster.group_configs): broker keys group.share.* with Kafka's names
and defaults, and per-group overrides share.* (the GROUP config resource, or
``set_group_config``) such as share.auto.offset.reset (latest),
share.record.lock.duration.ms and share.delivery.count.limit.

Share-partition state is persisted as Kafka's share coordinator does it: every change
is announced (``share_state_changed``) and written as ShareSnapshot/ShareUpdate records
of __share_group_state by emulator.coordinators.share.state_log, which also reloads it with
--data-dir. As in Kafka 4.x, the group coordinator initializes the share-partitions of
every subscribed topic (InitializeShareGroupState at the group epoch, start offset -1 for
a topic new to the group, 0 for a new partition of a known one) when a ShareGroupHeartbeat
sees them; the share-partition leader resolves share.auto.offset.reset for a start
offset of -1 when it first loads the state; a fetch of a share-partition without state
leaves it out (``NoShareState``; see the ShareFetch handler). Only share-partitions with
state are assigned (share.groups), as in Kafka 4.4. Under read_committed, records of aborted transactions
are archived as they are acquired (never delivered), like transaction markers.

Cost follows what changed (docs/architecture.md): ``tick`` visits only the share groups whose
earliest member session is due and the share-partitions whose earliest acquisition
lock is due (``Deadlines`` heaps); groups looked up (``TouchedTable``) and
share-partitions written (``persist``) since the last tick are rescheduled.

Differs from Kafka: no dead-letter queue (KIP-1191). A share session closes with the
connection that opened it and its records are released, as on Kafka
(``connection_closed``; a crashed broker releases nothing).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import cast

from emulator.cluster.events import DomainEvent, ShareStateChanged, TopicDeleted, observes
from emulator.cluster.group_configs import (
    SHARE_BROKER_DEFAULTS,
    broker_value,
    group_value,
    parse_duration_ms,
    validate,
)
from emulator.cluster.metadata import Topic
from emulator.cluster.partition import AbortedTxn, Partition
from emulator.coordinators.groups.base import group_key
from emulator.coordinators.groups.coordinator import GroupCoordinator
from emulator.coordinators.runtime.deadlines import Deadlines, TouchedTable
from emulator.coordinators.runtime.host import ClusterHost
from emulator.coordinators.share.groups import DEAD, ShareGroup, ShareGroups
from emulator.coordinators.share.partition import Acquired, SharePartition
from emulator.coordinators.share.state import (
    ShareStateCoordinator,
)
from emulator.log import Log
from wire.errors import ErrorCode as E
from wire.errors import KafkaError
from wire.records import CONTROL_BIT, read_header

FINAL_EPOCH, INITIAL_EPOCH = -1, 0


class NoShareState(KafkaError):
    """A share-partition the share coordinator has no state for."""


def _is_aborted(data: bytes | memoryview, aborted: list[AbortedTxn]) -> bool:
    """A transactional batch of an aborted transaction (read_committed archives it)."""
    h = read_header(data)
    return h.is_transactional and any(
        a.producer_id == h.producer_id and a.first_offset <= h.base_offset <= a.last_offset
        for a in aborted)


@dataclass(eq=False)
class ShareSession:
    """A share session (Kafka's ShareSession): per broker, keyed by (group, member)."""

    group_id: str
    member_id: str
    epoch: int = 1
    partitions: set[tuple[bytes, int]] = field(default_factory=set)
    connection_id: int = 0  # the connection whose ShareFetch opened it (0: none known)


def next_epoch(epoch: int) -> int:
    return 1 if epoch >= 0x7FFFFFFF else epoch + 1


class SharePartitionManager:
    """Every share group, share-partition and share session of the cluster.

    Named after its own work, Kafka's SharePartitionManager (the share-partition
    leader: share sessions, ShareFetch, ShareAcknowledge, the in-flight records), and the
    way in to the other two roles, each a part named after Kafka's: membership
    (``ShareGroups``, the group coordinator's for share groups) and the durable state
    (``ShareStateCoordinator``, what Kafka calls the share coordinator).
    """

    def __init__(self, state: ClusterHost, groups: GroupCoordinator) -> None:
        self.state = state
        self.gc = groups
        self.groups: TouchedTable[str, ShareGroup] = TouchedTable()
        self.partitions: dict[tuple[str, bytes, int], SharePartition] = {}
        # group id -> its share-partitions' keys (in creation order): what a member's
        # departure or the group's admin APIs touch, without a pass over every group's
        self._by_group: dict[str, dict[tuple[str, bytes, int], None]] = {}
        self.sessions: dict[tuple[int, str, str], ShareSession] = {}
        # When each share group's earliest member session and each share-partition's
        # earliest acquisition lock runs out: a tick visits only those.
        self.session_timers = Deadlines()
        self.lock_timers = Deadlines()
        self._written: set[tuple[str, bytes, int]] = set()  # persisted since the tick
        self._news: set[str] = set()  # groups whose share state changed (mark_changed)
        self.visits = 0  # groups and share-partitions a tick looked at (tests count)
        # The parts: membership (Kafka's group coordinator for share groups) and the
        # share-group state (Kafka's share coordinator, API keys 83-87).
        self.membership = ShareGroups(self)
        self.state_coordinator = ShareStateCoordinator(self)
        self.topic = self.state_coordinator.topic  # __share_group_state
        self.describe_share_groups = self.membership.describe_share_groups
        self.list_share_groups = self.membership.list_share_groups
        self.remove_member = self.membership.remove_member
        self.share_group = self.membership.share_group
        self.share_group_heartbeat = self.membership.share_group_heartbeat
        self.check_state_coordinator = self.state_coordinator.check_state_coordinator
        self.coordinator_for = self.state_coordinator.coordinator_for
        self.delete_state = self.state_coordinator.delete_state
        self.ensure_state_topic = self.state_coordinator.ensure_state_topic
        self.initialize_state = self.state_coordinator.initialize_state
        self.read_state = self.state_coordinator.read_state
        self.state_summary = self.state_coordinator.state_summary
        self.write_state = self.state_coordinator.write_state
        state.hooks.append(self._on_event)
        state.tick_hooks.append(self.tick)

    @observes(TopicDeleted)
    def _on_event(self, kind: str, event: DomainEvent) -> None:
        """A deleted topic takes its share-partitions' state with it."""
        if not isinstance(event, TopicDeleted):
            return
        live = self.state.topics_by_id
        for key in [k for k in self.partitions if k[1] not in live]:
            self.forget(key)

    # ---- persistence (emulator.coordinators.share.state_log writes the records) -------------
    def persist(self, sp: SharePartition) -> None:
        """The share coordinator's state of ``sp`` may have changed: write it. Every
        acquisition (a new lock) passes here, so its lock timer is rescheduled."""
        self._written.add((sp.group_id, sp.topic_id, sp.partition))
        self._news.add(sp.group_id)
        self.state.emit(ShareStateChanged(key=(sp.group_id, sp.topic_id, sp.partition),
                        sp=sp))

    def forget(self, key: tuple[str, bytes, int]) -> None:
        """DeleteShareGroupState: the state goes (tombstones)."""
        if self.partitions.pop(key, None) is not None:
            mine = self._by_group.get(key[0])
            if mine is not None:
                mine.pop(key, None)
                if not mine:
                    del self._by_group[key[0]]
            self._news.add(key[0])
            self.state.emit(ShareStateChanged(key=key, sp=None))

    def initialize_subscribed(self, group: ShareGroup) -> None:
        """The group coordinator's InitializeShareGroupState for every partition of a
        subscribed topic without state (Kafka's maybeCreateInitializeShareGroupStateRequest):
        at the group epoch, start offset -1 (share.auto.offset.reset decides when the
        share-partition first loads) for a topic new to the group, 0 for a new partition
        of a topic it knows, so records produced there before the first fetch are seen."""
        gid = group.group_id
        missing = [(tid, p) for _, (tid, n) in sorted(group.subscription_metadata.items())
                   for p in range(n) if (gid, tid, p) not in self.partitions]
        if not missing:
            return
        try:
            self.state_coordinator.ensure_state_topic()
        except KafkaError:
            return  # no share coordinator: Kafka retries on a later heartbeat
        known = {k[1] for k in self._by_group.get(gid, ())}
        for tid, p in missing:
            self.state_coordinator.initialize_state(gid, tid, p, group.group_epoch, 0 if tid in known else -1)

    def partition_keys(self, group_id: str) -> list[tuple[str, bytes, int]]:
        """The (group, topic id, partition) keys of the group's share-partitions, in the
        order they were created."""
        return list(self._by_group.get(group_id, ()))

    def share_state_initialized(self, group_id: str, topic_id: bytes, index: int) -> bool:
        # the share coordinator holds state for it (its start offset may still be -1,
        # for the share-partition leader to resolve with share.auto.offset.reset)
        return (group_id, topic_id, index) in self.partitions

    # ---- configs ---------------------------------------------------------------------
    def cfg(self, key: str, default: int | None = None) -> int:
        """A broker key (group.share.*, share.coordinator.*), Kafka's default if unset."""
        if default is not None and key not in SHARE_BROKER_DEFAULTS:
            v = self.state.config.get(key)
            return default if v is None else int(v)
        return broker_value(self.state.config, key)

    def _overrides(self, group_id: str) -> dict[str, str]:
        overrides: dict[str, str] = self.state.group_configs.get(group_id, {})
        return overrides

    def group_cfg(self, group_id: str, key: str) -> str:
        """A group key (share.*): the GROUP resource's override, else the broker's."""
        return group_value(self.state.config, self._overrides(group_id), key)

    def group_int(self, group_id: str, key: str) -> int:
        return int(self.group_cfg(group_id, key))

    def set_group_config(self, group_id: str, key: str, value: str | None) -> None:
        """Set (None: remove) one share.* group config, checked as Kafka does."""
        if value is not None:
            try:
                validate(self.state.config, key, value)
            except (KeyError, ValueError) as e:
                raise KafkaError(E.INVALID_CONFIG, str(e.args[0])) from e
            self.state.group_configs.setdefault(group_id, {})[key] = value
        else:
            self._overrides(group_id).pop(key, None)
        self._news.add(group_id)
        self.mark_changed()

    # ---- time ------------------------------------------------------------------------
    def tick(self, now: int | None = None) -> bool:
        """Fence silent members and release records whose acquisition lock ran out:
        only the groups and share-partitions with something due are visited."""
        now = self.state.now() if now is None else now
        self._reschedule()
        changed = False
        for gid in cast("list[str]", self.session_timers.pop_due(now)):  # group ids
            group = self.groups.peek(gid)
            if group is None:
                continue
            self.visits += 1
            for m in [m for m in group.members.values() if m.hb_deadline <= now]:
                self.membership.remove_member(group, m.member_id)
                changed = True
            self._schedule_group(gid)
        # (group id, topic id, partition)
        for key in cast("list[tuple[str, bytes, int]]", self.lock_timers.pop_due(now)):
            sp = self.partitions.get(key)
            if sp is None:
                continue
            self.visits += 1
            if sp.records and sp.expire_locks(now, self.group_int(
                    sp.group_id, "share.delivery.count.limit")):
                self.persist(sp)
                changed = True
            self._written.discard(key)
            self.lock_timers.set(key, sp.next_lock_deadline())
        if changed:
            self.mark_changed()
        return changed

    def _reschedule(self) -> None:
        """The groups looked up and share-partitions written since the last call: their
        next session and lock deadlines."""
        touched = self.groups.touched
        if touched:
            for gid in list(touched):
                self._schedule_group(gid)
            touched.clear()
        if self._written:
            for key in list(self._written):
                sp = self.partitions.get(key)
                self.lock_timers.set(key, sp.next_lock_deadline() if sp is not None else None)
            self._written.clear()

    def _schedule_group(self, gid: str) -> None:
        group = self.groups.peek(gid)
        due = min((m.hb_deadline for m in group.members.values()), default=None) \
            if group is not None else None
        self.session_timers.set(gid, due)

    def mark_changed(self) -> None:
        """Wake the ShareFetches parked on the groups whose share state changed (they
        wait on ``group_key(group)`` and their partitions); nothing replication uses."""
        keys = [group_key(g) for g in self._news]
        self._news.clear()
        self.state.changed(partitions_only=True, keys=keys)

    def next_deadline(self) -> int | None:
        """When ``tick`` next has something to do (a lock or a session running out)."""
        self._reschedule()
        times = [d for d in (self.session_timers.next_due(), self.lock_timers.next_due())
                 if d is not None]
        return min(times) if times else None

    def on_member_gone(self, group_id: str, member_id: str) -> None:
        """A member was fenced (not one that left: ``remove_member``): its sessions close
        and its records are released."""
        for key in [k for k in self.sessions if k[1:] == (group_id, member_id)]:
            del self.sessions[key]
        self._release_member(group_id, member_id)

    def _release_member(self, group_id: str, member_id: str) -> None:
        limit = self.group_int(group_id, "share.delivery.count.limit")
        for key in list(self._by_group.get(group_id, ())):
            sp = self.partitions[key]
            if sp.release_member(member_id, limit):
                self.persist(sp)

    # ---- share-partitions -------------------------------------------------------------
    def share_partition(self, group_id: str, topic_id: bytes, index: int) -> SharePartition:
        key = (group_id, topic_id, index)
        sp = self.partitions.get(key)
        if sp is None:
            sp = self.partitions[key] = SharePartition(group_id, topic_id, index)
            self._by_group.setdefault(group_id, {})[key] = None
        return sp

    def _loaded(self, group_id: str, topic: Topic, p: Partition) -> SharePartition:
        """The share-partition as the current leader sees it (reloaded after a move).

        Without share coordinator state (never initialized by the group coordinator)
        ``NoShareState``: Kafka's ReadShareGroupState refuses it, and ShareFetch leaves
        the partition out (or, when it waited, answers UNKNOWN_SERVER_ERROR for it)."""
        sp = self.partitions.get((group_id, topic.id, p.index))
        if sp is None:
            raise NoShareState(E.UNKNOWN_TOPIC_OR_PARTITION, "The share-partition state of "
                               f"group {group_id} is not initialized.")
        if sp.leader_epoch != p.leader_epoch:
            sp.on_leader_change(p.leader_epoch,
                                self.group_int(group_id, "share.delivery.count.limit"))
        if not sp.initialized:
            sp.initialize(self._reset_offset(group_id, p), sp.state_epoch)
        sp.maybe_move_to_log_start(p.leader_log.log_start_offset)
        return sp

    def _reset_offset(self, group_id: str, p: Partition) -> int:
        """share.auto.offset.reset: latest (the high watermark), earliest, by_duration."""
        policy = self.group_cfg(group_id, "share.auto.offset.reset")
        log = p.leader_log
        if policy == "earliest":
            return log.log_start_offset
        if policy.startswith("by_duration:"):
            ts = self.state.now() - parse_duration_ms(policy[len("by_duration:"):])
            found = log.offset_for_timestamp(ts)
            return found[0] if found is not None else p.high_watermark
        return p.high_watermark

    def read_limit(self, group_id: str, p: Partition) -> int:
        """Where a share-partition's records end for the group: the last stable
        offset under share.isolation.level read_committed, else the high watermark."""
        if self.group_cfg(group_id, "share.isolation.level") == "read_committed":
            return p.last_stable_offset()
        return p.high_watermark

    def lookup(self, broker_id: int, topic_id: bytes, index: int) -> tuple[Topic, Partition]:
        """(topic, partition) led by ``broker_id``; Kafka's per-partition errors otherwise."""
        topic = self.state.topics_by_id.get(topic_id)
        if topic is None:
            raise KafkaError(E.UNKNOWN_TOPIC_ID)
        if not 0 <= index < len(topic.partitions):
            raise KafkaError(E.UNKNOWN_TOPIC_OR_PARTITION)
        p = topic.partitions[index]
        p.check_leader(broker_id)
        return topic, p

    # ---- share sessions ----------------------------------------------------------------
    def session_for_fetch(self, broker_id: int, group_id: str, member_id: str, epoch: int,
                          add: list[tuple[bytes, int]], forget: list[tuple[bytes, int]],
                          has_acks: bool, connection_id: int = 0) -> ShareSession | None:
        """ShareFetch's session step; None for the final epoch (the session is closed).
        A new session belongs to ``connection_id`` (``connection_closed``)."""
        key = (broker_id, group_id, member_id)
        if epoch == INITIAL_EPOCH:
            if has_acks:
                raise KafkaError(E.INVALID_REQUEST, "Acknowledge data present on initial "
                                 "ShareFetch request")
            self.sessions.pop(key, None)
            if sum(1 for k in self.sessions if k[0] == broker_id) >= \
                    self.cfg("group.share.max.share.sessions"):
                raise KafkaError(E.SHARE_SESSION_LIMIT_REACHED)
            created = self.sessions[key] = ShareSession(group_id, member_id, 1, set(add),
                                                        connection_id)
            return created
        session = self.sessions.get(key)
        if session is None:
            raise KafkaError(E.SHARE_SESSION_NOT_FOUND)  # no message, as Kafka 4.4
        if epoch == FINAL_EPOCH:
            # Kafka 4.4 closes the session even when the final request lists partitions
            # without acknowledgements (nothing is fetched; no error)
            return None
        if epoch != session.epoch:
            raise KafkaError(E.INVALID_SHARE_SESSION_EPOCH,
                             f"Expected share session epoch {session.epoch}, got {epoch}")
        session.epoch = next_epoch(epoch)
        session.partitions.update(add)
        session.partitions.difference_update(forget)
        return session

    def session_for_acknowledge(self, broker_id: int, group_id: str, member_id: str,
                                epoch: int) -> None:
        key = (broker_id, group_id, member_id)
        if epoch == INITIAL_EPOCH:
            raise KafkaError(E.INVALID_SHARE_SESSION_EPOCH,
                             "ShareAcknowledge cannot open a share session")
        session = self.sessions.get(key)
        if session is None:
            raise KafkaError(E.SHARE_SESSION_NOT_FOUND)  # no message, as Kafka 4.4
        if epoch != FINAL_EPOCH:
            if epoch != session.epoch:
                raise KafkaError(E.INVALID_SHARE_SESSION_EPOCH,
                                 f"Expected share session epoch {session.epoch}, got {epoch}")
            session.epoch = next_epoch(epoch)

    def close_session(self, broker_id: int, group_id: str, member_id: str) -> None:
        """The final epoch: the session goes and the member's records are released."""
        if self.sessions.pop((broker_id, group_id, member_id), None) is not None:
            self._release_member(group_id, member_id)
            self.mark_changed()

    def connection_closed(self, broker_id: int, connection_id: int) -> None:
        """A client connection to a running ``broker_id`` closed: as Kafka 4.4's share
        session cache, the sessions it opened close and their member's records acquired
        in the session's share-partitions are released (delivered again, the delivery
        count kept). Measured on Kafka 4.4: another member fetching right after the close
        gets the record with delivery count 2; an acknowledgement with the old session's
        epoch meets SHARE_SESSION_NOT_FOUND (the response differential's case "Share
        group: a session ends with its connection")."""
        gone = [k for k, s in self.sessions.items()
                if k[0] == broker_id and s.connection_id == connection_id != 0]
        for key in gone:
            session = self.sessions.pop(key)
            limit = self.group_int(session.group_id, "share.delivery.count.limit")
            for topic_id, index in session.partitions:
                sp = self.partitions.get((session.group_id, topic_id, index))
                if sp is not None and sp.release_member(session.member_id, limit):
                    self.persist(sp)
        if gone:
            self.mark_changed()

    # ---- acknowledge and acquire -------------------------------------------------------
    def acknowledge(self, broker_id: int, group_id: str, member_id: str, topic_id: bytes,
                    index: int, batches: list[tuple[int, int, list[int]]],
                    renew_allowed: bool) -> None:
        """Apply one partition's acknowledgements; raises KafkaError (per partition)."""
        topic, p = self.lookup(broker_id, topic_id, index)
        sp = self._loaded(group_id, topic, p)
        enabled = self.group_cfg(group_id, "share.renew.acknowledge.enable") == "true"
        sp.acknowledge(member_id, batches, now=self.state.now(),
                       lock_ms=self.group_int(group_id, "share.record.lock.duration.ms"),
                       delivery_limit=self.group_int(group_id, "share.delivery.count.limit"),
                       renew_allowed=renew_allowed, renew_enabled=enabled)
        self.persist(sp)
        self.mark_changed()

    def acquire(self, broker_id: int, group_id: str, member_id: str, topic_id: bytes,
                index: int, max_records: int, max_bytes: int, record_limit: bool = False
                ) -> tuple[bytes, Acquired]:
        """Acquire records of one partition: (the log batches to send, what was acquired)."""
        topic, p = self.lookup(broker_id, topic_id, index)
        sp = self._loaded(group_id, topic, p)
        before = (sp.start_offset, sp.next_offset)
        log = p.leader_log
        limit = self.read_limit(group_id, p)
        new: list[tuple[int, int, bool]] = []
        aborted = p.aborted_between(sp.next_offset, limit) if \
            self.group_cfg(group_id, "share.isolation.level") == "read_committed" else []
        if sp.next_offset < limit:
            for data, base, last, _, _ in log.batches_from(sp.next_offset, max(1, max_bytes)):
                if last >= limit:
                    break
                skip = bool(data[22] & CONTROL_BIT) or bool(aborted and _is_aborted(data, aborted))
                new.append((base, last, skip))
        got = sp.acquire(member_id, new, max_records=max(1, max_records),
                         now=self.state.now(),
                         lock_ms=self.group_int(group_id, "share.record.lock.duration.ms"),
                         max_locks=self.group_int(group_id, "share.partition.max.record.locks"),
                         record_limit=record_limit)
        if not got.ranges and (sp.start_offset, sp.next_offset) == before:
            return b"", got
        self.persist(sp)
        self.mark_changed()
        if not got.ranges:
            return b"", got
        return self._batches_for(log, got), got

    @staticmethod
    def _batches_for(log: Log, got: Acquired) -> bytes:
        """The stored batches that hold the acquired offsets, in log order."""
        first = got.ranges[0][0]
        last = max(r[1] for r in got.ranges)
        ranges = sorted((a, b) for a, b, _ in got.ranges)
        out = []
        for data, base, blast, _, _ in log.batches_from(first, 1 << 62):
            if base > last:
                break
            if any(a <= blast and base <= b for a, b in ranges):
                out.append(data)
        return b"".join(out)

    # ---- group deletion (the offsets admin APIs 90-92: share.group_offsets) -------------
    def delete_group(self, group_id: str) -> int | None:
        """DeleteGroups for a share group; None when ``group_id`` is not a share group."""
        group = self.groups.get(group_id)
        if group is None:
            return None
        if not group.is_empty:
            return E.NON_EMPTY_GROUP
        del self.groups[group_id]
        for key in list(self._by_group.get(group_id, ())):
            self.forget(key)
        self.state.group_configs.pop(group_id, None)
        self.mark_changed()
        return E.NONE

    def is_share_group(self, group_id: str) -> bool:
        g = self.groups.get(group_id)
        return g is not None and g.state != DEAD
