"""Apache Kafka itself, started for tests and benchmarks: the project's one real-Kafka launcher.

A KRaft cluster as Kafka runs in production, small: one dedicated controller process
(node id ``CONTROLLER_ID``) and N broker processes with node ids 1..N, each its own JVM
with a small heap, all on 127.0.0.1 with ports the OS chose. The jars are Kafka's own
from Maven Central, through client_tests/kafka-server/pom.xml into .cache/kafka/<version>
(``ensure_jars``; scripts/setup.d/32-kafka-server.sh fetches the default release ahead
of the tests). Any release with a kafka_2.13 artifact works (4.4.0 by default; 4.2.x
and 4.3.x are used to compare ApiVersions).

    with KafkaCluster(brokers=3) as kafka:
        admin = AdminClient({"bootstrap.servers": kafka.bootstrap_servers})
        kafka.kill_broker(2)        # SIGKILL the JVM of broker 2
        kafka.start_broker(2)       # the same node, same log dir and ports, again

Extra broker configs (``broker_config``, a dict or a function of the node id) and
controller configs go over the defaults, so a test can ask for SASL listeners or
StandardAuthorizer (``listeners`` adds named listeners with their own ports; see
``listener_port``). Broker defaults are Kafka's, except the few in ``small_cluster_config``
that make a small test cluster usable and fast (replication factors that fit N brokers,
no initial rebalance delay); ``kafka_defaults=True`` leaves even those out.

The JVMs die with the Python process that started them (PR_SET_PDEATHSIG), so a killed
test run leaves no broker behind.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import os
import random
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from client_tests.process_guard import die_with_parent
from emulator.blocking_client import call
from emulator.testing import wait_for

ROOT = Path(__file__).resolve().parent.parent
POM = ROOT / "client_tests" / "kafka-server" / "pom.xml"
CACHE = ROOT / ".cache" / "kafka"
DEFAULT_VERSION = "4.4.0"
# The releases the project checks itself against (schemas, ApiVersions): the newest patch
# of each minor line the emulator can pose as; DEFAULT_VERSION is the newest.
SUPPORTED_VERSIONS = ("4.2.2", "4.3.1", DEFAULT_VERSION)
CONTROLLER_ID = 100
LOG4J2 = """status = error
rootLogger.level = WARN
rootLogger.appenderRef.stdout.ref = STDOUT
appender.stdout.type = Console
appender.stdout.name = STDOUT
appender.stdout.layout.type = PatternLayout
appender.stdout.layout.pattern = [%d] %p %m (%c)%n
"""
# JVM options for a test node: a small heap and a quick start (C1 only, serial GC), which
# is what matters when a test starts a cluster; bench/compare.py passes Kafka's own.
TEST_JVM_OPTS = ["-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xshare:auto",
                 "-Djava.awt.headless=true"]
BROKER_HEAP = "320m"
CONTROLLER_HEAP = "192m"


def small_cluster_config(brokers: int) -> dict[str, str]:
    """What a small test cluster needs beyond Kafka's defaults, and why each.

    Internal topics with Kafka's replication factor 3 could not be created on 1 or 2
    brokers; 50 partitions of __consumer_offsets cost seconds to create; and the 3 s
    initial rebalance delay would slow every group test (the emulator's fast default is
    0 too).
    """
    rf = str(min(3, brokers))
    return {
        "offsets.topic.replication.factor": rf,
        "offsets.topic.num.partitions": "5",
        "transaction.state.log.replication.factor": rf,
        "transaction.state.log.min.isr": str(min(2, brokers)),
        "transaction.state.log.num.partitions": "5",
        "share.coordinator.state.topic.replication.factor": rf,
        "share.coordinator.state.topic.min.isr": str(min(2, brokers)),
        "group.initial.rebalance.delay.ms": "0",
    }


# ---- jars -------------------------------------------------------------------------------
def jars_dir(version: str = DEFAULT_VERSION) -> Path:
    return CACHE / version


def ensure_jars(version: str = DEFAULT_VERSION, quiet: bool = False) -> Path:
    """Kafka ``version``'s broker jars from Maven Central into .cache/kafka/<version>, once.

    Idempotent: a stamp of the pom's hash says the directory is complete and current.
    """
    target = jars_dir(version)
    stamp = target / ".pom.sha1"
    want = hashlib.sha1(POM.read_bytes()).hexdigest()
    if stamp.exists() and stamp.read_text().strip() == want:
        return target
    if shutil.which("mvn") is None or shutil.which("java") is None:
        raise RuntimeError("Kafka's jars need Maven and a JDK (>= 17): install them, or run "
                           "scripts/setup.d/32-kafka-server.sh")
    if not quiet:
        print(f"kafka_cluster: fetching Apache Kafka {version} from Maven Central into "
              f"{target} ...", flush=True)
    shutil.rmtree(target, ignore_errors=True)
    r = subprocess.run(["mvn", "-q", "-B", "-f", str(POM), "dependency:copy-dependencies",
                        f"-Dkafka.version={version}", f"-DoutputDirectory={target}"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        tail = "\n".join((r.stdout + r.stderr).strip().splitlines()[-5:])
        raise RuntimeError(f"Maven could not fetch Apache Kafka {version}:\n{tail}")
    stamp.write_text(want + "\n")
    return target


# ---- helpers ----------------------------------------------------------------------------
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# The ports of Kafka's JVMs, which bind seconds after they are planned. A port the kernel
# chose (bind to 0, then released) is in its ephemeral range, where every outgoing
# connection of the suite and every other bind to 0 may take it in the meantime: a whole
# module of the first pass once errored on a broker's "Address already in use" while the
# Kafka pass ran beside it. So they are chosen below that range (ip_local_port_range
# starts at 32768 here) and away from emulator.containers.PORT_RANGE, and a file per port
# in RESERVED keeps this machine's test processes (xdist workers, the Kafka pass) from
# choosing the same one; a file whose process is gone is taken back.
JVM_PORT_RANGE = (10000, 20000)
RESERVED = Path(tempfile.gettempdir()) / "kafka-cluster-ports"


def reserve_port() -> int:
    """A port in JVM_PORT_RANGE free to bind now and reserved until release_port."""
    RESERVED.mkdir(exist_ok=True)
    rng = random.Random()
    for _ in range(1000):
        port = rng.randrange(*JVM_PORT_RANGE)
        mark = RESERVED / str(port)
        try:
            fd = os.open(mark, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            _take_back_if_stale(mark)
            continue
        with os.fdopen(fd, "w") as f:
            f.write(str(os.getpid()))
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
                return port
            except OSError:
                pass
        mark.unlink(missing_ok=True)
    raise RuntimeError(f"no free port to reserve in {JVM_PORT_RANGE} ({RESERVED})")


def release_port(port: int) -> None:
    (RESERVED / str(port)).unlink(missing_ok=True)


class PortReservations:
    """The reserve_port ports of one owner (a cluster, a set of nodes, a worker), given
    back together by ``release`` when the owner stops for good."""

    def __init__(self) -> None:
        self.ports: list[int] = []

    def take(self) -> int:
        self.ports.append(reserve_port())
        return self.ports[-1]

    def release(self) -> None:
        for port in self.ports:
            release_port(port)
        self.ports.clear()


def _take_back_if_stale(mark: Path) -> None:
    try:
        os.kill(int(mark.read_text()), 0)
    except ProcessLookupError:  # its process is gone
        mark.unlink(missing_ok=True)
    except (OSError, ValueError):  # alive, or not written yet
        pass


def new_cluster_id() -> str:
    """A KRaft cluster id: a random UUID in Kafka's URL-safe base64 without padding; not
    one starting with "-", which kafka-storage's argument parser takes for an option
    ("argument --cluster-id/-t: expected one argument")."""
    while True:
        cid = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not cid.startswith("-"):
            return cid


def metadata_brokers(port: int, timeout: float = 2.0) -> tuple[set[int], int] | None:
    """(broker ids, controller id) from a Metadata request to 127.0.0.1:port, or None.

    Spoken with our own codec (wire/), so the launcher needs no client library.
    """
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
            body = request(s, 3, 12, {"topics": [], "allow_auto_topic_creation": False},
                           "kafka-cluster-launcher")
    except OSError:
        return None
    return {b["node_id"] for b in body["brokers"]}, body["controller_id"]


def request(sock: socket.socket, key: int, version: int, body: dict,
            client_id: str = "kafka-emulator-tools", correlation_id: int = 1) -> dict:
    """Send one request on an open connection and decode its response with wire/.

    The one raw round trip of the tools that talk to either target without a client
    library (the launcher, conformance scripts, benchmarks): emulator/blocking_client.py's
    connection over the caller's socket, for this request and its answer.
    """
    return call(sock, key, version, body, client_id, correlation_id)


def _write_properties(path: Path, props: Mapping[str, object]) -> None:
    path.write_text("".join(f"{k}={v}\n" for k, v in props.items()))


@dataclass
class Node:
    """One Kafka JVM: its node id, role, ports by listener name and process."""

    node_id: int
    role: str  # "broker" or "controller"
    ports: dict[str, int]
    config_path: Path
    log_path: Path
    proc: subprocess.Popen | None = None
    starts: int = 0

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None


class KafkaCluster:
    """A real Apache Kafka cluster in KRaft mode: a controller and N brokers (ids 1..N)."""

    def __init__(
        self,
        brokers: int = 3,
        version: str = DEFAULT_VERSION,
        broker_config: Mapping[str, object] | Callable[[int], Mapping[str, object]] | None
        = None,
        controller_config: Mapping[str, object] | None = None,
        listeners: Mapping[str, str] | None = None,
        jvm_opts: list[str] | None = None,
        broker_heap: str = BROKER_HEAP,
        controller_heap: str = CONTROLLER_HEAP,
        kafka_defaults: bool = False,
        workdir: str | os.PathLike | None = None,
        start_timeout: float = 120.0,
        nodes: Mapping[int, Mapping[str, str]] | None = None,
        cluster_id: str | None = None,
    ) -> None:
        """``listeners`` maps extra listener names to security protocols, e.g.
        {"SASL_PLAINTEXT": "SASL_PLAINTEXT"}; every broker gets a port for each besides
        PLAINTEXT (the inter-broker listener and ``bootstrap_servers``).

        ``nodes`` (node id -> server properties) replaces that layout with nodes of the
        caller's own, e.g. the combined-mode (broker,controller) nodes of a Compose file
        written for apache/kafka, their variables turned into properties on this host
        (client_tests/official_nodes.py): every node, controller-only ones of an
        isolated-mode file too, is then kept in ``brokers`` by its id (kill_broker and
        start_broker take any of them) with ``listeners`` ports of its own, and only
        ``log.dirs`` is replaced (by one in the work dir). ``cluster_id`` formats them
        with a given id; start them with ``wait=False`` when some are controllers."""
        if nodes is not None:
            brokers = len(nodes)
        if brokers < 1:
            raise ValueError("a Kafka cluster needs at least one broker")
        self.version = version
        self.broker_count = brokers
        self.broker_config = broker_config
        self.controller_config = dict(controller_config or {})
        self.listeners = dict(listeners or {})
        self.jvm_opts = TEST_JVM_OPTS if jvm_opts is None else list(jvm_opts)
        self.broker_heap, self.controller_heap = broker_heap, controller_heap
        self.kafka_defaults = kafka_defaults
        self.start_timeout = start_timeout
        self._own_workdir = workdir is None
        self.workdir = Path(workdir or tempfile.mkdtemp(prefix="kafka-cluster-"))
        self.cluster_id = cluster_id or new_cluster_id()
        self.given_nodes = {i: dict(props) for i, props in (nodes or {}).items()}
        self.jars = jars_dir(version)
        self.controller: Node | None = None
        self.brokers: dict[int, Node] = {}
        self._reserved = PortReservations()  # released by stop()

    # ---- lifecycle ------------------------------------------------------------------
    def start(self, wait: bool = True) -> KafkaCluster:
        """Format every node's storage, start the JVMs, return once every broker is
        registered and unfenced (named in Metadata); with ``wait=False`` once they are
        launched (the caller waits its own way: given nodes whose every listener wants
        SASL, which this launcher's raw Metadata cannot ask)."""
        ensure_jars(self.version)
        (self.workdir / "log4j2.properties").write_text(LOG4J2)
        self._plan()
        try:
            self._format()
            if self.controller is not None:
                self._launch(self.controller)
            for node in self.brokers.values():
                self._launch(node)
            if wait:
                self.wait_for_brokers(set(self.brokers), self.start_timeout)
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        """Stop every JVM (SIGTERM, then SIGKILL after 20 s) and remove the work dir."""
        nodes = [*self.brokers.values(), *([self.controller] if self.controller else [])]
        for node in nodes:
            if node.alive:
                node.proc.terminate()
        for node in nodes:
            self._reap(node, 20)
        self._reserved.release()
        if self._own_workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def __enter__(self) -> KafkaCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ---- what clients see -----------------------------------------------------------
    @property
    def bootstrap_servers(self) -> str:
        return self.bootstrap("PLAINTEXT")

    def bootstrap(self, listener: str = "PLAINTEXT") -> str:
        return ",".join(f"127.0.0.1:{n.ports[listener]}" for n in self.brokers.values())

    @property
    def broker_ids(self) -> list[int]:
        return sorted(self.brokers)

    def listener_port(self, node_id: int, listener: str = "PLAINTEXT") -> int:
        return self.brokers[node_id].ports[listener]

    def broker_pid(self, node_id: int) -> int | None:
        node = self.brokers[node_id]
        return node.proc.pid if node.alive else None

    def log_tail(self, node_id: int, lines: int = 40) -> str:
        node = self.controller if node_id == CONTROLLER_ID else self.brokers[node_id]
        try:
            return "\n".join(node.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def wait_for_topic(self, topic: str, partitions: int | None = None,
                       timeout: float = 60.0) -> None:
        """Until every broker has applied the topic, as a careful tool waits after
        CreateTopics (``partitions``: how many it has; None, whatever Metadata says).

        A KRaft broker applies a metadata change in two steps (BrokerMetadataPublisher):
        its metadata cache first, which Metadata answers from, then its ReplicaManager,
        which creates the replica's log and makes it leader or follower. Between the two,
        the broker Metadata names as leader refuses Produce, Fetch and ListOffsets for the
        partition (NOT_LEADER_OR_FOLLOWER, UNKNOWN_TOPIC_OR_PARTITION) and a replica's
        log is missing from DescribeLogDirs. So this waits for all three, each asked of
        the broker concerned on a connection of its own (a client library may send its
        request to any broker):

        - every live broker's Metadata names each partition with a leader, all alike;
        - every live replica's broker lists that replica's log in DescribeLogDirs;
        - each partition's leader answers ListOffsets for it with NONE.

        Brokers that are down are left out: they apply the topic when they start."""
        alive = {bid: node.ports["PLAINTEXT"] for bid, node in self.brokers.items()
                 if node.alive}

        def ask(bid: int, key: int, version: int, body: dict) -> dict | None:
            try:
                with socket.create_connection(("127.0.0.1", alive[bid]), timeout=5) as s:
                    return request(s, key, version, body, "wait-for-topic")
            except OSError:
                return None

        def layout(bid: int) -> dict[int, tuple[int, tuple[int, ...]]] | None:
            """{partition: (leader, replicas)} as broker ``bid``'s metadata cache has it."""
            body = ask(bid, 3, 12, {"topics": [{"topic_id": bytes(16), "name": topic}],
                                    "allow_auto_topic_creation": False})
            if body is None:
                return None
            t = body["topics"][0]
            parts = {p["partition_index"]: (p["leader_id"], tuple(p["replica_nodes"]))
                     for p in t["partitions"]}
            if t["error_code"] != 0 or not parts or any(v[0] < 0 for v in parts.values()):
                return None
            if partitions is not None and len(parts) != partitions:
                return None
            return parts

        def hosted(bid: int, indexes: list[int]) -> set[int]:
            """The partitions of the topic whose log broker ``bid`` lists."""
            body = ask(bid, 35, 4, {"topics": [{"topic": topic, "partitions": indexes}]})
            if body is None or body["error_code"] != 0:
                return set()
            return {p["partition_index"] for r in body["results"] if r["error_code"] == 0
                    for t in r["topics"] if t["name"] == topic for p in t["partitions"]}

        def leads(bid: int, indexes: list[int]) -> bool:
            body = ask(bid, 2, 7, {"replica_id": -1, "isolation_level": 0, "topics": [
                {"name": topic, "partitions": [
                    {"partition_index": i, "current_leader_epoch": -1, "timestamp": -1}
                    for i in indexes]}]})
            return body is not None and sorted(
                p["partition_index"] for t in body["topics"] for p in t["partitions"]
                if p["error_code"] == 0) == sorted(indexes)

        def applied() -> bool:
            views = [layout(bid) for bid in alive]
            if not views or any(v is None or v != views[0] for v in views):
                return False
            parts = views[0]
            assert parts is not None
            for bid in alive:
                mine = sorted(i for i, (_, replicas) in parts.items() if bid in replicas)
                if mine and not set(mine) <= hosted(bid, mine):
                    return False
            leaders: dict[int, list[int]] = {}
            for i, (leader, _) in parts.items():
                leaders.setdefault(leader, []).append(i)
            return all(bid in alive and leads(bid, idx) for bid, idx in leaders.items())

        wait_for(applied, f"every broker to apply topic {topic} (its leaders in Metadata, "
                 "each replica's log in DescribeLogDirs, each leader answering ListOffsets)",
                 timeout=timeout, interval=0.05)

    # ---- faults ---------------------------------------------------------------------
    def kill_broker(self, node_id: int) -> None:
        """SIGKILL broker ``node_id``'s JVM: a crash, no controlled shutdown. The
        controller fences it after broker.session.timeout.ms, as in production."""
        node = self.brokers[node_id]
        if node.alive:
            node.proc.send_signal(signal.SIGKILL)
        self._reap(node, 10)

    def stop_broker(self, node_id: int, timeout: float = 60.0) -> None:
        """A clean stop (SIGTERM: controlled shutdown, leadership moved first)."""
        node = self.brokers[node_id]
        if node.alive:
            node.proc.terminate()
        self._reap(node, timeout)

    def start_broker(self, node_id: int, wait: bool = True) -> None:
        """Start broker ``node_id`` again on its log dir and ports; with ``wait``,
        return once the cluster names it in Metadata again."""
        node = self.brokers[node_id]
        if node.alive:
            raise RuntimeError(f"broker {node_id} is running")
        self._launch(node)
        if wait:
            self.wait_for_brokers({node_id}, self.start_timeout)

    def restart_broker(self, node_id: int, kill: bool = True) -> None:
        (self.kill_broker if kill else self.stop_broker)(node_id)
        self.start_broker(node_id)

    def wait_for_brokers(self, ids: set[int], timeout: float) -> None:
        """Until Metadata from a live broker (and each of ``ids`` itself) names all ids."""
        def ready() -> bool:
            for node in [*self.brokers.values(), self.controller]:
                if node is not None and node.proc is not None and not node.alive:
                    if node.node_id in ids or node.role == "controller":
                        raise RuntimeError(
                            f"Kafka node {node.node_id} exited with {node.proc.returncode}:\n"
                            f"{self.log_tail(node.node_id)}")
            return all(self._names(i, ids) for i in ids)

        try:
            wait_for(ready, f"Kafka brokers {sorted(ids)}", timeout=timeout, interval=0.2)
        except AssertionError:
            tails = "\n".join(f"--- node {i}\n{self.log_tail(i, 15)}" for i in ids)
            raise RuntimeError(f"Kafka brokers {sorted(ids)} not ready within {timeout} s"
                               f"\n{tails}") from None

    def _names(self, node_id: int, ids: set[int]) -> bool:
        seen = metadata_brokers(next(iter(self.brokers[node_id].ports.values())))
        return seen is not None and ids <= seen[0]

    # ---- internals ------------------------------------------------------------------
    def _plan(self) -> None:
        if self.given_nodes:
            self._plan_given()
            return
        # Reserved ports (reserve_port): never one port twice, in this plan or another's.
        fresh = self._reserved.take
        cport = fresh()
        self.controller = Node(CONTROLLER_ID, "controller", {"CONTROLLER": cport},
                               self.workdir / "controller.properties",
                               self.workdir / "controller.log")
        for i in range(1, self.broker_count + 1):
            ports = {"PLAINTEXT": fresh()}
            ports.update({name: fresh() for name in self.listeners})
            self.brokers[i] = Node(i, "broker", ports, self.workdir / f"broker-{i}.properties",
                                   self.workdir / f"broker-{i}.log")
        voters = f"{CONTROLLER_ID}@127.0.0.1:{cport}"
        protocols = {"PLAINTEXT": "PLAINTEXT", "CONTROLLER": "PLAINTEXT", **self.listeners}
        protocol_map = ",".join(f"{k}:{v}" for k, v in protocols.items())
        _write_properties(self.controller.config_path, {
            "process.roles": "controller", "node.id": CONTROLLER_ID,
            "controller.quorum.voters": voters,
            "listeners": f"CONTROLLER://127.0.0.1:{cport}",
            "controller.listener.names": "CONTROLLER",
            "listener.security.protocol.map": protocol_map,
            "log.dirs": self.workdir / "data-controller",
            **self.controller_config,
        })
        for i, node in self.brokers.items():
            listeners = ",".join(f"{name}://127.0.0.1:{port}" for name, port in node.ports.items())
            props: dict[str, object] = {
                "process.roles": "broker", "node.id": i,
                "controller.quorum.voters": voters,
                "listeners": listeners, "advertised.listeners": listeners,
                "inter.broker.listener.name": "PLAINTEXT",
                "controller.listener.names": "CONTROLLER",
                "listener.security.protocol.map": protocol_map,
                "log.dirs": self.workdir / f"data-{i}",
            }
            if not self.kafka_defaults:
                props.update(small_cluster_config(self.broker_count))
            extra = self.broker_config(i) if callable(self.broker_config) else self.broker_config
            props.update(extra or {})
            _write_properties(node.config_path, props)

    def _plan_given(self) -> None:
        """Nodes from the caller's properties: each listens where its ``listeners`` say
        (its first non-controller listener first: the one ``_names`` asks Metadata)."""
        for i, props in sorted(self.given_nodes.items()):
            controllers = {n.strip() for n in props.get("controller.listener.names",
                                                        "").split(",")}
            ports: dict[str, int] = {}
            for item in props["listeners"].split(","):
                name, _, addr = item.strip().partition("://")
                ports[name] = int(addr.rsplit(":", 1)[1])
            ports = dict(sorted(ports.items(), key=lambda kv: kv[0] in controllers))
            # a controller-only node (isolated mode) is kept with the others, by its id,
            # and started with the controller's heap
            role = "controller" if props.get("process.roles", "").strip() == "controller" \
                else "broker"
            self.brokers[i] = Node(i, role, ports, self.workdir / f"node-{i}.properties",
                                   self.workdir / f"node-{i}.log")
            _write_properties(self.brokers[i].config_path,
                              {**props, "log.dirs": self.workdir / f"data-{i}"})

    def _java(self, heap: str) -> list[str]:
        return ["java", f"-Xmx{heap}", f"-Xms{heap}", *self.jvm_opts,
                f"-Dlog4j2.configurationFile={self.workdir / 'log4j2.properties'}",
                f"-Dkafka.logs.dir={self.workdir}", "-cp", f"{self.jars}/*"]

    def _format(self) -> None:
        """kafka-storage format for every node, in parallel (one JVM each)."""
        nodes = [n for n in (self.controller, *self.brokers.values()) if n is not None]
        procs = [subprocess.Popen(
            [*self._java("128m"), "kafka.tools.StorageTool", "format", "-t", self.cluster_id,
             "-c", str(n.config_path)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True, preexec_fn=die_with_parent) for n in nodes]
        for n, p in zip(nodes, procs, strict=True):
            out, _ = p.communicate(timeout=120)
            if p.returncode != 0:
                raise RuntimeError(f"kafka-storage format of node {n.node_id} failed:\n{out}")

    def _launch(self, node: Node) -> None:
        heap = self.controller_heap if node.role == "controller" else self.broker_heap
        node.starts += 1
        with open(node.log_path, "a") as log:
            log.write(f"==== start {node.starts}\n")
            log.flush()
            node.proc = subprocess.Popen([*self._java(heap), "kafka.Kafka",
                                          str(node.config_path)],
                                         stdout=log, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, preexec_fn=die_with_parent)

    @staticmethod
    def _reap(node: Node, timeout: float) -> None:
        if node.proc is None:
            return
        try:
            node.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            node.proc.kill()
            node.proc.wait(10)


def main() -> None:
    """``python -m client_tests.kafka_cluster [--version V] [--brokers N] [--fetch-only]
    [--all-versions]``: fetch the jars (of every supported release with --all-versions),
    or start a cluster and print its bootstrap servers until Ctrl-C."""
    import argparse

    ap = argparse.ArgumentParser(description=main.__doc__)
    ap.add_argument("--version", default=DEFAULT_VERSION)
    ap.add_argument("--brokers", type=int, default=3)
    ap.add_argument("--fetch-only", action="store_true", help="only fetch the jars")
    ap.add_argument("--all-versions", action="store_true",
                    help=f"with --fetch-only: every supported release {SUPPORTED_VERSIONS}")
    args = ap.parse_args()
    if args.fetch_only:
        for version in SUPPORTED_VERSIONS if args.all_versions else (args.version,):
            target = ensure_jars(version)
            print(f"Apache Kafka {version}: {len(list(target.glob('*.jar')))} jars in "
                  f"{target.relative_to(ROOT)}", flush=True)
        return
    ensure_jars(args.version)
    t0 = time.monotonic()
    with KafkaCluster(brokers=args.brokers, version=args.version) as k:
        print(f"Apache Kafka {args.version}: {args.brokers} brokers ready in "
              f"{time.monotonic() - t0:.1f} s at {k.bootstrap_servers}", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            signal.pause()


if __name__ == "__main__":
    main()
