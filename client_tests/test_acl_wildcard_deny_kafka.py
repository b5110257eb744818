"""The wildcard-principal ACL scenarios of test_acl_wildcard_deny.py against a real Apache
Kafka 4.4 broker with StandardAuthorizer (client_tests/kafka_cluster.py): a
SASL_PLAINTEXT listener with PLAIN users admin (a super user) and alice; the
inter-broker PLAINTEXT listener's ANONYMOUS principal is a super user too."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from kafka_cluster import KafkaCluster, small_cluster_config
from test_acl_wildcard_deny import SCENARIOS, scenario_topic
from test_security_acls import USERS, Client

AUTHZ = {"authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
         "super.users": "User:admin;User:ANONYMOUS"}


@pytest.fixture(scope="module")
def kafka() -> Iterator[KafkaCluster]:
    """One Kafka 4.4 broker (and its controller) with an authorizer."""
    jaas = ("org.apache.kafka.common.security.plain.PlainLoginModule required "
            'username="admin" password="admin-pw" '
            + " ".join(f'user_{u}="{p}"' for u, p in USERS.items()) + ";")
    cfg = {**small_cluster_config(1), **AUTHZ, "sasl.enabled.mechanisms": "PLAIN",
           "listener.name.sasl_plaintext.plain.sasl.jaas.config": jaas}
    with KafkaCluster(1, broker_config=cfg, controller_config=AUTHZ,
                      listeners={"SASL_PLAINTEXT": "SASL_PLAINTEXT"}) as k:
        yield k
        # SIGTERMed together with its controller, a broker waits out its absence first
        for bid in k.broker_ids:
            k.kill_broker(bid)


@pytest.fixture(scope="module")
def bootstrap(kafka: KafkaCluster) -> str:
    return kafka.bootstrap("SASL_PLAINTEXT")


@pytest.fixture
def topic(bootstrap: str) -> Iterator[tuple[Client, Client, str]]:
    with scenario_topic(bootstrap) as t:
        yield t


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[f.__name__ for f in SCENARIOS])
def test_wildcard_principal_acls_on_real_kafka(topic: tuple[Client, Client, str],
                                               scenario) -> None:  # type: ignore[no-untyped-def]
    scenario(*topic)
