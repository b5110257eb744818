"""The image as the official Kafka images' users start it, with only the image name
changed: Testcontainers' own Kafka modules (Java's KafkaContainer and
ConfluentKafkaContainer, a Spring Boot test with @ServiceConnection, Go's modules/kafka, Python's KafkaContainer in both its modes,
Node's @testcontainers/kafka), Compose files written for apache/kafka, and a setting
the emulator cannot honour refused in one log line (docs/official-images.md).

Needs a Docker engine and kafka-emulator:latest (scripts/setup.d/50-docker.sh) and the
modules (scripts/setup.d/52-testcontainers.sh: Java jars from Maven Central, the Go
module from the Go module proxy, the Node module from npm). Without them these tests
fail and say which script to run.

No registry is reachable here, so the modules' helper images are avoided: Ryuk (the
reaper) is turned off with TESTCONTAINERS_RYUK_DISABLED=true (each test stops its
container itself), and the Docker host is named with TESTCONTAINERS_HOST_OVERRIDE=
localhost (Java would otherwise run an alpine container to find the gateway from inside
a container; Python's TESTCONTAINERS_CONNECTION_MODE=docker_host does the same).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import docker
import pytest
from confluent_kafka import Consumer, Producer

from client_tests.docker_image import require_image
from emulator.testing import wait_for

# Not run with --target kafka: the emulator's container image. The Compose files fix
# container names and host ports as Kafka's do: one run of this module at a time.
pytestmark = [pytest.mark.emulator_only, pytest.mark.xdist_group("docker-official")]

IMAGE = os.environ.get("KAFKA_EMULATOR_IMAGE", "kafka-emulator:latest")
HERE = Path(__file__).resolve().parent
JAVA_DIR = HERE / "testcontainers_java"
GO_BIN = HERE / "testcontainers_go" / ".bin" / "tckafka"
NODE_DIR = HERE / "testcontainers_node"
COMPOSE_DIR = HERE / "compose" / "apache-kafka"
COMPOSE_LOCK = "/tmp/kafka-emulator-compose-examples.lock"
SETUP = "scripts/setup.d/52-testcontainers.sh"
TC_ENV = {"TESTCONTAINERS_RYUK_DISABLED": "true", "TESTCONTAINERS_HOST_OVERRIDE": "localhost",
          "TESTCONTAINERS_CONNECTION_MODE": "docker_host"}
RECORDS = 100


@pytest.fixture(scope="module")
def image() -> str:
    """Fail (not skip) with the reason when the engine or the image is missing."""
    return require_image(IMAGE)


def tagged(image: str, tag: str) -> str:
    """The image under a version tag: the Python and Node modules read the tag as a
    Confluent Platform version (KRaft from 7.0.0 / 8.0.0), so their users tag it."""
    name = f"kafka-emulator-tc:{tag}"
    docker.from_env().images.get(image).tag("kafka-emulator-tc", tag)
    return name


def run_module(cmd: list[str], cwd: Path | None = None) -> str:
    """Run a module's driver; its output, after checking it moved every record."""
    proc = subprocess.run(cmd, cwd=cwd, env={**os.environ, **TC_ENV}, capture_output=True,
                          text=True, timeout=300)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"{' '.join(cmd)} failed:\n{out[-4000:]}"
    assert f"ok: produced {RECORDS} consumed {RECORDS}" in out, out[-4000:]
    print(re.search(r"started in \d+ ms", out).group(0))  # type: ignore[union-attr]
    return out


def java_cmd(kind: str, image: str) -> list[str]:
    if not (JAVA_DIR / ".classes" / "TestcontainersKafka.class").exists():
        pytest.fail(f"Testcontainers for Java is not resolved; run {SETUP}")
    return ["java", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-cp",
            f"{JAVA_DIR}/.classes:{JAVA_DIR}/.jars/*", "TestcontainersKafka", kind, image,
            str(RECORDS)]


