"""A Compose file of official-image Kafka nodes as one cluster, on both targets.

A Compose file written for apache/kafka (KAFKA_NODE_ID, KAFKA_PROCESS_ROLES,
KAFKA_CONTROLLER_QUORUM_VOTERS, KAFKA_LISTENERS, ...) of three combined-mode nodes, or
of three controllers and three brokers (isolated mode), is one three-broker cluster in
Kafka. ``scenario`` holds a set of such nodes to what a user of that file expects
(docs/official-images.md, "Several nodes, one cluster"): every broker node's Metadata
names all the brokers, a topic of replication factor 3 is created
through one node, records produced through one node with acks=all and
min.insync.replicas=2 are consumed through another, one node is killed mid-stream and
no acknowledged record is lost, the node returns and rejoins every ISR.

The nodes come three ways, each a ``NodeSet``:

- ``EmulatorNodes``: the image's entry point (python -m emulator.official_image_run)
  as plain processes on this host, from the file's variables with every host and port
  moved to 127.0.0.1 and free ports (``localhost_nodes``);
- ``KafkaNodes``: Kafka 4.4's own JVMs from the same variables, as the image's
  scripts turn them into server properties (client_tests.kafka_cluster.KafkaCluster
  with ``nodes``);
- the containers themselves (client_tests/test_official_image.py).

``python -m client_tests.official_nodes --target kafka`` runs the scenario on Kafka
and prints its figures (.ci/official-cluster-nightly runs it: three JVMs and Kafka's
9 s broker session timeout make it too slow for CI's Kafka pass).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import yaml
from confluent_kafka import Consumer, KafkaError, Message, Producer
from confluent_kafka.admin import AdminClient, ClusterMetadata, NewTopic

from client_tests.kafka_cluster import TEST_JVM_OPTS, KafkaCluster, PortReservations
from emulator.official_image import APACHE, merged_properties
from emulator.testing import wait_for

ROOT = Path(__file__).resolve().parent.parent
COMPOSE_DIR = ROOT / "client_tests" / "compose" / "apache-kafka"
COMBINED_PLAINTEXT = COMPOSE_DIR / "cluster" / "combined" / "plaintext" / "docker-compose.yml"
COMBINED_SASL = COMPOSE_DIR / "cluster" / "combined" / "sasl_plaintext" / "docker-compose.yml"
ISOLATED_PLAINTEXT = COMPOSE_DIR / "cluster" / "isolated" / "plaintext" / "docker-compose.yml"
ISOLATED_SASL = COMPOSE_DIR / "cluster" / "isolated" / "sasl_plaintext" / "docker-compose.yml"
# A user of the SASL example's JAAS file (fixtures/sasl/broker_jaas.conf)
SASL_CLIENT = {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN",
               "sasl.username": "alice", "sasl.password": "alice-secret"}
LINK_PORT_ENV = "KAFKA_EMULATOR_CLUSTER_LINK_PORT"


class NodeSet(Protocol):
    """Nodes a test can reach, kill and start again, by node id."""

    ids: list[int]
    brokers: list[int]  # the ids of the broker nodes (all of them in combined mode)
    client: dict[str, str]  # what a client needs besides bootstrap.servers (SASL)

    def bootstrap(self, node: int) -> str: ...

    def kill(self, node: int) -> None: ...

    def restart(self, node: int) -> None: ...


# ---- a Compose file's nodes on this host ----------------------------------------------
def compose_environments(compose_file: Path) -> dict[str, dict[str, str]]:
    """Each service's environment, as Compose hands it to the container."""
    doc = yaml.safe_load(compose_file.read_text())
    out = {}
    for name, svc in doc["services"].items():
        env = svc.get("environment") or {}
        if isinstance(env, list):
            env = dict(item.split("=", 1) for item in env)
        out[name] = {k: str(v) for k, v in env.items()}
    return out


