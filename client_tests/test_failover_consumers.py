"""Consumers follow a leader move without losing their place.

Each client reads part of a partition, the leader's broker crashes (a new leader is
elected from the ISR, with a new leader epoch), more records arrive at the new
leader, and the consumer goes on from where it was: every record once, in order.
kafka-python and confluent-kafka validate their position against the new leader
with OffsetForLeaderEpoch (KIP-320) on the way.
"""

from __future__ import annotations

import asyncio

import pytest
from aiokafka import AIOKafkaConsumer
from aiokafka import TopicPartition as AioTP
from confluent_kafka import Consumer, TopicPartition
from kafka import KafkaConsumer, KafkaProducer
from kafka.structs import TopicPartition as KpTP

from client_tests import producing
from client_tests.producing import numbered
from client_tests.rawkafka import partition_leader
from client_tests.targets import KafkaTarget
from emulator import Cluster
from emulator.testing import wait_for, wait_for_async

# The crash tests run on both targets (the conftest cluster's stop_broker: SIGKILL on
# Kafka); the high-watermark one holds a follower with the emulator's fault and stays.

FIRST, SECOND = 60, 40


def setup(cluster: Cluster, topic: str) -> None:
    cluster.create_topic(topic, 1, 3)
    produce(cluster, topic, 0, FIRST)


def produce(cluster: Cluster, topic: str, start: int, n: int) -> None:
    producing.produce(cluster.bootstrap_servers, topic, numbered(n, start, "v-{:04d}"),
                      timeout=60, config={"acks": "all", "retry.backoff.ms": 50,
                                          "topic.metadata.refresh.interval.ms": 500})


def move_leader(cluster: Cluster | KafkaTarget, topic: str) -> tuple[int, int]:
    """Crash the leader's broker; returns (old leader, new leader) once Metadata names
    the new one (at once on the emulator; on Kafka after the controller has fenced the
    crashed broker, broker.session.timeout.ms)."""
    old, _ = partition_leader(cluster, topic)
    cluster.stop_broker(old)
    new = wait_for(lambda: (lambda b: b not in (-1, old) and b)(
        partition_leader(cluster, topic)[0]), "a new leader", 60)
    return old, new


def expected() -> list[bytes]:
    return [b"v-%04d" % i for i in range(FIRST + SECOND)]


@pytest.mark.kafka_slow  # a crash: fencing, restart and rebalance on Kafka
def test_kafka_python_consumer_follows_the_leader(cluster: Cluster, topic_name: str) -> None:
    setup(cluster, topic_name)
    c = KafkaConsumer(bootstrap_servers=cluster.bootstrap_servers, enable_auto_commit=False,
                      auto_offset_reset="earliest", metadata_max_age_ms=1000,
                      retry_backoff_ms=50, reconnect_backoff_ms=50)
    c.assign([KpTP(topic_name, 0)])
    got: list[bytes] = []

    def first_30() -> bool:
        for records in c.poll(timeout_ms=500, max_records=30 - len(got)).values():
            got.extend(r.value for r in records)
        return len(got) >= 30

    def the_rest() -> bool:
        for records in c.poll(timeout_ms=500).values():
            got.extend(r.value for r in records)
        return len(got) >= FIRST + SECOND

    wait_for(first_30, "the first 30 records", timeout=30, interval=0)
    move_leader(cluster, topic_name)
    produce(cluster, topic_name, FIRST, SECOND)
    wait_for(the_rest, "every record", timeout=60, interval=0)
    c.close()
    assert got == expected()


