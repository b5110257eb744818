"""confluent-kafka (librdkafka) producing and consuming against the emulator.

Every compression codec librdkafka offers, keys and headers, explicit partitions;
each record read back is checked for key, value, headers, partition and offset.
"""

from __future__ import annotations

import time

import pytest
from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition
from confluent_kafka.admin import AdminClient

from emulator import Cluster
from emulator.testing import wait_for

N = 60
PARTITIONS = 3


def produce_all(bootstrap: str, topic: str, compression: str) -> list[tuple[int, int, bytes]]:
    p = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 5,
                  "compression.type": compression})
    acked: list[tuple[int, int, bytes]] = []
    errors: list[object] = []

    def on_delivery(err: object, msg: object) -> None:
        if err is not None:
            errors.append(err)
        else:
            acked.append((msg.partition(), msg.offset(), msg.key()))

    for i in range(N):
        p.produce(topic, key=f"k{i}".encode(), value=f"value-{i}".encode() * (i % 7 + 1),
                  partition=i % PARTITIONS, headers=[("idx", str(i).encode()), ("n", None)],
                  on_delivery=on_delivery)
    assert p.flush(20) == 0
    assert errors == []
    return acked


def consume_all(bootstrap: str, topic: str, expected: int) -> list:
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "assign-only",
                  "enable.auto.commit": False, "auto.offset.reset": "earliest"})
    c.assign([TopicPartition(topic, i, 0) for i in range(PARTITIONS)])
    out = []

    def enough() -> bool:
        m = c.poll(0.2)
        if m is not None:
            assert m.error() is None or m.error().code() == KafkaError._PARTITION_EOF, \
                m.error()
            if m.error() is None:
                out.append(m)
        return len(out) >= expected

    wait_for(enough, f"{expected} records", timeout=20, interval=0)
    c.close()
    return out


@pytest.mark.parametrize("compression", ["none", "gzip", "snappy", "lz4", "zstd"])
def test_produce_consume_every_codec(cluster: Cluster, topic_name: str, compression: str) -> None:
    cluster.create_topic(topic_name, PARTITIONS, 3)
    acked = produce_all(cluster.bootstrap_servers, topic_name, compression)
    assert len(acked) == N
    # Offsets per partition are dense from 0 and in produce order.
    for part in range(PARTITIONS):
        offs = [o for p, o, _ in acked if p == part]
        assert sorted(offs) == list(range(len(offs)))
    msgs = consume_all(cluster.bootstrap_servers, topic_name, N)
    assert len(msgs) == N
    by_key = {m.key(): m for m in msgs}
    for i in range(N):
        m = by_key[f"k{i}".encode()]
        assert m.value() == f"value-{i}".encode() * (i % 7 + 1)
        assert m.partition() == i % PARTITIONS
        assert m.offset() == i // PARTITIONS
        assert m.headers() == [("idx", str(i).encode()), ("n", None)]
    assert (m.partition(), m.offset(), m.key()) in acked


def test_watermarks_and_offsets_for_times(cluster: Cluster, topic_name: str) -> None:
    cluster.create_topic(topic_name, 1, 3)
    p = Producer({"bootstrap.servers": cluster.bootstrap_servers})
    base = int(time.time() * 1000) - 100_000
    for i in range(10):
        p.produce(topic_name, value=b"x", partition=0, timestamp=base + i * 1000)
        p.flush(10)
    c = Consumer({"bootstrap.servers": cluster.bootstrap_servers, "group.id": "w"})
    assert c.get_watermark_offsets(TopicPartition(topic_name, 0), timeout=10) == (0, 10)
    found = c.offsets_for_times([TopicPartition(topic_name, 0, base + 4500)], timeout=10)
    assert found[0].offset == 5
    past_end = c.offsets_for_times([TopicPartition(topic_name, 0, base + 99_000)], timeout=10)
    assert past_end[0].offset == -1  # librdkafka's OFFSET_END for "no such record"
    c.close()


def test_metadata_lists_brokers_topics_and_controller(cluster: Cluster, topic_name: str) -> None:
    cluster.create_topic(topic_name, 4, 2)
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap_servers})
    md = admin.list_topics(timeout=10)
    assert sorted(md.brokers) == [1, 2, 3]
    assert md.controller_id in (1, 2, 3)
    t = md.topics[topic_name]
    assert sorted(t.partitions) == [0, 1, 2, 3]
    for pm in t.partitions.values():
        assert len(pm.replicas) == 2
        assert pm.leader == pm.replicas[0]
        assert sorted(pm.isrs) == sorted(pm.replicas)


def test_produce_to_missing_partition_fails_cleanly(cluster: Cluster, topic_name: str) -> None:
    cluster.create_topic(topic_name, 1, 1)
    p = Producer({"bootstrap.servers": cluster.bootstrap_servers, "message.timeout.ms": 3000})
    errs = []
    p.produce(topic_name, value=b"x", partition=5, on_delivery=lambda e, m: errs.append(e))
    p.flush(10)
    assert errs and errs[0] is not None
    assert errs[0].code() in (KafkaError._UNKNOWN_PARTITION, KafkaError.UNKNOWN_TOPIC_OR_PART)
