"""The followers' side of replication: their fetches, the ISR and the high watermark.

Above the cluster's data (``emulator.cluster.metadata``), beside the leader's append
path (``emulator.cluster.replication``), below the controller. ``run_tick`` lets
followers fetch (sharing the leader's batch bytes), moves high watermarks and grows and
shrinks ISRs by Kafka's rules (Partition.updateFollowerFetchState, maybeShrinkIsr,
maybeIncrementLeaderHW), visiting only the partitions with work to do.

Split out of replication.py, which held both roles: a produce touches a partition here
(``dirty``, ``wake``) and the tick does the rest, so the two meet only in ``active``,
``parked_at`` and ``wake``. Nothing here writes leadership or replica sets: that is the
controller's. When a leader changes an ISR (Kafka's AlterPartition) the controller's
side hears of it through ``isr_listeners``, an explicit, upward-pointing interface:
ClusterState registers ``reassignment.on_isr_change`` there (a reassignment may
complete), so this module imports nothing above it. The faults in force are asked
through ``ClusterMetadata.faults``, typed by emulator.cluster.ports (FetchConditions).
"""

from __future__ import annotations

import heapq
import itertools
from bisect import bisect_left
from collections.abc import Callable

from emulator.cluster.events import IsrExpanded, IsrShrunk
from emulator.cluster.metadata import ClusterMetadata, Topic
from emulator.cluster.partition import Partition, epoch_end_offset
from emulator.cluster.ports import LogDirListener, WriteChecks


def advance_hw(state: ClusterMetadata, p: Partition, now: int | None = None,
               t: Topic | None = None) -> bool:
    """Move the leader's high watermark by Kafka's rules (Partition.maybe_advance_hw).
    ``t``: ``p``'s topic when the caller holds it."""
    isr = p.isr
    if len(isr) == len(p.replicas):
        # Every replica in the ISR: none is about to join, and the ISR is as large as
        # min.insync.replicas can ask (its effective value is at most the replicas').
        return p.maybe_advance_hw()
    if t is None:
        t = state.topics.get(p.topic)
    min_isr = state.effective_min_isr(t, p) if t is not None else 1
    now = state.now() if now is None else now
    # Only replicas outside the ISR are asked about eligibility and lag (about to join);
    # never a replica in a failed log dir: its fetcher is gone
    eligible = [b for b in p.replicas if b not in isr and state.isr_eligible(b)
                and not (p.offline and b in p.offline)]
    lag_max = state.config_int("replica.lag.time.max.ms")
    return p.maybe_advance_hw(min_isr, now, lag_max, eligible)


def truncate_follower(p: Partition, broker_id: int) -> None:
    """Truncate a follower where its log diverges from the leader's epoch history.

    AbstractFetcherThread's truncation (a fetch's DivergingEpoch, then
    getOffsetTruncationState), repeated until done: ask the leader for the end of the
    follower's latest epoch; if the leader answers with an epoch the follower does not
    have, truncate to the end of the follower's largest epoch below it and ask again
    with that epoch; otherwise truncate to the smaller of the two ends.

    The next question names the epoch found, not the log's latest: Kafka's truncateTo
    drops the epoch entries at or past the new log end even when no record goes (an
    entry a leader recorded when elected, before its first append), so its next
    latestEpoch is that one. An undefined answer (the leader knows no epoch up to the
    one asked) is Kafka's OFFSET_OUT_OF_RANGE: nothing is truncated here, and the
    fetch that follows moves the follower to the leader's log end or start
    (``replicate_partition``, as fetchOffsetAndTruncate).
    """
    log = p.logs[broker_id]
    leader_log = p.leader_log
    epoch = log.latest_epoch
    while epoch >= 0:
        l_epoch, l_end = epoch_end_offset(leader_log, epoch)
        if l_end < 0:
            return
        # l_epoch <= epoch, an epoch of this log: the follower's answer is defined
        f_epoch, f_end = epoch_end_offset(log, l_epoch)
        # (Kafka's min with the log end: truncate_to at or past the end does nothing)
        if f_epoch == l_epoch:
            log.truncate_to(min(f_end, l_end))
            return
        log.truncate_to(f_end)
        epoch = f_epoch  # below l_epoch: the loop ends


