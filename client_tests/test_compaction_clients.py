"""Compacted topics read by real consumers: confluent-kafka and kafka-python see the
latest record per key at its original offset, with gaps where the cleaner removed
records, across compressed batches, headers and tombstones.

On either target (the emulator, or a real Kafka with --target kafka): segments roll by
age (segment.ms; Kafka's segment.bytes cannot go below 1 MB), the producer pausing
between its groups of records so that each group starts a segment, and the log cleaner
compacts every segment but the active one. Kafka's cleaner thread does it on its own
(min.cleanable.dirty.ratio 0, log.cleaner.backoff.ms of client_tests/targets.py); the
emulator's is run on demand, the test waiting for the gaps either way. Which offset the
active segment starts at is not asked of the broker: the records read must be the latest
per key below some offset and every record from there on.
"""

from __future__ import annotations

import time

import pytest
from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition
from kafka import KafkaConsumer
from kafka import TopicPartition as KTopicPartition

from client_tests.targets import KafkaTarget
from emulator import Cluster
from emulator.control.metrics import prometheus
from emulator.testing import wait_for

Target = Cluster | KafkaTarget
Record = tuple[int, bytes, bytes | None]
KEYS = 7
N = 200
GROUP = 20  # records per produce group, each group in a segment of its own
SEGMENT_MS = 100
TOMBSTONES_FROM = 150  # k3's records from this offset on are tombstones


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
        value = None if (i >= TOMBSTONES_FROM and key == b"k3") else f"v{i}".encode()
        p.produce(topic, key=key, value=value, partition=0, headers=[("i", str(i).encode())],
                  on_delivery=on_delivery)
        if i % GROUP == GROUP - 1:
            p.flush(10)
            time.sleep(SEGMENT_MS * 1.5 / 1000)  # the next append rolls the segment
    assert p.flush(20) == 0 and errors == []
    return latest


def compact_now(cluster: Target) -> None:
    """Let the cleaner run: Kafka's runs on its own; the emulator's server runs it too
    (every log.cleaner.backoff.ms), but here it runs at once, until nothing is left."""
    if isinstance(cluster, KafkaTarget):
        return

    def run() -> int:
        n = 0
        while cluster.state.run_cleaner() is not None:
            n += 1
        return n
    cluster.call(run)


def read_confluent(bootstrap: str, topic: str, check_headers: bool = False) -> list[Record]:
    """Every record of partition 0 up to its end, with confluent-kafka."""
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "compacted",
                  "enable.auto.commit": False, "auto.offset.reset": "earliest",
                  "enable.partition.eof": True})
    c.assign([TopicPartition(topic, 0, 0)])
    got = []

    def at_the_end() -> bool:
        m = c.poll(0.2)
        if m is None:
            return False
        if m.error() is not None:
            assert m.error().code() == KafkaError._PARTITION_EOF, m.error()
            return True
        got.append((m.offset(), m.key(), m.value()))
        if check_headers:
            assert m.headers() == [("i", str(m.offset()).encode())]
        return False

    wait_for(at_the_end, f"the end of {topic}-0", timeout=20, interval=0)
    c.close()
    return got


def expected(written: dict, active_base: int) -> list[Record]:
    """Below the active segment: the latest record per key there, at its offset."""
    last = {k: o for o, (k, _) in sorted(written.items()) if o < active_base}
    return sorted((o, k, written[o][1]) for k, o in last.items())


def cleaned_below(got: list[Record], latest: dict) -> int | None:
    """The offset the log is compacted up to, if ``got`` is a compacted log with gaps:
    the latest record per key below it (the cleaner's offset map covers only what it
    cleaned, never the active segment), then every record from it to the end."""
    if len(got) >= N:
        return None
    for active_base in range(N, 0, -1):
        tail = [(o, *latest[o]) for o in range(active_base, N)]
        if got == expected(latest, active_base) + tail:
            return active_base
    return None


@pytest.fixture
def compacted(cluster: Target, topic_name: str) -> tuple[str, dict, int]:
    cluster.create_topic(topic_name, 1, 3, config={
        "cleanup.policy": "compact", "segment.ms": str(SEGMENT_MS),
        "min.cleanable.dirty.ratio": "0.0", "delete.retention.ms": "3600000"})
    latest = produce(cluster.bootstrap_servers, topic_name)
    assert sorted(latest) == list(range(N))
    compact_now(cluster)

    def past_the_tombstones() -> int | None:
        # Kafka's cleaner may first clean only the segments there were when it woke
        # (gaps, but below the tombstones): wait until it has cleaned past them
        active = cleaned_below(read_confluent(cluster.bootstrap_servers, topic_name), latest)
        return active if active is not None and active > TOMBSTONES_FROM else None

    return topic_name, latest, wait_for(
        past_the_tombstones, "the cleaner to leave offset gaps past the tombstones", 60)


def check(got: list[Record], latest: dict) -> int:
    """The records read are a compacted log with gaps (offsets in order, the active
    segment whole); the offset it is compacted up to."""
    offsets = [g[0] for g in got]
    assert offsets == sorted(offsets) and len(offsets) < N  # gaps
    active = cleaned_below(got, latest)
    assert active is not None, got
    return active


def test_confluent_reads_a_compacted_topic_with_offset_gaps(
        cluster: Target, compacted: tuple[str, dict, int]) -> None:
    topic, latest, _ = compacted
    got = read_confluent(cluster.bootstrap_servers, topic, check_headers=True)
    active = check(got, latest)
    # k3's last records are tombstones, kept in the cleaned part (delete.retention.ms ahead)
    assert any(k == b"k3" and v is None and o < active for o, k, v in got)


def test_kafka_python_reads_a_compacted_topic_with_offset_gaps(
        cluster: Target, compacted: tuple[str, dict, int]) -> None:
    topic, latest, _ = compacted
    end = N
    c = KafkaConsumer(bootstrap_servers=cluster.bootstrap_servers, enable_auto_commit=False,
                      auto_offset_reset="earliest", consumer_timeout_ms=3000)
    tp = KTopicPartition(topic, 0)
    c.assign([tp])
    c.seek_to_beginning(tp)
    got = []

    def up_to_the_end() -> bool:
        for recs in c.poll(timeout_ms=500).values():
            got.extend((r.offset, r.key, r.value) for r in recs)
        return bool(got) and got[-1][0] >= end - 1

    wait_for(up_to_the_end, f"offset {end - 1}", timeout=20, interval=0)
    c.close()
    check(got, latest)


@pytest.mark.emulator_only  # reads the emulator's own metrics registry
def test_cleaner_metrics_have_kafkas_names(cluster: Cluster,
                                           compacted: tuple[str, dict, int]) -> None:
    text = cluster.call(lambda: prometheus(cluster.state))
    values = {line.split()[0]: float(line.split()[1]) for line in text.splitlines()
              if line.startswith("kafka_log_")}
    assert values["kafka_log_LogCleaner_passes_total"] >= 1
    assert values["kafka_log_LogCleaner_records_removed_total"] > 0
    assert 0 < values["kafka_log_LogCleaner_cleaner_recopy_percent"] < 100
    assert "kafka_log_LogCleanerManager_max_dirty_percent" in values
