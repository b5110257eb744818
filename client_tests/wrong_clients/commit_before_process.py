"""A consumer that commits what it polled before it has processed it.

The application polls faster than it processes: records wait in an in-memory queue and
a few are processed per round (a slow database, a rate-limited API). It commits right
after each poll ("we have them now"), so the committed offset runs ahead of what was
processed. Its rebalance listener does what a listener should: the records it still
holds of revoked partitions are dropped, since the partitions' next owner reads them
again from the committed offset. With the committed offset ahead, nobody ever does: a
rebalance in the middle of the poll loop loses the queued records. Auto-commit
(``enable.auto.commit``, librdkafka's default) does the same: it commits what ``poll``
returned, processed or not.

The fix: commit the offset after the last *processed* record of each partition, never
the position ``poll`` reached. A rebalance then costs, at most, records processed twice
(at-least-once), never records lost.
"""

from __future__ import annotations

import time
from collections import deque

from confluent_kafka import Consumer, KafkaException, Message, TopicPartition

from client_tests.librdkafka_hang import StallWatch

POLL_BATCH = 10  # records per poll
PROCESS_BUDGET = 4  # records processed per round: processing is the slow part


def consume(bootstrap: str, topic: str, group: str, expected: int, *, fixed: bool,
            idle_s: float = 15.0, deadline_s: float = 60.0) -> list[bytes]:
    """Consume ``topic`` in ``group`` until ``expected`` distinct records are processed
    or nothing arrived for ``idle_s``; returns the values processed, in order."""
    processed: list[bytes] = []
    queue: deque[Message] = deque()

    def on_revoke(_c: Consumer, partitions: list[TopicPartition]) -> None:
        # Not ours any more: the next owner reads them again from the committed offset.
        gone = {p.partition for p in partitions}
        kept = [m for m in queue if m.partition() not in gone]
        queue.clear()
        queue.extend(kept)

    consumer = Consumer({
        "bootstrap.servers": bootstrap, "group.id": group,
        "auto.offset.reset": "earliest", "enable.auto.commit": False,
        "session.timeout.ms": 2000, "heartbeat.interval.ms": 200,
    })
    watch = StallWatch(topic, cooperative=False)  # librdkafka's OffsetFetch hang
    watch.subscribe(consumer, on_revoke=on_revoke)
    idle_since = time.monotonic()
    stop_at = time.monotonic() + deadline_s
    try:
        while len(set(processed)) < expected and time.monotonic() < stop_at:
            polled = [m for m in consumer.consume(POLL_BATCH, timeout=0.05) if not m.error()]
            for m in polled:
                watch.consumed(m.partition())
            queue.extend(polled)
            if polled and not fixed:
                commit(consumer)  # WRONG: commits the position poll reached
            done: dict[int, int] = {}
            for _ in range(min(PROCESS_BUDGET, len(queue))):
                m = queue.popleft()
                processed.append(m.value())  # "processing"
                done[m.partition()] = m.offset() + 1
            if done and fixed:
                # FIX: commit exactly what was processed.
                commit(consumer, [TopicPartition(topic, p, o) for p, o in done.items()])
            if polled or done:
                idle_since = time.monotonic()
            elif time.monotonic() - idle_since > idle_s:
                break
            else:
                watch.check(consumer)
    finally:
        consumer.close()
    return processed


def commit(consumer: Consumer, offsets: list[TopicPartition] | None = None) -> None:
    """A synchronous commit; a failed one is left to the next (a rebalance or a moving
    coordinator fails a commit now and then: the next commit covers the same offsets)."""
    try:
        if offsets is None:
            consumer.commit(asynchronous=False)
        else:
            consumer.commit(offsets=offsets, asynchronous=False)
    except KafkaException:
        pass


def wrong(bootstrap: str, topic: str, group: str, expected: int) -> list[bytes]:
    return consume(bootstrap, topic, group, expected, fixed=False)


def fixed(bootstrap: str, topic: str, group: str, expected: int) -> list[bytes]:
    return consume(bootstrap, topic, group, expected, fixed=True)
