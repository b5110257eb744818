"""emulator.official_image: the official images' variables as the emulator takes them,
without Docker (the container tests are client_tests/test_official_image.py)."""

from __future__ import annotations

import pytest

from emulator.official_image import (
    APACHE,
    CONFLUENT,
    Refused,
    env_name,
    env_properties,
    merged_properties,
    parse_properties,
    property_name,
    ready_lines,
    translate,
)

# What Testcontainers for Java's KafkaContainer sets (before its starter script
# exports the advertised listeners).
TESTCONTAINERS_JAVA = {
    "CLUSTER_ID": "4L6g3nShT-eMCtK--X86sw",
    "KAFKA_LISTENERS": "PLAINTEXT://0.0.0.0:9092,BROKER://0.0.0.0:9093,CONTROLLER://0.0.0.0:9094",
    "KAFKA_LISTENER_SECURITY_PROTOCOL_MAP": "BROKER:PLAINTEXT,PLAINTEXT:PLAINTEXT,"
                                            "CONTROLLER:PLAINTEXT",
    "KAFKA_INTER_BROKER_LISTENER_NAME": "BROKER",
    "KAFKA_PROCESS_ROLES": "broker,controller",
    "KAFKA_CONTROLLER_LISTENER_NAMES": "CONTROLLER",
    "KAFKA_NODE_ID": "1",
    "KAFKA_CONTROLLER_QUORUM_VOTERS": "1@localhost:9094",
    "KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR": "1",
    "KAFKA_OFFSETS_TOPIC_NUM_PARTITIONS": "1",
    "KAFKA_TRANSACTION_STATE_LOG_MIN_ISR": "1",
    "KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR": "1",
    "KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS": "0",
    "KAFKA_LOG_FLUSH_INTERVAL_MESSAGES": "9223372036854775807",
    "KAFKA_ADVERTISED_LISTENERS": "PLAINTEXT://localhost:32771,BROKER://c0ffee:9093",
}


@pytest.mark.parametrize(("var", "key"), [
    ("KAFKA_ADVERTISED_LISTENERS", "advertised.listeners"),
    ("KAFKA_ABC___DEF", "abc-def"),
    ("KAFKA_ABC__DEF", "abc_def"),
    ("KAFKA_LISTENER_NAME_SASL__PLAINTEXT_PLAIN_SASL_JAAS_CONFIG",
     "listener.name.sasl_plaintext.plain.sasl.jaas.config"),
])
def test_names_follow_kafkas_rule_both_ways(var: str, key: str) -> None:
    assert property_name(var) == key
    assert env_name(key) == var


def test_reserved_and_emulator_variables_are_not_properties() -> None:
    props = env_properties({"KAFKA_OPTS": "-Dx", "KAFKA_HEAP_OPTS": "-Xmx1G",
                            "KAFKA_EMULATOR_BROKERS": "3", "KAFKA_NUM_PARTITIONS": "4",
                            "CLUSTER_ID": "x", "PATH": "/bin"})
    assert props == {"num.partitions": "4"}


def test_testcontainers_java_listeners_are_served_and_advertised() -> None:
    plan = translate(TESTCONTAINERS_JAVA, APACHE, hostname="c0ffee")
    assert plan.brokers == 1 and plan.node_id == 1
    assert plan.cluster_id == "4L6g3nShT-eMCtK--X86sw"
    assert [ls.name for ls in plan.listeners] == ["PLAINTEXT", "BROKER", "CONTROLLER"]
    assert plan.advertised == {"PLAINTEXT": ("localhost", 32771), "BROKER": ("c0ffee", 9093),
                               "CONTROLLER": ("localhost", 9094)}  # from the quorum voters
    assert plan.listeners_spec == ("PLAINTEXT://0.0.0.0:9092,BROKER://0.0.0.0:9093,"
                                   "CONTROLLER://0.0.0.0:9094")
    assert plan.config["offsets.topic.replication.factor"] == "1"
    assert plan.config["group.initial.rebalance.delay.ms"] == "0"
    assert "listeners" not in plan.config and not plan.warnings
    assert any("Transitioning from RECOVERY to RUNNING" in line for line in ready_lines(plan))