def test_java_kafka_container(image: str) -> None:
    """org.testcontainers.kafka.KafkaContainer (apache/kafka conventions: its variables,
    a starter script that runs /etc/kafka/docker/run, and the wait for "Transitioning
    from RECOVERY to RUNNING") on our image as a compatible substitute."""
    run_module(java_cmd("apache", image))


def test_java_confluent_kafka_container(image: str) -> None:
    """org.testcontainers.kafka.ConfluentKafkaContainer (cp-kafka conventions:
    /etc/confluent/docker/run) on our image as a compatible substitute."""
    run_module(java_cmd("confluent", image))


def test_spring_boot_service_connection(image: str) -> None:
    """A Spring Boot test (client_tests/testcontainers_spring) whose Kafka is
    Testcontainers' KafkaContainer as a @ServiceConnection on our image: Spring Boot's
    auto-configured KafkaTemplate and consumer factory move the records."""
    spring = HERE / "testcontainers_spring"
    if not (spring / ".classes" / "ServiceConnectionTest.class").exists():
        pytest.fail(f"the Spring Boot test is not compiled; run {SETUP}")
    proc = subprocess.run(
        ["java", f"-Dimage={image}", "-Dlogging.level.root=WARN", "-cp",
         f"{spring}/.classes:{spring}/.jars/*", "org.junit.platform.console.ConsoleLauncher",
         "execute", "--disable-banner", "--details=summary",
         "--select-class", "ServiceConnectionTest"],
        env={**os.environ, **TC_ENV}, capture_output=True, text=True, timeout=300)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-4000:]
    assert "ok: produced 50 consumed 50" in out and "1 tests successful" in out, out[-4000:]


def test_go_kafka_module(image: str) -> None:
    """testcontainers-go's modules/kafka: its starter script edits cp-kafka's configure
    step, appends a kafka-storage format, empties ensure, then configures and launches."""
    if not GO_BIN.exists():
        pytest.fail(f"the testcontainers-go driver is not built; run {SETUP}")
    run_module([str(GO_BIN), image, str(RECORDS)])


def test_node_kafka_module(image: str) -> None:
    """@testcontainers/kafka (Node) in KRaft mode, which it picks for tags 8.0.0 and up."""
    if not (NODE_DIR / "node_modules" / "@testcontainers" / "kafka").exists():
        pytest.fail(f"@testcontainers/kafka is not installed; run {SETUP}")
    run_module(["node", "tckafka.js", tagged(image, "8.0.0"), str(RECORDS)], cwd=NODE_DIR)


def _python_module_round_trip(container: object) -> None:
    from testcontainers.community.kafka import KafkaContainer

    assert isinstance(container, KafkaContainer)
    t0 = time.monotonic()
    with container as kafka:
        print(f"started in {(time.monotonic() - t0) * 1000:.0f} ms")
        bootstrap = kafka.get_bootstrap_server()
        p = Producer({"bootstrap.servers": bootstrap, "acks": "all"})
        for i in range(RECORDS):
            p.produce("tc-python", key=f"k{i}".encode(), value=f"v{i}".encode())
        assert p.flush(30) == 0
        c = Consumer({"bootstrap.servers": bootstrap, "group.id": "tc-python",
                      "auto.offset.reset": "earliest"})
        c.subscribe(["tc-python"])
        got: list[bytes] = []
        deadline = time.monotonic() + 60
        while len(got) < RECORDS and time.monotonic() < deadline:
            m = c.poll(0.5)
            if m is not None and m.error() is None:
                got.append(m.value())
        c.close()
        del p  # librdkafka handles end before the container does: no FAIL lines
        assert got == [f"v{i}".encode() for i in range(RECORDS)]


@pytest.fixture()
def python_tc_env(monkeypatch: pytest.MonkeyPatch) -> None:
    from testcontainers.core.config import ConnectionMode, testcontainers_config

    monkeypatch.setattr(testcontainers_config, "ryuk_disabled", True)
    monkeypatch.setattr(testcontainers_config, "connection_mode_override",
                        ConnectionMode.docker_host)


