"""Producers through a leader crash, and below min.insync.replicas.

A confluent-kafka idempotent acks=all producer keeps sending while the partition
leader's broker crashes and comes back: every record is acknowledged without a
delivery error, and reading the partition back gives each acknowledged record
exactly once, in the order sent. kafka-python with acks=all and retries off gets
NOT_ENOUGH_REPLICAS when the ISR is below min.insync.replicas.
"""

from __future__ import annotations

import time

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from kafka import KafkaProducer
from kafka.errors import NotEnoughReplicasError

from client_tests.rawkafka import Conn, list_offset, partition_leader, topic_metadata
from client_tests.targets import KafkaTarget
from emulator import Cluster
from emulator.testing import wait_for

# test_acks_all_without_retries_gets_not_enough_replicas runs on both targets (crashes
# through the conftest cluster); the others build an emulator of their own (its ISR lag
# time, its fencing delay) and stay on the emulator.

N = 1500


def leader_of(cluster: Cluster, topic: str, partition: int = 0) -> int:
    return cluster.call(lambda: cluster.state.get_partition(topic, partition).leader)


def read_all(bootstrap: str, topic: str, expected: int) -> list[tuple[int, bytes]]:
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "verify",
                  "enable.auto.commit": False, "auto.offset.reset": "earliest"})
    c.assign([TopicPartition(topic, 0, 0)])
    out: list[tuple[int, bytes]] = []

    def enough() -> bool:
        for m in c.consume(500, timeout=1.0):
            assert m.error() is None, m.error()
            out.append((m.offset(), m.value()))
        return len(out) >= expected

    wait_for(enough, f"{expected} records", timeout=60, interval=0)
    c.close()
    return out


# An emulator of its own with replica.lag.time.max.ms 2 s, which the session's Kafka does not
# have (client_tests/test_leader_crash.py is the leader crash on both targets).
@pytest.mark.emulator_only
def test_idempotent_producer_survives_the_leader_crashing_and_coming_back(
        topic_name: str) -> None:
    with Cluster(brokers=3, port=0, config={"replica.lag.time.max.ms": "2000"}) as cluster:
        cluster.create_topic(topic_name, 1, 3, config={"min.insync.replicas": "2"})
        errors: list[str] = []
        acked: list[tuple[int, bytes]] = []

        def on_delivery(err, msg) -> None:
            if err is not None:
                errors.append(str(err))
            else:
                acked.append((msg.offset(), msg.value()))

        p = Producer({"bootstrap.servers": cluster.bootstrap_servers,
                      "enable.idempotence": True, "acks": "all", "linger.ms": 5,
                      "message.timeout.ms": 60000, "retry.backoff.ms": 50,
                      "topic.metadata.refresh.interval.ms": 1000})
        crashed = -1
        for i in range(N):
            while True:
                try:
                    p.produce(topic_name, value=b"m-%05d" % i, partition=0,
                              on_delivery=on_delivery)
                    break
                except BufferError:
                    p.poll(0.05)
            p.poll(0)
            if i == N // 3:
                # Some acknowledged, the rest still in flight.
                wait_for(lambda: p.poll(0.01) >= 0 and acked, "a first acknowledgement",
                         interval=0)
                crashed = leader_of(cluster, topic_name)
                cluster.stop_broker(crashed)
            elif i == 2 * N // 3:
                cluster.start_broker(crashed)
            if i % 100 == 0:
                time.sleep(0.02)  # let records be in flight when the leader changes
        assert p.flush(60) == 0
        assert errors == []
        assert len(acked) == N
        assert leader_of(cluster, topic_name) != -1
        values = [v for _, v in read_all(cluster.bootstrap_servers, topic_name, N)]
        assert values == [b"m-%05d" % i for i in range(N)]  # all, once, in order
        assert sorted(acked) == list(enumerate(values))  # each ack's offset holds it


