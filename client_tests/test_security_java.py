"""Kafka's own Java tools against a secured emulator: kafka-acls over SASL_SSL with
SCRAM-SHA-512 (the Java client, a PKCS12 truststore, CreateAcls/DescribeAcls/
DeleteAcls), kafka-configs (topic configs, a SCRAM user created by the tool and then
logging in; refused for a user without the ACLs), and kafka-reassign-partitions run as
a user without the CLUSTER ACLs (45/46 answer CLUSTER_AUTHORIZATION_FAILED). Jars:
client_tests/java (setup.d/30-java.sh; kafka-configs is kafka.admin.ConfigCommand of
the tools release's core jar, see the pom)."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import ConsumerGroupTopicPartitions
from confluent_kafka.admin import AdminClient
from test_reassign_java import TOOLS_JVM, require_java
from test_security_sasl import _own_ca_and_server_cert

from emulator import Cluster

# Not run with --target kafka: Kafka's Java tools against emulators with SASL_SSL, SCRAM users and
# an authorizer of their own, which the session's Kafka does not have.
pytestmark = pytest.mark.emulator_only

ACLS = "org.apache.kafka.tools.AclCommand"
REASSIGN = "org.apache.kafka.tools.reassign.ReassignPartitionsCommand"
CONFIGS = "kafka.admin.ConfigCommand"
CONSOLE_PRODUCER = "org.apache.kafka.tools.ConsoleProducer"
CONSOLE_CONSUMER = "org.apache.kafka.tools.consumer.ConsoleConsumer"
USERS = {"admin": "admin-pw", "alice": "alice-pw"}


@pytest.fixture
def secured(tmp_path: Path) -> Iterator[Cluster]:
    require_java()
    with Cluster(3, security={"listeners": "SASL_SSL://127.0.0.1:0", "sasl_users": USERS,
                              "super_users": ["admin", "bob"], "authorizer": True,
                              "tls_dir": str(tmp_path / "tls")}) as c:
        # bob is a super user with no credential: kafka-configs creates it below
        yield c


def _tool(c: Cluster, props: str, main: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(TOOLS_JVM + [main, "--bootstrap-server", c.bootstrap_servers,
                                       "--command-config", props, *args],
                          capture_output=True, text=True, timeout=180)


def test_kafka_acls_over_sasl_ssl_scram(secured: Cluster, tmp_path: Path) -> None:
    admin = secured.write_client_properties(str(tmp_path / "admin.properties"), user="admin",
                                            mechanism="SCRAM-SHA-512")
    r = _tool(secured, admin, ACLS, "--add", "--allow-principal", "User:alice",
              "--operation", "Read", "--operation", "Write", "--topic", "orders",
              "--resource-pattern-type", "prefixed")
    assert r.returncode == 0, r.stdout + r.stderr
    r = _tool(secured, admin, ACLS, "--list", "--topic", "orders",
              "--resource-pattern-type", "prefixed")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "User:alice" in r.stdout and "READ" in r.stdout and "WRITE" in r.stdout
    assert len(secured.security.acls.bindings) == 2
    r = _tool(secured, admin, ACLS, "--remove", "--force", "--allow-principal", "User:alice",
              "--operation", "Write", "--topic", "orders", "--resource-pattern-type", "prefixed")
    assert r.returncode == 0, r.stdout + r.stderr
    assert [b.operation.name for b in secured.security.acls.bindings] == ["READ"]


def test_kafka_reassign_partitions_as_an_unauthorized_user(secured: Cluster,
                                                           tmp_path: Path) -> None:
    secured.create_topic("moves", 1, 2)
    alice = secured.write_client_properties(str(tmp_path / "alice.properties"), user="alice",
                                            mechanism="SCRAM-SHA-256")
    r = _tool(secured, alice, REASSIGN, "--list")
    out = r.stdout + r.stderr
    assert r.returncode != 0 and "ClusterAuthorizationException" in out, out
    plan = tmp_path / "plan.json"
    plan.write_text('{"version":1,"partitions":[{"topic":"moves","partition":0,'
                    '"replicas":[1,2,3]}]}')
    r = _tool(secured, alice, REASSIGN, "--execute", "--reassignment-json-file", str(plan))
    out = r.stdout + r.stderr
    assert r.returncode != 0 and "Authorization" in out, out
    assert secured.state.get_partition("moves", 0).replicas != [1, 2, 3]


def test_kafka_acls_with_an_unsecured_oauthbearer_token(secured: Cluster, tmp_path: Path) -> None:
    """The Java client's OAUTHBEARER (Kafka's unsecured login module) as super user."""
    props = secured.write_client_properties(str(tmp_path / "oauth.properties"), user="admin",
                                            mechanism="OAUTHBEARER")
    r = _tool(secured, props, ACLS, "--list")
    assert r.returncode == 0, r.stdout + r.stderr


def test_kafka_configs_over_sasl_ssl_scram(secured: Cluster, tmp_path: Path) -> None:
    """kafka-configs as admin: a topic config altered and described (IncrementalAlter-
    Configs/DescribeConfigs), a SCRAM-SHA-256 user added with --entity-type users (51)
    and described (50); that user then logs in. As alice (no ACL) both are refused."""
    secured.create_topic("configured", 1, 3)
    admin = secured.write_client_properties(str(tmp_path / "admin.properties"), user="admin",
                                            mechanism="SCRAM-SHA-512")
    topic = ("--entity-type", "topics", "--entity-name", "configured")
    r = _tool(secured, admin, CONFIGS, "--alter", *topic, "--add-config", "retention.ms=3600000")
    assert r.returncode == 0 and "Completed updating config" in r.stdout, r.stdout + r.stderr
    r = _tool(secured, admin, CONFIGS, "--describe", *topic)
    assert r.returncode == 0 and "retention.ms=3600000" in r.stdout, r.stdout + r.stderr
    assert secured.state.topics["configured"].configs["retention.ms"] == "3600000"

    bob = secured.write_client_properties(str(tmp_path / "bob.properties"), user="bob",
                                          password="bob-pw", mechanism="SCRAM-SHA-256")
    r = _tool(secured, bob, CONFIGS, "--describe", *topic)  # no credential yet
    assert r.returncode != 0 and "SaslAuthenticationException" in r.stdout + r.stderr, r.stdout
    user = ("--entity-type", "users", "--entity-name", "bob")
    r = _tool(secured, admin, CONFIGS, "--alter", *user, "--add-config",
              "SCRAM-SHA-256=[iterations=8192,password=bob-pw]")
    assert r.returncode == 0 and "Completed updating config for user bob" in r.stdout, \
        r.stdout + r.stderr
    r = _tool(secured, admin, CONFIGS, "--describe", *user)
    assert r.returncode == 0 and "SCRAM-SHA-256=iterations=8192" in r.stdout, r.stdout + r.stderr
    r = _tool(secured, bob, CONFIGS, "--describe", *topic)  # bob logs in with the new password
    assert r.returncode == 0 and "retention.ms=3600000" in r.stdout, r.stdout + r.stderr

    alice = secured.write_client_properties(str(tmp_path / "alice.properties"), user="alice",
                                            mechanism="SCRAM-SHA-256")
    r = _tool(secured, alice, CONFIGS, "--alter", *topic, "--add-config", "retention.ms=1")
    out = r.stdout + r.stderr
    assert r.returncode != 0 and "TopicAuthorizationException: Topic authorization failed." \
        in out, out
    r = _tool(secured, alice, CONFIGS, "--alter", "--entity-type", "users", "--entity-name",
              "mallory", "--add-config", "SCRAM-SHA-512=[password=x]")
    out = r.stdout + r.stderr
    assert r.returncode != 0 and "ClusterAuthorizationException" in out, out
    assert secured.state.topics["configured"].configs["retention.ms"] == "3600000"
    assert "mallory" not in secured.security.credentials.to_dict()


def test_java_producer_and_consumer_over_sasl_ssl(secured: Cluster, tmp_path: Path) -> None:
    """Kafka's Java producer (PLAIN) and consumer group member (SCRAM-SHA-256) through
    kafka-console-producer/-consumer over SASL_SSL; alice holds WRITE, then READ on the
    topic and the group, granted with kafka-acls."""
    topic, group = "java-secure", "java-secure-group"
    secured.create_topic(topic, 3, 3)
    admin = secured.write_client_properties(str(tmp_path / "admin.properties"), user="admin",
                                            mechanism="SCRAM-SHA-512")
    for args in (("--operation", "Write", "--operation", "Read", "--topic", topic),
                 ("--operation", "Read", "--group", group)):
        r = _tool(secured, admin, ACLS, "--add", "--allow-principal", "User:alice", *args)
        assert r.returncode == 0, r.stdout + r.stderr
    plain = secured.write_client_properties(str(tmp_path / "plain.properties"), user="alice",
                                            mechanism="PLAIN")
    lines = [f"line-{i}" for i in range(20)]
    r = subprocess.run(TOOLS_JVM + [CONSOLE_PRODUCER, "--bootstrap-server",
                                    secured.bootstrap_servers, "--topic", topic,
                                    "--command-config", plain],
                       input="\n".join(lines) + "\n", capture_output=True, text=True,
                       timeout=180)
    assert r.returncode == 0, r.stdout + r.stderr
    scram = secured.write_client_properties(str(tmp_path / "scram.properties"), user="alice",
                                            mechanism="SCRAM-SHA-256")
    r = subprocess.run(TOOLS_JVM + [CONSOLE_CONSUMER, "--bootstrap-server",
                                    secured.bootstrap_servers, "--topic", topic,
                                    "--group", group, "--from-beginning",
                                    "--max-messages", str(len(lines)), "--timeout-ms", "60000",
                                    "--command-config", scram],
                       capture_output=True, text=True, timeout=180)
    assert r.returncode == 0, r.stdout + r.stderr
    assert sorted(r.stdout.split()) == sorted(lines), r.stdout + r.stderr
    admin_client = AdminClient(secured.client_config("confluent", user="admin"))
    [offsets] = admin_client.list_consumer_group_offsets(
        [ConsumerGroupTopicPartitions(group)]).values()
    committed = offsets.result(20).topic_partitions  # the group committed as alice
    assert sum(tp.offset for tp in committed) == len(lines), committed


def test_java_trusts_a_user_supplied_certificate(tmp_path: Path) -> None:
    """--tls-cert/--tls-key: the PKCS12 truststore write_client_properties names holds the
    user's chain, so Kafka's Java client (kafka-acls) verifies the user's certificate."""
    require_java()
    _, cert, key = _own_ca_and_server_cert(tmp_path)
    with Cluster(1, security={"listeners": "SASL_SSL://127.0.0.1:0", "sasl_users": USERS,
                              "super_users": ["admin"], "authorizer": True, "tls_cert": cert,
                              "tls_key": key, "tls_dir": str(tmp_path / "tls")}) as c:
        props = c.write_client_properties(str(tmp_path / "admin.properties"), user="admin",
                                          mechanism="SCRAM-SHA-512")
        r = _tool(c, props, ACLS, "--add", "--allow-principal", "User:alice", "--operation",
                  "Read", "--topic", "t")
        assert r.returncode == 0, r.stdout + r.stderr
        assert len(c.security.acls.bindings) == 1