class Followers:
    """The follower replication of one cluster: visits only partitions with work to do.

    A partition is visited by a tick when it was touched (``ClusterMetadata.dirty``:
    an append, a leader or ISR change, a new replica), when its replication is not
    finished (``active``: a follower behind, the high watermark below the log end),
    or when its deadline comes (``_parked``: every lagging follower's broker is down,
    so nothing can move until the ISR expires it at its deadline, or a broker or fault
    change touches every partition). A finished partition is idle: no tick visits it
    until something touches it again, so idle partitions cost nothing per tick.
    """

    def __init__(self, state: ClusterMetadata) -> None:
        self.state = state
        # The controller's ear (AlterPartition): called after a leader changed an ISR.
        self.isr_listeners: list[Callable[[Partition], None]] = []
        # The controller's ear for storage (its log_dir_failed): told each log dir a
        # fault check found failing, once the check has answered (ports.LogDirFailure).
        self.log_dir_listeners: list[LogDirListener] = []
        self._next_isr_expiration: int | None = None
        self.active: set[Partition] = set()
        self._parked: list[tuple[int, int, Partition]] = []  # (deadline, seq, partition)
        self.parked_at: dict[Partition, int] = {}  # the live deadline (heap entries go stale)
        self._seq = 0
        self.visits = 0  # partitions visited by ticks, ever: tests count the work done
        # Partitions the last budgeted tick left for the next one, in visiting order
        # (kept apart from ``dirty`` so that each tick costs its budget, not the backlog).
        self._carry: dict[Partition, None] = {}  # see run_tick
        self.backlog = 0

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
        due = self.active | st.dirty
        st.dirty = set()
        parked = self._parked
        while parked and parked[0][0] <= now:
            _, _, p = heapq.heappop(parked)
            if self.parked_at.get(p) is not None and self.parked_at[p] <= now:
                del self.parked_at[p]
                due.add(p)
        return sorted((p for p in due if st.is_current(p)), key=st.partition_order)

    def _file(self, p: Partition, now: int, lag_max: int) -> None:
        """After a visit: idle, active (visit again next tick) or parked until a deadline."""
        was = self.parked_at.pop(p, None)
        if self._replication_done(p):
            self.active.discard(p)
            return
        deadline = self._blocked_until(p, lag_max)
        if deadline is None:
            self.active.add(p)
            return
        self.active.discard(p)
        if deadline < 0:
            return  # nothing can move until a broker or fault change touches it
        self.parked_at[p] = deadline
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
        self.active.discard(p)
        self.parked_at.pop(p, None)

    def wake(self, p: Partition, now: int) -> None:
        """An idle partition is about to move: its caught-up followers are fetching at
        the leader's log end right now (a live follower always has a fetch in flight),
        as the periodic fetches Kafka's followers make would have recorded."""
        if p in self.active or p in self.state.dirty:
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
        if faults.follower_can_fetch(p, follower, st.now() if now is None else now):
            return True
        self.tell_log_dir_failures(faults)
        return False

    def tell_log_dir_failures(self, checks: WriteChecks) -> None:
        """Tell ``log_dir_listeners`` the log dirs ``checks`` found failing: after the
        check, so the controller acts on a failed dir from here (as on an ISR change)
        and never from inside the fault model's check."""
        for failure in checks.take_log_dir_failures():
            for listener in self.log_dir_listeners:
                listener(failure)

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
                self.tell_log_dir_failures(faults)
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
                # a follower rolls where the leader did, so replicas share segments (at
                # the leader's first one too: a no-op unless the follower's records all
                # went below it, and then its next segment starts where the leader's does)
                bases = leader_log.segments.bases
                for data, base, last, epoch, max_ts in leader_log.batches_from(
                    log.log_end_offset, budget
                ):
                    if base < log.log_end_offset:
                        # The leader's log start falls inside its first batch (a
                        # DeleteRecords offset need not be a batch's), and the follower's
                        # log is empty there (a log holding records ends at a batch's
                        # end): it restarts at the batch's base, and its log start follows
                        # the leader's below (Partition.doAppendRecordsToFollowerOrFutureReplica)
                        log.truncate_fully_and_start_at(base)
                    i = bisect_left(bases, base)
                    if i < len(bases) and bases[i] == base:
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
        st.isr_expands_by_broker[p.leader] += 1  # (each broker has one: add_broker)
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
        st.isr_shrinks_by_broker[p.leader] += 1  # (each broker has one: add_broker)
        st.partition_changed(p)
        st.emit(IsrShrunk(topic=p.topic, partition=p.index, brokers=list(out)))
        self._isr_changed(p)

    def _isr_changed(self, p: Partition) -> None:
        for listener in self.isr_listeners:
            listener(p)

    def maintain_isr(self, p: Partition, now: int, lag_max: int) -> bool:
        """Partition.maybeShrinkIsr: the isr-expiration task. It only shrinks: a follower
        joins the ISR on a fetch (``follower_fetch``), as Kafka's maybeExpandIsr runs only
        from updateFollowerFetchState. (An expansion here let followers that no longer
        fetch back in whenever their last LEO reached a high watermark held by
        min.insync.replicas, to drop them again at once: every check an ISR change, a
        partition epoch and an IsrExpands count, and a moment in the ISR that a waiting
        reassignment could take for caught up.)"""
        changed = False
        out = p.out_of_sync(now, lag_max)
        if out:
            self.shrink_isr(p, out)
            changed = True
        changed |= advance_hw(self.state, p, now)
        return changed