@dataclass
class LocalNode:
    """One node moved to this host: its environment, and the address a client on the
    host bootstraps from (the listener the Compose file publishes to localhost)."""

    node_id: int
    env: dict[str, str]
    bootstrap: str  # "" for a controller-only node: it serves no client

    @property
    def broker(self) -> bool:
        return "broker" in self.env.get("KAFKA_PROCESS_ROLES", "broker")


def localhost_nodes(compose_file: Path, reserved: PortReservations) -> dict[int, LocalNode]:
    """The file's nodes with every host 127.0.0.1 and every port a free one: a
    listener's port, the advertised address naming it (its service's host name, or
    localhost and the port published for it) and the voter naming it all move to the
    same port; a path inside a mounted volume (the JAAS file KAFKA_OPTS names) becomes
    the mounted file's path here. The ports are reserved (kafka_cluster.reserve_port:
    below the ephemeral range, and no other test process of this machine picks them)
    in ``reserved``, for the caller to release."""
    doc = yaml.safe_load(compose_file.read_text())
    envs = compose_environments(compose_file)
    moved: dict[tuple[str, int], int] = {}
    published: dict[int, tuple[str, int]] = {}  # host port -> (service host, its port)
    for name, svc in doc["services"].items():
        host = svc.get("hostname", name)
        for item in envs[name].get("KAFKA_LISTENERS", "").split(","):
            port = int(item.rsplit(":", 1)[1])
            moved[(host, port)] = reserved.take()
        for mapping in svc.get("ports", []):
            outside, _, inside = str(mapping).rpartition(":")
            published[int(outside)] = (host, int(inside))

    def where(host: str, port: int) -> int:
        if (host, port) not in moved and host == "localhost":
            host, port = published[port]
        return moved[(host, port)]

    nodes = {}
    for name, svc in doc["services"].items():
        env, host = dict(envs[name]), svc.get("hostname", name)
        for volume in svc.get("volumes", []):
            src, _, dst = str(volume).partition(":")
            here = str((compose_file.parent / src).resolve())
            env = {k: v.replace(dst.split(":")[0], here) for k, v in env.items()}
        listeners = [item.split("://") for item in env["KAFKA_LISTENERS"].split(",")]
        env["KAFKA_LISTENERS"] = ",".join(
            f"{n}://127.0.0.1:{moved[(host, int(a.rsplit(':', 1)[1]))]}" for n, a in listeners)
        bootstrap = ""
        advertised = []
        for item in filter(None, env.get("KAFKA_ADVERTISED_LISTENERS", "").split(",")):
            n, a = item.split("://")
            h, p = a.rsplit(":", 1)
            advertised.append(f"{n}://127.0.0.1:{where(h, int(p))}")
            if h == "localhost" or not bootstrap:
                bootstrap = f"127.0.0.1:{where(h, int(p))}"
        if advertised:  # a controller-only node advertises none
            env["KAFKA_ADVERTISED_LISTENERS"] = ",".join(advertised)
        voters = []
        for item in env["KAFKA_CONTROLLER_QUORUM_VOTERS"].split(","):
            vid, _, addr = item.partition("@")
            h, p = addr.rsplit(":", 1)
            voters.append(f"{vid}@127.0.0.1:{where(h, int(p))}")
        env["KAFKA_CONTROLLER_QUORUM_VOTERS"] = ",".join(voters)
        node_id = int(env["KAFKA_NODE_ID"])
        nodes[node_id] = LocalNode(node_id, env, bootstrap)
    return nodes


