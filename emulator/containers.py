"""testcontainers module: the emulator's Docker image as a ``KafkaEmulatorContainer``.

Used like testcontainers' own ``KafkaContainer``::

    from emulator.containers import KafkaEmulatorContainer

    with KafkaEmulatorContainer(brokers=3) as kafka:
        producer = Producer({"bootstrap.servers": kafka.get_bootstrap_server()})
        kafka.stop_broker(2)                       # the HTTP control plane
        kafka.inject_error("Produce", "NOT_LEADER_OR_FOLLOWER")  # as kafka_control has

Several brokers behind port mapping. Each broker advertises ``host:port`` in
metadata, and clients connect to what is advertised, so the advertised ports must be
the ports the host sees. Mapped ports are only known after the container starts, too
late to tell the brokers; so, as testcontainers' own multi-listener modules do, the
host ports are chosen before the start: a block of free consecutive ports BASE..
BASE+N-1, bound one to one (container port == host port), with the brokers listening
on exactly those ports inside the container. The control plane (container port 8080)
needs no advertising and gets an ordinary random mapped port; it listens on every
interface inside the container behind a bearer token made for each container
(``control_token``), which ``control()`` sends.

Secured clusters: ``with_sasl(users, super_users=, authorizer=, tls=True)`` serves a
SASL_SSL listener (``tls=False``: SASL_PLAINTEXT), ``with_tls()`` an SSL one. The
emulator inside generates its CA and a broker certificate for the advertised host (the
name clients connect to) in ``TLS_DIR`` of the container; once it is ready the files
are copied out to a host directory (``tls_dir``: ``ca.pem``, ``truststore.p12``,
``client.pem``... as docs/security.md lists them), and ``client_config()`` hands
clients settings that trust that CA.

Fidelity (docs/fidelity.md): ``KafkaEmulatorContainer(image, fidelity="kafka")`` or
``fidelity="adversarial", seed=7`` (or ``with_fidelity(...)``) sets the container's
``KAFKA_EMULATOR_FIDELITY``/``KAFKA_EMULATOR_SEED``; without one the host's own
``KAFKA_EMULATOR_FIDELITY`` is passed in, so the one default a user set covers
containers too.

Needs the ``testcontainers`` package (the ``test`` extra) and a Docker engine; the
image is built by ``scripts/setup.d/50-docker.sh`` or ``docker build -f
docker/Dockerfile -t kafka-emulator .``.
"""

from __future__ import annotations

import io
import json
import os
import random
import secrets
import socket
import tarfile
import tempfile
import time
import urllib.request
from typing import Any

from docker.errors import APIError
from testcontainers.core.container import DockerContainer

from emulator.control.handle import ControlHandle
from emulator.control.operations import FAULT_ROUTE, http_request
from emulator.fidelity import ENV_VAR, Fidelity, default_mode

DEFAULT_IMAGE = "kafka-emulator:latest"
CONTROL_PORT = 8080
SCHEMA_REGISTRY_PORT = 8081  # the image serves the schema registry here by default
READY_LINE = b"kafka-emulator ready:"
PORT_RANGE = (20000, 32000)  # below Linux's ephemeral range, where connections bind
TLS_DIR = "/tmp/kafka-emulator-tls"  # in the container (the image's user may write /tmp)


def _ports_free(ports: range) -> bool:
    for port in ports:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            try:
                s.bind(("0.0.0.0", port))
            except OSError:
                return False
    return True


def free_port_block(count: int, rng: random.Random | None = None) -> int:
    """The first of ``count`` consecutive ports free on this host right now."""
    rng = rng or random.Random()
    for _ in range(200):
        base = rng.randrange(PORT_RANGE[0], PORT_RANGE[1] - count)
        if _ports_free(range(base, base + count)):
            return base
    raise RuntimeError(f"no {count} consecutive free ports in {PORT_RANGE}")


