"""DescribeProducers on a follower under each fidelity (docs/fidelity.md,
describe-producers-follower), through the handler on a manual clock.

A follower that has not fetched the leader's latest batches answers, under
``--fidelity kafka``, from its own log (the state Kafka's follower holds); ``fast``
answers every replica from the leader's state. Once caught up both agree.
client_tests/test_describe_producers_follower.py checks the behaviour on both targets.
"""

from __future__ import annotations

import pytest
from cluster_sim import new_cluster

from emulator.cluster.state import ClusterState
from emulator.handlers import api_061_describe_producers as describe
from emulator.handlers.base import RequestContext
from wire.errors import ErrorCode as E
from wire.records import build_batch, control_batch


def setup(mode: str) -> ClusterState:
    s = new_cluster(3, fidelity=mode).state
    s.create_topic("t", 1, 3)
    return s


def answer(s: ClusterState, broker: int) -> list[dict]:
    r = describe.handle(RequestContext(s, broker, 61, 0, 1, "c"),
                        {"topics": [{"name": "t", "partition_indexes": [0]}]}, 0)
    p = r["topics"][0]["partitions"][0]
    assert p["error_code"] == E.NONE
    return p["active_producers"]


def append(s: ClusterState, batch: bytes) -> None:
    p = s.get_partition("t", 0)
    assert s.append(p.leader, "t", 0, batch, 1).error == E.NONE


@pytest.mark.parametrize("mode", ["kafka", "fast"])
def test_a_follower_behind_answers_from_its_own_log_under_kafka(mode: str) -> None:
    s = setup(mode)
    p = s.get_partition("t", 0)
    follower = next(b for b in p.replicas if b != p.leader)
    append(s, build_batch([(b"k", b"v")], producer_id=7, producer_epoch=0, base_sequence=0,
                          timestamp=1000))
    s.tick()
    append(s, build_batch([(b"k", b"v")] * 2, producer_id=7, producer_epoch=0,
                          base_sequence=1, timestamp=2000))
    append(s, build_batch([(b"k", b"v")], producer_id=8, producer_epoch=0, base_sequence=0,
                          timestamp=3000))
    leader_view = answer(s, p.leader)
    assert [(a["producer_id"], a["last_sequence"]) for a in leader_view] == [(7, 2), (8, 0)]
    behind = answer(s, follower)
    if mode == "kafka":  # what it has fetched: producer 7's first batch only
        assert [(a["producer_id"], a["last_sequence"], a["last_timestamp"])
                for a in behind] == [(7, 0, 1000)]
    else:
        assert behind == leader_view
    s.tick()
    assert answer(s, follower) == leader_view  # caught up: the leader's state


def test_a_lagging_follower_sees_the_open_transaction_and_its_marker() -> None:
    s = setup("kafka")
    p = s.get_partition("t", 0)
    follower = next(b for b in p.replicas if b != p.leader)
    append(s, build_batch([(b"k", b"v")], producer_id=9, producer_epoch=1, base_sequence=0,
                          transactional=True, timestamp=1000))
    s.tick()
    assert [a["current_txn_start_offset"] for a in answer(s, follower)] == [0]
    p.leader_log.append_as_leader(control_batch(True, 9, 1, 2000, coordinator_epoch=5),
                                  p.leader_epoch, -1)
    s.tick()  # the follower has the marker, then falls behind again
    append(s, build_batch([(b"k", b"v")], producer_id=10, producer_epoch=0,
                          base_sequence=0, timestamp=3000))
    (entry,) = answer(s, follower)
    assert (entry["producer_id"], entry["current_txn_start_offset"],
            entry["coordinator_epoch"]) == (9, -1, 5)


def state_of(producers: list[dict]) -> list[tuple[int, ...]]:
    """(producer id, epoch, last sequence, last timestamp, coordinator epoch, open
    transaction's first offset) of each producer, in producer id order."""
    return [(a["producer_id"], a["producer_epoch"], a["last_sequence"], a["last_timestamp"],
             a["coordinator_epoch"], a["current_txn_start_offset"]) for a in producers]


def marker(s: ClusterState, producer_id: int, epoch: int, coordinator_epoch: int = 0) -> None:
    """A COMMIT the coordinator writes, as WriteTxnMarkers appends it."""
    p = s.get_partition("t", 0)
    offset = s.append_control(p, control_batch(True, producer_id, epoch, 2500,
                                               coordinator_epoch=coordinator_epoch))
    p.complete_txn(producer_id, epoch, offset, True)


def behind(s: ClusterState) -> int:
    """A follower that fetched everything so far, then falls behind by one batch of a
    producer (id 8) it has not seen."""
    p = s.get_partition("t", 0)
    s.tick()
    seq = p.producers[8].last_seq + 1 if 8 in p.producers else 0
    append(s, build_batch([(b"k", b"v")], producer_id=8, producer_epoch=0, base_sequence=seq,
                          timestamp=9000))
    return next(b for b in p.replicas if b != p.leader)