class EmulatorNodes:
    """The image's entry point, one process per node, as the containers run it."""

    def __init__(self, compose_file: Path = COMBINED_PLAINTEXT,
                 client: Mapping[str, str] | None = None) -> None:
        self.compose_file = compose_file
        self.reserved = PortReservations()
        self.nodes = localhost_nodes(compose_file, self.reserved)
        self.client = dict(client or {})
        self._new_link_port()
        self.ids = sorted(self.nodes)
        self.brokers = [i for i in self.ids if self.nodes[i].broker]
        self.procs: dict[int, subprocess.Popen] = {}
        self.logs = Path(tempfile.mkdtemp(prefix="official-nodes-"))

    def port(self) -> int:
        """A port reserved for this set of nodes (a control port a test adds), released
        by stop."""
        return self.reserved.take()

    def _new_link_port(self) -> None:
        link = str(self.port())
        for node in self.nodes.values():
            node.env[LINK_PORT_ENV] = link

    def start(self, attempts: int = 3) -> EmulatorNodes:
        """Every node launched and ready (its ready line logged). The ports are
        reserved, but a process outside the suite may still hold one: when a node
        cannot listen, the nodes start again on new ports (the variables a test added
        kept). A node that exits ends the wait at once: the others would wait for it
        for good (a node waits for the state node's link until it answers)."""
        for _ in range(attempts):
            for node in self.ids:
                (self.logs / f"node-{node}.log").unlink(missing_ok=True)
                self.restart(node)
            wait_for(lambda: any(self.procs[n].poll() is not None for n in self.ids)
                     or all("kafka-emulator ready" in self.log(n) for n in self.ids),
                     "every node ready or one exited", 60, interval=0.1)
            if all(self.procs[n].poll() is None for n in self.ids):
                return self
            logs = "".join(f"--- node {n}:\n{self.log(n)}" for n in self.ids)
            self.stop()
            if "cannot listen" not in logs:
                raise RuntimeError(f"a node exited while starting:\n{logs}")
            for node_id, node in localhost_nodes(self.compose_file, self.reserved).items():
                node.env = {**self.nodes[node_id].env, **node.env}
                self.nodes[node_id] = node
            self._new_link_port()
        raise RuntimeError(f"no free ports for the nodes in {attempts} attempts")

    def bootstrap(self, node: int) -> str:
        return self.nodes[node].bootstrap

    def restart(self, node: int) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("KAFKA_")}
        with open(self.logs / f"node-{node}.log", "a") as log:
            self.procs[node] = subprocess.Popen(
                [sys.executable, "-m", "emulator.official_image_run", "run", "--mounted",
                 str(self.logs / "no-server.properties")],
                env={**env, **self.nodes[node].env}, cwd=ROOT, stdout=log,
                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)

    def kill(self, node: int) -> None:
        """SIGKILL: the node's process dies without a word, as a killed container."""
        self.procs[node].send_signal(signal.SIGKILL)
        self.procs[node].wait(10)

    def log(self, node: int) -> str:
        return (self.logs / f"node-{node}.log").read_text(errors="replace")

    def stop(self) -> None:
        """Every node stopped (SIGTERM, then SIGKILL after 10 s); the ports stay
        reserved while a test may start the nodes again, until release."""
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.terminate()
        for proc in self.procs.values():
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)

    def release(self) -> None:
        """The nodes stopped and their ports given back."""
        self.stop()
        self.reserved.release()


class KafkaNodes:
    """Kafka's own JVMs from the same variables (merged_properties: the image's rule
    for turning KAFKA_* variables into server properties)."""

    def __init__(self, compose_file: Path = COMBINED_PLAINTEXT,
                 client: Mapping[str, str] | None = None) -> None:
        self.reserved = PortReservations()
        self.nodes = localhost_nodes(compose_file, self.reserved)
        self.client = dict(client or {})
        props = {i: merged_properties(n.env, APACHE)[0] for i, n in self.nodes.items()}
        first = next(iter(self.nodes.values())).env
        # KAFKA_OPTS is the JVM's (the JAAS file of the SASL users), as the image passes it;
        # in isolated mode only the broker nodes name one (a controller JVM given it too
        # reads nothing from it: its CONTROLLER listener is PLAINTEXT)
        opts = next((n.env["KAFKA_OPTS"] for n in self.nodes.values() if "KAFKA_OPTS" in n.env),
                    "")
        jvm = [*TEST_JVM_OPTS, *opts.split()]
        self.kafka = KafkaCluster(nodes=props, cluster_id=first.get("CLUSTER_ID"),
                                  jvm_opts=jvm)
        self.ids = sorted(self.nodes)
        self.brokers = [i for i in self.ids if self.nodes[i].broker]

    def start(self) -> KafkaNodes:
        """The JVMs launched; the scenario waits for them through its clients."""
        self.kafka.start(wait=False)
        return self

    def bootstrap(self, node: int) -> str:
        return self.nodes[node].bootstrap

    def kill(self, node: int) -> None:
        self.kafka.kill_broker(node)

    def restart(self, node: int) -> None:
        self.kafka.start_broker(node, wait=False)

    def stop(self) -> None:
        self.kafka.stop()

    def release(self) -> None:
        """The JVMs stopped and the nodes' ports given back."""
        self.stop()
        self.reserved.release()