def test_mounted_file_is_overridden_by_variables() -> None:
    mounted = ("# a comment\nprocess.roles=broker,controller\nnode.id=3\n"
               "listeners=PLAINTEXT://:9092,CONTROLLER://:9093\n"
               "controller.listener.names=CONTROLLER\nnum.partitions=2\n")
    plan = translate({"KAFKA_NUM_PARTITIONS": "5"}, APACHE, mounted=mounted, hostname="h")
    assert plan.node_id == 3 and plan.config["num.partitions"] == "5"
    assert plan.advertised["PLAINTEXT"] == ("h", 9092)  # every interface: the host name


def test_nothing_given_gives_apache_defaults() -> None:
    plan = translate({}, APACHE)
    assert plan.advertised["PLAINTEXT_HOST"] == ("localhost", 9092)
    assert plan.cluster_id == "5L6g3nShT-eMCtK--X86sw"


def test_listeners_default_to_the_advertised_ones_on_every_interface() -> None:
    props, _ = merged_properties({"KAFKA_ADVERTISED_LISTENERS": "PLAINTEXT://kafka:9092",
                                  "KAFKA_ZOOKEEPER_CONNECT": "zk:2181"}, CONFLUENT)
    assert props["listeners"] == "PLAINTEXT://0.0.0.0:9092"


def test_python_zookeeper_mode_is_one_broker_that_says_started() -> None:
    env = {"KAFKA_LISTENERS": "PLAINTEXT://0.0.0.0:9093,BROKER://0.0.0.0:9092",
           "KAFKA_LISTENER_SECURITY_PROTOCOL_MAP": "BROKER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
           "KAFKA_INTER_BROKER_LISTENER_NAME": "BROKER", "KAFKA_BROKER_ID": "1",
           "KAFKA_ZOOKEEPER_CONNECT": "localhost:2181",
           "KAFKA_ADVERTISED_LISTENERS": "PLAINTEXT://localhost:1234,BROKER://172.17.0.2:9092"}
    plan = translate(env, CONFLUENT)
    assert plan.zookeeper and plan.node_id == 1
    assert any("[KafkaServer id=1] started" in line for line in ready_lines(plan))
    assert any("ZooKeeper" in note for note in plan.notes)


def test_cp_kafka_requires_advertised_listeners() -> None:
    with pytest.raises(Refused, match="KAFKA_ADVERTISED_LISTENERS is required"):
        translate({"KAFKA_LISTENERS": "PLAINTEXT://:9092"}, CONFLUENT)


def test_sasl_users_come_from_the_jaas_file_kafka_opts_names() -> None:
    jaas = (b'KafkaServer {\n org.apache.kafka.common.security.plain.PlainLoginModule required\n'
            b' username="admin" password="admin-secret"\n user_admin="admin-secret"\n'
            b' user_alice="alice-secret";\n};\n')
    env = {"KAFKA_LISTENERS": "SASL_PLAINTEXT://:19094,CONTROLLER://:9093",
           "KAFKA_LISTENER_SECURITY_PROTOCOL_MAP": "CONTROLLER:PLAINTEXT,"
                                                   "SASL_PLAINTEXT:SASL_PLAINTEXT",
           "KAFKA_CONTROLLER_LISTENER_NAMES": "CONTROLLER",
           "KAFKA_ADVERTISED_LISTENERS": "SASL_PLAINTEXT://kafka-1:19094",
           "KAFKA_SASL_ENABLED_MECHANISMS": "PLAIN",
           "KAFKA_OPTS": "-Djava.security.auth.login.config=/etc/kafka/secrets/jaas.conf"}
    plan = translate(env, APACHE, read_file={"/etc/kafka/secrets/jaas.conf": jaas}.get)
    assert plan.sasl_users == {"admin": "admin-secret", "alice": "alice-secret"}
    assert plan.protocol_map.startswith("SASL_PLAINTEXT:SASL_PLAINTEXT")


