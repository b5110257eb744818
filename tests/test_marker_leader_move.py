"""A transaction marker the followers have not fetched when leadership moves.

Kafka cannot lose a COMMIT/ABORT marker to a leader change: WriteTxnMarkers appends
with acks=-1, and a marker whose leader moved before the in-sync followers had it is
retried at the new leader; until then the transaction is open there. The adversary
plays exactly that window (``follower_lag``, then a ``leader_move``). The emulator's
coordinator counts a marker as written once the leader has it, so the new leader
writes again every marker whose write had not completed (emulator/cluster/leadership.py
``markers_sent_again``, ``rewrite_marker``): found for ABORT markers by the reference
pipeline's 100-seed run, where an aborted transaction's outputs were given to
read_committed readers as committed; COMMIT markers, and a marker the new leader had
while another ISR member lacked it (Kafka's retry writes it twice), followed."""

from __future__ import annotations

import struct

from cluster_sim import new_cluster

from emulator.cluster import controller
from emulator.cluster.events import Appended
from emulator.coordinators.transactions.markers import write_markers
from wire.records import TIMESTAMP_TYPE_BIT, build_batch, decode_records, read_header


def _one_replicated_partition():
    """Three brokers and t-0 on all of them, its followers fetching: (sim, t-0, leader)."""
    sim = new_cluster(3)
    sim.state.create_topic("t", 1, 3)
    p = sim.state.topics["t"].partitions[0]
    sim.state.tick()
    return sim, p, p.leader


def _aborted_while_followers_pause(epoch: int = 0):
    """Producer 7 (at ``epoch``) writes a transactional record, replicated; the followers
    stop fetching (a GC pause) and the coordinator aborts: only the leader, ``old``, has
    the marker. Returns (sim, partition, old)."""
    sim, p, old = _one_replicated_partition()
    state = sim.state
    data = build_batch(
        [(b"k", b"aborted")], producer_id=7, producer_epoch=epoch, base_sequence=0,
        transactional=True,
    )
    assert state.append(old, "t", 0, data, -1).error == 0
    for _ in range(5):
        state.tick()
    assert p.high_watermark == 1 and p.last_stable_offset() == 0  # replicated, open
    for follower in p.replicas[1:]:
        sim.faults.apply({"op": "pause_follower", "broker": follower})
    pending = {("t", 0)}
    write_markers(state, pending, 7, epoch, False, state.now())
    assert not pending and p.logs[old].log_end_offset == 2
    return sim, p, old


def _aborted_then_leader_moves():
    sim, p, old = _aborted_while_followers_pause()
    sim.faults.apply({"op": "move_leader", "topic": "t", "partition": 0})
    assert p.leader != old
    return sim, p


def test_an_abort_marker_the_new_leader_lacked_is_written_again() -> None:
    sim, p = _aborted_then_leader_moves()
    state = sim.state
    # the aborted record is not stable-and-unaborted: read_committed does not get it
    assert p.last_stable_offset() == 0
    assert [(a.producer_id, a.first_offset) for a in p.aborted] == [(7, 0)]
    marker_at = p.aborted[0].last_offset
    at = [
        (base, read_header(data).is_control)
        for data, base, _, _, _ in p.leader_log.batches_from(marker_at, 1 << 62)
    ]
    assert at == [(marker_at, True)], "the new leader's log has no marker after the data"
    for follower in p.replicas:
        sim.faults.apply({"op": "resume_follower", "broker": follower})
    for _ in range(10):
        state.tick()
    # replicated: the transaction is stable, and aborted
    assert p.high_watermark == p.log_end_offset == marker_at + 1
    assert p.last_stable_offset() == p.high_watermark
    assert [(a.producer_id, a.first_offset) for a in p.aborted] == [(7, 0)]


