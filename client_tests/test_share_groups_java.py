"""Kafka's own KafkaShareConsumer (Java, kafka-clients 4.4.0) and kafka-share-groups
(kafka-tools, see client_tests/java/pom.xml) against share groups (KIP-932), on both
targets (``--target kafka`` runs them on Kafka 4.4; ``share_cluster`` has test-paced
share configs on both, client_tests/targets.py SHARE_TEST_CONFIG).

client_tests/java/src/ShareClient.java is one share consumer per JVM, printing every
record it gets with its delivery count and accepting, releasing, rejecting or crashing
by mode. The tests: several consumers on one partition never get the same record at
once; released records come back with delivery count 2; rejected records are archived
for good; a crashed consumer's records come back once the acquisition lock runs out.
Records are produced with confluent-kafka. Share groups start at share.auto.offset.reset
(latest by default); the tests set it to earliest, as users do, on the GROUP config
resource (IncrementalAlterConfigs), and read the group's progress with
DescribeShareGroupOffsets and ShareGroupDescribe.
"""

from __future__ import annotations

import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import Producer

from client_tests import producing
from client_tests.producing import numbered
from client_tests.rawkafka import (
    leader_conn,
    list_offset,
    set_group_config,
    share_all_finished,
    share_group_members,
    share_partition_offsets,
)
from client_tests.targets import KafkaTarget
from emulator import Cluster
from emulator.testing import wait_for

Target = Cluster | KafkaTarget

