"""Producing test records with a real client: one home for what the client tests wrote
in many variants (a confluent-kafka Producer, values to fixed or round-robin partitions,
flushed, every record acknowledged).

``reading.py`` reads them back; ``rawkafka.produce_body`` is the raw Produce request of
tests that need exact codes.
"""

from __future__ import annotations

from collections.abc import Iterable

from confluent_kafka import KafkaError, Message, Producer


def produce(target: str | Producer, topic: str, values: Iterable[bytes], *,
            partitions: int | None = 1, start: int = 0, per_flush: int = 0,
            timeout: float = 30.0, config: dict[str, object] | None = None) -> None:
    """Send ``values`` to ``topic`` and wait until every one is acknowledged.

    ``target`` is a bootstrap string (a Producer with ``config`` is made and flushed) or
    a Producer of the test's own (idempotent, transactional: whatever it is about).
    Value i goes to partition ``(start + i) % partitions`` (all to 0 by default; None
    leaves it to the client's partitioner). ``per_flush`` flushes after every that many
    records (small batches, as a test that shares or crashes between them needs). A
    record not acknowledged within ``timeout`` seconds, or failed, fails the test."""
    p = Producer({"bootstrap.servers": target, **(config or {})}) \
        if isinstance(target, str) else target
    errors: list[KafkaError] = []

    def delivered(err: KafkaError | None, _msg: Message) -> None:
        if err is not None:
            errors.append(err)

    for i, value in enumerate(values):
        if partitions is None:
            p.produce(topic, value=value, on_delivery=delivered)
        else:
            p.produce(topic, value=value, partition=(start + i) % partitions,
                      on_delivery=delivered)
        if per_flush and (i + 1) % per_flush == 0:
            p.flush(10)
    assert p.flush(timeout) == 0, f"records still unacknowledged after {timeout} s"
    assert errors == [], errors


def numbered(n: int, start: int = 0, fmt: str = "v{}") -> list[bytes]:
    """``n`` values numbered from ``start``: v0, v1, ... by default."""
    return [fmt.format(i).encode() for i in range(start, start + n)]