class KafkaEmulatorContainer(DockerContainer, ControlHandle):
    """An emulated Kafka cluster of ``brokers`` brokers in one container."""

    def __init__(
        self,
        image: str = DEFAULT_IMAGE,
        brokers: int = 3,
        *,
        control_plane: bool = True,
        schema_registry: bool = True,
        config: dict[str, str] | None = None,
        kafka_version: str | None = None,
        seed: int | None = None,
        base_port: int | None = None,
        ready_timeout: float = 60.0,
        advertised_host: str | None = None,
        fidelity: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(image, **kwargs)
        if brokers < 1:
            raise ValueError("a cluster needs at least one broker")
        self.brokers = brokers
        self.control_plane = control_plane
        self.schema_registry = schema_registry
        self.control_token = secrets.token_urlsafe(24)
        self.config = dict(config or {})
        self.kafka_version = kafka_version
        self.seed = seed
        # None: the host's $KAFKA_EMULATOR_FIDELITY, else the image's default (fast).
        self.fidelity = fidelity
        if fidelity is not None:
            Fidelity(fidelity)  # a bad mode fails here, naming the modes
        self.ready_timeout = ready_timeout
        self._fixed_base_port = base_port
        self.base_port: int | None = None
        # The host name brokers advertise: the Docker host as testcontainers names it
        # (localhost for a local engine) unless given, e.g. the host's own address so
        # that clients on other machines or in other JVMs' networks reach them.
        self._advertised_host = advertised_host
        self.advertised_host: str | None = None
        self.sasl_users: dict[str, str] = {}
        self.super_users: list[str] = []
        self.authorizer = False
        self.tls = False
        self.tls_client_auth = "none"
        self.tls_dir: str | None = None  # on the host, filled once the container is ready

    # ---- configuration (testcontainers style: chainable) --------------------------
    def with_config(self, **settings: str) -> KafkaEmulatorContainer:
        """Broker config overrides: ``with_config(**{"num.partitions": "3"})``."""
        self.config.update({k: str(v) for k, v in settings.items()})
        return self

    def with_kafka_version(self, version: str) -> KafkaEmulatorContainer:
        """Pose as an older Kafka release (its API version ranges)."""
        self.kafka_version = version
        return self

    def with_fidelity(self, mode: str, seed: int | None = None) -> KafkaEmulatorContainer:
        """``fast``, ``kafka`` or ``adversarial`` (with ``seed``: its faults replay by
        it); docs/fidelity.md."""
        Fidelity(mode)
        self.fidelity = mode
        if seed is not None:
            self.seed = seed
        return self

    def with_sasl(self, users: dict[str, str] | None = None, *,
                  super_users: list[str] | tuple[str, ...] = (),
                  authorizer: bool = False, tls: bool = True) -> KafkaEmulatorContainer:
        """A SASL_SSL listener (``tls=False``: SASL_PLAINTEXT) with PLAIN,
        SCRAM-SHA-256/512 and OAUTHBEARER for these users (default admin/admin-secret
        and alice/alice-secret), optionally with Kafka's authorizer and super users
        (docs/security.md)."""
        self.sasl_users = dict(users or {"admin": "admin-secret", "alice": "alice-secret"})
        self.super_users = list(super_users)
        self.authorizer = authorizer
        self.tls = self.tls or tls
        return self

    def with_tls(self, client_auth: str = "none") -> KafkaEmulatorContainer:
        """TLS on the listener (SSL, or SASL_SSL with ``with_sasl``); ``client_auth=
        "required"`` asks clients for a certificate (mutual TLS, principal from it)."""
        self.tls = True
        self.tls_client_auth = client_auth
        return self

    @property
    def security_protocol(self) -> str:
        """The listener's protocol as Kafka names it."""
        return {(False, False): "PLAINTEXT", (False, True): "SSL",
                (True, False): "SASL_PLAINTEXT", (True, True): "SASL_SSL"}[
                    (bool(self.sasl_users), self.tls)]

    def client_config(self, client: str = "confluent", user: str | None = None,
                      mechanism: str = "SCRAM-SHA-512", mtls: bool = False) -> Any:
        """Settings for the client kind (confluent, kafka-python, aiokafka, java): the
        listener's protocol, a user's credentials and the container's CA copied out."""
        from emulator.security.clients import ClientSecurity, settings

        password = None
        sasl_mechanism: str | None = mechanism
        if self.sasl_users:
            user = user or next(iter(self.sasl_users))
            password = self.sasl_users[user]
        else:
            user = sasl_mechanism = None
        files: dict[str, str] = {}
        if self.tls:
            if self.tls_dir is None:
                raise RuntimeError("the container is not started")
            d = self.tls_dir
            mtls = mtls or self.tls_client_auth == "required"
            files = {"ca": f"{d}/ca.pem", "truststore": f"{d}/truststore.p12"}
            if mtls:
                files.update(client_cert=f"{d}/client.pem", client_key=f"{d}/client-key.pem",
                             client_keystore=f"{d}/client.p12")
        return settings(client, ClientSecurity(self.get_bootstrap_server(),
                                               self.security_protocol, sasl_mechanism, user,
                                               password, **files))

    def _configure(self) -> None:
        """Called by ``start()`` just before the container is created."""
        self.advertised_host = self._advertised_host or self.get_docker_client().host()
        self.base_port = self._fixed_base_port or free_port_block(self.brokers)
        for port in range(self.base_port, self.base_port + self.brokers):
            self.with_bind_ports(port, port)
        self.with_env("KAFKA_EMULATOR_BROKERS", str(self.brokers))
        self.with_env("KAFKA_EMULATOR_HOST", "0.0.0.0")
        self.with_env("KAFKA_EMULATOR_PORT", str(self.base_port))
        self.with_env("KAFKA_EMULATOR_ADVERTISED_HOST", self.advertised_host)
        # The image turns the control plane on by default; empty turns it off.
        self.with_env("KAFKA_EMULATOR_CONTROL_PORT", str(CONTROL_PORT) if self.control_plane
                      else "")
        if self.control_plane:
            # Inside the container 127.0.0.1 is not reachable through a mapped port: the
            # control plane listens on every interface, behind a token of this container.
            self.with_env("KAFKA_EMULATOR_CONTROL_HOST", "0.0.0.0")
            self.with_env("KAFKA_EMULATOR_CONTROL_TOKEN", self.control_token)
            self.with_exposed_ports(CONTROL_PORT)
        # The image serves the schema registry on 8081 of every interface; empty: off.
        self.with_env("KAFKA_EMULATOR_SCHEMA_REGISTRY_PORT",
                      str(SCHEMA_REGISTRY_PORT) if self.schema_registry else "")
        if self.schema_registry:
            self.with_exposed_ports(SCHEMA_REGISTRY_PORT)
        if self.config:
            self.with_env("KAFKA_EMULATOR_CONFIG",
                          ",".join(f"{k}={v}" for k, v in self.config.items()))
        if self.kafka_version:
            self.with_env("KAFKA_EMULATOR_KAFKA_VERSION", self.kafka_version)
        if self.seed is not None:
            self.with_env("KAFKA_EMULATOR_SEED", str(self.seed))
        mode = self.fidelity or (default_mode() if os.environ.get(ENV_VAR) else None)
        if mode is not None:
            self.with_env(ENV_VAR, mode)
        if self.sasl_users or self.tls:
            self.with_env("KAFKA_EMULATOR_LISTENERS",
                          f"{self.security_protocol}://0.0.0.0:{self.base_port}")
        if self.tls:
            self.with_env("KAFKA_EMULATOR_TLS_DIR", TLS_DIR)
            self.with_env("KAFKA_EMULATOR_TLS_CLIENT_AUTH", self.tls_client_auth)
        if self.sasl_users:
            self.with_env("KAFKA_EMULATOR_SASL_USERS",
                          ",".join(f"{u}:{p}" for u, p in self.sasl_users.items()))
        if self.super_users:
            self.with_env("KAFKA_EMULATOR_SUPER_USERS", ",".join(self.super_users))
        if self.authorizer:
            self.with_env("KAFKA_EMULATOR_AUTHORIZER", "1")

    # ---- lifecycle -------------------------------------------------------------------
    def start(self) -> KafkaEmulatorContainer:
        """Start, retrying with other host ports if ours were taken meanwhile."""
        for attempt in range(3):
            try:
                super().start()
                break
            except APIError as e:
                taken = "port is already allocated" in str(e) or "address already in use" in str(e)
                if self._container is not None:
                    self._container.remove(force=True)
                    self._container = None
                if not taken or self._fixed_base_port or attempt == 2:
                    raise
                self.ports.clear()
        self._wait_until_ready()
        if self.tls:
            self._copy_tls_files()
        return self

    def stop(self, force: bool = True, delete_volume: bool = True) -> None:
        """Stop and remove the container, and the CA files copied out of it."""
        super().stop(force=force, delete_volume=delete_volume)
        if self.tls_dir is not None:
            import shutil

            shutil.rmtree(self.tls_dir, ignore_errors=True)
            self.tls_dir = None

    def _copy_tls_files(self) -> None:
        """The CA, stores and client certificate the emulator generated, to the host."""
        assert self._container is not None
        stream, _ = self._container.get_archive(TLS_DIR)
        out = tempfile.mkdtemp(prefix="kafka-emulator-container-tls-")
        with tarfile.open(fileobj=io.BytesIO(b"".join(stream))) as tar:
            for member in tar.getmembers():
                if member.isfile():
                    src = tar.extractfile(member)
                    assert src is not None
                    with open(f"{out}/{member.name.rsplit('/', 1)[-1]}", "wb") as f:
                        f.write(src.read())
        self.tls_dir = out

    def _wait_until_ready(self) -> None:
        assert self._container is not None
        deadline = time.monotonic() + self.ready_timeout
        while time.monotonic() < deadline:
            logs = self._container.logs()
            if READY_LINE in logs:
                return
            self._container.reload()
            if self._container.status in ("exited", "dead"):
                raise RuntimeError(
                    f"kafka-emulator container exited before it was ready:\n{logs.decode()}")
            time.sleep(0.05)
        raise TimeoutError(f"kafka-emulator not ready within {self.ready_timeout}s:\n"
                           f"{self._container.logs().decode()}")

    # ---- addresses ---------------------------------------------------------------------
    def get_bootstrap_server(self) -> str:
        """Every broker's ``host:port``, comma-separated, as clients should use them."""
        if self.base_port is None:
            raise RuntimeError("the container is not started")
        return ",".join(f"{self.advertised_host}:{self.base_port + i}"
                        for i in range(self.brokers))

    def get_control_url(self) -> str:
        """Base URL of the HTTP control plane, e.g. ``http://localhost:32771``."""
        if not self.control_plane:
            raise RuntimeError("started with control_plane=False")
        return (f"http://{self.get_container_host_ip()}:"
                f"{self.get_exposed_port(CONTROL_PORT)}")

    def get_schema_registry_url(self) -> str:
        """Base URL of the built-in schema registry (Confluent's REST API), e.g.
        ``http://localhost:32772``, for ``SchemaRegistryClient({"url": ...})``."""
        if not self.schema_registry:
            raise RuntimeError("started with schema_registry=False")
        return (f"http://{self.get_container_host_ip()}:"
                f"{self.get_exposed_port(SCHEMA_REGISTRY_PORT)}")

    # ---- control plane (the operations of emulator.control.operations) -------------------
    def control(self, method: str, path: str, body: dict | list | None = None) -> Any:
        """One JSON call to the control plane: ``control("GET", "/cluster")``."""
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.get_control_url() + path, data=data, method=method,
                                     headers={"Content-Type": "application/json",
                                              "Authorization": f"Bearer {self.control_token}"})
        with urllib.request.urlopen(req, timeout=30) as resp:
            raw = resp.read()
            ctype = resp.headers.get("Content-Type", "")
        if not raw:
            return None
        return json.loads(raw) if ctype.startswith("application/json") else raw.decode()

    def operation(self, name: str, **fields: Any) -> Any:
        """One operation of the table by name, e.g. ``operation("reassign", topic="t",
        partition=0, replicas=[2, 3])``: its route, its body."""
        return self.control(*http_request(name, fields))

    def cluster_info(self) -> Any:
        return self.operation("cluster")

    def stop_broker(self, broker_id: int, controlled: bool = False) -> Any:
        return self.operation("stop_broker", broker=broker_id, controlled=controlled or None)

    def start_broker(self, broker_id: int) -> Any:
        return self.operation("start_broker", broker=broker_id)

    def fault(self, op: dict | list[dict]) -> Any:
        """Apply fault operations (emulator.faults' vocabulary), e.g.
        ``fault({"op": "inject_error", "api": "Produce", "error": "NOT_LEADER_OR_FOLLOWER"})``;
        the fault methods (``pause_follower(3)``...) are emulator.control.handle's."""
        return self.control(*FAULT_ROUTE, op)

    def clear_faults(self) -> Any:
        return self.operation("clear")

    def metrics(self) -> str:
        """Prometheus text from GET /metrics."""
        return self.operation("metrics")
