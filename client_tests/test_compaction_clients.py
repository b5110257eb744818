"""Compacted topics read by real consumers: confluent-kafka and kafka-python see the
latest record per key at its original offset, with gaps where the cleaner removed
records, across compressed batches, headers and tombstones."""

from __future__ import annotations

import time

import pytest
from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition
from kafka import KafkaConsumer
from kafka import TopicPartition as KTopicPartition

from emulator import Cluster
from emulator.cluster.metrics import prometheus

# Not run with --target kafka: runs the emulator's cleaner on demand.
pytestmark = pytest.mark.emulator_only

KEYS = 7
N = 200


def produce(bootstrap: str, topic: str) -> dict[int, tuple[bytes, bytes | None]]:
    """Keys k0..k6 written over and over (k3 now and then a tombstone): offset -> record."""
    p = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 2,
                  "compression.type": "lz4", "batch.num.messages": 5})
    latest: dict[int, tuple[bytes, bytes | None]] = {}
    errors: list[object] = []

    def on_delivery(err: object, msg: object) -> None:
        if err is not None:
            errors.append(err)
        else:
            latest[msg.offset()] = (msg.key(), msg.value())

    for i in range(N):
        key = f"k{i % KEYS}".encode()
        value = None if (i >= 150 and key == b"k3") else f"v{i}".encode()
        p.produce(topic, key=key, value=value, partition=0, headers=[("i", str(i).encode())],
                  on_delivery=on_delivery)
        if i % 20 == 0:
            p.flush(10)
    assert p.flush(20) == 0 and errors == []
    return latest


def compact(cluster: Cluster, topic: str) -> None:
    """Run the cleaner until it has nothing left (the server also runs it on its own)."""
    def run() -> int:
        n = 0
        while cluster.state.run_cleaner() is not None:
            n += 1
        return n
    assert cluster.call(run) > 0


@pytest.fixture
def compacted(cluster: Cluster, topic_name: str) -> tuple[str, dict, int]:
    cluster.create_topic(topic_name, 1, 3, config={
        "cleanup.policy": "compact", "segment.bytes": "600",
        "min.cleanable.dirty.ratio": "0.01", "delete.retention.ms": "3600000"})
    latest = produce(cluster.bootstrap_servers, topic_name)
    compact(cluster, topic_name)
    end = cluster.call(lambda: cluster.state.get_partition(topic_name, 0).high_watermark)
    assert end == N
    return topic_name, latest, end


def expected(written: dict, active_base: int) -> list[tuple[int, bytes, bytes | None]]:
    """Below the active segment: the latest record per key there, at its offset."""
    last = {k: o for o, (k, _) in sorted(written.items()) if o < active_base}
    return sorted((o, k, written[o][1]) for k, o in last.items())


def check(got: list[tuple[int, bytes, bytes | None]], latest: dict, active_base: int) -> None:
    below = [g for g in got if g[0] < active_base]
    assert below == expected(latest, active_base)
    above = [g[0] for g in got if g[0] >= active_base]
    assert above == list(range(active_base, N))  # the active segment is never cleaned
    offsets = [g[0] for g in got]
    assert offsets == sorted(offsets) and len(offsets) < N  # gaps


def test_confluent_reads_a_compacted_topic_with_offset_gaps(
        cluster: Cluster, compacted: tuple[str, dict, int]) -> None:
    topic, latest, end = compacted
    active = cluster.call(
        lambda: cluster.state.get_partition(topic, 0).leader_log.segments.active_base)
    c = Consumer({"bootstrap.servers": cluster.bootstrap_servers, "group.id": "compacted",
                  "enable.auto.commit": False, "auto.offset.reset": "earliest",
                  "enable.partition.eof": True})
    c.assign([TopicPartition(topic, 0, 0)])
    got = []
    deadline = time.time() + 20
    while time.time() < deadline:
        m = c.poll(0.2)
        if m is None:
            continue
        if m.error() is not None:
            assert m.error().code() == KafkaError._PARTITION_EOF, m.error()
            break
        got.append((m.offset(), m.key(), m.value()))
        assert m.headers() == [("i", str(m.offset()).encode())]
    c.close()
    check(got, latest, active)
    assert any(k == b"k3" and v is None and o < active for o, k, v in got)  # horizon ahead


def test_kafka_python_reads_a_compacted_topic_with_offset_gaps(
        cluster: Cluster, compacted: tuple[str, dict, int]) -> None:
    topic, latest, end = compacted
    active = cluster.call(
        lambda: cluster.state.get_partition(topic, 0).leader_log.segments.active_base)
    c = KafkaConsumer(bootstrap_servers=cluster.bootstrap_servers, enable_auto_commit=False,
                      auto_offset_reset="earliest", consumer_timeout_ms=3000)
    tp = KTopicPartition(topic, 0)
    c.assign([tp])
    c.seek_to_beginning(tp)
    got = []
    deadline = time.time() + 20
    while time.time() < deadline and (not got or got[-1][0] < end - 1):
        for recs in c.poll(timeout_ms=500).values():
            got.extend((r.offset, r.key, r.value) for r in recs)
    c.close()
    check(got, latest, active)


def test_cleaner_metrics_have_kafkas_names(cluster: Cluster,
                                           compacted: tuple[str, dict, int]) -> None:
    text = cluster.call(lambda: prometheus(cluster.state))
    values = {line.split()[0]: float(line.split()[1]) for line in text.splitlines()
              if line.startswith("kafka_log_")}
    assert values["kafka_log_LogCleaner_passes_total"] >= 1
    assert values["kafka_log_LogCleaner_records_removed_total"] > 0
    assert 0 < values["kafka_log_LogCleaner_cleaner_recopy_percent"] < 100
    assert "kafka_log_LogCleanerManager_max_dirty_percent" in values
