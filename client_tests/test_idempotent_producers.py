"""Idempotent producers when a Produce response is lost after the append.

The emulator's ``drop_response`` hook appends the batch, then closes the connection
instead of answering, as a broker that dies mid-response would. The producer retries
the same batch (same producer id, epoch and sequence); the partition recognises the
duplicate and answers with the original offset, so the log holds every record once.
"""

from __future__ import annotations

from collections import Counter

import pytest
from confluent_kafka import Producer
from kafka import KafkaProducer

from emulator import Cluster
from wire.records import decode_records

# Not run with --target kafka: drops produce responses with the emulator's fault injection.
pytestmark = pytest.mark.emulator_only

N = 40


def drop_produce_responses(cluster: Cluster, count: int) -> dict:
    """Drop the next ``count`` Produce responses; returns the live counter."""
    state = {"left": count, "dropped": 0}

    def hook(broker_id: int, api_key: int, client_id: str | None = None,
             request: dict | None = None, version: int = 0) -> bool:
        if api_key == 0 and state["left"] > 0:
            state["left"] -= 1
            state["dropped"] += 1
            return True
        return False

    cluster.call(lambda: setattr(cluster.server.faults, "drop_response", hook))
    return state


def log_values(cluster: Cluster, topic: str) -> list[bytes]:
    """Every data record in the partition leaders' logs, in offset order."""

    def read() -> list[bytes]:
        out = []
        for p in cluster.state.topics[topic].partitions:
            for data, *_ in p.leader_log.batches_from(p.log_start_offset, 1 << 30):
                out.extend(r.value for r in decode_records(data))
        return out

    return cluster.call(read)


def test_kafka_python_idempotent_producer_retries_without_duplicates(
        cluster: Cluster, topic_name: str) -> None:
    cluster.create_topic(topic_name, 2, 3)
    dropped = drop_produce_responses(cluster, 3)
    p = KafkaProducer(bootstrap_servers=cluster.bootstrap_servers, enable_idempotence=True,
                      acks="all", linger_ms=2, retry_backoff_ms=50)
    futures = [p.send(topic_name, value=b"kp-%03d" % i, partition=i % 2) for i in range(N)]
    metas = [f.get(timeout=30) for f in futures]
    p.close()
    assert dropped["dropped"] == 3
    values = log_values(cluster, topic_name)
    assert Counter(values) == Counter(b"kp-%03d" % i for i in range(N))
    for part in (0, 1):
        offs = [m.offset for m in metas if m.partition == part]
        assert offs == list(range(N // 2))  # acknowledged with their original offsets


def test_confluent_idempotent_producer_retries_without_duplicates(
        cluster: Cluster, topic_name: str) -> None:
    cluster.create_topic(topic_name, 3, 3)
    dropped = drop_produce_responses(cluster, 3)
    p = Producer({"bootstrap.servers": cluster.bootstrap_servers, "enable.idempotence": True,
                  "linger.ms": 2, "retry.backoff.ms": 50})
    acked: list[tuple[int, int]] = []
    errors: list[object] = []

    def on_delivery(err: object, msg: object) -> None:
        if err is not None:
            errors.append(err)
        else:
            acked.append((msg.partition(), msg.offset()))

    for i in range(N):
        p.produce(topic_name, value=b"cf-%03d" % i, partition=i % 3, on_delivery=on_delivery)
    assert p.flush(30) == 0
    assert errors == [] and dropped["dropped"] == 3
    values = log_values(cluster, topic_name)
    assert Counter(values) == Counter(b"cf-%03d" % i for i in range(N))
    for part in range(3):
        offs = sorted(o for pp, o in acked if pp == part)
        assert offs == list(range(len(offs)))
