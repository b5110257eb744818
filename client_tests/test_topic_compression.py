"""A topic's compression.type decides the codec consumers read, whatever the producer used.

Kafka's LogValidator rewrites a produced batch whose codec is not the topic's
compression.type (unless that is ``producer``) into the topic's codec, so a consumer
must decode that codec; a topic set to ``uncompressed`` hands out plain batches even to
a gzip producer. The emulator does so under ``--fidelity kafka`` (docs/fidelity.md,
topic-compression-type); ``fast`` stores the producer's batch as sent
(tests/test_compression_type.py shows both modes).
"""

from __future__ import annotations

import time
import uuid

from confluent_kafka import Consumer, Producer
from rawkafka import Conn, fetch_body, leader_conn

from client_tests.targets import KafkaTarget
from emulator import Cluster
from wire.records import (
    GZIP,
    LZ4,
    NONE,
    SNAPPY,
    ZSTD,
    Record,
    build_batch,
    decode_records,
    read_header,
    recompress,
    validate_batch,
)

# (the topic's compression.type, the producer's codec, the codec a consumer reads)
CASES = [
    ("gzip", NONE, GZIP),
    ("zstd", LZ4, ZSTD),
    ("uncompressed", GZIP, NONE),
    ("snappy", ZSTD, SNAPPY),
    ("producer", SNAPPY, SNAPPY),
    ("lz4", LZ4, LZ4),
]


def _create(cluster: Cluster | KafkaTarget, topic: str, compression: str,
            **configs: str) -> None:
    """A one-partition topic with ``compression.type``, returned once its leader serves
    it: create_topic waits for that on Kafka (KafkaTarget.wait_for_topic) and under the
    emulator's metadata lag (Cluster.create_topic)."""
    cluster.create_topic(topic, 1, 3, config={"compression.type": compression, **configs})


def _fetch(c: Conn, topic: str) -> list[bytes]:
    """Every batch of partition 0, from offset 0, as stored by the leader."""
    r = c.call(1, 12, fetch_body(topic, max_bytes=1 << 20))
    p = r["responses"][0]["partitions"][0]
    assert p["error_code"] == 0, p
    data, out, pos = p["records"], [], 0
    while pos + 12 <= len(data):
        end = pos + 12 + int.from_bytes(data[pos + 8:pos + 12], "big")
        out.append(bytes(data[pos:end]))
        pos = end
    return out


def test_consumers_read_the_topic_codec_not_the_producers(
        kafka_timing_cluster: Cluster | KafkaTarget) -> None:
    cluster = kafka_timing_cluster
    now = int(time.time() * 1000)
    sent = [Record(0, now, b"k%d" % i, b"value-%d " % i * 20, [("h", b"%d" % i)])
            for i in range(5)]
    for compression, codec, expected in CASES:
        topic = f"codec-{compression}-{uuid.uuid4().hex[:8]}"
        _create(cluster, topic, compression)
        c = leader_conn(cluster, topic)
        try:
            batch = recompress(build_batch(sent, timestamp=now), codec)
            r = c.call(0, 9, {"acks": -1, "timeout_ms": 5000, "topic_data": [
                {"name": topic, "partition_data": [{"index": 0, "records": batch}]}]})
            pr = r["responses"][0]["partition_responses"][0]
            assert (compression, pr["error_code"]) == (compression, 0), pr
            batches = _fetch(c, topic)
        finally:
            c.close()
        assert len(batches) == 1, compression
        h = validate_batch(batches[0])  # a whole batch, its CRC right
        assert (compression, h.compression) == (compression, expected)
        assert (h.base_offset, h.record_count, h.last_offset_delta) == (0, 5, 4)
        assert h.base_timestamp == now and h.producer_id == -1
        got = decode_records(batches[0])
        assert [(r.offset, r.timestamp, r.key, r.value, r.headers) for r in got] == \
            [(i, now, s.key, s.value, s.headers) for i, s in enumerate(sent)]


def test_an_idempotent_producer_reads_back_in_the_topic_codec(
        kafka_timing_cluster: Cluster | KafkaTarget) -> None:
    """A real producer with lz4 into a zstd topic: the stored batch is zstd, its producer
    id, epoch and sequence kept, and a consumer reads every value."""
    cluster = kafka_timing_cluster
    topic = f"codec-idem-{uuid.uuid4().hex[:8]}"
    _create(cluster, topic, "zstd")
    p = Producer({"bootstrap.servers": cluster.bootstrap_servers, "enable.idempotence": True,
                  "compression.type": "lz4", "linger.ms": 50})
    values = [b"payload %d " % i * 10 for i in range(20)]
    for v in values:
        p.produce(topic, v, partition=0)
    assert p.flush(30) == 0
    c = leader_conn(cluster, topic)
    try:
        batches = _fetch(c, topic)
    finally:
        c.close()
    headers = [read_header(b) for b in batches]
    assert {h.compression for h in headers} == {ZSTD}
    assert all(h.producer_id >= 0 and h.producer_epoch >= 0 for h in headers)
    assert [h.base_sequence for h in headers] == [h.base_offset for h in headers]
    consumer = Consumer({"bootstrap.servers": cluster.bootstrap_servers,
                         "group.id": f"g-{topic}", "auto.offset.reset": "earliest"})
    try:
        consumer.subscribe([topic])
        got: list[bytes] = []
        deadline = time.monotonic() + 30
        while len(got) < len(values) and time.monotonic() < deadline:
            m = consumer.poll(1)
            if m is not None and m.error() is None:
                got.append(m.value())
        assert got == values
    finally:
        consumer.close()


def test_a_batch_too_large_once_recompressed_is_refused(
        kafka_timing_cluster: Cluster | KafkaTarget) -> None:
    """max.message.bytes holds for the batch as the topic stores it: a zstd batch that
    fits is refused by an ``uncompressed`` topic once inflated (MESSAGE_TOO_LARGE), and
    nothing is stored."""
    cluster = kafka_timing_cluster
    topic = f"codec-big-{uuid.uuid4().hex[:8]}"
    _create(cluster, topic, "uncompressed", **{"max.message.bytes": "2000"})
    now = int(time.time() * 1000)
    batch = recompress(build_batch([Record(0, now, None, b"a" * 8000, [])], timestamp=now),
                       ZSTD)
    assert len(batch) < 2000
    c = leader_conn(cluster, topic)
    try:
        r = c.call(0, 9, {"acks": -1, "timeout_ms": 5000, "topic_data": [
            {"name": topic, "partition_data": [{"index": 0, "records": batch}]}]})
        assert r["responses"][0]["partition_responses"][0]["error_code"] == 10  # TOO_LARGE
        assert _fetch(c, topic) == []
    finally:
        c.close()