@pytest.mark.kafka_slow  # a crash: fencing, restart and rebalance on Kafka
def test_confluent_consumer_follows_the_leader(cluster: Cluster, topic_name: str) -> None:
    setup(cluster, topic_name)
    c = Consumer({"bootstrap.servers": cluster.bootstrap_servers, "group.id": "g",
                  "enable.auto.commit": False, "auto.offset.reset": "earliest",
                  "topic.metadata.refresh.interval.ms": 1000, "reconnect.backoff.ms": 50,
                  "retry.backoff.ms": 50})
    c.assign([TopicPartition(topic_name, 0, 0)])
    got: list[bytes] = []

    def first_30() -> bool:
        for m in c.consume(30 - len(got), timeout=0.5):
            assert m.error() is None, m.error()
            got.append(m.value())
        return len(got) >= 30

    def the_rest() -> bool:
        for m in c.consume(100, timeout=0.5):
            if m.error() is None:
                got.append(m.value())
        return len(got) >= FIRST + SECOND

    wait_for(first_30, "the first 30 records", timeout=30, interval=0)
    move_leader(cluster, topic_name)
    produce(cluster, topic_name, FIRST, SECOND)
    wait_for(the_rest, "every record", timeout=60, interval=0)
    c.close()
    assert got == expected()


@pytest.mark.kafka_slow  # a crash: fencing, restart and rebalance on Kafka
def test_aiokafka_consumer_follows_the_leader(cluster: Cluster, topic_name: str) -> None:
    setup(cluster, topic_name)

    async def consume() -> list[bytes]:
        c = AIOKafkaConsumer(bootstrap_servers=cluster.bootstrap_servers,
                             enable_auto_commit=False, auto_offset_reset="earliest",
                             metadata_max_age_ms=1000, retry_backoff_ms=50)
        await c.start()
        try:
            c.assign([AioTP(topic_name, 0)])
            got: list[bytes] = []

            async def first_30() -> bool:
                batch = await c.getmany(timeout_ms=500, max_records=30 - len(got))
                got.extend(r.value for rs in batch.values() for r in rs)
                return len(got) >= 30

            async def the_rest() -> bool:
                batch = await c.getmany(timeout_ms=500)
                got.extend(r.value for rs in batch.values() for r in rs)
                return len(got) >= FIRST + SECOND

            await wait_for_async(first_30, "the first 30 records", timeout=30, interval=0)
            await asyncio.to_thread(move_leader, cluster, topic_name)
            await asyncio.to_thread(produce, cluster, topic_name, FIRST, SECOND)
            await wait_for_async(the_rest, "every record", timeout=60, interval=0)
            return got
        finally:
            await c.stop()

    assert asyncio.run(consume()) == expected()


@pytest.mark.emulator_only  # holds a follower back with the emulator's pause_follower
def test_consumer_reads_only_up_to_the_high_watermark(cluster: Cluster,
                                                      topic_name: str) -> None:
    """Records a paused follower has not replicated are not readable (HW held back)."""
    cluster.create_topic(topic_name, 1, 3)
    leader = cluster.call(lambda: cluster.state.get_partition(topic_name, 0).leader)
    follower = next(b for b in cluster.broker_ids if b != leader)
    cluster.pause_follower(follower, topic=topic_name)
    p = KafkaProducer(bootstrap_servers=cluster.bootstrap_servers, acks=1)
    for i in range(5):
        p.send(topic_name, b"x-%d" % i, partition=0).get(timeout=30)
    p.close()
    part = cluster.call(lambda: cluster.state.get_partition(topic_name, 0))
    assert cluster.call(lambda: (part.log_end_offset, part.high_watermark)) == (5, 0)
    c = KafkaConsumer(bootstrap_servers=cluster.bootstrap_servers, enable_auto_commit=False,
                      auto_offset_reset="earliest")
    c.assign([KpTP(topic_name, 0)])
    assert c.poll(timeout_ms=1000) == {}
    assert c.end_offsets([KpTP(topic_name, 0)])[KpTP(topic_name, 0)] == 0
    cluster.resume_follower(follower, topic=topic_name)
    got: list[bytes] = []

    def five() -> bool:
        for records in c.poll(timeout_ms=500).values():
            got.extend(r.value for r in records)
        return len(got) >= 5

    wait_for(five, "the 5 records", timeout=30, interval=0)
    c.close()
    assert got == [b"x-%d" % i for i in range(5)]
