"""The pytest plugin's secured clusters: the kafka_security marker and client settings."""

from __future__ import annotations

import pytest
from confluent_kafka import KafkaException, Producer
from confluent_kafka.admin import AdminClient, NewTopic

from emulator import Cluster

# Not run with --target kafka: the pytest plugin's secured emulators (the kafka_security marker).
pytestmark = pytest.mark.emulator_only


@pytest.mark.kafka_security("sasl_ssl")
def test_marker_preset_gives_a_sasl_ssl_cluster(kafka_cluster: Cluster, kafka_client_config,
                                                kafka_topic_name: str) -> None:
    assert kafka_cluster.listener_specs[0].protocol == "SASL_SSL"
    conf = kafka_client_config("confluent", user="alice")
    assert conf["security.protocol"] == "SASL_SSL" and conf["ssl.ca.location"]
    kafka_cluster.create_topic(kafka_topic_name, 1)
    p = Producer(conf)
    p.produce(kafka_topic_name, b"x")
    assert p.flush(15) == 0
    props = kafka_client_config("java", user="alice")
    assert "ssl.truststore.location=" in props and "ScramLoginModule" in props


@pytest.mark.kafka_security("acls")
def test_acls_preset_denies_alice_and_lets_admin(kafka_cluster: Cluster, kafka_client_config,
                                                 kafka_topic_name: str) -> None:
    alice = AdminClient(kafka_client_config("confluent", user="alice", mechanism="PLAIN"))
    with pytest.raises(KafkaException, match="TOPIC_AUTHORIZATION_FAILED"):
        alice.create_topics([NewTopic(kafka_topic_name, 1, 1)])[kafka_topic_name].result(10)
    admin = AdminClient(kafka_client_config("confluent", user="admin"))
    admin.create_topics([NewTopic(kafka_topic_name, 1, 1)])[kafka_topic_name].result(10)
    assert kafka_topic_name in admin.list_topics(timeout=10).topics
