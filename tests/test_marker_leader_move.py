"""A transaction marker the followers have not fetched when leadership moves.

Kafka cannot lose a COMMIT/ABORT marker to a leader change: WriteTxnMarkers appends
with acks=-1, and a marker whose leader moved before the in-sync followers had it is
retried at the new leader; until then the transaction is open there. The adversary
plays exactly that window (``follower_lag``, then a ``leader_move``). The emulator's
coordinator counts a marker as written once the leader has it, so the new leader
writes an ABORT marker it lacks again (emulator/cluster/leadership.py
``rewrite_abort_marker``): found by the reference pipeline's 100-seed run, where an
aborted transaction's outputs were given to read_committed readers as committed."""

from __future__ import annotations

from cluster_sim import new_cluster

from emulator.coordinators.transactions.markers import write_markers
from wire.records import build_batch, read_header


def _aborted_then_leader_moves():
    sim = new_cluster(3)
    state = sim.state
    state.create_topic("t", 1, 3)
    p = state.topics["t"].partitions[0]
    state.tick()
    old = p.leader
    data = build_batch(
        [(b"k", b"aborted")], producer_id=7, producer_epoch=0, base_sequence=0, transactional=True
    )
    assert state.append(old, "t", 0, data, -1).error == 0
    for _ in range(5):
        state.tick()
    assert p.high_watermark == 1 and p.last_stable_offset() == 0  # replicated, open
    for follower in p.replicas[1:]:  # the followers stop fetching (a GC pause)
        sim.faults.apply({"op": "pause_follower", "broker": follower})
    pending = {("t", 0)}
    write_markers(state, pending, 7, 0, False, state.now())  # the coordinator aborts
    assert not pending and p.logs[old].log_end_offset == 2
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
    sim = new_cluster(3)
    state = sim.state
    state.create_topic("t", 1, 3)
    p = state.topics["t"].partitions[0]
    state.tick()
    old = p.leader
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
