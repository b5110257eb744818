"""A partition: its replicas' logs, leader, epochs, ISR and high watermark.

Modelled on Kafka's ``kafka.cluster.Partition``: the leader tracks each
follower's fetch state (log end offset, lastCaughtUpTimeMs); the high watermark is
the minimum log end offset over the ISR; a follower joins the ISR once its LEO
reaches the high watermark and the start of the leader's current epoch, and leaves
it after ``replica.lag.time.max.ms`` without catching up. The leader epoch bumps on
every leader change, the partition epoch on every change at all.
"""

from __future__ import annotations

import struct
from collections import deque
from collections.abc import Container
from dataclasses import dataclass, field

from emulator.log import (
    UNDEFINED_EPOCH,
    FollowerState,
    Log,
    can_join_isr,
    isr_high_watermark,
    out_of_sync_replicas,
    update_fetch_state,
)
from wire.errors import ErrorCode as E
from wire.errors import KafkaError
from wire.records import BatchHeader, decode_records, read_header

MAX_PRODUCER_BATCHES = 5  # Kafka keeps the metadata of the last 5 batches per producer
# Leader changes a partition remembers (``epoch_leaders``): a parked acks=all answer is
# checked within a few loop turns of a change, so a handful would do; beyond this many
# the answer falls back on the current leader.
LEADER_HISTORY = 32


@dataclass(slots=True)
class ProducerEntry:
    """Idempotent producer state: epoch and the last batches' sequence ranges."""

    epoch: int
    # (first sequence, last sequence, base offset, last offset) of the last batches
    batches: deque[tuple[int, int, int, int]] = field(
        default_factory=lambda: deque(maxlen=MAX_PRODUCER_BATCHES))
    # first offset of the open transaction, if any (last stable offset)
    txn_first_offset: int = -1
    # the newest batch's max timestamp (DescribeProducers' last_timestamp)
    last_timestamp: int = -1
    # the coordinator epoch of the last transaction marker (-1 before any): the
    # emulator's markers carry 0, as a fresh Kafka's do (DescribeProducers)
    coordinator_epoch: int = -1
    # The epoch was set by a transaction marker and has no batch yet: its first batch
    # must have sequence 0, as Kafka's check compares it with the empty entry's
    # NO_SEQUENCE (-1). Not set when a truncation empties ``batches``: Kafka's state
    # rebuilt from the log may still hold the producer's older batches.
    epoch_from_marker: bool = False

    @property
    def last_seq(self) -> int:
        return self.batches[-1][1] if self.batches else -1


def new_epoch(entry: ProducerEntry, epoch: int) -> None:
    """Kafka's maybeUpdateProducerEpoch: a batch or marker of another epoch leaves the
    producer's entry without batches (the new epoch's sequences start afresh); its open
    transaction, coordinator epoch and last timestamp stay until the batch sets them."""
    entry.epoch = epoch
    entry.batches.clear()


# An end-transaction marker's value: its version (0), then the coordinator epoch
_MARKER_VALUE = struct.Struct(">hi")


@dataclass(slots=True)
class AbortedTxn:
    producer_id: int
    first_offset: int
    last_offset: int  # offset of the abort marker


@dataclass(frozen=True, slots=True)
class PendingMarker:
    """A COMMIT or ABORT marker the leader appended whose WriteTxnMarkers has not
    completed: Kafka appends markers with acks=-1, so the write completes only once the
    high watermark passes the marker. Until then the transaction (if it had data here,
    ``first_offset`` >= 0) holds the last stable offset back, and a leader change makes
    the coordinator send the marker again to the new leader
    (emulator/cluster/leadership.py ``become_leader``)."""

    producer_id: int
    epoch: int
    commit: bool
    first_offset: int  # the transaction's first offset here, or -1: no data here
    marker_offset: int


