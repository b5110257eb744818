"""The offset expiry scenario of test_offset_expiry.py against a real Apache Kafka 4.4
broker with offsets.retention.minutes=1 checked every second (client_tests/kafka_cluster.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from kafka_cluster import KafkaCluster, small_cluster_config
from test_offset_expiry import EXPIRY, empty_groups_scenario, expiry_scenario

from client_tests.targets import KafkaTarget


@pytest.fixture(scope="module")
def kafka() -> Iterator[KafkaCluster]:
    """One Kafka 4.4 broker (and its controller) expiring offsets after a minute."""
    with KafkaCluster(1, broker_config={**small_cluster_config(1), **EXPIRY}) as k:
        yield k


def test_offsets_expire_by_subscription_while_stable_and_from_emptiness_on_kafka(
        kafka: KafkaCluster) -> None:
    expiry_scenario(KafkaTarget(kafka))


def test_empty_groups_without_offsets_are_deleted_share_groups_kept_on_kafka(
        kafka: KafkaCluster) -> None:
    empty_groups_scenario(KafkaTarget(kafka))
