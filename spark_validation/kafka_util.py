"""Plain Kafka clients around the Spark jobs: fill topics, read them back, run admin calls.

Spark is the system under test; what goes in and what is checked goes through other
clients (confluent-kafka for data, kafka-python 3's admin client for the admin APIs),
so a Spark bug and an emulator bug cannot cancel out.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from emulator.testing import wait_for


@dataclass(frozen=True)
class Rec:
    """One Kafka record as the tests compare them."""

    topic: str
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    timestamp: int = -1
    headers: tuple[tuple[str, bytes | None], ...] = field(default=())


def produce(bootstrap: str, topic: str, records: Iterable[dict[str, Any]],
            **config: Any) -> int:
    """Produce dicts with value/key/partition/timestamp/headers; wait for every ack."""
    from confluent_kafka import Producer

    p = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 5,
                  "queue.buffering.max.messages": 1_000_000, **config})
    errors: list[Any] = []

    def on_delivery(err: Any, _msg: Any) -> None:
        if err is not None:
            errors.append(err)

    n = 0
    for r in records:
        kwargs = {k: r[k] for k in ("key", "partition", "timestamp", "headers") if k in r}
        while True:
            try:
                p.produce(topic, value=r.get("value"), on_delivery=on_delivery, **kwargs)
                break
            except BufferError:
                p.poll(0.05)
        n += 1
        if n % 10_000 == 0:
            p.poll(0)
    left = p.flush(60)
    if left or errors:
        raise RuntimeError(f"produce to {topic}: {left} undelivered, errors {errors[:5]}")
    return n


def produce_values(bootstrap: str, topic: str, partitions: int, per_partition: int,
                   start: int = 0, prefix: str = "v") -> list[bytes]:
    """``per_partition`` values into each partition: b"<prefix>-<partition>-<i>"."""
    recs = [{"value": f"{prefix}-{p}-{i}".encode(), "key": f"k{i}".encode(), "partition": p}
            for p in range(partitions) for i in range(start, start + per_partition)]
    produce(bootstrap, topic, recs)
    return [r["value"] for r in recs]


def consume_all(bootstrap: str, topic: str, timeout_s: float = 30.0,
                expect: int | None = None) -> list[Rec]:
    """Every record of every partition, from the log start to the high watermark."""
    from confluent_kafka import Consumer, TopicPartition

    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "spark-validation-readback",
                  "enable.auto.commit": False, "auto.offset.reset": "earliest",
                  "enable.partition.eof": True})
    try:
        md = c.list_topics(topic, timeout=10).topics[topic]
        ends = {}
        for pid in md.partitions:
            lo, hi = c.get_watermark_offsets(TopicPartition(topic, pid), timeout=10)
            if hi > lo:
                ends[pid] = hi
        c.assign([TopicPartition(topic, pid, 0 if pid not in ends else -2) for pid in ends])
        out: list[Rec] = []
        deadline = time.monotonic() + timeout_s
        done: set[int] = set()
        while len(done) < len(ends) and time.monotonic() < deadline:
            m = c.poll(0.5)
            if m is None:
                continue
            if m.error():
                continue  # partition EOF and the like
            out.append(Rec(m.topic(), m.partition(), m.offset(), m.key(), m.value(),
                           m.timestamp()[1], tuple(m.headers() or ())))
            if m.offset() + 1 >= ends[m.partition()]:
                done.add(m.partition())
        if len(done) < len(ends):
            raise TimeoutError(f"read back {len(out)} records of {topic}; partitions "
                               f"{sorted(set(ends) - done)} not read to their end {ends}")
        if expect is not None and len(out) != expect:
            raise AssertionError(f"{topic}: {len(out)} records, expected {expect}")
        return sorted(out, key=lambda r: (r.partition, r.offset))
    finally:
        c.close()


def admin(bootstrap: str) -> Any:
    """kafka-python 3's KafkaAdminClient (it speaks the reassignment APIs)."""
    from kafka.admin import KafkaAdminClient

    return KafkaAdminClient(bootstrap_servers=bootstrap, client_id="spark-validation-admin",
                            request_timeout_ms=30_000)


def create_topic(bootstrap: str, name: str, partitions: int, replication_factor: int = 3,
                 config: dict[str, str] | None = None) -> None:
    """CreateTopics through the admin API, then wait until every partition has a leader."""
    from kafka.admin import NewTopic

    a = admin(bootstrap)
    try:
        a.create_topics([NewTopic(name, partitions, replication_factor,
                                  topic_configs=config or {})])
    finally:
        a.close()
    wait_for(lambda: _has_leaders(bootstrap, name, partitions), f"leaders for {name}", 30,
             interval=0.2)


def _has_leaders(bootstrap: str, topic: str, partitions: int) -> bool:
    from confluent_kafka.admin import AdminClient

    md = AdminClient({"bootstrap.servers": bootstrap}).list_topics(topic, timeout=10)
    t = md.topics.get(topic)
    return (t is not None and t.error is None and len(t.partitions) == partitions
            and all(p.leader >= 0 for p in t.partitions.values()))


def partition_state(bootstrap: str, topic: str, partition: int) -> tuple[int, list[int],
                                                                        list[int]]:
    """(leader, replicas, isr) of one partition as Metadata tells any client: works the
    same for an in-process emulator, one in a container and a real Kafka."""
    from confluent_kafka.admin import AdminClient

    md = AdminClient({"bootstrap.servers": bootstrap}).list_topics(topic, timeout=10)
    p = md.topics[topic].partitions[partition]
    return p.leader, list(p.replicas), list(p.isrs)


def advertised_brokers(bootstrap: str) -> list[str]:
    """``host:port`` of every broker as Metadata names them: where clients connect."""
    from confluent_kafka.admin import AdminClient

    md = AdminClient({"bootstrap.servers": bootstrap}).list_topics(timeout=10)
    return sorted(f"{b.host}:{b.port}" for b in md.brokers.values())


def offsets(bootstrap: str, topic: str) -> dict[int, tuple[int, int]]:
    """{partition: (log start offset, high watermark)} via ListOffsets."""
    from confluent_kafka import Consumer, TopicPartition

    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "spark-validation-offsets"})
    try:
        md = c.list_topics(topic, timeout=10).topics[topic]
        return {p: c.get_watermark_offsets(TopicPartition(topic, p), timeout=10)
                for p in sorted(md.partitions)}
    finally:
        c.close()
