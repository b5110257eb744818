"""Committed offsets and transaction state as records of the internal topics.

Kafka's coordinators keep their state as records: an offset commit is an
OffsetCommit record (key: group, topic, partition) in the group's
``__consumer_offsets`` partition, a transaction's state a TransactionLog record
(key: transactional.id) in ``__transaction_state``; a deletion is a tombstone; both
topics are compacted, so the latest record per key is the state. A coordinator that
takes over a partition (a restart, a leader move) rebuilds its state from those
records. Here the same records are written (Kafka's own layouts, key version 1 /
value version 3 for offsets, key and value version 0 for transactions, so Kafka's
tools and formatters can read them), and ``replay`` rebuilds the coordinators from
them when a data directory is loaded. While the process runs the coordinators'
in-memory state is what the records say, so a coordinator move keeps it as is.

Also here: offsets.retention.minutes, as Kafka's cleanupGroupMetadata applies it every
offsets.retention.check.interval.ms: offsets of topics a group does not subscribe to
expire that long after their commit, or, in an Empty classic group with a protocol
type, that long after the group became Empty (``_expiry_base``); each expiry writes a
tombstone. A partition with a transactional commit pending keeps its offset. Then, as
Kafka's maybeDeleteGroup, a classic, consumer or streams group that is empty and has no
offsets left (none ever committed, or all expired) and no open transaction is deleted:
ListGroups stops listing it, as Kafka 4.4 does (share groups are kept: Kafka keeps an
empty share group).

Domain code: records go through ``ClusterState.append_control`` (the leader's log,
no client checks) and an ``append`` event, which the data directory, if any,
writes out before the request is answered.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import TYPE_CHECKING

from emulator.cluster.events import (
    CommittedOffset,
    DomainEvent,
    OffsetsChanged,
    TxnChanged,
    TxnRecord,
    observes,
)
from emulator.coordinators.classic.group import DEAD as CLASSIC_DEAD
from emulator.coordinators.classic.group import STABLE as CLASSIC_STABLE
from emulator.coordinators.classic.group import ClassicGroup
from emulator.coordinators.groups.base import OffsetAndMetadata
from emulator.coordinators.groups.coordinator import GroupCoordinator
from emulator.coordinators.runtime.host import ClusterHost
from emulator.coordinators.transactions.coordinator import TransactionCoordinator
from emulator.coordinators.transactions.metadata import (
    COMPLETE_ABORT,
    COMPLETE_COMMIT,
    DEAD,
    EMPTY,
    ONGOING,
    PREPARE_ABORT,
    PREPARE_COMMIT,
    PREPARE_EPOCH_FENCE,
    TxnMetadata,
)
from wire.records import Record

if TYPE_CHECKING:
    from emulator.coordinators.groups.base import Group

# TransactionState ids as Kafka writes them (TransactionState.id)
TXN_STATUS = {EMPTY: 0, ONGOING: 1, PREPARE_COMMIT: 2, PREPARE_ABORT: 3, COMPLETE_COMMIT: 4,
              COMPLETE_ABORT: 5, DEAD: 6, PREPARE_EPOCH_FENCE: 7}
TXN_STATUS_NAME = {v: k for k, v in TXN_STATUS.items()}


# ---- Kafka's record layouts -----------------------------------------------------------
def _str(s: str | None) -> bytes:
    if s is None:
        return struct.pack(">h", -1)
    b = s.encode()
    return struct.pack(">h", len(b)) + b


def _read_str(buf: bytes, pos: int) -> tuple[str | None, int]:
    (n,) = struct.unpack_from(">h", buf, pos)
    pos += 2
    if n < 0:
        return None, pos
    return buf[pos:pos + n].decode(), pos + n


def offset_key(group: str, topic: str, partition: int) -> bytes:
    """OffsetCommitKey, version 1."""
    return struct.pack(">h", 1) + _str(group) + _str(topic) + struct.pack(">i", partition)


def offset_value(om: CommittedOffset) -> bytes:
    """OffsetCommitValue, version 3: offset, leader epoch, metadata, commit time."""
    return (struct.pack(">hqi", 3, om.offset, om.leader_epoch) + _str(om.metadata or "")
            + struct.pack(">q", om.commit_ms))


def parse_offset_key(key: bytes) -> tuple[str, str, int] | None:
    (version,) = struct.unpack_from(">h", key, 0)
    if version not in (0, 1):
        return None  # group metadata (version 2) and others: not ours to read
    group, pos = _read_str(key, 2)
    topic, pos = _read_str(key, pos)
    (partition,) = struct.unpack_from(">i", key, pos)
    return group or "", topic or "", partition


def parse_offset_value(value: bytes) -> OffsetAndMetadata:
    (version, offset) = struct.unpack_from(">hq", value, 0)
    pos = 10
    epoch = -1
    if version >= 3:
        (epoch,) = struct.unpack_from(">i", value, pos)
        pos += 4
    metadata, pos = _read_str(value, pos)
    (commit_ms,) = struct.unpack_from(">q", value, pos)
    return OffsetAndMetadata(offset, epoch, metadata, commit_ms)


def txn_key(transactional_id: str) -> bytes:
    """TransactionLogKey, version 0."""
    return struct.pack(">h", 0) + _str(transactional_id)


def txn_value(txn: TxnRecord) -> bytes:
    """TransactionLogValue, version 0."""
    by_topic: dict[str, list[int]] = {}
    for t, p in sorted(txn.partitions):
        by_topic.setdefault(t, []).append(p)
    out = struct.pack(">hqhib", 0, txn.producer_id, txn.producer_epoch, txn.timeout_ms,
                      TXN_STATUS[txn.state])
    out += struct.pack(">i", len(by_topic))
    for t, ps in by_topic.items():
        out += _str(t) + struct.pack(">i", len(ps)) + b"".join(struct.pack(">i", p)
                                                             for p in ps)
    return out + struct.pack(">qq", txn.last_update_ms, txn.start_ms)


def parse_txn(key: bytes, value: bytes) -> TxnMetadata:
    tid, _ = _read_str(key, 2)
    _v, pid, epoch, timeout, status = struct.unpack_from(">hqhib", value, 0)
    pos = 17
    (n,) = struct.unpack_from(">i", value, pos)
    pos += 4
    parts: set[tuple[str, int]] = set()
    for _ in range(n):
        topic, pos = _read_str(value, pos)
        (m,) = struct.unpack_from(">i", value, pos)
        pos += 4
        for _ in range(m):
            parts.add((topic or "", struct.unpack_from(">i", value, pos)[0]))
            pos += 4
    last_update, start = struct.unpack_from(">qq", value, pos)
    return TxnMetadata(tid or "", pid, timeout, last_update, producer_epoch=epoch,
                       state=TXN_STATUS_NAME.get(status, EMPTY), partitions=parts,
                       start_ms=start)


# ---- writing ------------------------------------------------------------------------------
class CoordinatorLog:
    """Writes the coordinators' changes as records; expires offsets."""

    def __init__(self, state: ClusterHost, groups: GroupCoordinator,
                 transactions: TransactionCoordinator) -> None:
        self.state = state
        self.groups = groups
        self.transactions = transactions
        self._next_expiry_check = 0
        state.hooks.append(self._on_event)
        state.tick_hooks.append(self.tick)

    @observes(OffsetsChanged, TxnChanged)
    def _on_event(self, kind: str, event: DomainEvent) -> None:
        if isinstance(event, OffsetsChanged):
            group = event.group
            now = self.state.now()
            recs = []
            for (topic, partition), om in event.offsets.items():
                value = offset_value(om) if om is not None else None
                recs.append(Record(0, now, offset_key(group, topic, partition), value))
            self.groups.topic.append(group, recs)
        elif isinstance(event, TxnChanged):
            txn = event.txn
            value = None if event.removed else txn_value(txn)
            self.transactions.topic.append(
                txn.transactional_id,
                [Record(0, self.state.now(), txn_key(txn.transactional_id), value)])

    def tick(self, now: int) -> None:
        interval = int(self.state.config.get("offsets.retention.check.interval.ms") or 600000)
        if now < self._next_expiry_check:
            return
        self._next_expiry_check = now + interval
        self.expire_offsets(now)

    def expire_offsets(self, now: int) -> int:
        """Kafka 4.4's GroupCoordinatorShard.cleanupGroupMetadata over every group:
        OffsetMetadataManager.cleanupExpiredOffsets drops offsets past
        offsets.retention.minutes (only of topics the group is not subscribed to, counted
        from when ``_expiry_base`` says, none with a transactional commit pending), and a
        group left with none of its offsets and no open transaction is deleted if it is
        empty (GroupMetadataManager.maybeDeleteGroup). The number of offsets dropped."""
        retention = int(self.state.config.get("offsets.retention.minutes") or 10080) * 60_000
        groups = self.groups
        n = 0
        # every group, then offsets without one, in the tables' order (a set's order
        # would change with the hash seed, and with it the order of the tombstones)
        for gid in list(dict.fromkeys([*groups.groups, *groups.offsets])):
            group = groups.groups.peek(gid)  # a read: no reschedule
            store = groups.offsets.get(gid)
            if store:
                base = _expiry_base(group)
                if base is None:
                    continue
                gone = {tp: None for tp, om in store.items()
                        if now - base(om) >= retention
                        and (group is None or not group.is_subscribed_to(tp[0]))
                        and not groups.has_pending_txn_offset(gid, *tp)}
                for tp in gone:
                    del store[tp]
                if gone:
                    n += len(gone)
                    self._on_event(OffsetsChanged.kind, OffsetsChanged(gid, gone))
                if store:
                    continue
            if store is not None:
                del groups.offsets[gid]
            if (group is not None and group.is_empty and group.state != CLASSIC_DEAD
                    and not groups.has_open_txn(gid)):
                groups.delete_group(gid)
        return n


