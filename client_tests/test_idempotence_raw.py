"""Idempotent produce on the wire, on both targets: what the partition leader answers a
producer's sequence numbers and epochs (ProducerStateManager's checks), batch by batch.

The client-level tests (test_idempotent_producers.py) lose responses with the
emulator's fault injection; this one sends the batches a retrying producer would send,
so it runs on a real Kafka too (`--target kafka`).
"""

from __future__ import annotations

import time
import uuid

from rawkafka import Conn, leader_conn, list_offset, produce_body

from emulator import Cluster
from emulator.testing import wait_for
from wire.errors import ErrorCode as E
from wire.records import build_batch, control_batch


def init_producer(c: Conn) -> tuple[int, int]:
    """InitProducerId for an idempotent producer; a fresh Kafka answers
    COORDINATOR_LOAD_IN_PROGRESS until its first producer-id block arrives."""
    def ask() -> dict | None:
        r = c.call(22, 4, {"transactional_id": None, "transaction_timeout_ms": 60000,
                           "producer_id": -1, "producer_epoch": -1})
        return r if r["error_code"] == E.NONE else None
    r = wait_for(ask, "a producer id")
    return r["producer_id"], r["producer_epoch"]


def test_sequences_duplicates_and_epochs_as_the_leader_checks_them(cluster: Cluster) -> None:
    topic = f"idem-{uuid.uuid4().hex[:8]}"
    cluster.create_topic(topic, 1, 3)
    c = leader_conn(cluster, topic)
    pid, epoch = init_producer(c)
    now = int(time.time() * 1000)

    def send(seq: int, n: int = 2, producer: int = pid, ep: int = epoch,
             batch: bytes | None = None) -> tuple[int, int, str | None]:
        data = batch or build_batch([(b"k", b"v%d" % i) for i in range(n)], timestamp=now,
                                    producer_id=producer, producer_epoch=ep,
                                    base_sequence=seq)
        pr = c.call(0, 9, produce_body(topic, 0, data, acks=-1))[
            "responses"][0]["partition_responses"][0]
        return pr["error_code"], pr["base_offset"], pr["error_message"]

    ooo = (E.OUT_OF_ORDER_SEQUENCE_NUMBER, -1, None)  # Kafka sends no message for these
    assert send(0) == (E.NONE, 0, None)
    assert send(0) == (E.NONE, 0, None)  # a retry: the original offset, stored once
    assert send(5) == ooo  # a gap
    for i, seq in enumerate(range(2, 14, 2), start=1):
        assert send(seq) == (E.NONE, 2 * i, None)
    assert send(0) == ooo  # older than the five batches a producer's entry remembers
    assert send(10) == (E.NONE, 10, None)  # one of those five: a duplicate
    assert send(12, n=1) == ooo  # same first sequence, other size: not a duplicate
    # a producer id the partition has not seen starts at any sequence
    assert send(5, producer=pid + 1000) == (E.NONE, 14, None)
    assert send(0, ep=epoch + 1) == (E.NONE, 16, None)  # a new epoch restarts at 0
    assert send(14) == (E.INVALID_PRODUCER_EPOCH, -1, None)  # the old epoch is fenced
    assert send(2, ep=epoch + 1) == (E.NONE, 18, None)
    assert list_offset(c, topic) == 20
    # transactional records (here a marker) in a request without a transactional id:
    # never authorized (KafkaApis.handleProduceRequest); a batch with a wrong CRC: corrupt
    marker = control_batch(True, pid, epoch + 1, now)
    assert send(0, batch=marker) == (E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, -1, None)
    good = bytearray(build_batch([(b"k", b"v")], timestamp=now))
    good[-1] ^= 0xFF
    assert send(0, batch=bytes(good))[0] == E.CORRUPT_MESSAGE
    assert list_offset(c, topic) == 20


def test_a_sequence_wraps_to_zero_after_the_largest(cluster: Cluster) -> None:
    """Sequences are 31-bit: the batch after one ending at Integer.MAX_VALUE starts at
    0 (ProducerAppendInfo.inSequence), and anything else there is out of order."""
    topic = f"idem-wrap-{uuid.uuid4().hex[:8]}"
    cluster.create_topic(topic, 1, 3)
    c = leader_conn(cluster, topic)
    pid, epoch = init_producer(c)
    now = int(time.time() * 1000)

    def send(seq: int) -> tuple[int, int]:
        data = build_batch([(b"k", b"v")], timestamp=now, producer_id=pid,
                           producer_epoch=epoch, base_sequence=seq)
        pr = c.call(0, 9, produce_body(topic, 0, data, acks=-1))[
            "responses"][0]["partition_responses"][0]
        return pr["error_code"], pr["base_offset"]

    last = (1 << 31) - 1
    assert send(last) == (E.NONE, 0)  # a producer the partition has not seen: any
    assert send(0) == (E.NONE, 1)
    assert send(last) == (E.NONE, 0)  # a retry of the batch before: a duplicate
    assert send(2) == (E.OUT_OF_ORDER_SEQUENCE_NUMBER, -1)  # a gap after 0
    assert send(1) == (E.NONE, 2)
    # the producer's state as the leader keeps it: no transaction, no coordinator epoch
    [part] = c.call(61, 0, {"topics": [{"name": topic, "partition_indexes": [0]}]})[
        "topics"][0]["partitions"]
    assert part["error_code"] == E.NONE
    assert [(p["producer_id"], p["producer_epoch"], p["last_sequence"], p["last_timestamp"],
             p["coordinator_epoch"], p["current_txn_start_offset"])
            for p in part["active_producers"]] == [(pid, epoch, 1, now, -1, -1)]
