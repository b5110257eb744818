"""A transactional consume-transform-produce that commits its input offsets outside the
transaction.

The application reads ``orders``, writes one record to ``shipments`` per order inside a
transaction, commits the transaction, and then commits the consumer's offsets with an
ordinary OffsetCommit. Two commits, not one: when the second fails (the member was
expelled from the group, the group is rebalancing, the coordinator moved) after the
first succeeded, the outputs are committed but the inputs are not, and after the
rebalance the partition is read again from the older committed offset: every order of
that batch is shipped twice, although every record was written in a transaction.

The fix: the offsets go into the transaction (``send_offsets_to_transaction`` with the
consumer's group metadata, KIP-447), so outputs and input offsets commit or abort
together; on an abortable error the transaction is aborted and the consumer rewound to
the committed offsets (the records are read and transformed again, and only once
committed).
"""

from __future__ import annotations

import time
import uuid

from confluent_kafka import (
    OFFSET_BEGINNING,
    Consumer,
    KafkaError,
    KafkaException,
    Message,
    Producer,
    TopicPartition,
)

from client_tests.librdkafka_hang import StallWatch


def transform(bootstrap: str, src: str, dst: str, group: str, expected: int, *,
              fixed: bool, idle_s: float = 15.0, deadline_s: float = 60.0) -> int:
    """Turn the records of ``src`` into ``ship:<value>`` records of ``dst``, until
    ``expected`` have been transformed in committed transactions or nothing arrived for
    ``idle_s``; returns how many committed transactions it made."""
    consumer = Consumer({
        "bootstrap.servers": bootstrap, "group.id": group,
        "auto.offset.reset": "earliest", "enable.auto.commit": False,
        "isolation.level": "read_committed",
        "session.timeout.ms": 2000, "heartbeat.interval.ms": 200,
    })
    tid = f"{group}-{uuid.uuid4()}"
    producer = new_producer(bootstrap, tid)
    watch = StallWatch(src, cooperative=False)  # librdkafka's OffsetFetch hang
    watch.subscribe(consumer)
    done: set[tuple[int, int]] = set()  # (partition, offset) transformed and committed
    commits = 0
    idle_since = time.monotonic()
    stop_at = time.monotonic() + deadline_s
    try:
        while len(done) < expected and time.monotonic() < stop_at:
            batch = [m for m in consumer.consume(20, timeout=0.1) if not m.error()]
            if not batch:
                if time.monotonic() - idle_since > idle_s:
                    break
                watch.check(consumer)
                continue
            idle_since = time.monotonic()
            for m in batch:
                watch.consumed(m.partition())
            offsets = next_offsets(src, batch)
            producer.begin_transaction()
            for m in batch:
                producer.produce(dst, key=m.key(), value=b"ship:" + m.value())
            try:
                if fixed:  # FIX: the input offsets commit with the outputs, or not at all
                    producer.send_offsets_to_transaction(
                        offsets, consumer.consumer_group_metadata(), 30)
                commit_transaction(producer)
            except KafkaException as e:
                if not e.args[0].txn_requires_abort():
                    raise
                producer.abort_transaction(30)
                if fixed:  # librdkafka: a new epoch after an abort (new_producer)
                    producer = new_producer(bootstrap, tid, producer)
                rewind(consumer)
                continue
            if not fixed:
                try:  # WRONG: a second, separate commit
                    consumer.commit(offsets=offsets, asynchronous=False)
                except KafkaException:
                    pass  # "the next commit will cover it"
            done.update((m.partition(), m.offset()) for m in batch)
            commits += 1
    finally:
        consumer.close()
        producer.flush(10)
    return commits


def new_producer(bootstrap: str, tid: str, old: Producer | None = None) -> Producer:
    """A transactional producer for ``tid``; given the one it replaces, after an abort.

    Why a new one after an abort: librdkafka 2.16 takes a NOT_LEADER_OR_FOLLOWER answer
    as "not persisted", although a leader that appended and replicated an acks=all
    batch answers it when leadership moves while the batch waits in its purgatory
    (Kafka's DelayedProduce). When the transaction then aborts, librdkafka rewinds the
    partition's sequence to that batch's first one at the same epoch; the next
    transaction's batch of the same size is then a duplicate of the aborted one to the
    broker, answered with its offset and not appended, and the transaction commits
    without it (client_tests/reference_programs/confluent.py, SEQUENCE_REUSE). A new
    producer's InitProducerId bumps the epoch: its sequences start again at 0."""
    if old is not None:
        old.flush(1)
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": tid,
                         "linger.ms": 5})
    producer.init_transactions(30)
    return producer


def next_offsets(topic: str, batch: list[Message]) -> list[TopicPartition]:
    ends: dict[int, int] = {}
    for m in batch:
        ends[m.partition()] = max(ends.get(m.partition(), 0), m.offset() + 1)
    return [TopicPartition(topic, p, o) for p, o in ends.items()]


def commit_transaction(producer: Producer, attempts: int = 10) -> None:
    """commit_transaction, retried while the error is retriable (a commit that timed out
    waiting for the coordinator may be retried: it completes the same transaction)."""
    for attempt in range(attempts):
        try:
            producer.commit_transaction(30)
            return
        except KafkaException as e:
            if not e.args[0].retriable() or attempt == attempts - 1:
                raise
            time.sleep(0.05)


# What a coordinator moving or loading answers an OffsetFetch with: librdkafka's
# committed() hands them to the application (not all flagged retriable), which asks again.
COORDINATOR_MOVED = (KafkaError.NOT_COORDINATOR, KafkaError.COORDINATOR_LOAD_IN_PROGRESS,
                     KafkaError.COORDINATOR_NOT_AVAILABLE, KafkaError._TIMED_OUT)


def rewind(consumer: Consumer, attempts: int = 20) -> None:
    """Back to the committed offsets of the assignment: the aborted batch is read again."""
    assignment = consumer.assignment()
    if not assignment:
        return
    for attempt in range(attempts):
        try:
            committed = consumer.committed(assignment, timeout=30)
            break
        except KafkaException as e:
            err = e.args[0]
            if attempt == attempts - 1 or not (err.retriable() or err.code() in COORDINATOR_MOVED):
                raise
            time.sleep(0.1)
    for tp in committed:
        offset = tp.offset if tp.offset >= 0 else OFFSET_BEGINNING
        consumer.seek(TopicPartition(tp.topic, tp.partition, offset))


def wrong(bootstrap: str, src: str, dst: str, group: str, expected: int) -> int:
    return transform(bootstrap, src, dst, group, expected, fixed=False)


def fixed(bootstrap: str, src: str, dst: str, group: str, expected: int) -> int:
    return transform(bootstrap, src, dst, group, expected, fixed=True)