def _aborted_before_the_followers_had_its_data():
    """The transaction's data and its ABORT marker both reach only the leader (the
    followers stopped fetching before the data), then leadership moves to a follower,
    which is still in the ISR: its log end offset is the transaction's first offset."""
    sim, p, old = _one_replicated_partition()
    state = sim.state
    for follower in p.replicas[1:]:
        sim.faults.apply({"op": "pause_follower", "broker": follower})
    data = build_batch(
        [(b"k", b"aborted")], producer_id=7, producer_epoch=0, base_sequence=0, transactional=True
    )
    assert state.append(old, "t", 0, data, -1).error == 0
    pending = {("t", 0)}
    write_markers(state, pending, 7, 0, False, state.now())
    assert not pending and p.logs[old].log_end_offset == 2 and p.high_watermark == 0
    sim.faults.apply({"op": "move_leader", "topic": "t", "partition": 0})
    assert p.leader != old and p.leader_log.log_end_offset >= 0
    return sim, p, old


def test_a_new_leader_without_the_transactions_data_still_gets_its_abort_marker() -> None:
    """Kafka's coordinator sends the marker again to the new leader whenever its
    WriteTxnMarkers had not completed (acks=-1: the high watermark had not passed the
    marker), whatever the new leader holds; there it is a marker of no transaction
    (ProducerAppendInfo.appendEndTxnMarker emits no CompletedTxn when the producer has
    no ongoing transaction): one control batch at the new leader's log end, and no
    aborted-transaction entry. So the partition's next record is at offset 1, not 0."""
    sim, p, _ = _aborted_before_the_followers_had_its_data()
    state = sim.state
    batches = [
        (base, read_header(data).is_control, read_header(data).producer_id)
        for data, base, _, _, _ in p.leader_log.batches_from(0, 1 << 62)
    ]
    assert batches == [(0, True, 7)]
    assert p.aborted == []
    assert p.last_stable_offset() == p.high_watermark
    for follower in p.replicas:
        sim.faults.apply({"op": "resume_follower", "broker": follower})
    for _ in range(10):
        state.tick()
    assert p.high_watermark == p.log_end_offset == 1
    assert p.last_stable_offset() == 1 and p.aborted == []


def test_the_rewritten_marker_is_the_producers_abort_at_the_new_leaders_epoch() -> None:
    """The marker written again is what the coordinator's retry would append: an ABORT
    control record of the producer at its epoch, stamped now with CreateTime (the
    marker's own timestamp), in the new leader's epoch; the producer's state keeps its
    epoch, and the append is news (Appended) like any other."""
    sim, p, old = _aborted_while_followers_pause(epoch=3)
    state, clock = sim.state, sim.clock
    clock.advance(12_345)
    appended: list[Appended] = []
    state.hooks.append(lambda kind, ev: appended.append(ev) if isinstance(ev, Appended) else None)
    sim.faults.apply({"op": "move_leader", "topic": "t", "partition": 0})
    assert p.leader != old
    [(marker, base)] = [(d, b) for d, b, _, _, _ in p.leader_log.batches_from(1, 1 << 62)]
    h = read_header(marker)
    assert (base, h.is_control, h.is_transactional) == (1, True, True)
    assert (h.producer_id, h.producer_epoch) == (7, 3)
    assert h.partition_leader_epoch == p.leader_epoch
    assert h.attributes & TIMESTAMP_TYPE_BIT == 0 and h.max_timestamp == state.now()
    [record] = decode_records(marker)
    assert struct.unpack(">hh", record.key) == (0, 0)  # version 0, ABORT
    assert p.producers[7].epoch == 3
    assert [(a.producer_id, a.first_offset, a.last_offset) for a in p.aborted] == [(7, 0, 1)]
    assert appended == [Appended(topic="t", partition=0, base=1, last=1)]


