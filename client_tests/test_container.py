"""The Docker image through testcontainers (plain, SASL_SSL with SCRAM and ACLs, mutual
TLS), and the compose example.

Needs a Docker engine and the images kafka-emulator:latest and
kafka-emulator-client:latest, which scripts/setup.d/50-docker.sh provides (it starts
dockerd and builds them). Without them these tests fail and say so.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import uuid
from pathlib import Path

import docker
import pytest
from confluent_kafka import KafkaException, Producer
from confluent_kafka.admin import AdminClient, NewTopic
from kafka import KafkaConsumer, TopicPartition
from testcontainers.core.config import testcontainers_config

from client_tests.reading import kafka_python_values
from emulator.containers import KafkaEmulatorContainer
from emulator.testing import wait_for

# Not run with --target kafka: the emulator's container image.
pytestmark = pytest.mark.emulator_only

IMAGE = os.environ.get("KAFKA_EMULATOR_IMAGE", "kafka-emulator:latest")
CLIENT_IMAGE = os.environ.get("KAFKA_EMULATOR_CLIENT_IMAGE", "kafka-emulator-client:latest")
REPO = Path(__file__).resolve().parents[1]
SETUP = "scripts/setup.d/50-docker.sh"
# Topics are auto-created with 3 partitions on every broker.
TOPIC_DEFAULTS = {"num.partitions": "3", "default.replication.factor": "3"}
# Ryuk, testcontainers' reaper, is an image pulled from a registry, and none is
# reachable here; every container below is removed by its context manager instead.
testcontainers_config.ryuk_disabled = True


@pytest.fixture(scope="module")
def docker_images() -> None:
    """Fail (not skip) with the reason when the engine or the images are missing."""
    try:
        client = docker.from_env()
        client.ping()
    except Exception as e:  # noqa: BLE001 - any failure means the same thing here
        pytest.fail(f"no Docker engine answers ({e}); run {SETUP} (it starts dockerd)")
    for image in (IMAGE, CLIENT_IMAGE):
        try:
            client.images.get(image)
        except docker.errors.ImageNotFound:
            pytest.fail(f"image {image} is missing; run {SETUP} to build it")


def produce(bootstrap: str, topic: str, values: list[bytes]) -> None:
    p = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 2})
    for i, v in enumerate(values):
        p.produce(topic, value=v, partition=i % 3)
    assert p.flush(30) == 0


def advertised_brokers(bootstrap: str) -> list[str]:
    """The brokers as metadata names them: the addresses clients will connect to."""
    md = AdminClient({"bootstrap.servers": bootstrap}).list_topics(timeout=20)
    return sorted(f"{b.host}:{b.port}" for b in md.brokers.values())


def test_testcontainers_real_clients(docker_images: None) -> None:
    """Three brokers behind mapped ports: metadata names the ports the host sees."""
    container = KafkaEmulatorContainer(IMAGE, brokers=3, control_plane=False)
    with container.with_config(**TOPIC_DEFAULTS) as kafka:
        bootstrap = kafka.get_bootstrap_server()
        assert advertised_brokers(bootstrap) == sorted(bootstrap.split(","))

        values = [f"order-{i}".encode() for i in range(200)]
        produce(bootstrap, "orders", values)
        assert sorted(kafka_python_values(bootstrap, "orders", 3, len(values))) == sorted(values)

        # The image's own promises: a non-root user and a healthcheck that turns healthy.
        api = docker.from_env().api
        info = api.inspect_container(kafka.get_container_id())
        assert info["Config"]["User"] == "10001"
        wait_for(lambda: api.inspect_container(kafka.get_container_id())["State"]["Health"][
            "Status"] == "healthy", "the container's healthcheck to turn healthy", interval=0.5)


def test_testcontainers_control_plane(docker_images: None) -> None:
    """The HTTP control plane through its mapped port: stop a broker, clients go on."""
    with KafkaEmulatorContainer(IMAGE, brokers=3, config=TOPIC_DEFAULTS) as kafka:
        bootstrap = kafka.get_bootstrap_server()
        assert kafka.cluster_info() is not None
        first = [f"a-{i}".encode() for i in range(50)]
        produce(bootstrap, "events", first)

        kafka.stop_broker(1)
        assert advertised_brokers(bootstrap) == sorted(bootstrap.split(",")[1:])
        kafka.fault({"op": "inject_error", "api": "Produce", "error": "NOT_LEADER_OR_FOLLOWER",
                     "count": 2})
        second = [f"b-{i}".encode() for i in range(50)]
        produce(bootstrap, "events", second)  # retried past the injected errors
        kafka.clear_faults()
        kafka.start_broker(1)
        assert advertised_brokers(bootstrap) == sorted(bootstrap.split(","))
        assert sorted(kafka_python_values(bootstrap, "events", 3, 100)) == sorted(first + second)
        assert "kafka_" in kafka.metrics()


def test_testcontainers_fidelity_and_seed(docker_images: None) -> None:
    """fidelity= and seed= reach the emulator in the container (KAFKA_EMULATOR_FIDELITY,
    KAFKA_EMULATOR_SEED): GET /cluster names them and DescribeConfigs over the mapped
    port shows Kafka's timing defaults, which fast mode does not have."""
    from confluent_kafka.admin import ConfigResource

    res = ConfigResource(ConfigResource.Type.BROKER, "1")
    with KafkaEmulatorContainer(IMAGE, brokers=1, fidelity="adversarial", seed=7) as kafka:
        assert kafka.cluster_info()["fidelity"] == {"mode": "adversarial", "seed": 7}
        admin = AdminClient({"bootstrap.servers": kafka.get_bootstrap_server()})
        entries = admin.describe_configs([res])[res].result(30)
        assert entries["group.initial.rebalance.delay.ms"].value == "3000"
        assert entries["broker.session.timeout.ms"].value == "9000"
    with KafkaEmulatorContainer(IMAGE, brokers=1, fidelity="fast") as kafka:
        assert kafka.cluster_info()["fidelity"] == {"mode": "fast", "seed": 0}
        admin = AdminClient({"bootstrap.servers": kafka.get_bootstrap_server()})
        entries = admin.describe_configs([res])[res].result(30)
        assert entries["group.initial.rebalance.delay.ms"].value == "0"


