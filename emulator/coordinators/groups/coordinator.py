"""The group coordinator: where groups live, committed offsets, and the group APIs' state.

One ``GroupCoordinator`` serves the whole emulated cluster; which broker answers for a
group is decided as Kafka decides it: ``abs(javaHashCode(group.id)) %
offsets.topic.num.partitions`` names a partition of the internal ``__consumer_offsets``
topic (created on first use with offsets.topic.replication.factor replicas), and that
partition's leader is the coordinator. A request that reaches another broker gets
NOT_COORDINATOR; a partition without a leader means COORDINATOR_NOT_AVAILABLE.

Group state and committed offsets are kept here, keyed by group, not by broker: when
the offsets partition's leader moves (a broker stops, a reassignment), the new leader
answers for the group with everything intact, as Kafka's new coordinator does after
loading the partition. Parked JoinGroup/SyncGroup requests on the old coordinator are
answered NOT_COORDINATOR and the members' session timers restart.

The protocols are parts of it, each in its own package: ``classic.protocol``
(JoinGroup/SyncGroup/Heartbeat/LeaveGroup), ``consumer.protocol`` (KIP-848
ConsumerGroupHeartbeat), ``consumer.migration`` (classic members in consumer groups and
the conversions) and ``streams.protocol`` (StreamsGroupHeartbeat), all built on the core
in ``groups.base``; the coordinator composes them. Everything is
driven by calls and by ``tick(now)`` (registered in ``ClusterState.tick_hooks``); any
change calls ``state.changed(keys=...)`` naming the groups it touched (``group_key``),
so that only the requests parked on those groups are re-checked.

Cost follows what changed (docs/architecture.md): a tick visits only the groups whose next timer
is due (a ``Deadlines`` heap: session, join, sync, revocation and initial-delay
deadlines), the groups an operation reached since the last tick get their next due
time recomputed, and a coordinator move (a leader change of a __consumer_offsets
partition) is noticed by comparing that topic's leaders and epochs, not per group.

Committed offsets are also written as OffsetCommit records of __consumer_offsets
(emulator.coordinators.coordinator_log, which also expires them per
offsets.retention.minutes) and rebuilt from there when a data directory is loaded.
Differs from Kafka: group metadata records are not written (members rejoin after a
restart; their groups come back Empty with their offsets).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, cast

from emulator.cluster.events import DomainEvent, OffsetsChanged, TopicDeleted, observes
from emulator.coordinators.classic.group import (
    COMPLETING_REBALANCE,
    DEAD,
    EMPTY,
    PREPARING_REBALANCE,
    STABLE,
    ClassicGroup,
    classic_due,
    join_error,
    sync_error,
)
from emulator.coordinators.classic.protocol import ClassicProtocol
from emulator.coordinators.consumer.group import ConsumerGroup, consumer_due
from emulator.coordinators.consumer.migration import GroupMigration
from emulator.coordinators.consumer.protocol import ConsumerProtocol
from emulator.coordinators.groups import messages as gm
from emulator.coordinators.groups.base import (
    OFFSET_METADATA_MAX_BYTES,
    GroupsBase,
    OffsetAndMetadata,
    OffsetCheck,
)
from emulator.coordinators.runtime import members as membership
from emulator.coordinators.runtime.host import ClusterHost
from wire.errors import ErrorCode as E
from wire.errors import KafkaError

if TYPE_CHECKING:
    # The streams part, made at its first use (GroupCoordinator.streams).
    from emulator.coordinators.groups.base import Group
    from emulator.coordinators.streams import messages as sm
    from emulator.coordinators.streams import topology as st
    from emulator.coordinators.streams.protocol import StreamsProtocol

# An OffsetCommit's topics: (name, [(partition, offset, leader epoch, metadata)]).
CommitTopics = Iterable[tuple[str, Iterable[tuple[int, int, int, str | None]]]]


class GroupCoordinator(GroupsBase):
    """All consumer groups of the cluster and their committed offsets."""

    def __init__(self, state: ClusterHost) -> None:
        super().__init__(state)
        # The concrete parts: the core types them by what the parts call of one
        # another (groups/parts.py), this class by all they serve.
        self.classic: ClassicProtocol = ClassicProtocol(self)
        self.consumer: ConsumerProtocol = ConsumerProtocol(self)
        self.migration: GroupMigration = GroupMigration(self)
        self._streams: StreamsProtocol | None = None  # made at its first use: streams
        # The group APIs, each served by its protocol's part; the classic and the consumer
        # protocol's through online migration, above both (a classic member of a consumer
        # group, an upgrade, a downgrade).
        self.join_group = self.migration.join_group
        self.sync_group = self.migration.sync_group
        self.heartbeat = self.migration.heartbeat
        self.leave_group = self.migration.leave_group
        self.consumer_group_heartbeat = self.migration.consumer_group_heartbeat
        # The __consumer_offsets leaders and epochs last seen (coordinator moves).
        self._coordinator_epochs: object = None
        self._epochs_seen = False
        self.visits = 0  # groups whose timers a tick checked (tests count them)
        self.reschedules = 0  # groups whose next due time was recomputed
        self.offsets: dict[str, dict[tuple[str, int], OffsetAndMetadata]] = {}
        # group -> producer id -> pending transactional offsets (TxnOffsetCommit)
        self.pending_txn: dict[str, dict[int, dict[tuple[str, int], OffsetAndMetadata]]] = {}
        state.tick_hooks.append(self.tick)
        state.hooks.append(self._on_event)

    @property
    def streams(self) -> StreamsProtocol:
        """The streams part (StreamsGroupHeartbeat, KIP-1071), made at its first use: a
        streams group exists only after one, and a start without streams clients loads
        none of its modules (docs/scale.md, start-up). It registers nothing."""
        part = self._streams
        if part is None:
            from emulator.coordinators.streams.protocol import StreamsProtocol

            part = self._streams = StreamsProtocol(self)
        return part

    def streams_group_heartbeat(self, req: sm.StreamsGroupHeartbeatRequest, *,
                                client_id: str = "", client_host: str = "", version: int = 1
                                ) -> tuple[sm.StreamsGroupHeartbeatResponse, st.ToCreate]:
        """The streams part's (StreamsProtocol.streams_group_heartbeat)."""
        return self.streams.streams_group_heartbeat(req, client_id=client_id,
                                                    client_host=client_host, version=version)

    def describe_streams_groups(self, group_ids: list[str], version: int = 1
                                ) -> list[sm.DescribedStreamsGroup]:
        """The streams part's (StreamsProtocol.describe_streams_groups)."""
        return self.streams.describe_streams_groups(group_ids, version)

    @observes(TopicDeleted)
    def _on_event(self, kind: str, event: DomainEvent) -> None:
        """Offsets of a deleted topic go with it (Kafka's onPartitionsDeleted)."""
        if not isinstance(event, TopicDeleted):
            return
        topic = event.topic
        for store in self.offsets.values():
            for key in [k for k in store if k[0] == topic]:
                del store[key]

    # ---- time -------------------------------------------------------------------------
    def tick(self, now: int | None = None) -> bool:
        """Fire the due timers (and notice coordinator moves); visits only due groups."""
        if now is None:
            now = self.now()
        table, timers = self.groups, self.timers
        changed = self._reload_moved(now)
        if table.touched:
            touched = list(table.touched)
            table.touched.clear()
            for gid in touched:
                self._schedule(gid, now)
        for gid in cast("list[str]", timers.pop_due(now)):  # group ids
            if table.peek(gid) is None:
                continue
            self.visits += 1
            for _ in range(4):  # a timer may arm another one that is already due
                group = table.peek(gid)  # a timer may convert it (consumer.migration)
                if group is None:
                    break
                if group.type == "classic":
                    fired = self.classic.tick_classic(group, now)
                elif group.type == "streams":
                    fired = self.streams.tick_streams(group, now)
                else:
                    fired = self.migration.tick_consumer(group, now)
                if not fired:
                    break
                changed = True
                table.news.add(gid)
            self._schedule(gid, now)
            table.touched.discard(gid)  # its own lookups while it was visited
        if changed:
            self.mark_changed()
        return changed

    def _schedule(self, gid: str, now: int) -> None:
        """Recompute when ``gid``'s next timer is due (None: an operation must come)."""
        self.reschedules += 1
        group = self.groups.peek(gid)
        due = None
        if group is not None:
            if group.type == "classic":
                due = classic_due(group)
            elif group.type == "streams":
                from emulator.coordinators.streams.group import streams_due

                due = streams_due(group, now)
            else:
                due = consumer_due(group)
        self.timers.set(gid, due)

    def _reload_moved(self, now: int) -> bool:
        """A __consumer_offsets partition changed leader or epoch (or the topic came or
        went): reload the groups whose coordinator moved. Compares the topic's leaders
        and epochs, so a tick without a move costs that topic's partitions, not groups."""
        epochs = self.topic.epochs()
        if self._epochs_seen and epochs == self._coordinator_epochs:
            return False
        self._coordinator_epochs, self._epochs_seen = epochs, True
        changed = False
        table = self.groups
        for gid, group in list(table.items()):
            if self._maybe_reload(group, now):
                changed = True
                table.touched.add(gid)
                table.news.add(gid)
        return changed

    def _maybe_reload(self, group: Group, now: int) -> bool:
        """The coordinator moved: answer parked requests NOT_COORDINATOR, restart sessions."""
        epoch = self.topic.epoch(group.group_id)
        if epoch == group.loaded_epoch:
            return False
        group.loaded_epoch = epoch
        if isinstance(group, ClassicGroup):
            for m in group.members.values():
                group.complete_join(m, join_error(E.NOT_COORDINATOR, m.member_id))
                group.complete_sync(m, sync_error(E.NOT_COORDINATOR))
                m.hb_deadline = now + m.session_timeout_ms
            for mid in group.pending_members:
                group.pending_members[mid] = now + 10000
        elif group.type == "streams":
            session = self.streams.streams_cfg(group.group_id, "session.timeout.ms")
            for sm in group.members.values():
                sm.hb_deadline = now + session
        else:
            session = self.consumer.consumer_cfg(group.group_id, "session.timeout.ms")
            for cm in group.members.values():
                cm.hb_deadline = now + (cm.classic.session_timeout_ms if cm.classic else session)
        return True

    # ---- offsets -------------------------------------------------------------------------
    def _partition_error(self, topic: str, partition: int) -> int:
        t = self.state.topics.get(topic)
        if t is None or not 0 <= partition < len(t.partitions):
            return E.UNKNOWN_TOPIC_OR_PARTITION
        return E.NONE

    def commit_offsets(self, group_id: str, member_id: str, generation: int,
                       topics: list[tuple[str, list[tuple[int, int, int, str | None]]]], *,
                       group_instance_id: str | None = None, version: int = 9
                       ) -> list[tuple[str, list[tuple[int, int]]]]:
        """OffsetCommit: topics of (partition, offset, leader epoch, metadata).

        Returns per topic the (partition, error code) pairs; a group-level failure is
        reported on every partition, as Kafka does.
        """
        try:
            if not group_id:
                raise KafkaError(E.INVALID_GROUP_ID)
            group, check = self._validate_commit(group_id, member_id, generation,
                                                 group_instance_id, version)
        except KafkaError as e:
            return [(t, [(p[0], e.code) for p in parts]) for t, parts in topics]
        if isinstance(group, ClassicGroup) and group.state in (STABLE, PREPARING_REBALANCE):
            m = group.members.get(member_id)
            if m is not None:
                m.hb_deadline = self.now() + m.session_timeout_ms
        store = self.offsets.setdefault(group_id, {})
        written: dict[tuple[str, int], OffsetAndMetadata] = {}
        out = self._store_offsets(topics, check, written)
        store.update(written)
        self._offsets_changed(group_id, written)
        self.mark_changed()
        return out

    def _store_offsets(self, topics: CommitTopics,
                       check: OffsetCheck | None, into: dict[tuple[str, int], OffsetAndMetadata]
                       ) -> list[tuple[str, list[tuple[int, int]]]]:
        """Each partition's offset checked (the partition exists, the group's ``check``,
        the metadata's size) and, if good, put ``into``; the (partition, error) pairs."""
        now = self.now()
        out = []
        for topic, parts in topics:
            res = []
            for partition, offset, epoch, metadata in parts:
                err = self._partition_error(topic, partition)
                if not err and check is not None:
                    err = check(topic, partition)
                if not err and metadata is not None and \
                        len(metadata.encode()) > OFFSET_METADATA_MAX_BYTES:
                    err = E.OFFSET_METADATA_TOO_LARGE
                if not err:
                    into[(topic, partition)] = OffsetAndMetadata(offset, epoch, metadata, now)
                res.append((partition, err))
            out.append((topic, res))
        return out

    def _offsets_changed(self, group_id: str,
                         offsets: Mapping[tuple[str, int], OffsetAndMetadata | None]) -> None:
        """News for the __consumer_offsets records (emulator.coordinators.coordinator_log);
        None as a value is a deletion (a tombstone)."""
        if offsets:
            self.state.emit(OffsetsChanged(group=group_id, offsets=dict(offsets)))

    def _validate_commit(self, group_id: str, member_id: str, generation: int,
                         instance_id: str | None, version: int, transactional: bool = False
                         ) -> tuple[Group, OffsetCheck | None]:
        """(group, per-partition check or None); raises KafkaError for the whole request."""
        group = self.groups.get(group_id)
        if group is None:
            if generation < 0:
                # A "simple" group: a consumer that assigns partitions itself.
                group = self.groups[group_id] = ClassicGroup(group_id, self.now())
                self.group_created(group)
                return group, None
            if version >= 9 and not transactional:
                raise KafkaError(E.GROUP_ID_NOT_FOUND)
            raise KafkaError(E.ILLEGAL_GENERATION)
        if group.type == "streams":
            return group, self.streams.validate_streams_commit(group, member_id, generation,
                                                       transactional, version, instance_id)
        if group.type == "consumer":
            return group, self._validate_consumer_commit(group, member_id, generation,
                                                         version, transactional, instance_id)
        if group.state == DEAD:
            raise KafkaError(E.COORDINATOR_NOT_AVAILABLE)
        if generation < 0 and group.state == EMPTY:
            return group, None
        if generation >= 0 or member_id or instance_id is not None:
            err = group.validate_member(member_id, instance_id)
            if err:
                raise KafkaError(err)
            if generation != group.generation_id:
                raise KafkaError(E.ILLEGAL_GENERATION)
        elif not transactional and group.state != EMPTY:
            raise KafkaError(E.UNKNOWN_MEMBER_ID)
        if not transactional and group.state == COMPLETING_REBALANCE:
            raise KafkaError(E.REBALANCE_IN_PROGRESS)
        return group, None

    def _validate_consumer_commit(self, group: ConsumerGroup, member_id: str, generation: int,
                                  version: int, transactional: bool,
                                  instance_id: str | None = None) -> OffsetCheck | None:
        """Kafka 4.4's ConsumerGroup.validateOffsetCommit: the current epoch commits
        anything; an older one commits a partition only if the member still holds it (or
        is revoking it) since that epoch or before (its assignment epoch); a newer one is
        refused. Classic-protocol members (online migration) get ILLEGAL_GENERATION where
        KIP-848 members get STALE_MEMBER_EPOCH."""
        m = membership.committing_member(group, member_id, generation, transactional,
                                         KafkaError(E.UNKNOWN_MEMBER_ID), instance_id)
        if m is None:
            return None
        if not transactional and version < 9 and m.classic is None:
            raise KafkaError(E.UNSUPPORTED_VERSION, "OffsetCommit version 9 or above must be "
                             "used by members using the consumer group protocol")
        stale = E.ILLEGAL_GENERATION if transactional or m.classic is not None \
            else E.STALE_MEMBER_EPOCH
        if generation == m.member_epoch:
            return None
        if generation > m.member_epoch:
            raise KafkaError(stale)
        epochs = dict(m.partition_epochs)
        topics = self.state.topics

        def check(topic: str, partition: int) -> int:
            t = topics.get(topic)
            since = epochs.get((t.id, partition)) if t is not None else None
            return stale if since is None or generation < since else E.NONE

        return check

    def txn_offset_commit(self, group_id: str, producer_id: int, member_id: str,
                          generation: int,
                          topics: CommitTopics,
                          *, group_instance_id: str | None = None
                          ) -> list[tuple[str, list[tuple[int, int]]]]:
        """TxnOffsetCommit: offsets held back until the transaction commits."""
        try:
            if not group_id:
                raise KafkaError(E.INVALID_GROUP_ID)
            _, check = self._validate_commit(group_id, member_id, generation,
                                             group_instance_id, 0, transactional=True)
        except KafkaError as e:
            return [(t, [(p[0], e.code) for p in parts]) for t, parts in topics]
        pending = self.pending_txn.setdefault(group_id, {}).setdefault(producer_id, {})
        return self._store_offsets(topics, check, pending)

    def complete_txn(self, group_id: str, producer_id: int, commit: bool) -> None:
        """The transaction marker reached the group's offsets partition."""
        pending = self.pending_txn.get(group_id, {}).pop(producer_id, None)
        if pending and commit and group_id in self.groups:
            self.offsets.setdefault(group_id, {}).update(pending)
            self._offsets_changed(group_id, pending)
        if group_id in self.pending_txn and not self.pending_txn[group_id]:
            del self.pending_txn[group_id]
        self.mark_changed()

    def has_pending_txn_offset(self, group_id: str, topic: str, partition: int) -> bool:
        """A TxnOffsetCommit of an open transaction holds an offset of the partition
        (Kafka's hasPendingTransactionalOffsets: it is not expired meanwhile)."""
        return any((topic, partition) in offs
                   for offs in self.pending_txn.get(group_id, {}).values())

    def has_open_txn(self, group_id: str) -> bool:
        """An open transaction has committed offsets of the group (Kafka's
        openTransactionsByGroup: the group is not deleted meanwhile)."""
        return bool(self.pending_txn.get(group_id))

    def fetch_offsets(self, group_id: str, topics: list[tuple[str, list[int]]] | None, *,
                      require_stable: bool = False, member_id: str | None = None,
                      member_epoch: int = -1) -> list[tuple[str, list[gm.FetchedOffset]]]:
        """OffsetFetch for one group; ``topics=None`` means every committed offset.

        Raises KafkaError for group-level errors (a consumer group member's stale epoch).
        """
        if not group_id:
            raise KafkaError(E.INVALID_GROUP_ID)
        group = self.groups.get(group_id)
        if (isinstance(group, ConsumerGroup) or group is not None and group.type == "streams") \
                and (member_id is not None or member_epoch >= 0):
            m = group.members.get(member_id or "")
            if m is None:
                raise KafkaError(E.UNKNOWN_MEMBER_ID, f"Member {member_id} is not a member of "
                                 f"group {group_id}.")
            if member_epoch != m.member_epoch:
                raise KafkaError(E.STALE_MEMBER_EPOCH, f"The received member epoch "
                                 f"{member_epoch} does not match the expected member epoch "
                                 f"{m.member_epoch}.")
        exists = group is not None and group.state != DEAD
        store = self.offsets.get(group_id, {}) if exists else {}

        def entry(topic: str, p: int, o: OffsetAndMetadata | None) -> gm.FetchedOffset:
            if require_stable and self.has_pending_txn_offset(group_id, topic, p):
                return {"partition_index": p, "committed_offset": -1,
                        "committed_leader_epoch": -1, "metadata": "",
                        "error_code": E.UNSTABLE_OFFSET_COMMIT}
            if o is None:
                return {"partition_index": p, "committed_offset": -1,
                        "committed_leader_epoch": -1, "metadata": "", "error_code": E.NONE}
            return {"partition_index": p, "committed_offset": o.offset,
                    "committed_leader_epoch": o.leader_epoch, "metadata": o.metadata,
                    "error_code": E.NONE}

        if topics is None:
            by_topic: dict[str, list[gm.FetchedOffset]] = {}
            for (topic, p), o in sorted(store.items()):
                by_topic.setdefault(topic, []).append(entry(topic, p, o))
            return list(by_topic.items())
        return [(topic, [entry(topic, p, store.get((topic, p))) for p in parts])
                for topic, parts in topics]

    def delete_offsets(self, group_id: str, topics: list[tuple[str, list[int]]]
                       ) -> list[tuple[str, list[tuple[int, int]]]]:
        """OffsetDelete; raises KafkaError for group-level errors."""
        if not group_id:
            raise KafkaError(E.INVALID_GROUP_ID)
        group = self.groups.get(group_id)
        if group is None or group.state == DEAD:
            raise KafkaError(E.GROUP_ID_NOT_FOUND)
        if group.type == "classic" and group.state in (
                STABLE, PREPARING_REBALANCE, COMPLETING_REBALANCE) \
                and not group.uses_consumer_protocol():
            raise KafkaError(E.NON_EMPTY_GROUP)
        store = self.offsets.get(group_id, {})
        out: list[tuple[str, list[tuple[int, int]]]] = []
        removed: dict[tuple[str, int], None] = {}
        for topic, parts in topics:
            if group.is_subscribed_to(topic):
                out.append((topic, [(p, E.GROUP_SUBSCRIBED_TO_TOPIC) for p in parts]))
                continue
            res: list[tuple[int, int]] = []
            for p in parts:
                err = self._partition_error(topic, p)
                if not err:
                    if store.pop((topic, p), None) is not None:
                        removed[(topic, p)] = None
                    for offs in self.pending_txn.get(group_id, {}).values():
                        offs.pop((topic, p), None)
                res.append((p, err))
            out.append((topic, res))
        self._offsets_changed(group_id, removed)
        self.mark_changed()
        return out

    # ---- administration -------------------------------------------------------------------
    def describe_group(self, group_id: str, version: int = 6) -> gm.DescribedClassicGroup:
        group = self.groups.get(group_id)
        if group is None or group.type != "classic":
            if version >= 6:
                what = "not found" if group is None else "is not a classic group"
                return {"group_id": group_id, "error_code": E.GROUP_ID_NOT_FOUND,
                        "error_message": f"Group {group_id} {what}.", "group_state": DEAD,
                        "protocol_type": "", "protocol_data": "", "members": []}
            return {"group_id": group_id, "error_code": E.NONE, "group_state": DEAD,
                    "protocol_type": "", "protocol_data": "", "members": []}
        stable = group.state == STABLE
        return {
            "group_id": group_id, "error_code": E.NONE, "group_state": group.state,
            "protocol_type": group.protocol_type or "",
            "protocol_data": (group.protocol_name or "") if stable else "",
            "members": [{
                "member_id": m.member_id, "group_instance_id": m.group_instance_id,
                "client_id": m.client_id, "client_host": m.client_host,
                "member_metadata": m.metadata(group.protocol_name) if stable else b"",
                "member_assignment": m.assignment,
            } for m in group.members.values()],
            "authorized_operations": -2147483648,
        }

    def list_groups(self, states: list[str] | None = None, types: list[str] | None = None,
                    broker_id: int | None = None) -> list[gm.ListedGroup]:
        """ListGroups: the groups this broker coordinates (all if ``broker_id`` is None)."""
        wanted_states = {s.strip().lower() for s in states or []}
        wanted_types = {t.strip().lower() for t in types or []}
        out: list[gm.ListedGroup] = []
        for gid, group in self.groups.items():
            if group.state == DEAD:
                continue
            if wanted_states and group.state.lower() not in wanted_states:
                continue
            if wanted_types and group.type not in wanted_types:
                continue
            if not self.topic.coordinated_by(broker_id, gid):
                continue
            out.append({"group_id": gid, "protocol_type": group.protocol_type or "",
                        "group_state": group.state, "group_type": group.type})
        return out

    def delete_group(self, group_id: str) -> int:
        if not group_id:
            return E.INVALID_GROUP_ID
        group = self.groups.get(group_id)
        if group is None or group.state == DEAD:
            return E.GROUP_ID_NOT_FOUND
        if not group.is_empty:
            return E.NON_EMPTY_GROUP
        del self.groups[group_id]
        if group.type == "classic":
            group.transition(DEAD, self.now())
        gone = self.offsets.pop(group_id, None) or {}
        self._offsets_changed(group_id, dict.fromkeys(gone))
        self.pending_txn.pop(group_id, None)
        self.mark_changed()
        return E.NONE

    def describe_consumer_groups(self, group_ids: list[str]) -> list[gm.DescribedConsumerGroup]:
        out: list[gm.DescribedConsumerGroup] = []
        for gid in group_ids:
            group = self.groups.get(gid)
            if not gid:
                out.append({"group_id": gid, "error_code": E.INVALID_GROUP_ID})
            elif group is None or group.type != "consumer":
                what = "not found" if group is None else "is not a consumer group"
                # Kafka's described error (getErrorDescribedGroup) leaves the state empty
                out.append({"group_id": gid, "error_code": E.GROUP_ID_NOT_FOUND,
                            "error_message": f"Group {gid} {what}.", "group_state": ""})
            else:
                out.append(self.consumer.describe_consumer_group(group))
        return out