def test_a_slowed_follower_that_led_for_a_while_fetches_at_once_when_it_follows_again() -> None:
    """A broker that becomes leader stops its fetcher; following again, it starts a new
    one, which fetches at once: the pace a slow_follower fault set for its old fetcher
    does not carry over (becoming leader clears it)."""
    sim = new_cluster(3)
    state, clock = sim.state, sim.clock
    state.create_topic("t", assignments={0: [1, 2, 3]})
    p = state.topics["t"].partitions[0]
    sim.faults.apply({"op": "slow_follower", "broker": 2, "delay_ms": 60_000})
    state.append(1, "t", 0, build_batch([(b"k", b"v")]), 1)
    for _ in range(3):
        clock.advance(10)
        state.tick()
    assert p.logs[2].log_end_offset == 1 and 2 in p.isr
    assert sim.faults.apply({"op": "move_leader", "topic": "t", "partition": 0, "broker": 2})
    clock.advance(10)
    state.tick()
    sim.faults.apply({"op": "move_leader", "topic": "t", "partition": 0, "broker": 1})
    state.append(1, "t", 0, build_batch([(b"k", b"v")]), 1)
    clock.advance(10)
    state.tick()
    assert p.logs[2].log_end_offset == 2


def _append_txn(state, broker: int, producer_id: int = 7, epoch: int = 0, sequence: int = 0,
                value: bytes = b"v") -> None:
    """A transactional record of ``producer_id`` appended on ``broker`` (the leader)."""
    data = build_batch([(b"k", value)], producer_id=producer_id, producer_epoch=epoch,
                       base_sequence=sequence, transactional=True)
    assert state.append(broker, "t", 0, data, -1).error == 0


def _ended_while_followers_pause(commit: bool, paused: int = 2):
    """Producer 7 writes a transactional record, replicated to all three replicas; then
    ``paused`` followers stop fetching and the coordinator ends the transaction: the
    marker reaches the leader and the followers still fetching, not the paused ones, so
    the high watermark stays below it (the write has not completed). Returns (sim,
    partition, old leader, the followers that have the marker)."""
    sim, p, old = _one_replicated_partition()
    state = sim.state
    _append_txn(state, old)
    for _ in range(5):
        state.tick()
    followers = p.replicas[1:]
    for follower in followers[:paused]:
        sim.faults.apply({"op": "pause_follower", "broker": follower})
    write_markers(state, {("t", 0)}, 7, 0, commit, state.now())
    for _ in range(5):
        state.tick()
    assert p.logs[old].log_end_offset == 2 and p.high_watermark == 1
    assert sorted(p.isr) == sorted(p.replicas)
    return sim, p, old, followers[paused:]


def _batches(p) -> list[tuple[int, bool]]:
    return [(base, read_header(data).is_control)
            for data, base, _, _, _ in p.leader_log.batches_from(0, 1 << 62)]


def _marker_kind(p, offset: int) -> int:
    [(data, _)] = [(d, b) for d, b, _, _, _ in p.leader_log.batches_from(offset, offset + 1)]
    [record] = decode_records(data)
    return struct.unpack(">hh", record.key)[1]  # 0 ABORT, 1 COMMIT


def test_a_commit_marker_the_new_leader_lacked_is_written_again() -> None:
    """As an ABORT marker: the coordinator's retry writes the COMMIT at the new leader,
    which holds the transaction open (below the last stable offset) until then; so the
    committed record is followed by its marker there too, and the next record lands at
    offset 2, as on Kafka."""
    sim, p, old, _ = _ended_while_followers_pause(commit=True)
    state = sim.state
    sim.faults.apply({"op": "move_leader", "topic": "t", "partition": 0})
    assert p.leader != old
    assert _batches(p) == [(0, False), (1, True)]
    assert _marker_kind(p, 1) == 1
    assert p.aborted == []
    assert p.last_stable_offset() == 0  # the marker is not replicated yet
    for follower in p.replicas:
        sim.faults.apply({"op": "resume_follower", "broker": follower})
    for _ in range(10):
        state.tick()
    assert p.high_watermark == p.log_end_offset == p.last_stable_offset() == 2
    assert p.aborted == []


