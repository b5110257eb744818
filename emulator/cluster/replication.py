"""Replication: the leader's log, its followers' fetches, the ISR and the high watermark.

Above the cluster's data (``emulator.cluster.metadata``), below the controller.
Produce appends to a leader's log here; ``tick`` lets followers fetch (sharing the
leader's batch bytes), moves high watermarks and grows and shrinks ISRs by Kafka's
rules (Partition.updateFollowerFetchState, maybeShrinkIsr, maybeIncrementLeaderHW).

Replication never writes leadership or replica sets: that is the controller's.
When a leader changes an ISR (Kafka's AlterPartition) the controller hears of it
through ``isr_listeners``, an explicit, upward-pointing interface: the controller
registers itself there, so this module imports nothing above it.
"""

from __future__ import annotations

import heapq
import itertools
import struct
from bisect import bisect_left
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from emulator.cluster.events import Appended, IsrExpanded, IsrShrunk
from emulator.cluster.metadata import ClusterMetadata, ProduceConfigs, Topic
from emulator.cluster.partition import Partition, epoch_end_offset
from emulator.log import Log
from emulator.log.validator import (
    Checked,
    RecordValidationError,
    TopicRules,
    timestamp_window,
    validate_in_window,
)
from wire.errors import ErrorCode as E
from wire.errors import KafkaError
from wire.records import (
    CONTROL_BIT,
    LOG_OVERHEAD,
    InvalidRecordError,
    recompress,
    split_batches,
)

_LENGTH = struct.Struct(">i")  # a batch's length field (after its base offset)


@dataclass(slots=True)
class AppendResult:
    error: int = 0
    base_offset: int = -1
    last_offset: int = -1
    log_append_time: int = -1
    log_start_offset: int = -1
    message: str | None = None
    record_errors: list[dict[str, Any]] = field(default_factory=list)
    leader_epoch: int = -1  # the leader epoch the append was made in (acks=all waits)
    reason: str = ""  # why a batch was refused, for the broker's log (Kafka may send no message)
    # a slow log dir (storage fault slow_writes): the write is done only at this time
    # (ms), and no acknowledgement goes out before it; 0: done at once
    written_at_ms: int = 0
    # acks=all already satisfied when the append returned (the high watermark passed it
    # with enough of the ISR: a lone replica's case): acks_all_done would say (True, 0)
    acked: bool = False



_NO_ERRORS: list[dict[str, Any]] = []  # shared by the appended results: never changed


@dataclass(slots=True)
class _Shared:
    """What the partitions of one topic in one Produce request share (append_many)."""

    topic: Topic
    pc: ProduceConfigs
    now: int
    window: tuple[int, int]  # the validator's timestamp bounds at ``now``
    log_append_time: int  # ``now`` for a LogAppendTime topic, else -1
    observed: bool  # does anyone observe Appended?
    storage_faults: Any  # the fault model when a storage fault is in force, else None
    recompress: bool  # the topic names a codec and Kafka's timing rewrites batches


def _recompress(records: bytes, codec: int, checked: Checked | None, max_bytes: int,
                tp: str) -> bytes:
    """The batch in the topic's codec, as Kafka's LogValidator rewrites a batch whose
    codec is not the topic's compression.type (docs/fidelity.md, topic-compression-type):
    consumers then read the topic's codec whatever the producer used. The rewritten
    batch is held to max.message.bytes again (UnifiedLog.append's second check)."""
    body = checked.inflated if checked is not None else None
    out = recompress(records, codec, body)
    if len(out) > max_bytes:
        raise KafkaError(E.MESSAGE_TOO_LARGE, f"Message batch size is {len(out)} bytes in "
                         f"append to partition {tp} which exceeds the maximum "
                         f"configured size of {max_bytes}.")
    return out


def topic_rules(state: ClusterMetadata, t: Topic) -> TopicRules:
    """The topic's configs the produce validator applies (resolved once per change)."""
    return state.produce_configs(t).rules


