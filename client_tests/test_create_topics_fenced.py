"""CreateTopics while a broker is fenced, on either target.

Kafka's controller places a new topic's replicas on every registered broker that is not
shutting down, fenced ones included (StripedReplicaPlacer over the heartbeat manager's
usable brokers), the unfenced first; it refuses only more replicas than registered
brokers, or a cluster with no unfenced broker. So a test that crashes one broker of three
and then creates a topic of replication factor 3 gets it, on Kafka as here.
"""

from __future__ import annotations

import pytest

from client_tests.rawkafka import Conn, crash, replicas_of, restart, topic_metadata
from client_tests.targets import KafkaTarget
from emulator import Cluster
from emulator.testing import wait_for
from wire.errors import ErrorCode as E


def create(conn: Conn, topic: str, partitions: int, rf: int) -> tuple[int, str | None]:
    resp = conn.call(19, 5, {"topics": [{
        "name": topic, "num_partitions": partitions, "replication_factor": rf,
        "assignments": [], "configs": []}], "timeout_ms": 30000, "validate_only": False})
    t = resp["topics"][0]
    return t["error_code"], t["error_message"]


@pytest.mark.kafka_slow  # a broker crashed and fenced on Kafka
def test_a_fenced_broker_still_takes_replicas_of_a_new_topic(
        cluster: Cluster | KafkaTarget, topic_name: str) -> None:
    """Replication factor 3 on three brokers, one of them crashed and fenced: created,
    the fenced broker's replica outside the ISR and an unfenced broker leading; four
    replicas are still refused (three brokers registered). Once the broker is back its
    replicas catch up and join the ISRs."""
    b1, b2, b3 = cluster.broker_ids
    crash(cluster, b3)
    try:
        conn = Conn(cluster, 0)
        try:
            assert create(conn, topic_name + "-4", 1, 4) == (
                E.INVALID_REPLICATION_FACTOR,
                "Unable to replicate the partition 4 time(s): The target replication factor "
                "of 4 cannot be reached because only 3 broker(s) are registered or some "
                "brokers have all their log directories cordoned.")
            assert create(conn, topic_name, 2, 3) == (E.NONE, None)
        finally:
            conn.close()
        wait_for(lambda: len(topic_metadata(cluster, topic_name)["partitions"]) == 2,
                 "the topic's partitions in Metadata", 30)
        for p in (0, 1):
            replicas, isr, leader = replicas_of(cluster, topic_name, p)
            assert sorted(replicas) == sorted([b1, b2, b3]), (p, replicas)
            assert isr == sorted([b1, b2]) and leader in (b1, b2), (p, isr, leader)
    finally:
        restart(cluster, b3)
    wait_for(lambda: all(replicas_of(cluster, topic_name, p)[1] == sorted([b1, b2, b3])
                         for p in (0, 1)), f"broker {b3} back in the ISRs", 60)