def _commit_ms(om: OffsetAndMetadata) -> int:
    return om.commit_ms


def _expiry_base(group: Group | None) -> Callable[[OffsetAndMetadata], int] | None:
    """Kafka 4.4's Group.offsetExpirationCondition: from when an offset's retention
    counts, or None when the group's offsets do not expire at all now.

    An Empty classic group with a protocol type counts from when it became Empty
    (ClassicGroup's currentStateTimestamp), whenever its offsets were committed; a
    classic group without one (only commits, outside group management) from each
    commit; a Stable classic consumer group whose subscriptions are known, and consumer
    and streams groups in any state, from each commit (their subscribed topics' offsets
    are kept: the caller's is_subscribed_to); any other classic group keeps them all."""
    if group is None or group.type != "classic" or group.protocol_type is None:
        return _commit_ms
    if group.is_empty:
        became_empty = group.state_ts
        return lambda om: became_empty
    if (group.uses_consumer_protocol() and group.subscribed_topics is not None
            and group.state == CLASSIC_STABLE):
        return _commit_ms
    return None


# ---- rebuilding ---------------------------------------------------------------------------
def replay(state: ClusterHost, groups: GroupCoordinator,
           transactions: TransactionCoordinator) -> tuple[int, int]:
    """Rebuild committed offsets and transaction state from the internal topics.

    Returns (offsets, transactions) loaded. Transactions caught mid-way are finished
    as Kafka's coordinator finishes them on load: PrepareCommit/PrepareAbort write
    their remaining markers; an Ongoing one is aborted with a bumped epoch.
    """
    offsets: dict[str, dict[tuple[str, int], OffsetAndMetadata | None]] = {}
    for r in groups.topic.records():
        k = parse_offset_key(r.key or b"\0\2")
        if k is None:
            continue
        group, topic, partition = k
        offsets.setdefault(group, {})[(topic, partition)] = (
            parse_offset_value(r.value) if r.value is not None else None)
    n_offsets = 0
    for group, entries in offsets.items():
        live = {tp: om for tp, om in entries.items() if om is not None
                and tp[0] in state.topics}
        if live:
            groups.offsets[group] = live
            n_offsets += len(live)
            if group not in groups.groups:  # back as an Empty group with its offsets
                groups.groups[group] = ClassicGroup(group, state.now())
                groups.group_created(groups.groups[group])
    txns: dict[str, TxnMetadata | None] = {}
    for r in transactions.topic.records():
        if r.key is None:
            continue
        tid, _ = _read_str(r.key, 2)
        txns[tid or ""] = parse_txn(r.key, r.value) if r.value is not None else None
    top_pid = max([p for t in state.topics.values() for part in t.partitions
                   for p in part.producers] + [-1])
    for tid, txn in txns.items():
        if txn is None:
            continue
        transactions.txns[tid] = txn
        transactions.schedule(txn)  # its timeout or expiration
        top_pid = max(top_pid, txn.producer_id)
        if txn.state == ONGOING:
            txn.producer_epoch += 1  # fence the producer, as a timeout would
            txn.last_producer_epoch = -1
            transactions._end(txn, commit=False)
        elif txn.state in (PREPARE_COMMIT, PREPARE_ABORT):
            txn.pending_markers = set(txn.partitions)
            transactions._write_markers(txn)
    transactions.next_producer_id = max(transactions.next_producer_id, top_pid + 1)
    return n_offsets, len([t for t in txns.values() if t is not None])


__all__ = ["CoordinatorLog", "offset_key", "offset_value", "parse_offset_key",
           "parse_offset_value", "parse_txn", "replay", "txn_key", "txn_value"]
