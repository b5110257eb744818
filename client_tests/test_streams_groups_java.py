"""Kafka Streams with group.protocol=streams (KIP-1071) against the cluster.

client_tests/java/streams-protocol/StreamsGroupWordCount.java is a KTable word count
(a repartition topic and a changelog topic, which the broker creates when the group's
first member brings the topology) on Kafka Streams 4.3.1 (4.4.0 is not on Maven
Central; scripts/setup.d/34-java-streams.sh). One instance counts a first batch; a
second instance joins and the two share the eight tasks (two subtopologies over four
partitions) without ever running one task twice; the second leaves and its tasks move
back; the counts stay exact throughout. kafka-streams-groups (kafka-tools 4.3.1) lists
the group, describes its members, state and offsets, and once it is empty resets and
deletes its input offsets and deletes it (outputs as on Kafka 4.4). Runs
against real Kafka too (--target kafka).
"""

from __future__ import annotations

import itertools
import socket
import subprocess
import threading
import uuid
from pathlib import Path

import pytest

from client_tests import producing
from client_tests.kafka_cluster import request
from client_tests.reading import latest_counts
from emulator.testing import wait_for

JAVA_DIR = Path(__file__).resolve().parent / "java"
CP = f"{JAVA_DIR / '.tools-jars'}/*:{JAVA_DIR / '.classes-streams-protocol'}"
ALL_TASKS = {f"{s}_{p}" for s in (0, 1) for p in range(4)}
STREAMS_GROUPS = ["java", "-XX:+UseSerialGC", "-cp", f"{JAVA_DIR / '.tools-jars'}/*",
                  "org.apache.kafka.tools.streams.StreamsGroupCommand"]  # kafka-streams-groups