def test_python_kafka_container_zookeeper_mode(image: str, python_tc_env: None) -> None:
    """testcontainers' Python KafkaContainer as it starts by default: ZooKeeper mode
    (zookeeper-server-start in the background, cp-kafka's configure and launch, a
    wait for "[KafkaServer id=1] started")."""
    from testcontainers.community.kafka import KafkaContainer

    _python_module_round_trip(KafkaContainer(image))


def test_python_kafka_container_kraft_mode(image: str, python_tc_env: None) -> None:
    """with_kraft(): the configure step edited with sed, a storage format appended, and
    a wait for "Kafka Server started"."""
    from testcontainers.community.kafka import KafkaContainer

    _python_module_round_trip(KafkaContainer(tagged(image, "7.6.0")).with_kraft())


# ---- Compose files written for apache/kafka -------------------------------------------
def compose(project_dir: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    if subprocess.run(["docker", "compose", "version"], capture_output=True).returncode == 0:
        base = ["docker", "compose"]
    elif shutil.which("docker-compose"):
        base = ["docker-compose"]
    else:
        pytest.fail("neither `docker compose` nor docker-compose is installed; run "
                    "scripts/setup.d/50-docker.sh")
    proc = subprocess.run([*base, "-f", str(project_dir / "docker-compose.yml"), *args],
                          env={**os.environ, "IMAGE": IMAGE}, capture_output=True, text=True,
                          timeout=300)
    if check:
        assert proc.returncode == 0, f"compose {args} failed:\n{proc.stdout}\n{proc.stderr}"
    return proc


def _in_use(port: int) -> bool:
    """Whether docker-proxy could not bind the port now: a listener has it, or a
    connection uses it as its source port (which a connect() does not see)."""
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as docker-proxy binds
        try:
            s.bind(("0.0.0.0", port))
        except OSError:
            return True
    return False


@contextlib.contextmanager
def compose_slot(*ports: int) -> Iterator[None]:
    """One Compose example at a time across the xdist workers (they publish fixed host
    ports and name fixed containers, as Kafka's examples do), once the host ports it
    publishes are free (docker-proxy lets a port go a moment after `down`); a port still
    taken after a minute fails the test, naming it."""
    with open(COMPOSE_LOCK, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            wait_for(lambda: not [p for p in ports if _in_use(p)],
                     f"host ports {ports}, which the Compose file publishes, to be free", 60,
                     interval=0.5)
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def wait_ready(container: str, timeout: float = 90) -> float:
    """Seconds from the container's start to the emulator's ready line."""
    api = docker.from_env().api
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        logs = api.logs(container, timestamps=True).decode()
        m = re.search(r"^(\S+) kafka-emulator ready", logs, re.M)
        if m:
            started = api.inspect_container(container)["State"]["StartedAt"]
            return _ts(m.group(1)) - _ts(started)
        if api.inspect_container(container)["State"]["Status"] == "exited":
            pytest.fail(f"{container} exited:\n{logs}")
        time.sleep(0.2)
    pytest.fail(f"{container} not ready in {timeout} s:\n{api.logs(container).decode()}")


def _ts(value: str) -> float:
    from datetime import datetime

    head, _, frac = value.rstrip("Z").partition(".")
    return datetime.fromisoformat(head + "+00:00").timestamp() + float(f"0.{frac or 0}")


def round_trip(config: dict[str, str], topic: str, n: int = 50) -> None:
    p = Producer({**config, "acks": "all"})
    for i in range(n):
        p.produce(topic, value=f"{topic}-{i}".encode())
    assert p.flush(30) == 0
    c = Consumer({**config, "group.id": f"g-{topic}", "auto.offset.reset": "earliest"})
    c.subscribe([topic])
    got: list[bytes] = []
    deadline = time.monotonic() + 30
    while len(got) < n and time.monotonic() < deadline:
        m = c.poll(0.5)
        if m is not None and m.error() is None:
            got.append(m.value())
    c.close()
    del p
    assert got == [f"{topic}-{i}".encode() for i in range(n)]


def test_compose_single_node(image: str) -> None:
    """Kafka's single-node example: clients on the host through PLAINTEXT_HOST
    (localhost:9092); Metadata names the listener's advertised address."""
    project = COMPOSE_DIR / "single-node" / "plaintext"
    with compose_slot(9092):
        compose(project, "down", "-v", check=False)
        try:
            compose(project, "up", "-d")
            print(f"broker ready {wait_ready('broker'):.2f} s after start")
            round_trip({"bootstrap.servers": "localhost:9092"}, "compose-single")
            from confluent_kafka.admin import AdminClient

            md = AdminClient({"bootstrap.servers": "localhost:9092"}).list_topics(timeout=10)
            assert [f"{b.host}:{b.port}" for b in md.brokers.values()] == ["localhost:9092"]
            assert md.cluster_id == "4L6g3nShT-eMCtK--X86sw"
        finally:
            compose(project, "down", "-v", check=False)


def test_compose_cluster_combined_sasl(image: str) -> None:
    """Kafka's three-node combined-mode example over SASL_PLAINTEXT, its users in the
    JAAS file KAFKA_OPTS names: every node serves SASL/PLAIN clients on its host port,
    all three are one cluster, and a wrong password is refused."""
    project = COMPOSE_DIR / "cluster" / "combined" / "sasl_plaintext"
    with compose_slot(29094, 39094, 49094):
        compose(project, "down", "-v", check=False)
        try:
            compose(project, "up", "-d")
            for n in (1, 2, 3):
                print(f"kafka-{n} ready {wait_ready(f'kafka-{n}'):.2f} s after start")
            sasl = {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN",
                    "sasl.username": "alice", "sasl.password": "alice-secret"}
            for port in (29094, 39094, 49094):
                round_trip({**sasl, "bootstrap.servers": f"localhost:{port}"}, f"sasl-{port}")
            # one cluster: every node names the three brokers at their host ports
            from confluent_kafka.admin import AdminClient as Admin

            for port in (29094, 39094, 49094):
                md = Admin({**sasl, "bootstrap.servers": f"localhost:{port}"}).list_topics(
                    timeout=10)
                assert sorted(f"{b.host}:{b.port}" for b in md.brokers.values()) == [
                    "localhost:29094", "localhost:39094", "localhost:49094"]
                assert {f"sasl-{p}" for p in (29094, 39094, 49094)} <= set(md.topics)
            from confluent_kafka import KafkaException
            from confluent_kafka.admin import AdminClient

            errors: list[str] = []
            bad = AdminClient({**sasl, "bootstrap.servers": "localhost:29094",
                               "sasl.password": "wrong", "error_cb": lambda e: errors.append(
                                   e.str())})
            with pytest.raises(KafkaException):
                bad.list_topics(timeout=5)
            bad.poll(1)
            assert any("Authentication failed" in e for e in errors), errors
            del bad
        finally:
            compose(project, "down", "-v", check=False)


class ComposeNodes:
    """The containers of Kafka's three-node combined-mode PLAINTEXT example as a
    client_tests.official_nodes.NodeSet: each node's host port, `docker kill` (SIGKILL,
    no goodbye: a crash) and `docker start`. The broker containers are kafka-1..3 in
    both examples; in the isolated one they are nodes 4-6 (``first_broker``)."""

    ports = {1: 29092, 2: 39092, 3: 49092}

    def __init__(self, first_broker: int = 1) -> None:
        self.client: dict[str, str] = {}
        self.first = first_broker
        self.brokers = [first_broker + n for n in range(3)]
        self.ids = sorted({1, 2, 3, *self.brokers})

    def container(self, node: int) -> str:
        return f"kafka-{node - self.first + 1}"

    def bootstrap(self, node: int) -> str:
        return f"localhost:{self.ports[node - self.first + 1]}"

    def kill(self, node: int) -> None:
        subprocess.run(["docker", "kill", self.container(node)], check=True,
                       capture_output=True)

    def restart(self, node: int) -> None:
        subprocess.run(["docker", "start", self.container(node)], check=True,
                       capture_output=True)


def test_compose_cluster_combined_is_one_cluster_through_a_crash(image: str) -> None:
    """Kafka's three-node combined-mode example with only the image swapped is one
    three-broker cluster (client_tests/official_nodes.py's scenario: all brokers in
    every node's Metadata, an RF 3 topic, produce through node 1 and consume through
    node 3 with acks=all and min.insync.replicas=2 while node 2's container is killed,
    nothing acknowledged lost, node 2 back in every ISR after `docker start`)."""
    from client_tests.official_nodes import scenario

    project = COMPOSE_DIR / "cluster" / "combined" / "plaintext"
    with compose_slot(*ComposeNodes.ports.values()):
        compose(project, "down", "-v", check=False)
        try:
            started = time.monotonic()
            compose(project, "up", "-d")
            f = scenario(ComposeNodes(), started)
            print(f"compose cluster: ready {f.ready_s:.2f} s after `up`, failover "
                  f"{f.failover_s:.2f} s, rejoin {f.rejoin_s:.2f} s, {f.acknowledged} "
                  "acknowledged, none lost")
            api = docker.from_env().api
            logs = api.logs("kafka-1").decode()
            assert "node 2 lost" in logs and "broker 2 crashed" in logs, logs
            assert "Traceback" not in logs, logs
            # the image's HEALTHCHECK: node 1's control plane, the other nodes' fronts
            wait_for(lambda: [api.inspect_container(f"kafka-{n}")["State"]["Health"][
                "Status"] for n in (1, 2, 3)] == ["healthy"] * 3,
                "every node healthy", 30, interval=0.5)
        finally:
            compose(project, "down", "-v", check=False)


def test_compose_cluster_isolated_is_one_cluster_through_a_crash(image: str) -> None:
    """Kafka's isolated-mode example (controllers 1-3, brokers 4-6 in containers
    kafka-1..3) with only the image swapped is one three-broker cluster: the same
    scenario, broker 5's container killed and started again; the state is in
    controller-1, whose log says each broker registered and broker 5 crashed; all six
    containers become healthy (the controllers by their registration)."""
    from client_tests.official_nodes import scenario

    project = COMPOSE_DIR / "cluster" / "isolated" / "plaintext"
    with compose_slot(*ComposeNodes.ports.values()):
        compose(project, "down", "-v", check=False)
        try:
            started = time.monotonic()
            compose(project, "up", "-d")
            f = scenario(ComposeNodes(first_broker=4), started)
            print(f"compose isolated cluster: ready {f.ready_s:.2f} s after `up`, failover "
                  f"{f.failover_s:.2f} s, rejoin {f.rejoin_s:.2f} s, {f.acknowledged} "
                  "acknowledged, none lost")
            api = docker.from_env().api
            ids = compose(project, "ps", "-a", "-q").stdout.split()
            names = {api.inspect_container(i)["Name"].lstrip("/"): i for i in ids}
            assert len(names) == 6, names
            state = next(i for name, i in names.items() if "controller-1" in name)
            logs = api.logs(state).decode()
            assert all(f"node {n} registered: broker {n}" in logs for n in (4, 5, 6)), logs
            assert "broker 5 crashed" in logs and "Traceback" not in logs, logs
            wait_for(lambda: [api.inspect_container(i)["State"]["Health"]["Status"]
                              for i in ids] == ["healthy"] * 6,
                     "every container healthy", 30, interval=0.5)
        finally:
            compose(project, "down", "-v", check=False)


def test_compose_cluster_isolated_sasl_is_one_cluster_through_a_crash(image: str) -> None:
    """Kafka's isolated SASL_PLAINTEXT example, its JAAS file mounted on the broker
    containers only: each broker node sends its users to controller-1 with its
    registration, so alice logs in through every broker's host port; the same scenario
    with broker 5's container killed loses nothing acknowledged; a wrong password is
    refused; no container logs a password."""
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import AdminClient

    from client_tests.official_nodes import SASL_CLIENT, scenario

    project = COMPOSE_DIR / "cluster" / "isolated" / "sasl_plaintext"
    nodes = ComposeNodes(first_broker=4)
    nodes.ports, nodes.client = {1: 29094, 2: 39094, 3: 49094}, dict(SASL_CLIENT)
    with compose_slot(*nodes.ports.values()):
        compose(project, "down", "-v", check=False)
        try:
            started = time.monotonic()
            compose(project, "up", "-d")
            f = scenario(nodes, started, records=1500)
            print(f"compose isolated SASL cluster: ready {f.ready_s:.2f} s after `up`, "
                  f"failover {f.failover_s:.2f} s, rejoin {f.rejoin_s:.2f} s, "
                  f"{f.acknowledged} acknowledged, none lost")
            for port in nodes.ports.values():
                bad = AdminClient({**SASL_CLIENT, "bootstrap.servers": f"localhost:{port}",
                                   "sasl.password": "wrong"})
                with pytest.raises(KafkaException):
                    bad.list_topics(timeout=3)
                del bad
            api = docker.from_env().api
            ids = compose(project, "ps", "-a", "-q").stdout.split()
            names = {api.inspect_container(i)["Name"].lstrip("/"): i for i in ids}
            assert len(names) == 6, names
            logs = {name: api.logs(i).decode() for name, i in names.items()}
            state = next(text for name, text in logs.items() if "controller-1" in name)
            assert all(f"node {n} registered: broker {n}" in state for n in (4, 5, 6)), state
            assert "broker 5 crashed" in state, state
            for text in logs.values():
                assert "Traceback" not in text and "alice-secret" not in text, text
        finally:
            compose(project, "down", "-v", check=False)


STORE_PW = "kafka-emulator-pw"


def make_secrets(secrets: Path) -> None:
    """What Kafka's SSL example mounts in /etc/kafka/secrets, made with the JDK's
    keytool: the broker's JKS keystore (a key signed by a test CA, the chain), a JKS
    truststore holding the CA, the credential files, and a client's PKCS12 keystore."""
    if shutil.which("keytool") is None:
        pytest.fail("keytool (a JDK) is needed to make the SSL example's stores; install a "
                    "JDK >= 17")
    shutil.rmtree(secrets, ignore_errors=True)
    secrets.mkdir(parents=True)

    def kt(*args: str) -> None:
        proc = subprocess.run(["keytool", *args], cwd=secrets, capture_output=True,
                              text=True, timeout=60)
        assert proc.returncode == 0, f"keytool {args[0]}: {proc.stdout}{proc.stderr}"

    pw = ["-storepass", STORE_PW]
    kt("-genkeypair", "-alias", "ca", "-dname", "CN=kafka-emulator test CA", "-ext", "bc:c",
       "-keyalg", "RSA", "-keystore", "ca.p12", "-storetype", "PKCS12", *pw)
    kt("-exportcert", "-alias", "ca", "-keystore", "ca.p12", "-rfc", "-file", "ca.pem", *pw)
    for name, store, kind, dname in (
            ("broker", "kafka01.keystore.jks", "JKS", "CN=localhost"),
            ("client", "client.keystore.p12", "PKCS12", "CN=client")):
        kt("-genkeypair", "-alias", name, "-dname", dname, "-keyalg", "RSA", "-keystore",
           store, "-storetype", kind, "-keypass", STORE_PW, *pw)
        kt("-certreq", "-alias", name, "-keystore", store, "-file", f"{name}.csr", *pw)
        kt("-gencert", "-alias", "ca", "-keystore", "ca.p12", "-infile", f"{name}.csr",
           "-outfile", f"{name}.pem", "-rfc", "-ext", "SAN=dns:localhost", *pw)
        kt("-importcert", "-noprompt", "-alias", "ca", "-file", "ca.pem", "-keystore", store,
           *pw)
        kt("-importcert", "-alias", name, "-file", f"{name}.pem", "-keystore", store, *pw)
    kt("-importcert", "-noprompt", "-alias", "ca", "-file", "ca.pem", "-keystore",
       "kafka.truststore.jks", "-storetype", "JKS", *pw)
    for creds in ("kafka_keystore_creds", "kafka_ssl_key_creds", "kafka_truststore_creds"):
        (secrets / creds).write_text(STORE_PW + "\n")
    for f in secrets.iterdir():
        f.chmod(0o644)  # the image's user (uid 10001) reads them through the mount


def test_compose_single_node_ssl(image: str) -> None:
    """Kafka's single-node SSL example: JKS keystore and truststore named by
    KAFKA_SSL_*_FILENAME with credential files, client authentication required. A
    client with a certificate from the CA moves records; one without is refused."""
    project = COMPOSE_DIR / "single-node" / "ssl"
    secrets = COMPOSE_DIR / "fixtures" / "secrets"
    make_secrets(secrets)
    with compose_slot(9093):
        compose(project, "down", "-v", check=False)
        try:
            compose(project, "up", "-d")
            print(f"broker ready {wait_ready('broker'):.2f} s after start")
            ssl = {"bootstrap.servers": "localhost:9093", "security.protocol": "SSL",
                   "ssl.ca.location": str(secrets / "ca.pem")}
            round_trip({**ssl, "ssl.keystore.location": str(secrets / "client.keystore.p12"),
                        "ssl.keystore.password": STORE_PW}, "compose-ssl")
            from confluent_kafka import KafkaException
            from confluent_kafka.admin import AdminClient

            with pytest.raises(KafkaException):
                AdminClient(ssl).list_topics(timeout=3)
        finally:
            compose(project, "down", "-v", check=False)
            shutil.rmtree(secrets, ignore_errors=True)


def test_compose_single_node_file_input(image: str) -> None:
    """Kafka's file-input example: a server.properties mounted at /mnt/shared/config
    (its SSL listener's JKS stores by location and password), the variables adding
    what the file lacks and overriding process.roles. Clients on both host listeners."""
    project = COMPOSE_DIR / "single-node" / "file-input"
    secrets = COMPOSE_DIR / "fixtures" / "secrets"
    make_secrets(secrets)
    with compose_slot(9092, 9093):
        compose(project, "down", "-v", check=False)
        try:
            compose(project, "up", "-d")
            print(f"broker ready {wait_ready('broker'):.2f} s after start")
            round_trip({"bootstrap.servers": "localhost:9092"}, "file-input-plain")
            round_trip({"bootstrap.servers": "localhost:9093", "security.protocol": "SSL",
                        "ssl.ca.location": str(secrets / "ca.pem"),
                        "ssl.keystore.location": str(secrets / "client.keystore.p12"),
                        "ssl.keystore.password": STORE_PW}, "file-input-ssl")
        finally:
            compose(project, "down", "-v", check=False)
            shutil.rmtree(secrets, ignore_errors=True)


def test_unsupported_variable_is_refused_in_one_line(image: str) -> None:
    """A setting the official image honours and the emulator cannot (Kerberos) stops
    the container with one line naming the variable, never ignored."""
    proc = subprocess.run(["docker", "run", "--rm",
                           "-e", "KAFKA_LISTENERS=SASL_PLAINTEXT://:9092",
                           "-e", "KAFKA_ADVERTISED_LISTENERS=SASL_PLAINTEXT://localhost:9092",
                           "-e", "KAFKA_SASL_ENABLED_MECHANISMS=GSSAPI", image],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert proc.stderr.strip().splitlines() == [
        "kafka-emulator: refused: KAFKA_SASL_ENABLED_MECHANISMS: GSSAPI is not served by the "
        "emulator (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER are)"], proc.stderr
