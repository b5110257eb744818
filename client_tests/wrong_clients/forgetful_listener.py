"""A rebalance listener that forgets the partitions it gave up.

A sink service copies a topic into a database in batches: records wait in a buffer per
partition until there are ``BATCH`` of them or the oldest has waited ``LINGER_S``, then
the batch and the partition's next offset are written in one database transaction.
The database is the source of truth for progress (offsets stored outside Kafka, as
Kafka's ConsumerRebalanceListener documentation describes): ``on_assign`` seeks each
partition to the offset the database holds. But ``on_revoke`` does nothing with the
revoked partitions' buffers. After a rebalance the partitions are read again from the
database's offset, and the records still buffered from before arrive a second time
behind themselves: the next batch writes them twice. While the group never
rebalances, the buffers are only ever appended to in order, and all is well.

The fix: in ``on_revoke``, drop the revoked partitions' buffers (they were never
written; whoever owns the partitions next reads them again from the database's offset).
"""

from __future__ import annotations

import time

from confluent_kafka import OFFSET_BEGINNING, Consumer, Message, TopicPartition

BATCH = 50  # records per database write
LINGER_S = 0.5  # the longest a record waits in a buffer


class Database:
    """The sink's database: the rows, and per partition the next offset to read, which
    a write stores in the same transaction as its rows."""

    def __init__(self) -> None:
        self.rows: list[bytes] = []
        self.next_offset: dict[int, int] = {}

    def write(self, partition: int, batch: list[Message]) -> None:
        self.rows.extend(m.value() for m in batch)
        self.next_offset[partition] = batch[-1].offset() + 1


def sink(bootstrap: str, topic: str, group: str, db: Database, expected: int, *,
         fixed: bool, idle_s: float = 15.0, deadline_s: float = 60.0) -> None:
    """Copy ``topic`` into ``db`` until it holds ``expected`` distinct rows, or nothing
    arrived for ``idle_s``."""
    buffers: dict[int, list[Message]] = {}
    since: dict[int, float] = {}  # partition -> when its oldest buffered record came

    def on_assign(c: Consumer, partitions: list[TopicPartition]) -> None:
        # Resume where the database is: it, not Kafka, knows what was written.
        for tp in partitions:
            tp.offset = db.next_offset.get(tp.partition, OFFSET_BEGINNING)
        c.assign(partitions)

    def on_revoke(_c: Consumer, partitions: list[TopicPartition]) -> None:
        if fixed:  # FIX: what we buffered of them is not ours to write any more
            for tp in partitions:
                buffers.pop(tp.partition, None)
                since.pop(tp.partition, None)
        # WRONG (fixed=False): the revoked partitions' buffers stay

    consumer = Consumer({
        "bootstrap.servers": bootstrap, "group.id": group, "client.id": group,
        "enable.auto.commit": False, "auto.offset.reset": "earliest",
        "session.timeout.ms": 2000, "heartbeat.interval.ms": 200,
        "fetch.wait.max.ms": 100,  # a sink that wants low latency
    })
    consumer.subscribe([topic], on_assign=on_assign, on_revoke=on_revoke)
    idle_since = time.monotonic()
    stop_at = time.monotonic() + deadline_s
    try:
        while len(set(db.rows)) < expected and time.monotonic() < stop_at:
            m = consumer.poll(0.05)
            now = time.monotonic()
            if m is not None and not m.error():
                buffers.setdefault(m.partition(), []).append(m)
                since.setdefault(m.partition(), now)
                idle_since = now
            elif now - idle_since > idle_s:
                break
            for p, buf in buffers.items():
                if buf and (len(buf) >= BATCH or now - since[p] >= LINGER_S):
                    db.write(p, buf)
                    buffers[p] = []
                    since.pop(p, None)
    finally:
        consumer.close()


def wrong(bootstrap: str, topic: str, group: str, db: Database, expected: int) -> None:
    sink(bootstrap, topic, group, db, expected, fixed=False)


def fixed(bootstrap: str, topic: str, group: str, db: Database, expected: int) -> None:
    sink(bootstrap, topic, group, db, expected, fixed=True)
