"""Kafka Connect in distributed mode (connect-runtime from Maven Central) against the
emulator: the worker creates its compacted config/offset/status topics, runs a
FileStreamSource connector, and after a worker restart (SIGKILL) finds its connector in
the config topic and its position in the offset topic: lines sent before are not sent
again, lines written since are."""

from __future__ import annotations

import json
import signal
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest
from confluent_kafka import Consumer, KafkaError, TopicPartition

from client_tests.kafka_cluster import release_port, reserve_port
from client_tests.process_guard import die_with_parent
from emulator import Cluster
from emulator.testing import wait_for
from wire.records import decode_records

# Not run with --target kafka: the emulator serving Kafka Connect's distributed worker (its
# compacted internal topics) across a worker restart, on an emulator of its own.
pytestmark = pytest.mark.emulator_only

JAVA_DIR = Path(__file__).resolve().parent / "java"
CP = f"{JAVA_DIR / '.tools-jars'}/*"


class Worker:
    def __init__(self, bootstrap: str, tmp: Path) -> None:
        if not (JAVA_DIR / ".tools-jars").is_dir() or not list(
                (JAVA_DIR / ".tools-jars").glob("connect-runtime-*.jar")):
            raise RuntimeError("connect-runtime is not in client_tests/java/.tools-jars: run "
                               "scripts/setup.d/30-java.sh")
        self.port = reserve_port()  # the REST listener's, released by stop
        self.props = tmp / "worker.properties"
        self.props.write_text("\n".join([
            f"bootstrap.servers={bootstrap}", "group.id=connect-cluster",
            "key.converter=org.apache.kafka.connect.storage.StringConverter",
            "value.converter=org.apache.kafka.connect.storage.StringConverter",
            "config.storage.topic=connect-configs", "offset.storage.topic=connect-offsets",
            "status.storage.topic=connect-status", "config.storage.replication.factor=3",
            "offset.storage.replication.factor=3", "status.storage.replication.factor=3",
            "offset.flush.interval.ms=500", f"listeners=http://127.0.0.1:{self.port}",
            "plugin.discovery=only_scan", ""]))
        self.log_path = tmp / "connect.log"
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        self.log = open(self.log_path, "a")  # noqa: SIM115 - closed in stop
        self.proc = subprocess.Popen(
            ["java", "-Xmx384m", "-cp", CP, "org.apache.kafka.connect.cli.ConnectDistributed",
             str(self.props)], stdout=self.log, stderr=subprocess.STDOUT,
            preexec_fn=die_with_parent)
        self.wait(lambda: self.get("/") is not None, "the worker's REST API")

    def get(self, path: str) -> object:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}{path}", timeout=5) as r:
                return json.loads(r.read() or b"null")
        except (OSError, ValueError):
            return None

    def put(self, path: str, body: dict) -> object:
        req = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}", method="PUT",
                                     data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=30) as r:
            return json.loads(r.read() or b"null")

    def wait(self, cond, what: str, timeout: float = 120) -> None:
        def done() -> bool:
            if cond():
                return True
            assert self.proc is not None and self.proc.poll() is None, \
                f"connect worker died:\n{self.log_path.read_text()[-4000:]}"
            return False

        try:
            wait_for(done, what, timeout=timeout, interval=0.5)
        except AssertionError as e:
            if "connect worker died" in str(e):
                raise
            raise AssertionError(f"{e}:\n{self.log_path.read_text()[-4000:]}") from None

    def stop(self, sig: int) -> None:
        assert self.proc is not None
        self.proc.send_signal(sig)
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            # Say why: a thread dump (SIGQUIT prints it to the worker's log) shows which
            # close the JVM is stuck in, then the log's tail goes into the failure.
            self.proc.send_signal(signal.SIGQUIT)
            time.sleep(2)
            self.proc.kill()
            self.proc.wait(30)
            self.log.close()
            raise AssertionError(f"the Connect worker did not stop within 60 s of signal "
                                 f"{sig}:\n{self.log_path.read_text()[-12000:]}") from None
        self.log.close()

    def kill(self) -> None:
        """Teardown, pass or fail: no JVM outlives its test."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(30)
        release_port(self.port)


def read_lines(bootstrap: str, topic: str, expect: int, timeout: float = 60) -> list[str]:
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "reader",
                  "enable.auto.commit": False, "auto.offset.reset": "earliest",
                  "enable.partition.eof": True})
    c.assign([TopicPartition(topic, 0, 0)])
    out: list[str] = []

    def at_the_end() -> bool:
        m = c.poll(0.2)
        if m is None:
            return False
        if m.error() is not None:
            assert m.error().code() in (KafkaError._PARTITION_EOF,
                                        KafkaError.UNKNOWN_TOPIC_OR_PART), m.error()
            return len(out) >= expect
        out.append(m.value().decode())
        return False

    wait_for(at_the_end, f"{expect} lines and the end of {topic}", timeout=timeout, interval=0)
    c.close()
    return out


def test_connect_distributed_file_source_survives_a_worker_restart(tmp_path: Path) -> None:
    source = tmp_path / "input.txt"
    source.write_text("".join(f"line-{i}\n" for i in range(10)))
    with Cluster(port=0) as cluster:
        bootstrap = cluster.bootstrap_servers
        cluster.create_topic("file-lines", 1, 3)
        w = Worker(bootstrap, tmp_path)
        try:
            run_connector(cluster, w, source)
        finally:
            w.kill()


def stored_position(cluster: Cluster) -> int:
    """The FileStreamSource position last written to connect-offsets (-1: none yet)."""
    pos = -1
    for p in cluster.state.topics["connect-offsets"].partitions:
        for batch in p.leader_log.read(-1, 1 << 40, p.high_watermark):
            for r in decode_records(batch):
                if r.value:
                    pos = max(pos, int(json.loads(r.value).get("position", -1)))
    return pos


def run_connector(cluster: Cluster, w: Worker, source: Path) -> None:
    bootstrap = cluster.bootstrap_servers
    w.start()
    w.put("/connectors/file-source/config", {
        "connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector",
        "tasks.max": "1", "file": str(source), "topic": "file-lines"})
    assert read_lines(bootstrap, "file-lines", 10) == [f"line-{i}" for i in range(10)]
    policies = cluster.call(lambda: {
        name: cluster.state.topic_config(cluster.state.topics[name], "cleanup.policy")
        for name in ("connect-configs", "connect-offsets", "connect-status")})
    assert policies == dict.fromkeys(policies, "compact")
    # the source offset of all 10 lines (byte position 70) is in connect-offsets
    # (offset.flush.interval.ms) before the kill: then nothing may be sent twice
    size = source.stat().st_size
    w.wait(lambda: cluster.call(lambda: stored_position(cluster)) == size,
           "the source offset in connect-offsets")
    w.stop(signal.SIGKILL)
    with open(source, "a") as f:
        f.write("".join(f"line-{i}\n" for i in range(10, 15)))
    w.start()  # the connector comes back from connect-configs, its position too
    w.wait(lambda: (w.get("/connectors/file-source/status") or {}).get(
        "tasks", [{}])[0].get("state") == "RUNNING", "the restored connector's task")
    lines = read_lines(bootstrap, "file-lines", 15)
    assert lines == [f"line-{i}" for i in range(15)]
    assert w.get("/connectors") == ["file-source"]
    # The graceful end goes through the herder, not SIGTERM: the connector is stopped over
    # REST, so the worker stops its task, writes the STOPPED target state to connect-configs
    # and the task's status to connect-status, all through the emulator. On SIGTERM the
    # worker's shutdown hook stops its REST server before its herder, and Jetty's stop can
    # park in Server.join for over a minute racing Jetty's own shutdown hook (seen under
    # load: the herder was never asked to stop), which is Jetty's timing, not the broker's.
    w.put("/connectors/file-source/stop", {})
    w.wait(lambda: (w.get("/connectors/file-source/status") or {}).get(
        "connector", {}).get("state") == "STOPPED", "the connector stopped")
    w.wait(lambda: (w.get("/connectors/file-source/status") or {}).get("tasks") == [],
           "its task stopped")
    assert w.get("/connectors/file-source/config")["file"] == str(source)
    w.stop(signal.SIGKILL)
