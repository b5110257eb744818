"""A consumer of a transactional topic that reads uncommitted records as facts.

Billing reads ``shipments``, which an exactly-once shipper writes in transactions (a
read_committed consume-transform-produce that aborts and redoes a batch when a
transaction fails: client_tests/wrong_clients/abort_without_rewind.py's fixed twin).
Billing's consumer keeps the client's default ``isolation.level``, read_uncommitted
in Kafka's Java client, set here explicitly as many configurations copied from
non-transactional services do: it sees every record the shipper wrote, including
those of aborted transactions, and the shipper's redo of an aborted batch writes
those shipments again. Each aborted shipment is billed twice. While no transaction
aborts (a test broker), read_uncommitted and read_committed read the same records.

The fix: ``isolation.level=read_committed`` for every consumer of a topic written in
transactions: it skips aborted records and reads nothing past an open transaction.
"""

from __future__ import annotations

import time
import uuid

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, TopicPartition

from client_tests.reading import end_offsets


def bill(bootstrap: str, topic: str, partitions: int, *, fixed: bool,
         timeout: float = 30.0) -> list[bytes]:
    """Bill every shipment in ``topic`` up to its end; returns the shipments billed."""
    ends = end_offsets(bootstrap, topic, partitions)  # the shipper has finished
    consumer = Consumer({
        "bootstrap.servers": bootstrap, "group.id": f"billing-{uuid.uuid4()}",
        "enable.auto.commit": False, "enable.partition.eof": True,
        # FIX: read_committed. WRONG: read_uncommitted, the aborted shipments too
        "isolation.level": "read_committed" if fixed else "read_uncommitted",
    })
    billed: list[bytes] = []
    try:
        consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING)
                         for p in range(partitions)])
        todo = {p for p, end in ends.items() if end > 0}
        deadline = time.monotonic() + timeout
        while todo and time.monotonic() < deadline:
            m = consumer.poll(0.2)
            if m is None:
                continue
            if m.error():
                if m.error().code() == KafkaError._PARTITION_EOF \
                        and m.offset() >= ends.get(m.partition(), 0):
                    todo.discard(m.partition())
                continue
            billed.append(m.value())  # "an invoice line"
            if m.offset() + 1 >= ends[m.partition()]:
                todo.discard(m.partition())
    finally:
        consumer.close()
    return billed


def wrong(bootstrap: str, topic: str, partitions: int) -> list[bytes]:
    return bill(bootstrap, topic, partitions, fixed=False)


def fixed(bootstrap: str, topic: str, partitions: int) -> list[bytes]:
    return bill(bootstrap, topic, partitions, fixed=True)
