"""A transactional consume-transform-produce that aborts but does not rewind.

The service reads ``orders``, writes one ``shipments`` record per order and sends the
input offsets with the transaction (KIP-447, as it should). When a transaction fails
with an abortable error (the member was fenced by a rebalance and its
TxnOffsetCommit was refused, a produce failed), it calls ``abort_transaction`` and goes
on polling: "the transaction is rolled back, so we are clean". The outputs and the
offsets are rolled back, but the consumer's in-memory position is not: it is past the
batch (with the cooperative assignor a rebalance that fenced the transaction leaves the
member its partitions and their positions), the next poll returns the records after
it, and the next committed transaction commits offsets past the aborted batch. Those orders are never shipped. While no
transaction aborts (a test broker), it ships every order once.

The fix: after ``abort_transaction``, seek the assigned partitions back to their
committed offsets (the aborted batch is read and transformed again), as Kafka's
transactional examples do.
"""

from __future__ import annotations

import time
import uuid

from confluent_kafka import Consumer, KafkaException

from client_tests.librdkafka_hang import StallWatch
from client_tests.wrong_clients.offsets_outside_txn import (
    commit_transaction,
    new_producer,
    next_offsets,
    rewind,
)

BATCH = 10  # small transactions: an order is shipped soon after it arrives


def transform(bootstrap: str, src: str, dst: str, group: str, expected: int, *,
              fixed: bool, idle_s: float = 15.0, deadline_s: float = 60.0) -> int:
    """``ship:<value>`` in ``dst`` for each record of ``src`` until ``expected`` are
    committed or nothing arrived for ``idle_s``; returns how many transactions aborted."""
    consumer = Consumer({
        "bootstrap.servers": bootstrap, "group.id": group,
        "auto.offset.reset": "earliest", "enable.auto.commit": False,
        "isolation.level": "read_committed",
        "session.timeout.ms": 2000, "heartbeat.interval.ms": 200,
        # a rebalance keeps the partitions a member still owns (and their positions)
        "partition.assignment.strategy": "cooperative-sticky",
    })
    tid = f"{group}-{uuid.uuid4()}"
    producer = new_producer(bootstrap, tid)
    watch = StallWatch(src, cooperative=True)  # librdkafka's OffsetFetch hang
    watch.subscribe(consumer)
    done: set[tuple[int, int]] = set()
    aborts = 0
    idle_since = time.monotonic()
    stop_at = time.monotonic() + deadline_s
    try:
        while len(done) < expected and time.monotonic() < stop_at:
            batch = [m for m in consumer.consume(BATCH, timeout=0.1) if not m.error()]
            if not batch:
                if time.monotonic() - idle_since > idle_s:
                    break
                watch.check(consumer)
                continue
            idle_since = time.monotonic()
            for m in batch:
                watch.consumed(m.partition())
            producer.begin_transaction()
            for m in batch:
                producer.produce(dst, key=m.key(), value=b"ship:" + m.value())
            try:
                producer.send_offsets_to_transaction(
                    next_offsets(src, batch), consumer.consumer_group_metadata(), 30)
                commit_transaction(producer)
            except KafkaException as e:
                if not e.args[0].txn_requires_abort():
                    raise
                producer.abort_transaction(30)
                aborts += 1
                if fixed:
                    rewind(consumer)  # FIX: read the aborted batch again
                    # and a new epoch, as librdkafka needs after an abort (new_producer)
                    producer = new_producer(bootstrap, tid, producer)
                # WRONG (fixed=False): the position stays past the aborted batch
                continue
            done.update((m.partition(), m.offset()) for m in batch)
    finally:
        consumer.close()
        producer.flush(10)
    return aborts


def wrong(bootstrap: str, src: str, dst: str, group: str, expected: int) -> int:
    return transform(bootstrap, src, dst, group, expected, fixed=False)


def fixed(bootstrap: str, src: str, dst: str, group: str, expected: int) -> int:
    return transform(bootstrap, src, dst, group, expected, fixed=True)