def advance_hw(state: ClusterMetadata, p: Partition, now: int | None = None,
               t: Topic | None = None) -> bool:
    """Move the leader's high watermark by Kafka's rules (Partition.maybe_advance_hw).
    ``t``: ``p``'s topic when the caller holds it."""
    if t is None:
        t = state.topics.get(p.topic)
    min_isr = state.effective_min_isr(t, p) if t is not None else 1
    now = state.now() if now is None else now
    # Only replicas outside the ISR are asked about eligibility and lag (about to join)
    isr = p.isr
    if len(isr) == len(p.replicas):  # every replica in the ISR: none is about to join
        return p.maybe_advance_hw(min_isr, now, 0, ())
    # (never a replica in a failed log dir: its fetcher is gone)
    eligible = [b for b in p.replicas if b not in isr and state.isr_eligible(b)
                and not (p.offline and b in p.offline)]
    lag_max = state.config_int("replica.lag.time.max.ms") if eligible else 0
    return p.maybe_advance_hw(min_isr, now, lag_max, eligible)


def truncate_follower(p: Partition, broker_id: int) -> None:
    """Truncate a follower where its log diverges from the leader's epoch history.

    AbstractFetcherThread.getOffsetTruncationState, repeated until done: ask the
    leader for the end of the follower's latest epoch; if the leader answers with
    an epoch the follower does not have, truncate to the end of the follower's
    largest epoch below it and ask again; otherwise truncate to the smaller of the
    two ends. An undefined answer truncates to the follower's high watermark.
    """
    log = p.logs[broker_id]
    leader_log = p.leader_log
    for _ in range(256):
        epoch = log.latest_epoch
        if epoch < 0:
            return
        l_epoch, l_end = epoch_end_offset(leader_log, epoch)
        if l_epoch < 0 or l_end < 0:
            log.truncate_to(min(p.follower_hw.get(broker_id, 0), log.log_end_offset))
            return
        f_epoch, f_end = epoch_end_offset(log, l_epoch)
        if f_epoch < 0:
            log.truncate_to(min(l_end, log.log_end_offset))
            return
        if f_epoch != l_epoch:
            before = log.log_end_offset
            log.truncate_to(min(f_end, log.log_end_offset))
            if log.log_end_offset == before:
                return
            continue
        log.truncate_to(min(f_end, l_end, log.log_end_offset))
        return


