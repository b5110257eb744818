"""A leader crash under an idempotent acks=all producer, on either target.

The crash is target-neutral (client_tests/targets.py): ``cluster.stop_broker`` is the
emulator's stop_broker, or SIGKILL of the broker's JVM on Kafka (which fences it after
broker.session.timeout.ms). Nothing acknowledged may be lost or duplicated, and the
producer must get through without the application doing anything.
"""

from __future__ import annotations

from confluent_kafka import Consumer, Producer, TopicPartition

from client_tests.producing import produce
from client_tests.rawkafka import topic_metadata
from client_tests.targets import KafkaTarget
from emulator import Cluster
from emulator.testing import wait_for


def leader_of(cluster: Cluster | KafkaTarget, topic: str) -> int:
    return next(p["leader_id"] for p in topic_metadata(cluster, topic)["partitions"]
                if p["partition_index"] == 0)


def test_idempotent_producer_through_a_leader_crash(cluster: Cluster | KafkaTarget,
                                                    topic_name: str) -> None:
    cluster.create_topic(topic_name, 1, 3)
    p = Producer({"bootstrap.servers": cluster.bootstrap_servers, "acks": "all",
                  "enable.idempotence": True, "linger.ms": 2,
                  "message.timeout.ms": 90000, "retry.backoff.ms": 100})
    first = [b"before-%03d" % i for i in range(50)]
    produce(p, topic_name, first, timeout=90)
    leader = leader_of(cluster, topic_name)
    cluster.stop_broker(leader)
    then = [b"after-%03d" % i for i in range(50)]
    produce(p, topic_name, then, timeout=90)
    assert leader_of(cluster, topic_name) not in (leader, -1)
    cluster.start_broker(leader)
    c = Consumer({"bootstrap.servers": cluster.bootstrap_servers, "group.id": topic_name,
                  "enable.auto.commit": False})
    c.assign([TopicPartition(topic_name, 0, 0)])
    got: list[bytes] = []

    def hundred() -> bool:
        m = c.poll(0.5)
        if m is not None and m.error() is None:
            got.append(m.value())
        return len(got) >= 100

    wait_for(hundred, "the 100 records", timeout=60, interval=0)
    c.close()
    assert got == first + then