def compose_command() -> list[str]:
    if subprocess.run(["docker", "compose", "version"], capture_output=True).returncode == 0:
        return ["docker", "compose"]
    if shutil.which("docker-compose"):
        return ["docker-compose"]
    pytest.fail(f"neither `docker compose` nor docker-compose is installed; run {SETUP}")


def test_compose_example(docker_images: None) -> None:
    """docker/compose.yaml: the client container produces and consumes through kafka."""
    cmd = [*compose_command(), "-p", f"kemu{uuid.uuid4().hex[:8]}",
           "-f", str(REPO / "docker" / "compose.yaml")]
    env = {**os.environ, "KAFKA_EMULATOR_IMAGE": IMAGE,
           "KAFKA_EMULATOR_CLIENT_IMAGE": CLIENT_IMAGE}
    try:
        up = subprocess.run([*cmd, "up", "--no-build", "--exit-code-from", "client"],
                            env=env, capture_output=True, text=True, timeout=300)
        assert up.returncode == 0, f"compose up failed:\n{up.stdout}\n{up.stderr}"
        assert "client: ok" in up.stdout, up.stdout
        assert "consumed 300" in up.stdout, up.stdout
    finally:
        subprocess.run([*cmd, "down", "-v", "--remove-orphans"], env=env,
                       capture_output=True, timeout=120)


