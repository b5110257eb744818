"""Admin clients after the broker they were told is the controller fails.

A KRaft broker names a random live broker as the controller in Metadata and
DescribeCluster (the controller quorum is not reachable by clients); the admin
clients send their controller requests there. When that broker crashes, the
clients carry on with a live one: on either target (the emulator, or a real Kafka with
--target kafka). The emulator's own controller role, held by one of its brokers,
failing over is checked on the emulator alone (the last test).
"""

from __future__ import annotations

import pytest
from confluent_kafka.admin import AdminClient
from confluent_kafka.admin import NewTopic as CfNewTopic
from kafka import KafkaAdminClient
from kafka.admin import NewTopic

from client_tests.rawkafka import crash, metadata_brokers, topic_metadata, wait_for_topic
from client_tests.targets import KafkaTarget
from emulator import Cluster
from emulator.testing import wait_for

Target = Cluster | KafkaTarget


def test_kafka_python_admin_after_controller_failover(cluster: Target,
                                                      topic_name: str) -> None:
    """kafka-python's admin client caches the controller id and never refreshes it
    when that broker is gone (against Kafka too), so a new client is made after the
    crash; it finds a live broker named as the controller in Metadata."""
    admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap_servers)
    admin.create_topics([NewTopic(topic_name + "-a", 2, 3)])
    old = admin.describe_cluster()["controller_id"]
    assert old in cluster.broker_ids
    admin.close()
    crash(cluster, old)
    admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap_servers)
    try:
        admin.create_topics([NewTopic(topic_name + "-b", 2, 2)])
        assert admin.describe_cluster()["controller_id"] in set(cluster.broker_ids) - {old}
        # Kafka's brokers learn a topic from the metadata log a moment after CreateTopics
        # returns (docs/conformance.md, "Metadata is never stale")
        for t in (topic_name + "-a", topic_name + "-b"):
            wait_for_topic(cluster, t, 2)
        assert {topic_name + "-a", topic_name + "-b"} <= set(admin.list_topics())
    finally:
        admin.close()
    # the crashed broker leads nothing and has left every ISR
    wait_for(lambda: all(p["leader_id"] != old and old not in p["isr_nodes"]
                         for p in topic_metadata(cluster, topic_name + "-a")["partitions"]),
             f"{old} out of {topic_name}-a's leaders and ISRs")


def test_confluent_admin_after_controller_failover(cluster: Target, topic_name: str) -> None:
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap_servers,
                         "topic.metadata.refresh.interval.ms": 1000})
    old = admin.describe_cluster().result(timeout=30).controller.id
    crash(cluster, old)
    for f in admin.create_topics([CfNewTopic(topic_name, 3, 2)],
                                 operation_timeout=30).values():
        f.result(timeout=30)
    # the controller id reported is a live broker (KRaft), never the stopped one
    alive = set(cluster.broker_ids) - {old}
    assert admin.describe_cluster().result(timeout=30).controller.id in alive
    # Kafka's brokers learn a topic from the metadata log a moment after CreateTopics
    # returns (the emulator's at once: docs/conformance.md, "Metadata is never stale")
    wait_for_topic(cluster, topic_name, 3)
    md = admin.list_topics(timeout=30)
    assert topic_name in md.topics
    assert md.controller_id in alive
    assert len(md.brokers) == 2
    cluster.start_broker(old)
    wait_for(lambda: old in metadata_brokers(cluster), f"broker {old} back", 60)
    for f in admin.create_topics([CfNewTopic(topic_name + "-after", 3, 3)],
                                 operation_timeout=30).values():
        f.result(timeout=30)  # replication factor 3: every broker back


@pytest.mark.emulator_only  # the emulator's controller is one of its brokers; Kafka's is not
def test_the_emulators_controller_role_fails_over(cluster: Cluster, topic_name: str) -> None:
    """Stopping the broker that holds the emulator's controller role moves the role to
    another broker with a higher controller epoch; admin clients carry on, and the role
    stays where it went when the old broker returns."""
    old = cluster.call(lambda: cluster.state.controller_id)
    epoch = cluster.call(lambda: cluster.state.controller_epoch)
    cluster.stop_broker(old)
    new = cluster.call(lambda: cluster.state.controller_id)
    assert new not in (-1, old)
    assert cluster.call(lambda: cluster.state.controller_epoch) == epoch + 1
    admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap_servers)
    try:
        admin.create_topics([NewTopic(topic_name, 2, 2)])
        assert topic_name in set(admin.list_topics())
    finally:
        admin.close()
    parts = cluster.call(lambda: cluster.state.topics[topic_name].partitions)
    assert all(p.leader != old and old not in p.replicas for p in parts)
    cluster.start_broker(old)
    assert cluster.call(lambda: cluster.state.controller_id) == new  # the role stays