@pytest.mark.parametrize(("extra", "variable"), [
    ({"KAFKA_LISTENERS": "SASL_PLAINTEXT://:9092", "KAFKA_SASL_ENABLED_MECHANISMS": "GSSAPI"},
     "KAFKA_SASL_ENABLED_MECHANISMS"),
    ({"KAFKA_AUTHORIZER_CLASS_NAME": "com.example.MyAuthorizer"}, "KAFKA_AUTHORIZER_CLASS_NAME"),
    ({"KAFKA_PROCESS_ROLES": "broker,observer"}, "KAFKA_PROCESS_ROLES"),
    ({"KAFKA_LISTENER_SECURITY_PROTOCOL_MAP": "PLAINTEXT:SOMETHING"},
     "KAFKA_LISTENER_SECURITY_PROTOCOL_MAP"),
    ({"KAFKA_LISTENERS": "SASL_PLAINTEXT://:9092",
      "KAFKA_OPTS": "-Djava.security.auth.login.config=/nope"}, "KAFKA_OPTS"),
    # a value Kafka's ConfigDef refuses at start, with its message
    ({"KAFKA_LOG_RETENTION_MS": "abc"}, "KAFKA_LOG_RETENTION_MS: Invalid value abc for "
     "configuration log.retention.ms: Not a number of type LONG"),
    ({"KAFKA_NUM_PARTITIONS": "0"}, "KAFKA_NUM_PARTITIONS: Invalid value 0 for "
     "configuration num.partitions: Value must be at least 1"),
])
def test_what_cannot_be_honoured_is_refused_naming_the_variable(extra: dict, variable: str
                                                                ) -> None:
    env = {"KAFKA_LISTENERS": "PLAINTEXT://:9092", "KAFKA_NODE_ID": "1", **extra}
    with pytest.raises(Refused, match=variable):
        translate(env, APACHE)


def test_a_damaged_keystore_is_refused_naming_the_variable() -> None:
    env = {"KAFKA_LISTENERS": "SSL://:9093", "KAFKA_SSL_KEYSTORE_FILENAME": "k.jks",
           "KAFKA_SSL_KEYSTORE_CREDENTIALS": "creds"}
    files = {"/etc/kafka/secrets/k.jks": b"\xfe\xed\xfe\xed\x00\x00\x00\x02",
             "/etc/kafka/secrets/creds": b"pw"}
    with pytest.raises(Refused, match="KAFKA_SSL_KEYSTORE_FILENAME: cannot open the JKS"):
        translate(env, APACHE, read_file=files.get)


def test_unknown_properties_are_logged_not_dropped_silently() -> None:
    plan = translate({**TESTCONTAINERS_JAVA, "KAFKA_REST_BOOTSTRAP_SERVERS": "x"}, APACHE)
    assert plan.warnings == [
        "KAFKA_REST_BOOTSTRAP_SERVERS: rest.bootstrap.servers is not a Kafka broker config; "
        "not used (as Kafka logs unknown configs)"]


def test_per_listener_properties_are_honoured_logged_or_refused() -> None:
    plan = translate({**TESTCONTAINERS_JAVA,
                      "KAFKA_LISTENER_NAME_BROKER_MAX_CONNECTIONS": "7",
                      "KAFKA_LISTENER_NAME_BROKER_SOCKET_RECEIVE_BUFFER_BYTES": "1024"}, APACHE)
    assert plan.config["listener.name.broker.max.connections"] == "7"
    assert plan.warnings == [
        "KAFKA_LISTENER_NAME_BROKER_SOCKET_RECEIVE_BUFFER_BYTES: "
        "listener.name.broker.socket.receive.buffer.bytes is not used by the emulator "
        "(a per-listener setting)"]
    with pytest.raises(Refused, match="KAFKA_LISTENER_NAME_BROKER_SSL_KEYSTORE_LOCATION: a TLS "
                                      "setting for one listener is not served"):
        translate({**TESTCONTAINERS_JAVA,
                   "KAFKA_LISTENER_NAME_BROKER_SSL_KEYSTORE_LOCATION": "/k.jks"}, APACHE)