def streams_groups(bootstrap: str, *args: str) -> str:
    """kafka-streams-groups.sh (kafka-tools 4.3.1) and its stdout; it must succeed."""
    r = subprocess.run([*STREAMS_GROUPS, "--bootstrap-server", bootstrap, *args],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, (args, r.stdout, r.stderr)
    return r.stdout


def require_app() -> None:
    cls = JAVA_DIR / ".classes-streams-protocol" / "StreamsGroupWordCount.class"
    if not cls.exists():
        raise AssertionError(f"{cls} is missing: run scripts/setup.d/30-java.sh and "
                             "34-java-streams.sh")


class App:
    """One StreamsGroupWordCount JVM; its stdout lines are collected."""

    def __init__(self, bootstrap: str, app_id: str, state_dir: Path, port: int,
                 topics: tuple[str, str], log: Path) -> None:
        self.log = open(log, "a")  # noqa: SIM115 - closed in close
        self.proc = subprocess.Popen(
            ["java", "-Xmx256m", "-XX:+UseSerialGC", "-cp", CP, "StreamsGroupWordCount",
             bootstrap, app_id, str(state_dir), topics[0], topics[1], str(port)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log, text=True)
        self.lines: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.lines.append(line.strip())

    def tasks(self) -> set[str]:
        last = [ln for ln in self.lines if ln.startswith("TASKS ")]
        return set(filter(None, last[-1][6:].split(","))) if last else set()

    def healthy(self) -> bool:
        bad = [ln for ln in self.lines if ln.startswith("ERROR") or ln == "STATE ERROR"]
        assert not bad, self.lines
        return True

    def close(self) -> None:
        if self.proc.stdin and not self.proc.stdin.closed:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=60)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
            self.log.close()
        assert "CLOSED" in self.lines, self.lines


def produce(bootstrap: str, topic: str, lines: list[str]) -> None:
    """One line per partition in turn (so every input partition gets a committed offset)."""
    producing.produce(bootstrap, topic, [line.encode() for line in lines], partitions=4,
                      config={"acks": "all"})


@pytest.mark.kafka_slow  # Kafka Streams JVMs, 30-55 s on Kafka
def test_streams_protocol_word_count_two_instances_share_and_move_tasks(
        cluster, tmp_path: Path) -> None:
    require_app()
    bootstrap = cluster.bootstrap_servers
    tag = uuid.uuid4().hex[:8]
    app_id, words, counts = f"wc-{tag}", f"words-{tag}", f"counts-{tag}"
    cluster.create_topic(words, 4, 3)
    cluster.create_topic(counts, 4, 3)
    produce(bootstrap, words, ["the cat sat", "the dog sat", "a cat", "sat"])
    a: App | None = App(bootstrap, app_id, tmp_path / "a", 7001, (words, counts),
                        tmp_path / "a.log")
    b = None
    try:
        wait_for(lambda: a.healthy() and a.tasks() == ALL_TASKS,
                 "the first instance runs all eight tasks", 120)
        want = {"the": 2, "cat": 2, "sat": 3, "dog": 1, "a": 1}
        assert latest_counts(bootstrap, counts, want) == want
        b = App(bootstrap, app_id, tmp_path / "b", 7002, (words, counts), tmp_path / "b.log")
        overlap: list[set[str]] = []

        def shared() -> bool:
            a.healthy() and b.healthy()
            ta, tb = a.tasks(), b.tasks()
            if ta & tb:
                overlap.append(ta & tb)
            return bool(ta) and bool(tb) and ta | tb == ALL_TASKS and not ta & tb

        wait_for(shared, "the two instances share the tasks", 120)
        assert len(a.tasks()) == len(b.tasks()) == 4
        assert app_id in streams_groups(bootstrap, "--list").split()
        members = streams_groups(bootstrap, "--describe", "--group", app_id, "--members")
        rows = [ln for ln in members.splitlines() if ln.startswith(app_id)]
        assert len(rows) == 2 and all("ACTIVE:" in r for r in rows), members
        state = streams_groups(bootstrap, "--describe", "--group", app_id, "--state")
        assert "Stable" in state or "Reconciling" in state, state
        produce(bootstrap, words, ["the cat ran", "dog"])
        want = {"the": 3, "cat": 3, "sat": 3, "dog": 2, "a": 1, "ran": 1}
        assert latest_counts(bootstrap, counts, want) == want
        b.close()
        b = None
        wait_for(lambda: a.healthy() and a.tasks() == ALL_TASKS,
                 "the leaver's tasks move back to the first instance", 120)
        produce(bootstrap, words, ["bird"])
        want = dict(want, bird=1)
        assert latest_counts(bootstrap, counts, want) == want
        assert not overlap, overlap  # never the same active task on both
        lag = streams_groups(bootstrap, "--describe", "--group", app_id, "--offsets")
        assert words in lag and f"{app_id}-counts-store-repartition" in lag, lag
        a.close()
        a = None
        reset = streams_groups(bootstrap, "--reset-offsets", "--group", app_id, "--input-topic",
                               words, "--to-earliest", "--execute")
        rows = [ln.split() for ln in reset.splitlines() if ln.startswith(app_id)]
        assert sorted((r[1], r[2], r[3]) for r in rows) == [
            (words, str(p), "0") for p in range(4)], reset
        gone = streams_groups(bootstrap, "--delete-offsets", "--group", app_id,
                              "--input-topic", words)
        assert gone.count("Successful") == 4, gone
        deleted = streams_groups(bootstrap, "--delete", "--group", app_id)
        assert "was successful" in deleted, deleted
        assert app_id not in streams_groups(bootstrap, "--list").split()
    finally:
        if b is not None:
            b.close()
        if a is not None:
            a.close()


def coordinator_of(bootstrap: str, group: str) -> int:
    """FindCoordinator v4's node id for ``group`` (retried while it is not available)."""
    servers = itertools.cycle(bootstrap.split(","))

    def answer() -> dict | None:
        host, port = next(servers).rsplit(":", 1)
        try:
            with socket.create_connection((host, int(port)), timeout=5) as s:
                r = request(s, 10, 4, {"key_type": 0, "coordinator_keys": [group]})
        except OSError:
            return None
        [c] = r["coordinators"]
        return c if c["error_code"] == 0 else None

    return wait_for(answer, f"the coordinator of {group}", timeout=60, interval=0.2)["node_id"]


@pytest.mark.kafka_slow  # Kafka Streams JVMs, 30-55 s on Kafka
def test_streams_protocol_app_survives_its_group_coordinator_crash(cluster,
                                                                  tmp_path: Path) -> None:
    """The broker coordinating the streams group crashes: the app finds the new
    coordinator, keeps its member epoch and tasks, and goes on counting."""
    require_app()
    bootstrap = cluster.bootstrap_servers
    tag = uuid.uuid4().hex[:8]
    app_id, words, counts = f"wcf-{tag}", f"words-{tag}", f"counts-{tag}"
    cluster.create_topic(words, 4, 3)
    cluster.create_topic(counts, 4, 3)
    produce(bootstrap, words, ["a b", "c", "a", "d"])
    a = App(bootstrap, app_id, tmp_path / "a", 7003, (words, counts), tmp_path / "a.log")
    try:
        wait_for(lambda: a.healthy() and a.tasks() == ALL_TASKS, "the app runs every task", 120)
        want = {"a": 2, "b": 1, "c": 1, "d": 1}
        assert latest_counts(bootstrap, counts, want) == want
        coordinator = coordinator_of(bootstrap, app_id)
        cluster.stop_broker(coordinator)
        produce(bootstrap, words, ["a", "e", "e", "b"])
        want = {"a": 3, "b": 2, "c": 1, "d": 1, "e": 2}
        assert latest_counts(bootstrap, counts, want, timeout=120) == want
        assert a.healthy() and a.tasks() == ALL_TASKS
        assert coordinator_of(bootstrap, app_id) != coordinator
        cluster.start_broker(coordinator)
    finally:
        a.close()