def test_testcontainers_sasl_ssl_scram(docker_images: None) -> None:
    """with_sasl(): a SASL_SSL listener with SCRAM users and the authorizer inside the
    container; the certificate is made for the advertised host (librdkafka and Python's
    ssl check the name) and the CA is copied out for the clients."""
    users = {"admin": "admin-pw", "alice": "alice-pw"}
    container = KafkaEmulatorContainer(IMAGE, brokers=3, control_plane=False).with_sasl(
        users, super_users=["admin"], authorizer=True)
    with container as kafka:
        admin_cfg = kafka.client_config("confluent", user="admin", mechanism="SCRAM-SHA-256")
        assert admin_cfg["security.protocol"] == "SASL_SSL"
        assert Path(admin_cfg["ssl.ca.location"]).read_bytes().startswith(b"-----BEGIN")
        topic = f"secure-{uuid.uuid4().hex[:6]}"
        admin = AdminClient(admin_cfg)
        for f in admin.create_topics([NewTopic(topic, 3, 3)]).values():
            f.result(30)
        p = Producer({**admin_cfg, "acks": "all"})
        values = [f"s-{i}".encode() for i in range(60)]
        for i, v in enumerate(values):
            p.produce(topic, value=v, partition=i % 3)
        assert p.flush(30) == 0
        kw = kafka.client_config("kafka-python", user="admin", mechanism="SCRAM-SHA-512")
        c = KafkaConsumer(**kw, auto_offset_reset="earliest", consumer_timeout_ms=500)
        c.assign([TopicPartition(topic, i) for i in range(3)])
        got: list[bytes] = []

        def every_value() -> bool:
            got.extend(m.value for m in c)
            return len(got) >= len(values)

        wait_for(every_value, f"{len(values)} records", timeout=30, interval=0)
        c.close()
        assert sorted(got) == sorted(values)

        # alice logs in but holds no ACL; a wrong password does not log in at all.
        errors: list[str] = []
        alice = Producer({**kafka.client_config("confluent", user="alice",
                                                mechanism="SCRAM-SHA-512"),
                          "message.timeout.ms": 10000, "retries": 0})
        alice.produce(topic, b"x", on_delivery=lambda err, _m: errors.append(err.name()))
        alice.flush(20)
        assert errors == ["TOPIC_AUTHORIZATION_FAILED"], errors
        refused: list[str] = []
        bad = AdminClient({**admin_cfg, "sasl.password": "wrong",
                           "error_cb": lambda e: refused.append(e.str())})
        with pytest.raises(KafkaException):
            bad.list_topics(timeout=5)
        bad.poll(1)  # serves error_cb
        assert any("Authentication failed during authentication due to invalid credentials "
                   "with SASL mechanism SCRAM-SHA-256" in e for e in refused), refused
        p.flush(5), alice.flush(5)
        del p, alice, admin, bad  # librdkafka handles: closed before the container stops


def test_testcontainers_mutual_tls(docker_images: None) -> None:
    """with_tls(client_auth="required"): an SSL listener that asks for the client
    certificate generated in the container; without it the handshake is refused."""
    container = KafkaEmulatorContainer(IMAGE, brokers=1, control_plane=False)
    with container.with_tls(client_auth="required") as kafka:
        cfg = kafka.client_config("confluent")
        assert cfg["security.protocol"] == "SSL" and "ssl.certificate.location" in cfg
        md = AdminClient(cfg).list_topics(timeout=20)
        assert [f"{b.host}:{b.port}" for b in md.brokers.values()] == [
            kafka.get_bootstrap_server()]
        p = Producer(cfg)
        p.produce("mtls", b"hello")
        assert p.flush(20) == 0
        no_cert = {k: v for k, v in cfg.items() if not k.startswith("ssl.certificate")
                   and not k.startswith("ssl.key")}
        with pytest.raises(KafkaException):
            AdminClient(no_cert).list_topics(timeout=5)


def test_testcontainers_schema_registry(docker_images: None) -> None:
    """The image serves the schema registry on 8081: confluent-kafka's Avro serializer
    registers through the mapped port and records round-trip through the brokers."""
    import json

    from confluent_kafka import Consumer
    from confluent_kafka.schema_registry import SchemaRegistryClient
    from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    schema = json.dumps({"type": "record", "name": "Ping", "fields": [
        {"name": "n", "type": "int"}]})
    with KafkaEmulatorContainer(IMAGE, brokers=1, control_plane=False) as kafka:
        bootstrap = kafka.get_bootstrap_server()
        client = SchemaRegistryClient({"url": kafka.get_schema_registry_url()})
        ser, de = AvroSerializer(client, schema), AvroDeserializer(client)
        ctx = SerializationContext("pings", MessageField.VALUE)
        p = Producer({"bootstrap.servers": bootstrap})
        p.produce("pings", value=ser({"n": 7}, ctx))
        assert p.flush(30) == 0
        assert client.get_subjects() == ["pings-value"]
        c = Consumer({"bootstrap.servers": bootstrap, "group.id": "pings",
                      "auto.offset.reset": "earliest"})
        c.subscribe(["pings"])

        def record() -> list | None:
            m = c.poll(0.5)
            return [de(m.value(), ctx)] if m is not None and not m.error() else None

        [got] = wait_for(record, "the record on pings", timeout=30, interval=0)
        c.close()
        assert got == {"n": 7}