JAVA_DIR = Path(__file__).resolve().parent / "java"
JVM_OPTS = ["java", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xshare:auto"]
JVM = [*JVM_OPTS, "-cp", f"{JAVA_DIR / '.classes'}:{JAVA_DIR / '.jars'}/*"]
TOOLS_JVM = [*JVM_OPTS, "-cp", f"{JAVA_DIR / '.tools-jars'}/*"]
SHARE_GROUPS = "org.apache.kafka.tools.consumer.group.ShareGroupCommand"


def require_java() -> None:
    for p in (JAVA_DIR / ".tools-jars", JAVA_DIR / ".classes" / "ShareClient.class"):
        if not p.exists():
            raise AssertionError(f"{p} is missing: run scripts/setup.d/30-java.sh "
                                 "(needs a JDK and Maven) before these tests")


@pytest.fixture(autouse=True)
def _java_built() -> None:
    require_java()


class ShareConsumer:
    """One ShareClient JVM; ``records`` fills from its output as it runs."""

    def __init__(self, c: Target, group: str, topic: str, mode: str) -> None:
        self.proc = subprocess.Popen(JVM + ["ShareClient", c.bootstrap_servers, group, topic,
                                            mode], text=True, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.records: list[tuple[int, int, int]] = []  # (partition, offset, delivery count)
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            line = line.rstrip("\n")
            self.lines.append(line)
            if line.startswith("R "):
                _, p, o, n, _value = line.split(" ", 4)
                self.records.append((int(p), int(o), int(n)))

    def accepted(self) -> set[int]:
        return {int(line.split()[1]) for line in list(self.lines) if line.startswith("A ")}

    def offsets(self) -> list[int]:
        return [o for _, o, _ in list(self.records)]

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self.proc.stdin.write("quit\n")
                self.proc.stdin.close()
                self.proc.wait(timeout=30)
            except (BrokenPipeError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()
        self._reader.join(timeout=10)


@pytest.fixture
def consumers() -> Iterator[list[ShareConsumer]]:
    started: list[ShareConsumer] = []
    yield started
    for s in started:
        s.close()


def produce(c: Target, topic: str, n: int, start: int = 0, per_flush: int = 1) -> None:
    producing.produce(c.bootstrap_servers, topic, numbered(n, start), per_flush=per_flush,
                      timeout=10, config={"acks": "all", "linger.ms": 0})


def start_at_earliest(c: Target, group: str) -> None:
    set_group_config(c, group, "share.auto.offset.reset", "earliest")


def members(c: Target, group: str, assigned: bool = False) -> int:
    return share_group_members(c, group, assigned)


def finished(c: Target, group: str, topic: str, n: int) -> bool:
    return share_all_finished(c, group, topic, n)


def test_several_consumers_one_partition_no_record_twice(
        share_cluster: Target, consumers: list[ShareConsumer], topic_name: str) -> None:
    c, topic, group = share_cluster, topic_name, "sg-several-" + topic_name
    c.create_topic(topic, partitions=1, replication_factor=3)
    start_at_earliest(c, group)
    consumers += [ShareConsumer(c, group, topic, "accept") for _ in range(3)]
    # all three assigned the partition before records arrive, so that they can share them
    wait_for(lambda: members(c, group, assigned=True) == 3,
             "three members assigned the partition", 60)
    n = 300
    produce(c, topic, n, per_flush=3)  # many small batches, so that they can be shared
    wait_for(lambda: len({o for s in consumers for o in s.offsets()}) == n,
             f"all {n} records delivered", 60)
    wait_for(lambda: finished(c, group, topic, n), "every record accepted", 30)
    everything = [o for s in consumers for o in s.offsets()]
    assert sorted(everything) == list(range(n))  # no record went to two consumers
    assert all(count == 1 for s in consumers for _, _, count in s.records)
    assert sum(1 for s in consumers if s.records) >= 2, [len(s.records) for s in consumers]


def test_released_records_are_redelivered(share_cluster: Target, consumers: list[ShareConsumer],
                                          topic_name: str) -> None:
    c, topic, group = share_cluster, topic_name, "sg-release-" + topic_name
    c.create_topic(topic, partitions=1, replication_factor=3)
    start_at_earliest(c, group)
    produce(c, topic, 20)
    consumers.append(ShareConsumer(c, group, topic, "release"))
    s = consumers[0]
    wait_for(lambda: finished(c, group, topic, 20),
             "every record released once, then accepted", 60)

    def deliveries() -> dict[int, list[int]]:
        out: dict[int, list[int]] = {}
        for _, o, n in list(s.records):
            out.setdefault(o, []).append(n)
        return out

    # the output reader may still be behind the broker: wait for it, then compare
    wait_for(lambda: sum(map(len, deliveries().values())) >= 40, "40 deliveries read", 30)
    assert deliveries() == {o: [1, 2] for o in range(20)}


def test_rejected_records_are_archived(share_cluster: Target, consumers: list[ShareConsumer],
                                       topic_name: str) -> None:
    c, topic, group = share_cluster, topic_name, "sg-reject-" + topic_name
    c.create_topic(topic, partitions=1, replication_factor=3)
    start_at_earliest(c, group)
    produce(c, topic, 10)
    rejecter = ShareConsumer(c, group, topic, "reject")
    consumers.append(rejecter)
    wait_for(lambda: finished(c, group, topic, 10), "all ten rejected", 60)
    rejecter.close()
    assert sorted(rejecter.offsets()) == list(range(10))
    later = ShareConsumer(c, group, topic, "accept")
    consumers.append(later)
    wait_for(lambda: members(c, group) == 1, "the second consumer joined", 60)
    produce(c, topic, 5, start=10)
    wait_for(lambda: sorted(later.offsets()) == list(range(10, 15)), "the new records", 60)
    assert all(n == 1 for _, _, n in later.records)  # the archived ten never came back


def test_crashed_consumers_records_redelivered_after_lock_timeout(
        share_cluster: Target, consumers: list[ShareConsumer], topic_name: str) -> None:
    c, topic, group = share_cluster, topic_name, "sg-crash-" + topic_name
    c.create_topic(topic, partitions=1, replication_factor=3)
    start_at_earliest(c, group)
    set_group_config(c, group, "share.record.lock.duration.ms", "3000")
    produce(c, topic, 30, per_flush=10)
    crashed = ShareConsumer(c, group, topic, "crash:1")
    consumers.append(crashed)
    assert crashed.proc.wait(timeout=60) == 3, crashed.proc.stderr.read()[-2000:]
    crashed._reader.join(timeout=10)
    held = set(crashed.offsets())
    assert held and "CRASH" in crashed.lines
    survivor = ShareConsumer(c, group, topic, "accept")
    consumers.append(survivor)
    wait_for(lambda: set(survivor.offsets()) == set(range(30)), "all 30 records", 60)
    counts = {o: n for _, o, n in survivor.records}
    assert all(counts[o] == 2 for o in held), counts  # came back after the lock timed out
    assert all(counts[o] == 1 for o in set(range(30)) - held)


def test_renewed_locks_keep_records_from_other_consumers(
        share_cluster: Target, consumers: list[ShareConsumer], topic_name: str) -> None:
    """RENEW (KIP-1222): a consumer holds its records three lock durations; nobody else
    gets them meanwhile and the broker never redelivers them."""
    c, topic, group = share_cluster, topic_name, "sg-renew-" + topic_name
    c.create_topic(topic, partitions=1, replication_factor=3)
    start_at_earliest(c, group)
    set_group_config(c, group, "share.record.lock.duration.ms", "2000")
    produce(c, topic, 5, per_flush=5)
    holder = ShareConsumer(c, group, topic, "renew:6000")
    consumers.append(holder)
    wait_for(lambda: set(holder.offsets()) == set(range(5)), "the holder has all five", 60)
    other = ShareConsumer(c, group, topic, "accept")
    consumers.append(other)
    wait_for(lambda: members(c, group) == 2, "the other consumer joined", 60)
    wait_for(lambda: holder.accepted() == set(range(5)), "held 6 s, then accepted", 60)
    wait_for(lambda: finished(c, group, topic, 5), "all five accepted", 30)
    assert other.offsets() == []  # locks renewed past 2 s never ran out
    assert {n for _, _, n in holder.records} == {1}


def share_groups_tool(c: Target, *args: str) -> str:
    r = subprocess.run(TOOLS_JVM + [SHARE_GROUPS, "--bootstrap-server", c.bootstrap_servers,
                                    *args], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


def test_kafka_share_groups_tool(share_cluster: Target,
                                 consumers: list[ShareConsumer], topic_name: str) -> None:
    c, topic, group = share_cluster, topic_name, "sg-tool-" + topic_name
    c.create_topic(topic, partitions=1, replication_factor=3)
    produce(c, topic, 8)
    # a group that does not exist yet starts at the earliest offset by --reset-offsets
    out = share_groups_tool(c, "--reset-offsets", "--group", group, "--topic", topic,
                            "--to-earliest", "--execute")
    assert topic in out, out
    assert share_partition_offsets(c, group, topic)["start_offset"] == 0
    s = ShareConsumer(c, group, topic, "accept")
    consumers.append(s)
    wait_for(lambda: sorted(s.offsets()) == list(range(8)), "the eight records", 60)
    wait_for(lambda: finished(c, group, topic, 8), "all accepted", 30)
    assert group in share_groups_tool(c, "--list").split()
    out = share_groups_tool(c, "--describe", "--group", group, "--members")
    assert "share-accept" in out and topic in out, out
    out = share_groups_tool(c, "--describe", "--group", group, "--offsets")
    row = next(line.split() for line in out.splitlines() if topic in line)
    # GROUP TOPIC PARTITION START-OFFSET LAG: the start offset last written, with the
    # acknowledgement of all eight (0: from before it, as Kafka 4.4 writes it), lag 0
    assert row[:5] == [group, topic, "0", "0", "0"], out
    out = share_groups_tool(c, "--describe", "--group", group, "--state")
    assert "Stable" in out, out
    s.close()
    wait_for(lambda: members(c, group) == 0, "the consumer left", 30)
    share_groups_tool(c, "--delete-offsets", "--group", group, "--topic", topic)
    assert share_partition_offsets(c, group, topic) is None  # no state for it any more
    share_groups_tool(c, "--delete", "--group", group)
    assert group not in share_groups_tool(c, "--list").split()


def test_read_committed_share_group_never_delivers_aborted_records(
        share_cluster: Target, consumers: list[ShareConsumer], topic_name: str) -> None:
    """share.isolation.level=read_committed: records of an aborted transaction are
    archived as the share-partition reaches them; the consumer gets only committed ones
    and the share-partition start offset passes the aborted ones and the markers."""
    c, topic, group = share_cluster, topic_name, "sg-read-committed-" + topic_name
    c.create_topic(topic, partitions=1, replication_factor=3)
    start_at_earliest(c, group)
    set_group_config(c, group, "share.isolation.level", "read_committed")
    p = Producer({"bootstrap.servers": c.bootstrap_servers, "transactional.id": "share-tx"})
    p.init_transactions(30)
    for batch, commit in (("a", True), ("b", False), ("c", True)):
        p.begin_transaction()
        for i in range(5):
            p.produce(topic, value=f"{batch}{i}".encode(), partition=0)
        if commit:
            p.commit_transaction(30)
        else:
            p.flush(30)
            p.abort_transaction(30)
    s = ShareConsumer(c, group, topic, "accept")
    consumers.append(s)
    conn = leader_conn(c, topic)
    try:
        # 15 records and 3 markers (Kafka writes the last marker after EndTxn answered)
        end = wait_for(lambda: list_offset(conn, topic) == 18 and 18, "the last marker")
    finally:
        conn.close()
    wait_for(lambda: finished(c, group, topic, end), "every offset finished", 60)
    values = sorted(line.split(" ", 4)[4] for line in list(s.lines) if line.startswith("R "))
    assert values == sorted([f"a{i}" for i in range(5)] + [f"c{i}" for i in range(5)])
