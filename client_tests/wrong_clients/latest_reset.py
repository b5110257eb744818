"""A consumer group started with the client's default ``auto.offset.reset``.

A new service subscribes to a live topic with the client's default
``auto.offset.reset``, latest (librdkafka's ``largest``, the Java client's ``latest``),
processes each record in the poll loop and commits what it processed every 5 s (as
auto-commit would, but only after processing; no rebalance listener). The developer reasons "we start before
the producers, so latest loses nothing". And on a test broker it does not: the group's
one member is assigned the empty partitions, resets to their end (0) and reads every
record from there. But until the group has committed an offset for a partition, the
reset policy decides where a member starts each time the partition is assigned, not
just the first time. A rebalance before the first commit (a second instance
starting, a member's session running out, the coordinator moving) resets the
partitions again, to their end *now*: the records written since the last fetch, and
those fetched but not yet returned by poll, are skipped. Nobody reads them again.

The fix: ``auto.offset.reset=earliest`` for a group that must see every record of a
topic it starts with (or commit the starting position at once, before producing).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from confluent_kafka import Consumer, KafkaError, KafkaException

COMMIT_S = 5.0  # what has been processed is committed this often (auto-commit's default)


def consume(bootstrap: str, topic: str, group: str, expected: int,
            start_producers: Callable[[], threading.Thread], *, fixed: bool,
            idle_s: float = 8.0, deadline_s: float = 60.0) -> list[bytes]:
    """Join ``group``, wait until every assigned partition is positioned (its end
    reached), then start the producers and process until ``expected`` distinct records
    were processed or nothing arrived for ``idle_s``; returns what was processed."""
    consumer = Consumer({
        "bootstrap.servers": bootstrap, "group.id": group,
        "session.timeout.ms": 2000, "heartbeat.interval.ms": 200,
        "enable.partition.eof": True,
        # WRONG: the default (librdkafka "largest"). FIX: "earliest".
        "auto.offset.reset": "earliest" if fixed else "latest",
        "enable.auto.commit": False,  # committed every COMMIT_S, after processing
    })
    consumer.subscribe([topic])
    processed: list[bytes] = []
    positioned: set[int] = set()
    writer: threading.Thread | None = None
    last_commit = time.monotonic()
    idle_since = time.monotonic()
    stop_at = time.monotonic() + deadline_s
    try:
        while len(set(processed)) < expected and time.monotonic() < stop_at:
            m = consumer.poll(0.05)
            now = time.monotonic()
            if m is not None and m.error():
                if m.error().code() == KafkaError._PARTITION_EOF:
                    positioned.add(m.partition())
            elif m is not None:
                processed.append(m.value())  # "processing"
                idle_since = now
            if now - last_commit >= COMMIT_S:
                last_commit = now
                try:  # the positions after the records processed
                    consumer.commit(asynchronous=False)
                except KafkaException:
                    pass  # nothing new to commit, or a rebalance: the next one covers it
            if writer is None:
                assigned = {tp.partition for tp in consumer.assignment()}
                if assigned and assigned <= positioned:
                    writer = start_producers()  # the consumer is ready: go live
                    idle_since = last_commit = time.monotonic()
            elif now - idle_since > idle_s:
                break
    finally:
        consumer.close()
        if writer is not None:
            writer.join(60)
    return processed


def wrong(bootstrap: str, topic: str, group: str, expected: int,
          start_producers: Callable[[], threading.Thread]) -> list[bytes]:
    return consume(bootstrap, topic, group, expected, start_producers, fixed=False)


def fixed(bootstrap: str, topic: str, group: str, expected: int,
          start_producers: Callable[[], threading.Thread]) -> list[bytes]:
    return consume(bootstrap, topic, group, expected, start_producers, fixed=True)
