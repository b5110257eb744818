"""The idempotent producer: producer ids, and per partition sequence checks that live
with the partition (not the connection) and survive a leader change."""

from __future__ import annotations

from cluster_sim import new_cluster

from emulator.cluster import controller
from emulator.cluster.state import ClusterState
from emulator.coordinators.transactions.coordinator import TransactionCoordinator
from wire.errors import ErrorCode as E
from wire.records import build_batch


def setup() -> tuple[ClusterState, TransactionCoordinator]:
    s = new_cluster(3).state
    s.create_topic("t", 1, 3)
    return s, TransactionCoordinator(s)


def send(s: ClusterState, pid: int, epoch: int, seq: int, n: int = 2):
    p = s.get_partition("t", 0)
    batch = build_batch([(b"k", b"v%d" % i) for i in range(n)], producer_id=pid,
                        producer_epoch=epoch, base_sequence=seq)
    r = s.append(p.leader, "t", 0, batch, -1)
    s.tick()
    return r


def test_producer_ids_are_unique() -> None:
    _, tc = setup()
    ids = {tc.init_producer_id(None, 60_000)[1] for _ in range(5)}
    assert len(ids) == 5
    assert tc.init_producer_id(None, 60_000)[2] == 0


def test_duplicate_batch_is_acknowledged_with_its_original_offset() -> None:
    s, tc = setup()
    _, pid, epoch = tc.init_producer_id(None, 60_000)
    assert send(s, pid, epoch, 0).base_offset == 0
    assert send(s, pid, epoch, 2).base_offset == 2
    dup = send(s, pid, epoch, 0)  # a retry after a lost response
    assert (dup.error, dup.base_offset) == (E.NONE, 0)
    assert s.get_partition("t", 0).log_end_offset == 4


def test_sequence_gap_is_out_of_order() -> None:
    s, tc = setup()
    _, pid, epoch = tc.init_producer_id(None, 60_000)
    send(s, pid, epoch, 0)
    r = send(s, pid, epoch, 5)
    assert r.error == E.OUT_OF_ORDER_SEQUENCE_NUMBER
    assert s.get_partition("t", 0).log_end_offset == 2


def test_old_epoch_is_fenced_and_new_epoch_starts_at_zero() -> None:
    s, _ = setup()
    send(s, 7, 0, 0)
    assert send(s, 7, 1, 3).error == E.OUT_OF_ORDER_SEQUENCE_NUMBER
    assert send(s, 7, 1, 0).error == E.NONE
    assert send(s, 7, 0, 2).error == E.INVALID_PRODUCER_EPOCH


def test_state_survives_a_leader_change() -> None:
    s, tc = setup()
    _, pid, epoch = tc.init_producer_id(None, 60_000)
    send(s, pid, epoch, 0)
    p = s.get_partition("t", 0)
    old = p.leader
    controller.broker_stopped(s, old)
    assert p.leader != old
    dup = send(s, pid, epoch, 0)
    assert (dup.error, dup.base_offset) == (E.NONE, 0)
    assert send(s, pid, epoch, 2).base_offset == 2


def test_a_batch_the_new_leader_lacks_is_appended_again_on_retry() -> None:
    """A leader change truncates the producer state to the new leader's log end: the
    batch that starts exactly there (appended by the old leader, never replicated) is
    forgotten, so the producer's retry is appended, not answered as a duplicate of
    records the new leader does not have."""
    s, tc = setup()
    _, pid, epoch = tc.init_producer_id(None, 60_000)
    send(s, pid, epoch, 0)  # offsets 0-1, replicated by the tick
    p = s.get_partition("t", 0)
    old = p.leader
    batch = build_batch([(b"k", b"v%d" % i) for i in range(2)], producer_id=pid,
                        producer_epoch=epoch, base_sequence=2)
    assert s.append(old, "t", 0, batch, 1).base_offset == 2  # no tick: not replicated
    controller.broker_stopped(s, old)
    assert p.leader != old and p.log_end_offset == 2
    retry = send(s, pid, epoch, 2)
    assert (retry.error, retry.base_offset) == (E.NONE, 2)
    assert p.log_end_offset == 4


def test_a_producer_whose_every_batch_was_truncated_starts_anywhere_again() -> None:
    """A leader change that truncates away every batch of a producer leaves it no
    sequence to follow (Kafka rebuilds its state from a log without them): the retry of
    its first batch, whatever its sequence, is appended."""
    s, tc = setup()
    _, pid, epoch = tc.init_producer_id(None, 60_000)
    p = s.get_partition("t", 0)
    old = p.leader
    batch = build_batch([(b"k", b"v")], producer_id=pid, producer_epoch=epoch,
                        base_sequence=5)
    assert s.append(old, "t", 0, batch, 1).base_offset == 0  # no tick: not replicated
    controller.broker_stopped(s, old)
    assert p.leader != old and p.log_end_offset == 0
    retry = s.append(p.leader, "t", 0, batch, 1)
    assert (retry.error, retry.base_offset) == (E.NONE, 0)