def test_properties_file_syntax() -> None:
    assert parse_properties("a=1\nb : 2\n# c=3\nd=x\\\n  y\n") == {"a": "1", "b": "2", "d": "xy"}


def _free_ports(n: int) -> list[int]:
    import socket

    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def _free_block(n: int) -> int:
    """The first of ``n`` consecutive ports free now."""
    import socket

    for _ in range(100):
        base = _free_ports(1)[0]
        socks = []
        try:
            for port in range(base, base + n):
                s = socket.socket()
                socks.append(s)
                s.bind(("127.0.0.1", port))
            return base
        except OSError:
            continue
        finally:
            for s in socks:
                s.close()
    raise RuntimeError(f"no {n} consecutive free ports")


def test_each_listener_answers_metadata_with_its_advertised_address() -> None:
    """Kafka answers Metadata with the advertised address of the listener asked: the
    host listener names localhost, the inter-broker one the container's name (here
    127.0.0.1, so that the test can reach it), the controller one its quorum voter."""
    from confluent_kafka.admin import AdminClient

    from emulator.official_image_run import cluster_for

    host, broker, controller = _free_ports(3)
    env = {**TESTCONTAINERS_JAVA,
           "KAFKA_LISTENERS": f"PLAINTEXT://127.0.0.1:{host},BROKER://127.0.0.1:{broker},"
                              f"CONTROLLER://127.0.0.1:{controller}",
           "KAFKA_ADVERTISED_LISTENERS": f"PLAINTEXT://localhost:{host},"
                                         f"BROKER://127.0.0.1:{broker}",
           "KAFKA_CONTROLLER_QUORUM_VOTERS": f"1@localhost:{controller}"}
    with cluster_for(translate(env, APACHE)) as cluster:
        assert cluster.state.cluster_id == "4L6g3nShT-eMCtK--X86sw"
        for port, expected in ((host, f"localhost:{host}"), (broker, f"127.0.0.1:{broker}"),
                               (controller, f"localhost:{controller}")):
            md = AdminClient({"bootstrap.servers": f"127.0.0.1:{port}"}).list_topics(timeout=10)
            assert [f"{b.host}:{b.port}" for b in md.brokers.values()] == [expected]
            assert md.cluster_id == "4L6g3nShT-eMCtK--X86sw"


def _pki(tmp: object) -> dict[str, bytes]:
    """A CA, a broker certificate for localhost in a PKCS12 keystore, the CA in a
    PKCS12 truststore, and a client certificate (PEM): what Kafka's SSL examples mount
    in /etc/kafka/secrets, in the formats the emulator reads."""
    import datetime

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives.serialization import pkcs12
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.UTC)

    def cert(name: str, key: ec.EllipticCurvePrivateKey, issuer: x509.Name,
             signer: ec.EllipticCurvePrivateKey, ca: bool = False) -> x509.Certificate:
        b = (x509.CertificateBuilder()
             .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)]))
             .issuer_name(issuer).public_key(key.public_key())
             .serial_number(x509.random_serial_number())
             .not_valid_before(now - datetime.timedelta(minutes=5))
             .not_valid_after(now + datetime.timedelta(days=1))
             .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
        if not ca:
            b = b.add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost")]),
                                critical=False)
        return b.sign(signer, hashes.SHA256())

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "test CA")])
    ca = cert("test CA", ca_key, ca_name, ca_key, ca=True)
    broker_key, client_key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(
        ec.SECP256R1())
    broker = cert("localhost", broker_key, ca_name, ca_key)
    client = cert("client", client_key, ca_name, ca_key)
    enc = serialization.BestAvailableEncryption(b"store-pw")
    pem = serialization.Encoding.PEM
    return {
        "/etc/kafka/secrets/kafka.keystore.p12": pkcs12.serialize_key_and_certificates(
            b"broker", broker_key, broker, [ca], enc),
        "/etc/kafka/secrets/kafka.truststore.p12": pkcs12.serialize_key_and_certificates(
            None, None, None, [ca], enc),
        "/etc/kafka/secrets/keystore_creds": b"store-pw\n",
        "/etc/kafka/secrets/key_creds": b"store-pw\n",
        "/etc/kafka/secrets/truststore_creds": b"store-pw\n",
        "ca.pem": ca.public_bytes(pem),
        "client.pem": client.public_bytes(pem),
        "client-key.pem": client_key.private_bytes(pem, serialization.PrivateFormat.PKCS8,
                                                   serialization.NoEncryption()),
    }