def check_current_leader_epoch(current_leader_epoch: int, leader_epoch: int) -> None:
    """The client's current leader epoch against the one the broker knows, as
    Partition.localLogWithEpochOrThrow: FENCED_LEADER_EPOCH when the client's is older,
    UNKNOWN_LEADER_EPOCH when newer; -1 (the client did not say) passes. For the
    partition itself (``Partition.check_replica``) and for a broker's lagging view of it
    (emulator/cluster/metadata_views.py)."""
    if current_leader_epoch >= 0:
        if current_leader_epoch < leader_epoch:
            raise KafkaError(E.FENCED_LEADER_EPOCH)
        if current_leader_epoch > leader_epoch:
            raise KafkaError(E.UNKNOWN_LEADER_EPOCH)


class Partition:
    """One partition of a topic, with a log on every broker hosting a replica."""

    def __init__(self, topic: str, topic_id: bytes, index: int, replicas: list[int]) -> None:
        self.topic = topic
        self.topic_id = topic_id
        self.index = index
        self.replicas: list[int] = list(replicas)
        # The controller chooses the leader and ISR among the live replicas
        # (controller.on_new_partition, before anything reads them); these are its
        # choice when every replica is alive. A partition always has replicas:
        # CreateTopics and CreatePartitions refuse an empty assignment.
        self.isr: list[int] = list(replicas)
        self.leader: int = replicas[0]
        self.leader_epoch = 0
        self.partition_epoch = 0
        # (leader epoch, leader) at the last leader changes, oldest first
        # (``note_leader_change``, ``deposed``)
        self.epoch_leaders: list[tuple[int, int]] = []
        self.adding_replicas: list[int] = []
        self.removing_replicas: list[int] = []
        self.logs: dict[int, Log] = {b: Log() for b in replicas}
        self.followers: dict[int, FollowerState] = {b: FollowerState() for b in replicas}
        self.high_watermark = 0
        # Each follower's own view, kept by its fetcher: the high watermark from the
        # last fetch response, and the leader epoch it last truncated for (a new epoch
        # means "check for divergence before fetching", Kafka's truncation phase).
        self.follower_hw: dict[int, int] = {}
        self.fetcher_epoch: dict[int, int] = {}
        self.next_fetch_ms: dict[int, int] = {}  # slowed followers fetch no sooner
        # Brokers whose replica of this partition lives in a failed log directory
        # (Kafka's HostedPartition.Offline): they answer KAFKA_STORAGE_ERROR for it,
        # neither lead nor fetch it, until they restart (emulator/cluster/log_dirs.py).
        self.offline: set[int] = set()
        self.producers: dict[int, ProducerEntry] = {}
        self.aborted: list[AbortedTxn] = []
        # markers not yet below the high watermark (their write has not completed)
        self.unreplicated_markers: list[PendingMarker] = []

    # ---- views -------------------------------------------------------------------
    @property
    def key(self) -> tuple[str, int]:
        return self.topic, self.index

    @property
    def leader_log(self) -> Log:
        return self.logs[self.leader]

    @property
    def log_start_offset(self) -> int:
        return self.logs[self.leader].log_start_offset if self.leader >= 0 else 0

    @property
    def log_end_offset(self) -> int:
        return self.logs[self.leader].log_end_offset if self.leader >= 0 else 0

    def last_stable_offset(self) -> int:
        """The high watermark, or the first offset of the oldest unstable transaction.

        A transaction is unstable while open and until its marker is replicated
        (Kafka's ProducerStateManager.firstUnstableOffset).
        """
        lso = self.high_watermark
        for p in self.producers.values():
            if 0 <= p.txn_first_offset < lso:
                lso = p.txn_first_offset
        if self.unreplicated_markers:
            hw = self.high_watermark
            self.unreplicated_markers = [m for m in self.unreplicated_markers
                                         if m.marker_offset >= hw]
            for m in self.unreplicated_markers:
                if m.first_offset >= 0:
                    lso = min(lso, m.first_offset)
        return lso

    def note_leader_change(self, old_epoch: int, old_leader: int) -> None:
        """Remember that the leader of ``old_epoch`` gave way to the current leader and
        epoch (leadership.apply_change, after bumping the epoch)."""
        h = self.epoch_leaders
        if not h or h[-1][0] != old_epoch:
            h.append((old_epoch, old_leader))
        h.append((self.leader_epoch, self.leader))
        if len(h) > LEADER_HISTORY:
            del h[: len(h) - LEADER_HISTORY]

    def deposed(self, epoch: int) -> tuple[int, int] | None:
        """Whether the broker that led at leader epoch ``epoch`` has stopped leading
        since: the (leader, leader epoch) that first took over from it, else None.

        Kafka's DelayedProduce completes with NOT_LEADER_OR_FOLLOWER the moment its
        broker stops leading (ReplicaManager completes the partition's delayed produces
        as it becomes a follower), and the answer names the leader of the metadata that
        made it a follower. A new epoch with the same leader (a reassignment's epoch
        bump) deposes nobody: the wait goes on for the high watermark. So an answer
        checked after leadership went away and came back is still the one of the moment
        it went away. A history too short to reach ``epoch`` answers the current
        leader."""
        if epoch >= self.leader_epoch:
            return None
        then = -2
        for e, b in self.epoch_leaders:
            if e <= epoch:
                then = b
            elif then == -2:
                break
            elif b != then:
                return b, e
        if then == -2:
            return self.leader, self.leader_epoch
        return None

    def aborted_between(self, start: int, end: int) -> list[AbortedTxn]:
        return [a for a in self.aborted if a.last_offset >= start and a.first_offset < end]

    def check_leader(self, broker_id: int, current_leader_epoch: int = -1) -> None:
        """Raise the error Kafka gives a client that sent this to the wrong place.

        As ReplicaManager.getPartitionOrError then Partition.getLocalLog: a broker
        with no replica says NOT_LEADER_OR_FOLLOWER; a hosting broker first checks the
        client's current leader epoch (FENCED_LEADER_EPOCH when older,
        UNKNOWN_LEADER_EPOCH when newer), then whether it leads.
        """
        self.check_replica(broker_id, current_leader_epoch)
        if broker_id != self.leader:
            raise KafkaError(E.NOT_LEADER_OR_FOLLOWER)

    def check_replica(self, broker_id: int, current_leader_epoch: int = -1) -> None:
        """As ``check_leader`` for a read any replica may serve (Partition.getLocalLog
        with requireLeader false: a consumer's Fetch v11+ to a follower, KIP-392).
        A replica in a failed log directory answers KAFKA_STORAGE_ERROR first, as
        getPartitionOrError does for an Offline partition."""
        if self.offline and broker_id in self.offline:
            raise KafkaError(E.KAFKA_STORAGE_ERROR, f"Partition {self.topic}-{self.index} "
                             "is in an offline log directory")
        if broker_id not in self.replicas:
            raise KafkaError(E.NOT_LEADER_OR_FOLLOWER)
        if current_leader_epoch != self.leader_epoch:  # (a call only then: the fetch path)
            check_current_leader_epoch(current_leader_epoch, self.leader_epoch)

    def replica_view(self, broker_id: int) -> tuple[Log, int, int]:
        """(log, high watermark, last stable offset) as the replica on ``broker_id``
        knows them: the leader's own, or a follower's log with the high watermark its
        fetcher last learned (so a follower serves less than the leader until it has
        fetched again, as on Kafka)."""
        if broker_id == self.leader:
            return self.logs[broker_id], self.high_watermark, self.last_stable_offset()
        log = self.logs[broker_id]
        hw = min(self.follower_hw.get(broker_id, 0), log.log_end_offset)
        return log, hw, min(hw, self.last_stable_offset())

    # ---- idempotence ---------------------------------------------------------------
    def check_sequence(self, h: BatchHeader) -> int | None:
        """Validate an idempotent batch. Returns the original base offset of a duplicate."""
        if h.producer_id < 0:
            return None
        entry = self.producers.get(h.producer_id)
        if entry is None:
            return None
        if h.producer_epoch < entry.epoch:
            raise KafkaError(
                E.INVALID_PRODUCER_EPOCH,
                f"Epoch {h.producer_epoch} is older than the current epoch {entry.epoch}",
            )
        if h.base_sequence < 0:
            return None
        if h.producer_epoch > entry.epoch:
            if h.base_sequence != 0:
                raise KafkaError(
                    E.OUT_OF_ORDER_SEQUENCE_NUMBER,
                    f"Invalid sequence {h.base_sequence} for a new epoch {h.producer_epoch}",
                )
            return None
        for first, last, base, _ in entry.batches:
            if first == h.base_sequence and last == h.last_sequence:
                return base
        expected = (entry.last_seq + 1) % (1 << 31)
        if (entry.batches or entry.epoch_from_marker) and h.base_sequence != expected:
            raise KafkaError(
                E.OUT_OF_ORDER_SEQUENCE_NUMBER,
                f"Out of order sequence number for producer {h.producer_id}: found "
                f"{h.base_sequence}, expected {expected}",
            )
        return None

    def record_producer(self, h: BatchHeader, base: int, last: int) -> None:
        if h.producer_id < 0:
            return
        entry = self.producers.get(h.producer_id)
        if entry is None:
            entry = self.producers[h.producer_id] = ProducerEntry(h.producer_epoch)
        elif h.producer_epoch > entry.epoch:
            new_epoch(entry, h.producer_epoch)
        if h.base_sequence >= 0:
            entry.batches.append((h.base_sequence, h.last_sequence, base, last))
            entry.epoch_from_marker = False
        entry.last_timestamp = h.max_timestamp
        if h.is_transactional and not h.is_control and entry.txn_first_offset < 0:
            entry.txn_first_offset = base

    def replica_producers(self, broker_id: int) -> dict[int, ProducerEntry]:
        """The producer state ``broker_id``'s replica holds, as Kafka's
        Partition.activeProducerState reads it from that replica's own log: the shared
        state while the replica has everything the leader has; for a follower behind the
        leader, the state its own batches build, each appended as Kafka's follower
        appends a replicated batch (ProducerAppendInfo), so a producer whose batches it
        has not fetched is not there yet. Under --fidelity kafka only (docs/fidelity.md,
        describe-producers-follower). Producers whose batches retention already deleted
        from the follower's log are missing from a lagging follower's answer (Kafka
        keeps them in its snapshot). Asked of a replica only (DescribeProducers answers
        NOT_LEADER_OR_FOLLOWER elsewhere), which always has a log."""
        log = self.logs[broker_id]
        if broker_id == self.leader or log.log_end_offset >= self.leader_log.log_end_offset:
            return self.producers
        out: dict[int, ProducerEntry] = {}
        for data, base, last, _, _ in log.batches_from(log.log_start_offset, 1 << 62):
            h = read_header(data)
            if h.producer_id < 0:
                continue
            entry = out.get(h.producer_id)
            if entry is None:
                entry = out[h.producer_id] = ProducerEntry(h.producer_epoch)
            elif h.producer_epoch != entry.epoch:
                new_epoch(entry, h.producer_epoch)
            if h.is_control:
                # appendEndTxnMarker: the transaction ends, the marker's coordinator
                # epoch is kept. Every marker is one the emulator wrote (clients cannot
                # produce control batches, the cleaner drops a marker whole), one record
                # whose value is version, then coordinator epoch.
                value = decode_records(data)[0].value
                assert value is not None
                _, entry.coordinator_epoch = _MARKER_VALUE.unpack(value)
                entry.txn_first_offset = -1
                continue
            if h.base_sequence >= 0:
                entry.batches.append((h.base_sequence, h.last_sequence, base, last))
            entry.last_timestamp = h.max_timestamp
            if h.is_transactional and entry.txn_first_offset < 0:
                entry.txn_first_offset = base
        return out

    def complete_txn(self, producer_id: int, epoch: int, marker_offset: int,
                     commit: bool) -> None:
        """A COMMIT or ABORT marker was appended (Kafka's appendEndTxnMarker).

        The producer's epoch moves to the marker's (a fencing abort, or any end of a
        transactions-v2 transaction, bumps it), which resets the sequence state: the
        new epoch's first batch starts at sequence 0 (maybeUpdateProducerEpoch leaves
        the entry without batches). An aborted transaction with data here is recorded
        for read_committed fetches.
        """
        entry = self.producers.get(producer_id)
        if entry is None:
            entry = self.producers[producer_id] = ProducerEntry(epoch)
            entry.epoch_from_marker = True
        if epoch != entry.epoch:
            entry.epoch = epoch
            entry.batches.clear()
            entry.epoch_from_marker = True
        first = entry.txn_first_offset
        entry.txn_first_offset = -1
        entry.coordinator_epoch = 0
        if first >= 0 and not commit:
            self.aborted.append(AbortedTxn(producer_id, first, marker_offset))
        pending = self.unreplicated_markers
        while pending and pending[0].marker_offset < self.high_watermark:
            del pending[0]  # completed (they are in offset order): keep the list short
        pending.append(PendingMarker(producer_id, epoch, commit, first, marker_offset))

    # ---- ISR and high watermark ----------------------------------------------------
    def update_follower(self, broker_id: int, fetch_offset: int, now_ms: int) -> None:
        """Kafka's Replica.updateFetchState: advance lastCaughtUpTime by its rules."""
        st = self.followers.get(broker_id)
        if st is None:
            st = self.followers[broker_id] = FollowerState()
        update_fetch_state(st, fetch_offset, self.log_end_offset, now_ms)

    def leader_epoch_start(self) -> int:
        for epoch, start in reversed(self.leader_log.epoch_entries()):
            if epoch == self.leader_epoch:
                return start
        return self.log_end_offset

    def can_join_isr(self, broker_id: int) -> bool:
        """A follower joins once its LEO >= HW and >= the current epoch's start offset.
        (Asked only of followers outside the ISR: ``Followers.follower_fetch``.)"""
        return can_join_isr(broker_id, self.followers.get(broker_id), self.isr, self.replicas,
                            self.high_watermark, self.leader_epoch_start())

    def is_caught_up(self, st: FollowerState, now_ms: int, lag_max_ms: int) -> bool:
        """Kafka's ReplicaState.isCaughtUp of the leader's view ``st`` of a follower: at
        the leader's LEO, or caught up recently."""
        return (st.log_end_offset == self.log_end_offset
                or now_ms - st.last_caught_up_ms <= lag_max_ms)

    def out_of_sync(self, now_ms: int, lag_max_ms: int) -> list[int]:
        """Followers in the ISR that are not caught up (Partition.getOutOfSyncReplicas).

        A follower whose LEO equals the leader's is never out of sync, however long
        ago it last fetched: an idle partition does not shrink its ISR.
        """
        leo = self.log_end_offset
        return [b for b in out_of_sync_replicas(self.leader, self.isr, self.followers, now_ms,
                                                lag_max_ms)
                if b not in self.followers or self.followers[b].log_end_offset != leo]

    def maybe_advance_hw(self, min_isr: int = 1, now_ms: int | None = None,
                         lag_max_ms: int = 0, eligible: Container[int] = ()) -> bool:
        """Partition.maybeIncrementLeaderHW; the high watermark never moves backwards.

        Nothing moves while the ISR is below the effective min.insync.replicas
        (KAFKA-15583). Otherwise HW = the minimum LEO over the leader, the ISR, and
        followers outside the ISR that are caught up and eligible (about to join).
        """
        if self.leader < 0 or len(self.isr) < min(min_isr, len(self.replicas)):
            return False
        new = isr_high_watermark(self.leader, self.log_end_offset, self.isr, self.followers)
        if now_ms is not None:
            for b, st in self.followers.items():
                if (b != self.leader and b not in self.isr and b in eligible
                        and st.log_end_offset < new and b in self.replicas
                        and self.is_caught_up(st, now_ms, lag_max_ms)):
                    new = st.log_end_offset
        if new > self.high_watermark:
            self.high_watermark = new
            return True
        return False

    def in_sync_count(self) -> int:
        return len(self.isr)

    def reset_follower_states(self, now_ms: int, new_leader: bool = True) -> None:
        """Replica.resetReplicaState on makeLeader: ISR members count as caught up now.

        A new leader knows nothing of its followers' LEOs (-1, Kafka's unknown
        offset) until they fetch, so the high watermark waits for every ISR member.
        """
        for b in self.replicas:
            if b == self.leader:
                continue
            in_sync = b in self.isr
            old = self.followers.get(b)
            if new_leader or old is None:
                self.followers[b] = FollowerState(
                    log_end_offset=-1, last_caught_up_ms=now_ms if in_sync else 0,
                    last_fetch_leader_leo=-1, last_fetch_ms=0)
            else:
                old.last_caught_up_ms = now_ms if in_sync else 0
                old.last_fetch_ms = now_ms if in_sync else 0
                old.last_fetch_leader_leo = self.log_end_offset

    # ---- replica set changes (controller, reassignment) ------------------------------
    def add_replica(self, broker_id: int) -> None:
        """Create an empty replica (a reassignment's adding replica starts from nothing)."""
        if broker_id not in self.logs:
            self.logs[broker_id] = Log()
        self.followers.setdefault(broker_id, FollowerState(log_end_offset=-1,
                                                           last_fetch_leader_leo=-1))

    def delete_replica(self, broker_id: int) -> None:
        """Drop a removed replica's log and fetch state (StopReplica with deletion)."""
        for d in (self.logs, self.followers, self.follower_hw, self.fetcher_epoch,
                  self.next_fetch_ms):
            d.pop(broker_id, None)

    # ---- truncation --------------------------------------------------------------------
    def truncate_producer_state(self, end_offset: int) -> None:
        """Forget appends at or above ``end_offset`` (a new leader's LEO).

        Idempotent-producer state is shared by the replicas here; Kafka rebuilds it
        from the log after a truncation. Dropping the batches the new leader does
        not have lets the producer's retry of them be appended, not mistaken for a
        duplicate of records that no longer exist.
        """
        for entry in self.producers.values():
            while entry.batches and entry.batches[-1][2] >= end_offset:
                entry.batches.pop()
            if entry.txn_first_offset >= end_offset:
                entry.txn_first_offset = -1
        self.aborted = [a for a in self.aborted if a.last_offset < end_offset]
        self.unreplicated_markers = [m for m in self.unreplicated_markers
                                     if m.marker_offset < end_offset]


def epoch_end_offset(log: Log, epoch: int) -> tuple[int, int]:
    """LeaderEpochFileCache.endOffsetFor, exactly: (epoch, end offset) or (-1, -1).

    The latest epoch ends at the log end offset. A requested epoch older than every
    entry answers (requested epoch, start of the first entry); one newer than every
    entry, or an undefined one, answers (-1, -1).
    """
    entries = log.epoch_entries()
    if epoch == UNDEFINED_EPOCH or not entries:
        return UNDEFINED_EPOCH, -1
    if entries[-1][0] == epoch:
        return epoch, log.log_end_offset
    for i, (e, start) in enumerate(entries):
        if e > epoch:
            if i == 0:
                return epoch, start
            return entries[i - 1][0], start
    return UNDEFINED_EPOCH, -1