def test_a_marker_the_new_leader_had_is_written_twice_when_its_write_had_not_completed() -> None:
    """The new leader fetched the marker, another ISR member had not, so the high
    watermark had not passed it: the coordinator's WriteTxnMarkers had not completed,
    the old leader answered it NOT_LEADER_OR_FOLLOWER and the coordinator sends it again
    to the new leader, which appends a second marker, of no transaction (the producer
    has none open there): no second aborted-transaction entry."""
    for commit in (False, True):
        sim, p, old, [has_it] = _ended_while_followers_pause(commit, paused=1)
        assert p.logs[has_it].log_end_offset == 2
        sim.faults.apply({"op": "move_leader", "topic": "t", "partition": 0, "broker": has_it})
        assert p.leader == has_it
        assert _batches(p) == [(0, False), (1, True), (2, True)], commit
        assert _marker_kind(p, 2) == int(commit)
        assert [(a.first_offset, a.last_offset) for a in p.aborted] == \
            ([] if commit else [(0, 1)])
        for follower in p.replicas:
            sim.faults.apply({"op": "resume_follower", "broker": follower})
        for _ in range(10):
            sim.state.tick()
        assert p.high_watermark == p.log_end_offset == p.last_stable_offset() == 3


def test_a_marker_whose_write_completed_is_not_written_again() -> None:
    """Once the high watermark passed the marker (every ISR member has it), the
    coordinator's write completed: a later leader change sends nothing again."""
    sim, p, old = _one_replicated_partition()
    state = sim.state
    _append_txn(state, old)
    write_markers(state, {("t", 0)}, 7, 0, True, state.now())
    for _ in range(5):
        state.tick()
    assert p.high_watermark == 2
    sim.faults.apply({"op": "move_leader", "topic": "t", "partition": 0})
    assert p.leader != old
    assert _batches(p) == [(0, False), (1, True)]


def test_no_marker_is_sent_again_to_a_producer_that_went_on() -> None:
    """The emulator's coordinator counts a marker written once the leader has it, so a
    producer may begin its next transaction before the marker is replicated (Kafka's
    coordinator would answer CONCURRENT_TRANSACTIONS until the marker completed). Sending
    the old marker again then would end the new transaction: no retry is made, and the
    new transaction stays open on the new leader."""
    sim, p, old, [has_it] = _ended_while_followers_pause(commit=True, paused=1)
    state = sim.state
    _append_txn(state, old, sequence=1, value=b"next")
    for _ in range(5):
        state.tick()
    assert p.logs[has_it].log_end_offset == 3
    sim.faults.apply({"op": "move_leader", "topic": "t", "partition": 0, "broker": has_it})
    assert p.leader == has_it
    assert _batches(p) == [(0, False), (1, True), (2, False)]
    assert p.producers[7].txn_first_offset == 2


def test_an_abort_marker_an_unclean_leader_lacked_is_written_though_its_write_completed() -> None:
    """A follower out of the ISR (it stopped fetching after the transaction's data)
    misses the ABORT marker, whose write completes on the ISR; the ISR's brokers stop
    and the follower is elected uncleanly. Kafka's coordinator has no retry to send (the
    write had completed): the transaction hangs open there. The emulator writes the
    ABORT again instead (leadership.markers_sent_again says why): the aborted record
    stays aborted for read_committed readers, its marker right after it."""
    sim, p, old = _one_replicated_partition()
    state, clock = sim.state, sim.clock
    state.topics["t"].configs["unclean.leader.election.enable"] = "true"
    _append_txn(state, old, epoch=4, value=b"aborted")
    for _ in range(5):
        state.tick()
    lagging, other = p.replicas[1], p.replicas[2]
    sim.faults.apply({"op": "pause_follower", "broker": lagging})
    write_markers(state, {("t", 0)}, 7, 4, False, state.now())
    for _ in range(4):
        clock.advance(20_000)
        state.tick()
    assert lagging not in p.isr and p.high_watermark == 2  # the marker's write completed
    assert p.logs[lagging].log_end_offset == 1
    controller.broker_stopped(state, old)
    controller.broker_stopped(state, other)
    assert p.leader == lagging and p.isr == [lagging]
    assert _batches(p) == [(0, False), (1, True)]
    assert _marker_kind(p, 1) == 0
    h = read_header(next(iter(p.leader_log.batches_from(1, 2)))[0])
    assert (h.producer_id, h.producer_epoch) == (7, 4)
    assert [(a.producer_id, a.first_offset, a.last_offset) for a in p.aborted] == [(7, 0, 1)]