def test_ssl_with_mounted_pkcs12_stores_and_client_auth(tmp_path: object) -> None:
    """Kafka's single-node SSL example's variables (keystore, truststore and their
    credential files in /etc/kafka/secrets, ssl.client.auth=required), with PKCS12
    stores: the broker serves the mounted certificate and asks clients for one that
    chains to the truststore."""
    from pathlib import Path

    from confluent_kafka import KafkaException
    from confluent_kafka.admin import AdminClient

    from emulator.official_image_run import cluster_for

    files = _pki(tmp_path)
    d = Path(str(tmp_path))
    for name in ("ca.pem", "client.pem", "client-key.pem"):
        (d / name).write_bytes(files[name])
    ssl_port, internal, controller = _free_ports(3)
    env = {"KAFKA_NODE_ID": "1",
           "KAFKA_LISTENER_SECURITY_PROTOCOL_MAP": "SSL:SSL,CONTROLLER:PLAINTEXT,"
                                                   "SSL-INTERNAL:SSL",
           "KAFKA_ADVERTISED_LISTENERS": f"SSL://localhost:{ssl_port},"
                                         f"SSL-INTERNAL://localhost:{internal}",
           "KAFKA_PROCESS_ROLES": "broker,controller",
           "KAFKA_CONTROLLER_QUORUM_VOTERS": f"1@localhost:{controller}",
           "KAFKA_LISTENERS": f"SSL://127.0.0.1:{ssl_port},CONTROLLER://127.0.0.1:{controller},"
                              f"SSL-INTERNAL://127.0.0.1:{internal}",
           "KAFKA_INTER_BROKER_LISTENER_NAME": "SSL-INTERNAL",
           "KAFKA_CONTROLLER_LISTENER_NAMES": "CONTROLLER",
           "KAFKA_SSL_KEYSTORE_FILENAME": "kafka.keystore.p12",
           "KAFKA_SSL_KEYSTORE_CREDENTIALS": "keystore_creds",
           "KAFKA_SSL_KEY_CREDENTIALS": "key_creds",
           "KAFKA_SSL_TRUSTSTORE_FILENAME": "kafka.truststore.p12",
           "KAFKA_SSL_TRUSTSTORE_CREDENTIALS": "truststore_creds",
           "KAFKA_SSL_CLIENT_AUTH": "required",
           "KAFKA_SSL_ENDPOINT_IDENTIFICATION_ALGORITHM": ""}
    plan = translate(env, APACHE, read_file=files.get)
    assert plan.tls_client_auth == "required" and not plan.warnings
    client = {"bootstrap.servers": f"localhost:{ssl_port}", "security.protocol": "SSL",
              "ssl.ca.location": str(d / "ca.pem")}
    with cluster_for(plan, str(d / "tls")):
        md = AdminClient({**client, "ssl.certificate.location": str(d / "client.pem"),
                          "ssl.key.location": str(d / "client-key.pem")}).list_topics(
            timeout=15)
        assert [f"{b.host}:{b.port}" for b in md.brokers.values()] == [f"localhost:{ssl_port}"]
        with pytest.raises(KafkaException):  # no client certificate: refused
            AdminClient(client).list_topics(timeout=3)