class Replication:
    """The replication work of one cluster: visits only partitions with work to do.

    A partition is visited by a tick when it was touched (``ClusterMetadata.dirty``:
    an append, a leader or ISR change, a new replica), when its replication is not
    finished (``_active``: a follower behind, the high watermark below the log end),
    or when its deadline comes (``_parked``: every lagging follower's broker is down,
    so nothing can move until the ISR expires it at its deadline, or a broker or fault
    change touches every partition). A finished partition is idle: no tick visits it
    until something touches it again, so idle partitions cost nothing per tick.
    """

    def __init__(self, state: ClusterMetadata) -> None:
        self.state = state
        # The controller's ear (AlterPartition): called after a leader changed an ISR.
        self.isr_listeners: list[Callable[[Partition], None]] = []
        self._next_isr_expiration: int | None = None
        self._active: set[Partition] = set()
        self._parked: list[tuple[int, int, Partition]] = []  # (deadline, seq, partition)
        self._parked_at: dict[Partition, int] = {}  # the live deadline (heap entries go stale)
        self._seq = 0
        self.visits = 0  # partitions visited by ticks, ever: tests count the work done
        # Partitions the last budgeted tick left for the next one, in visiting order
        # (kept apart from ``dirty`` so that each tick costs its budget, not the backlog).
        self._carry: dict[Partition, None] = {}  # see run_tick
        self.backlog = 0

    # ---- produce --------------------------------------------------------------------
    def append(self, broker_id: int, topic: str, index: int, records: bytes | None,
               acks: int, checked: Checked | None = None) -> AppendResult:
        """Append one partition's records on its leader; Kafka's appendRecordsToLeader.
        ``checked``: what the server already found out about the batch (its records
        inflated, or the validator's outcome computed off the event loop)."""
        return self.append_many(broker_id, topic, ((index, records, checked),), acks)[0]

    def append_many(self, broker_id: int, topic: str,
                    parts: Iterable[tuple[int, bytes | None, Checked | None]],
                    acks: int) -> list[AppendResult]:
        """``append`` for each (index, records, checked) of one topic of a Produce request.

        What the partitions share is looked up once (the topic, its configs, the time,
        the timestamp window, the observers, the faults in force) and the parked
        requests are woken once, after the last append: a request carrying a record for
        each of 100 partitions costs each partition only its own work (docs/scale.md,
        the per-broker client)."""
        st = self.state
        t = st.topics.get(topic)
        out: list[AppendResult] = []
        if t is None:
            for _ in parts:
                out.append(AppendResult(E.UNKNOWN_TOPIC_OR_PARTITION,
                                        message=KafkaError(E.UNKNOWN_TOPIC_OR_PARTITION).message))
            return out
        pc = st.produce_configs(t)
        now = st.now()
        faults = st.faults
        shared = _Shared(
            t, pc, now, timestamp_window(pc.rules, now), now if pc.log_append_time else -1,
            st.observed(Appended),
            faults if faults is not None and faults.storage else None,
            pc.codec >= 0 and st.fidelity.kafka_timing)
        keys: list[tuple[str, int]] = []
        partitions = t.partitions
        n = len(partitions)
        append_leader = self._append_leader
        for index, records, checked in parts:
            try:
                if not 0 <= index < n:
                    raise KafkaError(E.UNKNOWN_TOPIC_OR_PARTITION)
                p = partitions[index]
                r = append_leader(p, broker_id, records, acks, checked, shared)
                out.append(r)
                if r.error == 0 and r.leader_epoch >= 0:  # appended (not a duplicate)
                    keys.append((topic, index))
            except KafkaError as e:
                out.append(AppendResult(e.code, message=e.message))
        if keys:
            st.changed(partitions_only=True, keys=keys)
        return out

    def _append_leader(self, p: Partition, broker_id: int, records: bytes | None, acks: int,
                       checked: Checked | None, shared: _Shared) -> AppendResult:
        """One partition's append (``append_many``): checks, validation, the log."""
        if p.leader != broker_id or p.offline or broker_id not in p.replicas:
            p.check_leader(broker_id)
        if not records:
            raise KafkaError(E.INVALID_RECORD, "Produce request contains no records")
        size = len(records)
        # One batch whose length field covers the whole blob (the common case, read
        # in place); anything else is split to find out what is wrong with it.
        if size < LOG_OVERHEAD or _LENGTH.unpack_from(records, 8)[0] + LOG_OVERHEAD != size:
            try:
                spans = split_batches(records)
            except InvalidRecordError as e:
                raise KafkaError(E.CORRUPT_MESSAGE, str(e)) from e
            if len(spans) != 1:
                raise KafkaError(E.INVALID_RECORD, "Produce requests with version 3 and above "
                                 "must contain exactly one record batch per partition")
        pc = shared.pc
        max_bytes = pc.max_message_bytes
        if size > max_bytes:
            raise KafkaError(E.MESSAGE_TOO_LARGE, f"The request included a message larger "
                             f"than the max message size the server will accept "
                             f"({size} > {max_bytes})")
        isr = p.isr
        n_isr = len(isr)
        n_replicas = len(p.replicas)
        if acks == -1 and n_isr < n_replicas:  # a full ISR is never too small
            min_isr = min(pc.min_insync_replicas, max(1, n_replicas))
            if n_isr < min_isr:
                raise KafkaError(E.NOT_ENOUGH_REPLICAS, f"The size of the current ISR "
                                 f"{set(isr)} is insufficient to satisfy the min.isr "
                                 f"requirement of {min_isr} for partition {p.topic}-{p.index}")
        now = shared.now
        try:
            low, high = shared.window
            h = validate_in_window(records, pc.rules, low, high, (p.topic, p.index),
                                   checked=checked)
            # The validator checked these very bytes' CRC-32C here, unless the outcome
            # came from the check worker (bytes this process has not read): the log then
            # checks the CRC itself, as it does for every batch it did not see checked.
            crc_checked = checked is None or checked.outcome is None
            if h.attributes & CONTROL_BIT:
                raise KafkaError(E.INVALID_RECORD, "Control records are not allowed to be "
                                 "written by clients")
            if h.producer_id >= 0:
                dup = p.check_sequence(h)
                if dup is not None:
                    return AppendResult(0, dup, dup + h.last_offset_delta, -1,
                                        p.log_start_offset)
            if shared.recompress and pc.codec != h.compression:
                records = _recompress(records, pc.codec, checked, max_bytes,
                                      f"{p.topic}-{p.index}")
                size = len(records)
                crc_checked = False  # new bytes: the log checks their CRC
            lat = shared.log_append_time
            written_at = 0
            faults = shared.storage_faults
            if faults is not None:
                # a storage fault on this log dir (emulator/faults): a failed write
                # takes the directory offline first, as Kafka's appendAsLeader does
                err, written_at = faults.storage_write(p, broker_id, now)
                if err is not None:
                    raise KafkaError(E.KAFKA_STORAGE_ERROR, f"Error while appending "
                                     f"records to {p.topic}-{p.index}: {err}")
            logs = p.logs
            n_logs = len(logs)
            if n_logs > 1 and p not in self._active and p not in self.state.dirty:
                self._wake(p, now)  # (it looks at the followers' logs: none without them)
            log = logs[p.leader]
            log.maybe_roll(size, pc.segment_bytes, pc.segment_ms, now)
            base, last, _ = log.append_as_leader(records, p.leader_epoch, lat, crc_checked)
        except InvalidRecordError as e:
            code = E.CORRUPT_MESSAGE if e.corrupt else E.INVALID_RECORD
            raise KafkaError(code, str(e)) from e
        except RecordValidationError as e:
            return AppendResult(e.code, message=e.message, reason=str(e), record_errors=[
                {"batch_index": i, "batch_index_error_message": m}
                for i, m in e.record_errors])
        if h.producer_id >= 0:
            p.record_producer(h, base, last)
        st = self.state
        # A lone replica (no follower anywhere, the ISR the leader, nothing pending) has
        # nothing for a tick to replicate: its high watermark moves below and retention is
        # told here, which is all the tick's visit would do (2.4 us a partition, measured).
        lone = n_logs == 1 and n_replicas == 1 and len(isr) == 1 \
            and p not in self._active and p not in self._parked_at
        if lone:
            st.retention_marks.add(p)
        else:
            st.dirty.add(p)  # mark_active: the next tick lets the followers fetch
        if st.hooks:
            if shared.observed:
                st.emit(Appended(topic=p.topic, partition=p.index, base=base, last=last))
            if p.offline and broker_id in p.offline:  # the data dir refused the write
                raise KafkaError(E.KAFKA_STORAGE_ERROR, f"Error while appending records "
                                 f"to {p.topic}-{p.index}: the log dir failed")
        isr = p.isr  # (an observer may have changed it)
        hw = p.high_watermark
        if len(isr) == 1:
            if len(p.replicas) == 1:
                # maybe_advance_hw's answer for a lone replica (the ISR is the leader,
                # never below min(min.insync.replicas, 1)): the log end
                leo = log.log_end_offset
                if leo > hw:
                    p.high_watermark = hw = leo
            else:
                advance_hw(st, p, now, shared.topic)
                hw = p.high_watermark
        # acks_all_done's (True, 0), found now (done stays done: DelayedProduce)
        acked = hw > last and (
            len(isr) >= len(p.replicas)
            or len(isr) >= min(pc.min_insync_replicas, max(1, len(p.replicas))))
        return AppendResult(0, base, last, lat, log.log_start_offset, None, _NO_ERRORS,
                            p.leader_epoch, "", written_at, acked)

    def append_control(self, p: Partition, data: bytes) -> int:
        """Write a transaction marker on the leader (the coordinator's WriteTxnMarkers)."""
        self._wake(p, self.state.now())
        t = self.state.topics.get(p.topic)
        if t is not None:
            self.roll_if_due(t, p.leader_log, len(data), self.state.now())
        base, _, _ = p.leader_log.append_as_leader(data, p.leader_epoch, -1)
        self.mark_active(p)
        if self.state.hooks:
            # news like any append's: with --data-dir the marker is on disk before the
            # EndTxn that wrote it is answered (else a crash right after the answer left
            # a committed transaction open in the log, and recovery aborted it)
            self.state.emit(Appended(topic=p.topic, partition=p.index, base=base,
                                     last=base))
        if len(p.isr) == 1:
            advance_hw(self.state, p)
        self.state.changed(partitions_only=True, keys=(p.key,))
        return base

    def roll_if_due(self, t: Topic, log: Log, size: int, now: int) -> None:
        """Roll the leader's active segment before an append (segment.bytes, segment.ms;
        internal.segment.bytes where set: ClusterMetadata.produce_configs)."""
        pc = self.state.produce_configs(t)
        log.maybe_roll(size, pc.segment_bytes, pc.segment_ms, now)

    def acks_all_done(self, topic: str, index: int, last_offset: int,
                      leader_epoch: int = -1) -> tuple[bool, int]:
        """Has the ISR acknowledged up to last_offset? Returns (done, error code).

        Partition.checkEnoughReplicasReachOffset: done once the high watermark
        passes the offset, with NOT_ENOUGH_REPLICAS_AFTER_APPEND when the ISR is then
        below the effective min.insync.replicas. A leader change while waiting
        (another leader epoch) answers NOT_LEADER_OR_FOLLOWER, as the deposed
        leader's purgatory does: the append may have been truncated away.
        """
        t = self.state.topics.get(topic)
        if t is None or index >= len(t.partitions):
            return True, E.UNKNOWN_TOPIC_OR_PARTITION
        p = t.partitions[index]
        if (leader_epoch >= 0 and p.leader_epoch != leader_epoch) or p.leader < 0:
            return True, E.NOT_LEADER_OR_FOLLOWER
        if p.high_watermark > last_offset:
            # a full ISR is never below min(min.insync.replicas, replication factor)
            if len(p.isr) < len(p.replicas) \
                    and len(p.isr) < self.state.effective_min_isr(t, p):
                return True, E.NOT_ENOUGH_REPLICAS_AFTER_APPEND
            return True, 0
        if last_offset >= p.log_end_offset:
            return True, E.NOT_LEADER_OR_FOLLOWER  # the append was truncated away
        return False, 0


    # ---- replication and ISR maintenance ---------------------------------------------
    def plan_tick(self, now: int, full: bool) -> tuple[bool, bool]:
        """(expire, visit_all) for a tick at ``now``, decided before the controller acts.

        Kafka's isr-expiration task runs every replica.lag.time.max.ms / 2, so a
        follower that stops fetching leaves the ISR between 1 and 1.5 lag times
        after it last caught up. A ``full`` tick (tests, tools) visits every
        partition; otherwise only the touched, unfinished and due ones.
        """
        st = self.state
        lag_max = st.config_int("replica.lag.time.max.ms")
        expire = self._next_isr_expiration is None or now >= self._next_isr_expiration
        if expire:
            self._next_isr_expiration = now + max(1, lag_max // 2)
        visit_all = full or st.dirty_all
        st.dirty_all = False
        return expire, visit_all

    def run_tick(self, now: int, expire: bool, visit_all: bool,
                 budget: int | None = None) -> set[tuple[str, int]]:
        """Followers fetch, high watermarks move, ISRs expand (and shrink when
        ``expire``). Returns the keys of the partitions where something moved.

        With a ``budget``, at most that many partitions are visited; the rest stay
        touched for the next tick (``backlog`` says how many), so that 10,000 new
        partitions do not hold the server's event loop in one tick."""
        st = self.state
        lag_max = st.config_int("replica.lag.time.max.ms")
        moved: set[tuple[str, int]] = set()
        due = self._due(now, visit_all)
        # What the last tick's budget left comes first, then what is already in order
        # (new partitions), then this tick's due ones (one that was left and is due again
        # takes its place among these). An insertion-ordered dict: a tick costs its
        # budget and what it found due, not the whole backlog again (a request on 3,333
        # partitions is replicated over 14 budgeted ticks).
        carry = self._carry
        if st.touched_in_order:
            for p in st.touched_in_order:
                carry[p] = None
            st.touched_in_order = []
        if carry:
            for p in due:
                carry.pop(p, None)
                carry[p] = None
            if budget is None or len(carry) <= budget:
                due = list(carry)
                carry.clear()
            else:
                due = list(itertools.islice(carry, budget))
                for p in due:
                    del carry[p]
        elif budget is not None and len(due) > budget:
            carry.update(dict.fromkeys(due[budget:]))
            due = due[:budget]
        self.backlog = len(carry)
        marks = st.retention_marks
        for p in due:
            if not st.is_current(p):
                continue  # carried over, and its topic was deleted meanwhile
            marks.add(p)  # its log, high watermark or leader may move: retention looks
            if p.leader < 0 or not st.is_running(p.leader):
                self._forget(p)  # a leader change or a broker coming back touches it
                continue
            self.visits += 1
            changed = self.replicate_partition(p, now)
            if expire:
                changed |= self.maintain_isr(p, now, lag_max)
            if changed:
                moved.add(p.key)
            self._file(p, now, lag_max)
        return moved

    def _due(self, now: int, visit_all: bool) -> list[Partition]:
        """The partitions this tick visits, in a full visit's order."""
        st = self.state
        if visit_all:
            st.dirty.clear()
            return [p for t in st.topics.values() for p in t.partitions]
        due = self._active | st.dirty
        st.dirty = set()
        parked = self._parked
        while parked and parked[0][0] <= now:
            _, _, p = heapq.heappop(parked)
            if self._parked_at.get(p) is not None and self._parked_at[p] <= now:
                del self._parked_at[p]
                due.add(p)
        return sorted((p for p in due if st.is_current(p)), key=st.partition_order)

    def _file(self, p: Partition, now: int, lag_max: int) -> None:
        """After a visit: idle, active (visit again next tick) or parked until a deadline."""
        was = self._parked_at.pop(p, None)
        if self._replication_done(p):
            self._active.discard(p)
            return
        deadline = self._blocked_until(p, lag_max)
        if deadline is None:
            self._active.add(p)
            return
        self._active.discard(p)
        if deadline < 0:
            return  # nothing can move until a broker or fault change touches it
        self._parked_at[p] = deadline
        if deadline != was:  # the heap already holds this one
            self._seq += 1
            heapq.heappush(self._parked, (deadline, self._seq, p))

    def _blocked_until(self, p: Partition, lag_max: int) -> int | None:
        """When every follower not yet done (behind, or out of the ISR) has its broker
        down: the time the first of them in the ISR falls out of it (-1 if none is in
        the ISR: only a broker or fault change can move it); None if one could fetch."""
        st = self.state
        leo = p.leader_log.log_end_offset
        deadline = -1
        for b, log in p.logs.items():
            if b == p.leader or (log.log_end_offset == leo and b in p.isr
                                 and p.fetcher_epoch.get(b) == p.leader_epoch):
                continue
            if st.is_running(b):
                return None
            f = p.followers.get(b)
            if b in p.isr and f is not None:
                due = f.last_caught_up_ms + lag_max + 1
                deadline = due if deadline < 0 else min(deadline, due)
        if p.high_watermark != leo and deadline < 0:
            return None  # the HW can still move (an ISR shrink by another path)
        return deadline

    def _forget(self, p: Partition) -> None:
        self._active.discard(p)
        self._parked_at.pop(p, None)

    def _wake(self, p: Partition, now: int) -> None:
        """An idle partition is about to move: its caught-up followers are fetching at
        the leader's log end right now (a live follower always has a fetch in flight),
        as the periodic fetches Kafka's followers make would have recorded."""
        if p in self._active or p in self.state.dirty:
            return
        leo = p.leader_log.log_end_offset
        for b, log in p.logs.items():
            if (b != p.leader and log.log_end_offset == leo
                    and p.fetcher_epoch.get(b) == p.leader_epoch
                    and self.follower_can_fetch(p, b, now)):
                p.update_follower(b, leo, now)

    def mark_active(self, p: Partition) -> None:
        """The leader's log moved: the next tick must let the followers fetch."""
        self.state.touch(p)

    @staticmethod
    def _replication_done(p: Partition) -> bool:
        """Every follower at the leader's log end in the current epoch, all of them in
        the ISR, and the high watermark at the log end: nothing left to move."""
        if p.leader < 0:
            return True
        leo = p.leader_log.log_end_offset
        if p.high_watermark != leo:
            return False
        isr = p.isr
        for b, log in p.logs.items():
            if b != p.leader and (log.log_end_offset != leo or b not in isr
                                  or p.fetcher_epoch.get(b) != p.leader_epoch):
                return False
        return True

    def follower_can_fetch(self, p: Partition, follower: int, now: int | None = None) -> bool:
        """Is the follower's fetcher running and able to reach the leader? (faults)"""
        st = self.state
        if not st.is_running(follower) or (p.offline and follower in p.offline):
            return False  # stopped, or its replica is in a failed log dir (fetcher removed)
        if st.replication_quotas.follower_excluded(p, follower):
            return False  # follower throttle: left out of its fetcher's requests
        faults = st.faults
        if faults is None or not faults.affects_fetching:
            return True
        can: bool = faults.follower_can_fetch(p, follower, st.now() if now is None else now)
        return can

    def replicate_partition(self, p: Partition, now: int) -> bool:
        """One fetch round for each follower of ``p``; shares the leader's batch bytes.

        A follower that has not yet fetched in the current leader epoch first
        truncates where its log diverges (OffsetForLeaderEpoch / DivergingEpoch).
        The leader updates its view of the follower from the fetch offset (the
        follower's LEO before the data it is about to get); a follower that got
        data fetches again at once, as Kafka's fetcher does.
        """
        leader_log = p.leader_log
        leader = p.leader
        moved = False
        fetched = []
        st = self.state
        # Asked once per partition, not per follower and step: whether a replication
        # throttle lists this partition, whether any fetch fault is in force. Neither
        # can change during the round; without them the per-fetch questions are no-ops.
        quotas = st.replication_quotas if st.replication_quotas.covers(p) else None
        faults = st.faults if st.faults is not None and st.faults.affects_fetching else None
        for b in p.replicas:
            if p.leader != leader:
                break  # a reassignment completed mid-round and moved the leader
            if b == p.leader or not st.is_running(b) or (p.offline and b in p.offline):
                continue
            if quotas is not None and quotas.follower_excluded(p, b):
                continue  # follower throttle: left out of its fetcher's requests
            if faults is not None and not faults.follower_can_fetch(p, b, now):
                continue
            log = p.logs.get(b)
            if log is None:
                continue
            if p.fetcher_epoch.get(b) != p.leader_epoch:
                before = log.log_end_offset
                truncate_follower(p, b)
                p.fetcher_epoch[b] = p.leader_epoch
                moved |= log.log_end_offset != before
            # (moves of a follower's log are news too: a consumer may read from it)
            if log.log_end_offset > leader_log.log_end_offset:
                log.truncate_to(leader_log.log_end_offset)
                moved = True
            if log.log_end_offset < leader_log.log_start_offset:  # OFFSET_OUT_OF_RANGE
                log.truncate_fully_and_start_at(leader_log.log_start_offset)
                moved = True
            moved |= self.follower_fetch(p, b, log.log_end_offset, now)
            if log.log_end_offset < leader_log.log_end_offset:
                budget = st.config_int("replica.fetch.max.bytes") * 64
                if faults is not None:
                    budget = faults.fetch_budget(p, b, budget)
                if quotas is not None:
                    budget = quotas.fetch_budget(p, b, budget)
            else:
                budget = 0
            if budget > 0:
                # a follower rolls where the leader did, so replicas share segments
                bases = leader_log.segments.bases
                for data, base, last, epoch, max_ts in leader_log.batches_from(
                    log.log_end_offset, budget
                ):
                    i = bisect_left(bases, base)
                    if 0 < i < len(bases) and bases[i] == base:
                        log.roll(now)
                    log.segments.on_append(now)
                    log.append_as_follower(data, base, last, epoch, max_ts)
                    if quotas is not None:
                        quotas.record(p, b, len(data))
                moved = True
                if quotas is None or not quotas.follower_excluded(p, b):
                    moved |= self.follower_fetch(p, b, log.log_end_offset, now)
            fetched.append(b)
            if log.log_start_offset < leader_log.log_start_offset:
                log.delete_before(leader_log.log_start_offset)
                moved = True
        # Each fetching follower learns the high watermark: a moved HW completes the
        # followers' fetches waiting in purgatory (tryCompleteDelayedRequests); a
        # follower's new HW is news to the consumers reading from it (KIP-392).
        follower_hw = p.follower_hw
        for b in fetched:
            log = p.logs.get(b)  # a completed reassignment may have deleted it
            if log is not None:
                hw = min(p.high_watermark, log.log_end_offset)
                if follower_hw.get(b, 0) != hw:  # 0: what Partition.replica_view assumes
                    moved = True
                follower_hw[b] = hw
        return moved

    def follower_fetch(self, p: Partition, b: int, fetch_offset: int, now: int) -> bool:
        """The leader's side of a follower fetch (Partition.updateFollowerFetchState):
        fetch state, then ISR expansion, then the high watermark."""
        p.update_follower(b, fetch_offset, now)
        if b in p.isr:
            if p.high_watermark == p.log_end_offset or fetch_offset <= p.high_watermark:
                # Idle, or this in-sync follower is at or below the HW: the HW, a
                # minimum over the ISR that includes it, cannot move.
                return False
            return advance_hw(self.state, p, now)
        changed = False
        if p.can_join_isr(b) and self.state.isr_eligible(b):
            self.expand_isr(p, b)
            changed = True
        changed |= advance_hw(self.state, p, now)
        return changed

    def expand_isr(self, p: Partition, b: int) -> None:
        """The leader adds a caught-up follower to the ISR (AlterPartition, accepted)."""
        st = self.state
        st.before_metadata_change()
        p.isr.append(b)
        p.partition_epoch += 1
        st.isr_expands += 1
        st.isr_expands_by_broker[p.leader] = st.isr_expands_by_broker.get(p.leader, 0) + 1
        st.partition_changed(p)
        st.emit(IsrExpanded(topic=p.topic, partition=p.index, broker=b))
        self._isr_changed(p)

    def shrink_isr(self, p: Partition, out: list[int]) -> None:
        """The leader drops lagging followers from the ISR (AlterPartition, accepted)."""
        st = self.state
        st.before_metadata_change()
        p.isr = [b for b in p.isr if b not in out]
        p.partition_epoch += 1
        st.isr_shrinks += 1
        st.isr_shrinks_by_broker[p.leader] = st.isr_shrinks_by_broker.get(p.leader, 0) + 1
        st.partition_changed(p)
        st.emit(IsrShrunk(topic=p.topic, partition=p.index, brokers=list(out)))
        self._isr_changed(p)

    def _isr_changed(self, p: Partition) -> None:
        for listener in self.isr_listeners:
            listener(p)

    def fetch_budget(self, p: Partition, follower: int) -> int:
        """Bytes this follower may fetch now (throttles override this)."""
        st = self.state
        budget = st.config_int("replica.fetch.max.bytes") * 64
        if st.faults is not None:
            budget = st.faults.fetch_budget(p, follower, budget)
        return st.replication_quotas.fetch_budget(p, follower, budget)

    def consume_budget(self, p: Partition, follower: int, n: int) -> None:
        """Account fetched bytes against the replication throttles (emulator.cluster.throttle)."""
        self.state.replication_quotas.record(p, follower, n)

    def maintain_isr(self, p: Partition, now: int, lag_max: int) -> bool:
        """Partition.maybeShrinkIsr (and a late expansion check): the isr-expiration task."""
        changed = False
        for b in p.replicas:
            if b != p.leader and p.can_join_isr(b) and self.state.isr_eligible(b):
                self.expand_isr(p, b)
                changed = True
        out = p.out_of_sync(now, lag_max)
        if out:
            self.shrink_isr(p, out)
            changed = True
        changed |= advance_hw(self.state, p, now)
        return changed