def test_markers_of_two_producers_are_both_sent_again_in_their_order() -> None:
    """Two transactions end while the followers pause, one marker each on the leader
    alone: the new leader gets both again, in the order they were written."""
    sim, p, old = _one_replicated_partition()
    state = sim.state
    for pid in (7, 8):
        _append_txn(state, old, producer_id=pid)
    for _ in range(5):
        state.tick()
    for follower in p.replicas[1:]:
        sim.faults.apply({"op": "pause_follower", "broker": follower})
    write_markers(state, {("t", 0)}, 8, 0, True, state.now())
    write_markers(state, {("t", 0)}, 7, 0, False, state.now())
    sim.faults.apply({"op": "move_leader", "topic": "t", "partition": 0})
    assert p.leader != old
    markers = [(base, read_header(d).producer_id)
               for d, base, _, _, _ in p.leader_log.batches_from(2, 1 << 62)]
    assert markers == [(2, 8), (3, 7)]
    assert (_marker_kind(p, 2), _marker_kind(p, 3)) == (1, 0)
    assert [(a.producer_id, a.first_offset, a.last_offset) for a in p.aborted] == [(7, 0, 3)]


def test_an_open_transaction_the_new_leader_never_had_holds_nothing_there() -> None:
    """The transaction's data reached the old leader alone, and the leader moved: the new
    leader's log ends at the transaction's first offset. Kafka rebuilds the producer
    state from the new leader's log, where the producer has no ongoing transaction: it
    holds no last stable offset back (other producers' records there are
    read_committed at once) and DescribeProducers says CurrentTxnStartOffset -1; the
    producer's retry of the batch opens it anew, at the offset it lands on."""
    sim, p, old = _one_replicated_partition()
    state = sim.state
    for follower in p.replicas[1:]:
        sim.faults.apply({"op": "pause_follower", "broker": follower})
    _append_txn(state, old, value=b"open")
    assert p.producers[7].txn_first_offset == 0
    sim.faults.apply({"op": "move_leader", "topic": "t", "partition": 0})
    assert p.leader != old and p.log_end_offset == 0
    assert p.producers[7].txn_first_offset == -1
    for follower in p.replicas:
        sim.faults.apply({"op": "resume_follower", "broker": follower})
    for value in (b"a", b"b"):
        assert state.append(p.leader, "t", 0, build_batch([(b"k", value)]), -1).error == 0
    for _ in range(10):
        state.tick()
    assert p.high_watermark == p.last_stable_offset() == 2
    _append_txn(state, p.leader, value=b"open")  # the producer's retry of the same batch
    assert p.producers[7].txn_first_offset == 2


def test_a_truncation_forgets_the_pending_marker_at_its_offset() -> None:
    """truncate_producer_state(end) forgets every marker at or above ``end``, the one at
    ``end`` included: the new leader lacks it (its log ends there), and what the
    coordinator sends again is recorded by its own append. A marker kept there would
    hold the last stable offset at its transaction's first offset."""
    sim, p, old = _one_replicated_partition()
    state = sim.state
    for follower in p.replicas[1:]:
        sim.faults.apply({"op": "pause_follower", "broker": follower})
    _append_txn(state, old)
    write_markers(state, {("t", 0)}, 7, 0, True, state.now())
    assert [(m.first_offset, m.marker_offset) for m in p.unreplicated_markers] == [(0, 1)]
    p.truncate_producer_state(1)
    assert p.unreplicated_markers == []
    p.high_watermark = 1  # the data alone replicated (as a new leader whose log ends there)
    assert p.last_stable_offset() == 1