def test_more_brokers_per_node_only_when_asked() -> None:
    """One node is one broker; KAFKA_EMULATOR_BROKERS_PER_NODE asks for more, with ids
    from the node's."""
    from emulator.official_image_run import cluster_for

    assert translate(TESTCONTAINERS_JAVA, APACHE).brokers == 1
    host = _free_block(3)
    env = {**TESTCONTAINERS_JAVA, "KAFKA_EMULATOR_BROKERS_PER_NODE": "3", "KAFKA_NODE_ID": "4",
           "KAFKA_LISTENERS": f"PLAINTEXT://127.0.0.1:{host}",
           "KAFKA_ADVERTISED_LISTENERS": f"PLAINTEXT://localhost:{host}"}
    plan = translate(env, APACHE)
    assert plan.brokers == 3 and sum("RUNNING" in line for line in ready_lines(plan)) == 3
    with cluster_for(plan) as cluster:
        assert cluster.broker_ids == [4, 5, 6]
        assert cluster.bootstrap_servers == ",".join(
            f"localhost:{host + n}" for n in range(3))


def test_jvm_and_log4j_variables_are_logged_as_not_used() -> None:
    plan = translate({**TESTCONTAINERS_JAVA, "KAFKA_HEAP_OPTS": "-Xmx1G",
                      "KAFKA_LOG4J_ROOT_LOGLEVEL": "WARN"}, APACHE)
    assert any(n.startswith("KAFKA_HEAP_OPTS: a JVM setting") for n in plan.notes), plan.notes
    assert any(n.startswith("KAFKA_LOG4J_ROOT_LOGLEVEL: log4j's root level") for n in
               plan.notes)
    assert "heap.opts" not in " ".join(plan.config)


def test_a_controller_only_node_serves_its_controller_listener() -> None:
    """Kafka's isolated-mode controllers: process.roles=controller, no advertised
    listeners; the node serves CONTROLLER as a broker, advertised from the voters."""
    plan = translate({"KAFKA_NODE_ID": "2", "KAFKA_PROCESS_ROLES": "controller",
                      "KAFKA_LISTENERS": "CONTROLLER://:9093",
                      "KAFKA_CONTROLLER_LISTENER_NAMES": "CONTROLLER",
                      "KAFKA_CONTROLLER_QUORUM_VOTERS": "1@controller-1:9093,"
                                                        "2@controller-2:9093"}, APACHE)
    assert plan.roles == ("controller",) and plan.node_id == 2
    assert plan.advertised == {"CONTROLLER": ("controller-2", 9093)}
    assert plan.protocol_map == "CONTROLLER:PLAINTEXT"


def test_fidelity_and_seed_come_from_the_emulators_variables(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The official images' path honours KAFKA_EMULATOR_FIDELITY and KAFKA_EMULATOR_SEED
    as kafka-emulator's own does (docs/fidelity.md), Kafka's timing defaults included."""
    from emulator.official_image_run import cluster_for

    monkeypatch.setenv("KAFKA_EMULATOR_FIDELITY", "adversarial")
    monkeypatch.setenv("KAFKA_EMULATOR_SEED", "4")
    cluster = cluster_for(translate({}, APACHE))
    assert (cluster.state.fidelity.mode, cluster.state.fidelity.seed) == ("adversarial", 4)
    assert cluster.state.config_int("broker.session.timeout.ms") == 9000
    monkeypatch.setenv("KAFKA_EMULATOR_FIDELITY", "fast")
    assert cluster_for(translate({}, APACHE)).state.fidelity.mode == "fast"
    monkeypatch.setenv("KAFKA_EMULATOR_FIDELITY", "slow")
    with pytest.raises(Refused, match="KAFKA_EMULATOR_FIDELITY='slow'"):
        cluster_for(translate({}, APACHE))