def producer(s: ClusterState, broker: int, producer_id: int) -> tuple[int, ...]:
    """What ``broker`` answers of one producer."""
    (one,) = [a for a in state_of(answer(s, broker)) if a[0] == producer_id]
    return one


def test_a_lagging_follower_rebuilds_each_producer_from_its_own_batches() -> None:
    """Kafka's follower builds its producer state by appending each replicated batch
    (ProducerAppendInfo): batches without a producer are passed over, producer id 0 is
    a producer, a transaction opens at its first transactional batch and stays there,
    an idempotent batch outside a transaction opens none."""
    s = setup("kafka")
    append(s, build_batch([(b"k", b"v")], producer_id=9, producer_epoch=1, base_sequence=0,
                          transactional=True, timestamp=1000))
    append(s, build_batch([(b"k", b"v")], producer_id=9, producer_epoch=1, base_sequence=1,
                          transactional=True, timestamp=2000))
    append(s, build_batch([(b"k", b"v")], timestamp=2500))  # no producer
    append(s, build_batch([(b"k", b"v")] * 2, producer_id=0, producer_epoch=0,
                          base_sequence=0, timestamp=3000))
    append(s, build_batch([(b"k", b"v")], producer_id=7, producer_epoch=0, base_sequence=0,
                          timestamp=4000))
    follower = behind(s)
    assert state_of(answer(s, follower)) == [
        (0, 0, 1, 3000, -1, -1), (7, 0, 0, 4000, -1, -1), (9, 1, 1, 2000, -1, 0)]


def test_a_lagging_follower_carries_a_producer_past_its_markers() -> None:
    """A marker ends the transaction and sets the coordinator epoch; the producer's
    next transaction at the same epoch (transactions v1) opens where its first batch
    lands and keeps that coordinator epoch; a marker of a bumped epoch (transactions v2)
    leaves the new epoch without sequences (maybeUpdateProducerEpoch)."""
    s = setup("kafka")
    append(s, build_batch([(b"k", b"v")], producer_id=9, producer_epoch=1, base_sequence=0,
                          transactional=True, timestamp=1000))
    marker(s, 9, 1, coordinator_epoch=5)
    append(s, build_batch([(b"k", b"v")], producer_id=9, producer_epoch=1, base_sequence=1,
                          transactional=True, timestamp=3000))
    follower = behind(s)
    assert producer(s, follower, 9) == (9, 1, 1, 3000, 5, 2)
    marker(s, 9, 2, coordinator_epoch=5)
    follower = behind(s)
    _, epoch, last_seq, _, coordinator_epoch, txn = producer(s, follower, 9)
    assert (epoch, last_seq, coordinator_epoch, txn) == (2, -1, 5, -1)


def test_a_caught_up_follower_keeps_a_producer_whose_batches_delete_records_removed() -> None:
    """Kafka keeps a producer's state when the log start moves past its batches
    (ProducerStateManager.onLogStartOffsetIncremented drops only unreplicated
    transactions; the producer expires after producer.id.expiration.ms): a follower
    caught up answers it, like the leader, though its log no longer holds a batch of it."""
    s = setup("kafka")
    p = s.get_partition("t", 0)
    append(s, build_batch([(b"k", b"v")], producer_id=7, producer_epoch=0, base_sequence=0,
                          timestamp=1000))
    append(s, build_batch([(b"k", b"v")], timestamp=2000))
    s.tick()
    s.tick()
    assert s.delete_records("t", 0, 1) == 1
    s.tick()
    follower = next(b for b in p.replicas if b != p.leader)
    assert p.logs[follower].log_start_offset == 1
    assert p.logs[follower].log_end_offset == p.log_end_offset
    assert state_of(answer(s, follower)) == [(7, 0, 0, 1000, -1, -1)]


@pytest.mark.parametrize("mode", ["kafka", "fast"])
def test_a_new_epochs_first_batch_keeps_the_coordinator_epoch(mode: str) -> None:
    """A transactional producer that starts again (InitProducerId bumps its epoch, no
    transaction open, so no marker) keeps the coordinator epoch of its last marker:
    Kafka's ProducerAppendInfo starts from the current entry (withProducerId) and a new
    epoch only clears its batches (maybeUpdateProducerEpoch). On the leader, and on a
    lagging follower under --fidelity kafka."""
    s = setup(mode)
    p = s.get_partition("t", 0)
    append(s, build_batch([(b"k", b"v")], producer_id=9, producer_epoch=1, base_sequence=0,
                          transactional=True, timestamp=1000))
    marker(s, 9, 1)
    append(s, build_batch([(b"k", b"v")], producer_id=9, producer_epoch=2, base_sequence=0,
                          transactional=True, timestamp=3000))
    follower = behind(s)
    nine = (9, 2, 0, 3000, 0, 2)
    assert producer(s, p.leader, 9) == nine
    assert producer(s, follower, 9) == nine