# ---- the scenario ---------------------------------------------------------------------
@dataclass
class Figures:
    """What the scenario measured, in seconds."""

    ready_s: float = 0.0  # from start until every node names every broker
    failover_s: float = 0.0  # from the kill until every partition has a live leader
    rejoin_s: float = 0.0  # from the restart until the node is back in every ISR
    acknowledged: int = 0
    notes: list[str] = field(default_factory=list)


def metadata(bootstrap: str, timeout: float = 5,
             client: Mapping[str, str] | None = None) -> ClusterMetadata:
    return AdminClient({**(client or {}), "bootstrap.servers": bootstrap,
                        "log_level": 0}).list_topics(timeout=timeout)


def _names_all(nodes: NodeSet, among: list[int]) -> bool:
    try:
        return all(sorted(metadata(nodes.bootstrap(n), client=nodes.client).brokers)
                   == nodes.brokers for n in among)
    except Exception:  # noqa: BLE001 - KafkaException while a node still starts
        return False


def _partitions(nodes: NodeSet, node: int, topic: str) -> list[tuple[int, list[int], list[int]]]:
    """(leader, replicas, ISR) of each partition, as ``node`` answers Metadata."""
    try:
        t = metadata(nodes.bootstrap(node), client=nodes.client).topics.get(topic)
    except Exception:  # noqa: BLE001 - KafkaException: the node is not answering
        return []
    if t is None or t.error is not None:
        return []
    return [(p.leader, list(p.replicas), list(p.isrs)) for _, p in sorted(t.partitions.items())]


def wait_ready(nodes: NodeSet, started: float, timeout: float = 120) -> float:
    """Until Metadata from every broker node names every broker; seconds since
    ``started``."""
    wait_for(lambda: _names_all(nodes, nodes.brokers),
             f"every broker node to name brokers {nodes.brokers}", timeout, interval=0.2)
    return time.monotonic() - started


