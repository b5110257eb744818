"""Admin clients after the controller fails over.

Stopping the controller's broker moves the role to another broker (a higher
controller epoch); Metadata and DescribeCluster name the new controller, and the
admin clients, which send controller requests to it, carry on.
"""

from __future__ import annotations

import pytest
from confluent_kafka.admin import AdminClient
from confluent_kafka.admin import NewTopic as CfNewTopic
from kafka import KafkaAdminClient
from kafka.admin import NewTopic

from emulator import Cluster

# Not run with --target kafka: crashes and faults through the emulator's control, checked in its state.
pytestmark = pytest.mark.emulator_only


def test_kafka_python_admin_after_controller_failover(cluster: Cluster,
                                                      topic_name: str) -> None:
    """kafka-python's admin client caches the controller id and never refreshes it
    when that broker is gone (against Kafka too), so a new client is made after the
    failover; it finds the new controller in Metadata."""
    admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap_servers)
    admin.create_topics([NewTopic(topic_name + "-a", 2, 3)])
    # A KRaft broker reports a random live broker as the controller, never the controller
    # node itself; the emulator's own controller is failed over here.
    assert admin.describe_cluster()["controller_id"] in cluster.broker_ids
    old = cluster.call(lambda: cluster.state.controller_id)
    admin.close()
    epoch = cluster.call(lambda: cluster.state.controller_epoch)
    cluster.stop_broker(old)
    new = cluster.call(lambda: cluster.state.controller_id)
    assert new not in (-1, old)
    assert cluster.call(lambda: cluster.state.controller_epoch) == epoch + 1
    admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap_servers)
    admin.create_topics([NewTopic(topic_name + "-b", 2, 2)])
    assert admin.describe_cluster()["controller_id"] in set(cluster.broker_ids) - {old}
    assert {topic_name + "-a", topic_name + "-b"} <= set(admin.list_topics())
    admin.close()
    parts = cluster.call(lambda: cluster.state.topics[topic_name + "-a"].partitions)
    assert all(p.leader != old and old not in p.isr for p in parts)


def test_confluent_admin_after_controller_failover(cluster: Cluster, topic_name: str) -> None:
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap_servers,
                         "topic.metadata.refresh.interval.ms": 1000})
    old = cluster.state.controller_id
    cluster.stop_broker(old)
    new = cluster.call(lambda: cluster.state.controller_id)
    for f in admin.create_topics([CfNewTopic(topic_name, 3, 2)],
                                 operation_timeout=30).values():
        f.result(timeout=30)
    # the controller id reported is a live broker (KRaft), never the stopped one
    alive = set(cluster.broker_ids) - {old}
    assert admin.describe_cluster().result(timeout=30).controller.id in alive
    md = admin.list_topics(timeout=30)
    assert md.controller_id in alive and topic_name in md.topics
    assert len(md.brokers) == 2
    cluster.start_broker(old)
    assert cluster.call(lambda: cluster.state.controller_id) == new  # the role stays