@pytest.mark.kafka_slow  # a crash: fencing, restart and rebalance on Kafka
@pytest.mark.parametrize("stop", ["follower", "two_followers"])
def test_acks_all_without_retries_gets_not_enough_replicas(
        cluster: Cluster | KafkaTarget, topic_name: str, stop: str) -> None:
    need = "3" if stop == "follower" else "2"
    cluster.create_topic(topic_name, 1, 3, config={"min.insync.replicas": need})
    leader, _ = partition_leader(cluster, topic_name)
    followers = [b for b in cluster.broker_ids if b != leader]
    stopped = followers[: 1 if stop == "follower" else 2]
    for b in stopped:
        cluster.stop_broker(b)
    # The crashed followers leave the ISR when the controller fences them (at once on the
    # emulator, after broker.session.timeout.ms on Kafka); wait until the leader knows.
    conn = Conn(cluster, cluster.broker_ids.index(leader))

    def isr() -> list[int]:
        md = conn.call(3, 12, {"topics": [{"topic_id": bytes(16), "name": topic_name}],
                               "allow_auto_topic_creation": False})
        return sorted(md["topics"][0]["partitions"][0]["isr_nodes"])

    try:
        wait_for(lambda: not set(stopped) & set(isr()), "the ISR without the crashed", 60)
        p = KafkaProducer(bootstrap_servers=cluster.bootstrap_servers, acks="all",
                          retries=0, enable_idempotence=False)
        with pytest.raises(NotEnoughReplicasError):
            p.send(topic_name, b"refused").get(timeout=30)
        p.close()
        assert list_offset(conn, topic_name) == 0  # refused before the append
    finally:
        conn.close()
    assert topic_metadata(cluster, topic_name)["partitions"][0]["leader_id"] == leader


# An emulator of its own whose crashed broker is fenced after the session timeout, as a
# Kafka broker is (the crash on both targets: client_tests/test_leader_crash.py).
@pytest.mark.emulator_only
def test_a_crash_fenced_after_a_session_timeout_holds_writes_then_fails_over(
        topic_name: str) -> None:
    """As on Kafka while a dead broker's session runs out: metadata still names it
    leader, writes wait (nothing is acknowledged, nothing is lost), and once the
    controller fences it the producer moves to the new leader on its own."""
    from confluent_kafka.admin import AdminClient

    with Cluster(brokers=3, port=0) as cluster:
        cluster.create_topic(topic_name, 1, 3)
        acked: list[tuple[int, bytes]] = []
        errors: list[str] = []

        def on_delivery(err, msg) -> None:
            (errors.append(str(err)) if err is not None
             else acked.append((msg.offset(), msg.value())))

        p = Producer({"bootstrap.servers": cluster.bootstrap_servers,
                      "enable.idempotence": True, "acks": "all", "linger.ms": 5,
                      "message.timeout.ms": 60000, "retry.backoff.ms": 50})
        for i in range(50):
            p.produce(topic_name, b"before-%03d" % i, on_delivery=on_delivery)
        assert p.flush(30) == 0
        old = leader_of(cluster, topic_name)
        cluster.stop_broker(old, fence_after_ms=4000)
        for i in range(50):
            p.produce(topic_name, b"during-%03d" % i, on_delivery=on_delivery)
        p.poll(0.5)
        md = AdminClient({"bootstrap.servers": cluster.bootstrap_servers}).list_topics(
            topic_name, timeout=10)
        part = cluster.state.get_partition(topic_name, 0)
        crashed, hw = cluster.call(lambda: (cluster.state.brokers[old].crashed,
                                            part.high_watermark))
        assert crashed and hw == 50 and len(acked) == 50
        assert md.topics[topic_name].partitions[0].leader == old
        assert old in md.brokers  # still registered: the controller has not noticed
        assert p.flush(60) == 0 and not errors
        new = leader_of(cluster, topic_name)
        assert new != old and not cluster.state.brokers[old].alive
        values = [v for _, v in read_all(cluster.bootstrap_servers, topic_name, 100)]
        assert values == [b"before-%03d" % i for i in range(50)] + \
            [b"during-%03d" % i for i in range(50)]
        cluster.start_broker(old)