def scenario(nodes: NodeSet, started: float, topic: str = "one-cluster",
             records: int = 3000, victim: int | None = None) -> Figures:
    """The Compose user's expectations (module docstring); AssertionError says which
    failed. ``started`` is when the nodes were started (time.monotonic()); ``victim``
    is the broker node killed (default: the second broker node)."""
    figures = Figures(ready_s=wait_ready(nodes, started))
    first, last = nodes.brokers[0], nodes.brokers[-1]
    victim = nodes.brokers[1] if victim is None else victim
    admin = AdminClient({**nodes.client, "bootstrap.servers": nodes.bootstrap(first)})
    admin.create_topics([NewTopic(topic, 3, 3, config={"min.insync.replicas": "2"})])[
        topic].result(30)
    # Kafka applies a new topic on each broker a moment after CreateTopics answers.
    wait_for(lambda: all(len(_partitions(nodes, n, topic)) == 3 and all(
        leader >= 0 and len(isr) == 3 for leader, _, isr in _partitions(nodes, n, topic))
        for n in nodes.brokers), f"topic {topic} with 3 in-sync replicas on every node", 60)
    layout = _partitions(nodes, last, topic)
    assert sorted(r[0] for _, r, _ in layout) == nodes.brokers, f"leaders not spread: {layout}"

    acked: set[bytes] = set()

    def delivered(err: KafkaError | None, msg: Message) -> None:
        if err is None:
            acked.add(msg.value() or b"")

    producer = Producer({**nodes.client, "bootstrap.servers": nodes.bootstrap(first),
                         "acks": "all",
                         "enable.idempotence": True, "linger.ms": 5})
    sent = 0

    def produce(n: int) -> None:
        nonlocal sent
        for _ in range(n):
            producer.produce(topic, value=f"r{sent}".encode(), key=str(sent).encode(),
                             on_delivery=delivered)
            sent += 1
            producer.poll(0)
        producer.poll(0.05)

    produce(records // 3)
    producer.flush(30)
    killed = time.monotonic()
    nodes.kill(victim)
    led = False
    while not led:  # keep producing while leadership moves off the killed node
        produce(20)
        parts = _partitions(nodes, last, topic)
        led = len(parts) == 3 and all(leader not in (-1, victim) for leader, _, _ in parts)
        if time.monotonic() - killed > 60:
            raise AssertionError(f"leadership did not move off node {victim} in 60 s: {parts}")
    figures.failover_s = time.monotonic() - killed
    produce(records // 3)
    assert producer.flush(60) == 0, "records still unacknowledged 60 s after the failover"
    restarted = time.monotonic()
    nodes.restart(victim)
    wait_for(lambda: _names_all(nodes, nodes.brokers) and all(
        len(isr) == 3 for _, _, isr in _partitions(nodes, victim, topic)),
        f"node {victim} back in Metadata and in every ISR", 120, interval=0.2)
    figures.rejoin_s = time.monotonic() - restarted
    produce(max(0, records - sent))
    assert producer.flush(30) == 0
    figures.acknowledged = len(acked)
    assert len(acked) == sent, f"{sent - len(acked)} of {sent} records never acknowledged"
    got = consume(nodes.bootstrap(last), topic, len(acked), nodes.client)
    lost = acked - got
    assert not lost, f"{len(lost)} acknowledged records lost, e.g. {sorted(lost)[:5]}"
    return figures


def consume(bootstrap: str, topic: str, want: int, client: Mapping[str, str] | None = None,
            timeout: float = 60) -> set[bytes]:
    """Every value of the topic read from the beginning (a group through ``bootstrap``)."""
    c = Consumer({**(client or {}), "bootstrap.servers": bootstrap, "group.id": f"read-{topic}",
                  "auto.offset.reset": "earliest", "enable.auto.commit": False})
    c.subscribe([topic])
    got: set[bytes] = set()
    deadline = time.monotonic() + timeout
    try:
        while len(got) < want and time.monotonic() < deadline:
            m = c.poll(0.5)
            if m is not None and m.error() is None:
                got.add(m.value() or b"")
    finally:
        c.close()
    return got


def run(make: Callable[[], EmulatorNodes | KafkaNodes]) -> Figures:
    started = time.monotonic()
    nodes = make().start()
    try:
        return scenario(nodes, started)
    finally:
        nodes.release()


def main(argv: list[str] | None = None) -> int:
    import argparse

    ap = argparse.ArgumentParser(description="The three-broker Compose scenario on this host.")
    ap.add_argument("--target", choices=("emulator", "kafka"), default="emulator",
                    help="the image's entry point as processes, or Kafka's own JVMs")
    ap.add_argument("--compose", type=Path, default=COMBINED_PLAINTEXT,
                    help="a Compose file written for apache/kafka (combined-mode nodes, or "
                    "isolated-mode controllers and brokers)")
    ap.add_argument("--sasl", action="store_true",
                    help="clients log in as the SASL example's user (SASL_PLAINTEXT, PLAIN)")
    args = ap.parse_args(argv)
    client = SASL_CLIENT if args.sasl else {}
    make: Mapping[str, Callable[[], EmulatorNodes | KafkaNodes]] = {
        "emulator": lambda: EmulatorNodes(args.compose, client),
        "kafka": lambda: KafkaNodes(args.compose, client)}
    f = run(make[args.target])
    print(f"{args.target}: {args.compose.parent.name} ready {f.ready_s:.2f} s, failover "
          f"{f.failover_s:.2f} s, rejoin {f.rejoin_s:.2f} s, {f.acknowledged} acknowledged "
          "records, none lost")
    return 0


if __name__ == "__main__":
    sys.exit(main())
