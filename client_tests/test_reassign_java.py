"""Kafka's Java Admin client and Kafka's own kafka-reassign-partitions and kafka-topics
against the emulator, over TCP.

The jars come from Maven Central through client_tests/java/pom.xml (Kafka 4.4.0,
the version kept there only; the tools 4.3.1, see there); scripts/setup.d/30-java.sh resolves them and compiles
client_tests/java/src/ReassignClient.java, a line-driven Admin client session (one
JVM per test). Kafka's tools run by their main classes with ``java -cp``.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from emulator import Cluster
from emulator.cluster.log_dirs import DEFAULT_LOG_DIR
from emulator.testing import wait_for

# Not run with --target kafka: holds reassignments with the emulator's pause_follower fault (brokers 0-4).
pytestmark = pytest.mark.emulator_only

JAVA_DIR = Path(__file__).resolve().parent / "java"
JVM_OPTS = ["java", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xshare:auto"]
# The Admin client session runs on kafka-clients of the pom's release; Kafka's tools on
# their own classpath (kafka-tools 4.4.0 is not on Maven Central: see the pom).
JVM = [*JVM_OPTS, "-cp", f"{JAVA_DIR / '.classes'}:{JAVA_DIR / '.jars'}/*"]
TOOLS_JVM = [*JVM_OPTS, "-cp", f"{JAVA_DIR / '.tools-jars'}/*"]
REASSIGN = "org.apache.kafka.tools.reassign.ReassignPartitionsCommand"
TOPICS = "org.apache.kafka.tools.TopicCommand"
DIRS = ",".join([f'"{DEFAULT_LOG_DIR}"'] * 3)


def require_java() -> None:
    missing = [p for p in (JAVA_DIR / ".jars", JAVA_DIR / ".tools-jars",
                           JAVA_DIR / ".classes" / "ReassignClient.class") if not p.exists()]
    if missing:
        raise AssertionError(f"{missing[0]} is missing: run scripts/setup.d/30-java.sh "
                             "(needs a JDK and Maven) before these tests")



@pytest.fixture
def cluster() -> Iterator[Cluster]:
    require_java()
    with Cluster(brokers=5, port=0, first_broker_id=0,
                 config={"replica.lag.time.max.ms": "1000",
                         "auto.leader.rebalance.enable": "false"}) as c:
        for name, a in (("foo", {0: [0, 1, 2], 1: [1, 2, 3]}), ("bar", {0: [3, 2, 1]}),
                        ("baz", {0: [1, 0, 2], 1: [2, 0, 1], 2: [0, 2, 1]})):
            c.call(lambda n=name, a=a: c.state.create_topic(n, assignments=a))
        yield c


class AdminSession:
    """ReassignClient: one Java Admin client, commands in, result lines out."""

    def __init__(self, bootstrap: str) -> None:
        self.proc = subprocess.Popen(JVM + ["ReassignClient", bootstrap], text=True,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert self.proc.stdout.readline().strip() == "READY"

    def __call__(self, command: str) -> list[str]:
        self.proc.stdin.write(command + "\n")
        self.proc.stdin.flush()
        lines = []
        while (line := self.proc.stdout.readline().rstrip("\n")) != "END":
            assert line, "the Java client died"
            lines.append(line)
        return sorted(lines)

    def close(self) -> None:
        self.proc.stdin.write("quit\n")
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


def replicas(c: Cluster, topic: str, index: int) -> list[int]:
    return c.call(lambda: list(c.state.get_partition(topic, index).replicas))


def test_java_admin_client(cluster: Cluster) -> None:
    cluster.pause_follower(4)
    java = AdminSession(cluster.bootstrap_servers)
    try:
        assert java("describe foo") == ["DESCRIBE foo 0 leader=0 replicas=0,1,2 isr=0,1,2",
                                        "DESCRIBE foo 1 leader=1 replicas=1,2,3 isr=1,2,3"]
        msg = "The manual partition assignment includes"
        assert java("alter foo:0=0,1,4 foo:1=1,1,2 foo:9=1 bar:0=3,2,7 nope:0=1") == [
            f"RESULT bar 0 ERROR InvalidReplicaAssignmentException {msg} broker 7, but no such "
            "broker is registered.",
            "RESULT foo 0 OK",
            f"RESULT foo 1 ERROR InvalidReplicaAssignmentException {msg} the broker 1 more "
            "than once.",
            "RESULT foo 9 ERROR UnknownTopicOrPartitionException Unable to find partition foo:9.",
            "RESULT nope 0 ERROR UnknownTopicOrPartitionException Unable to find a topic named "
            "nope."]
        assert java("list") == ["LIST foo 0 replicas=0,1,4,2 adding=4 removing=2"]
        assert java("list foo:0 foo:1 nope:3") == ["LIST foo 0 replicas=0,1,4,2 adding=4 "
                                                   "removing=2"]
        assert java("alter --no-rf-change foo:0=0,1 bar:0=0,1,2") == [
            "RESULT bar 0 OK",
            "RESULT foo 0 ERROR InvalidReplicationFactorException The replication factor is "
            "changed from 3 to 2"]
        assert java("alter foo:0=cancel foo:1=cancel") == [
            "RESULT foo 0 OK",
            "RESULT foo 1 ERROR NoReassignmentInProgressException No partition reassignment is "
            "in progress."]
        assert java("describe foo")[0] == "DESCRIBE foo 0 leader=0 replicas=0,1,2 isr=0,1,2"
        assert java("elect preferred foo:0 foo:7 nope:0") == [
            "RESULT foo 0 ERROR ElectionNotNeededException Leader election not needed for topic "
            "partition.",
            "RESULT foo 7 ERROR UnknownTopicOrPartitionException No such partition as foo-7",
            "RESULT nope 0 ERROR UnknownTopicOrPartitionException No such topic as nope"]
        cluster.pause_follower(0, topic="foo", partition=0)  # 0 will stay out of the ISR
        cluster.stop_broker(0)
        cluster.start_broker(0)
        assert java("elect preferred foo:0") == [
            "RESULT foo 0 ERROR PreferredLeaderNotAvailableException The preferred leader was "
            "not available."]
        cluster.resume_follower(0, topic="foo", partition=0)
        wait_for(lambda: 0 in cluster.call(lambda: cluster.state.get_partition("foo", 0).isr),
                 "broker 0 to rejoin the ISR", 60)
        assert java("elect preferred foo:0") == ["RESULT foo 0 OK"]
        assert java("describe foo")[0].startswith("DESCRIBE foo 0 leader=0 ")
        assert java("elect unclean foo:0") == [
            "RESULT foo 0 ERROR ElectionNotNeededException Leader election not needed for topic "
            "partition."]
    finally:
        java.close()


def run_tool(c: Cluster, main_class: str, *args: str) -> tuple[int, str]:
    r = subprocess.run(TOOLS_JVM + [main_class, "--bootstrap-server", c.bootstrap_servers, *args],
                       capture_output=True, text=True, timeout=120)
    return r.returncode, r.stdout


def test_kafka_reassign_partitions_and_kafka_topics(cluster: Cluster, tmp_path: Path) -> None:
    """Kafka's own tool, unchanged, drives a throttled reassignment, a cancel, a
    completed move with --verify clearing the throttles, and the KIP-860 refusal."""
    f = tmp_path / "move.json"
    f.write_text(json.dumps({"version": 1, "partitions": [
        {"topic": "foo", "partition": 0, "replicas": [0, 1, 3],
         "log_dirs": ["any", "any", "any"]},
        {"topic": "baz", "partition": 1, "replicas": [0, 2, 3],
         "log_dirs": ["any", "any", "any"]}]}))
    cluster.pause_follower(3)
    rc, out = run_tool(cluster, REASSIGN, "--execute", "--reassignment-json-file", str(f),
                       "--throttle", "1")
    assert rc == 0, out
    assert out == (
        "Current partition replica assignment\n\n"
        # Since Kafka 4.3 the tool asks DescribeLogDirs for the current directories (it
        # printed "any" before); every emulated broker has one log dir, Kafka's default.
        '{"version":1,"partitions":[{"topic":"baz","partition":1,"replicas":[2,0,1],'
        f'"log_dirs":[{DIRS}]}},{{"topic":"foo","partition":0,"replicas":[0,1,2],'
        f'"log_dirs":[{DIRS}]}}]}}\n\n'
        "Save this to use as the --reassignment-json-file option during rollback\n"
        "Warning: You must run --verify periodically, until the reassignment completes, to "
        "ensure the throttle is removed.\n"
        "The inter-broker throttle limit was set to 1 B/s\n"
        "Successfully started partition reassignments for baz-1,foo-0\n")
    assert cluster.call(lambda: dict(cluster.state.topics["foo"].configs)) == {
        "leader.replication.throttled.replicas": "0:0,0:1,0:2",
        "follower.replication.throttled.replicas": "0:3"}
    rc, out = run_tool(cluster, REASSIGN, "--list")
    assert (rc, out) == (0, "Current partition reassignments:\n"
                         "baz-1: replicas: 0,2,3,1. adding: 3. removing: 1.\n"
                         "foo-0: replicas: 0,1,3,2. adding: 3. removing: 2.\n")
    rc, out = run_tool(cluster, REASSIGN, "--verify", "--reassignment-json-file", str(f))
    assert (rc, out) == (0, "Status of partition reassignment:\n"
                         "Reassignment of partition baz-1 is still in progress.\n"
                         "Reassignment of partition foo-0 is still in progress.\n\n")
    rc, out = run_tool(cluster, TOPICS, "--describe", "--topic", "foo")
    assert rc == 0 and ("\tTopic: foo\tPartition: 0\tLeader: 0\tReplicas: 0,1,3,2\tIsr: 0,1,2"
                        "\tAdding Replicas: 3\tRemoving Replicas: 2\t") in out
    rc, out = run_tool(cluster, REASSIGN, "--cancel", "--reassignment-json-file", str(f))
    assert (rc, out) == (0, "Successfully cancelled partition reassignments for: baz-1,foo-0\n"
                         "None of the specified partition moves are active.Clearing "
                         "broker-level throttles on brokers 0,1,2,3,4\n"
                         "Clearing topic-level throttles on topics foo,baz\n")
    assert cluster.call(lambda: dict(cluster.state.topics["foo"].configs)) == {}
    assert replicas(cluster, "foo", 0) == [0, 1, 2] and replicas(cluster, "baz", 1) == [0, 2, 1]
    cluster.resume_follower(3)
    # again, with a log directory named for the new replica (AlterReplicaLogDirs, then
    # DescribeLogDirs in --verify)
    f.write_text(json.dumps({"version": 1, "partitions": [
        {"topic": "foo", "partition": 0, "replicas": [0, 1, 3],
         "log_dirs": ["any", "any", "/tmp/kafka-logs"]},
        {"topic": "baz", "partition": 1, "replicas": [0, 2, 3],
         "log_dirs": ["any", "any", "any"]}]}))
    rc, out = run_tool(cluster, REASSIGN, "--execute", "--reassignment-json-file", str(f))
    assert rc == 0 and out.endswith(
        "Successfully started partition reassignments for baz-1,foo-0\n"
        "Successfully started moving log directory to /tmp/kafka-logs for replica foo-0 with "
        "broker 3 \n")
    wait_for(lambda: replicas(cluster, "foo", 0) == [0, 1, 3]
             and replicas(cluster, "baz", 1) == [0, 2, 3], "the reassignment", 60)
    rc, out = run_tool(cluster, REASSIGN, "--verify", "--reassignment-json-file", str(f))
    assert (rc, out) == (0, "Status of partition reassignment:\n"
                         "Reassignment of partition baz-1 is completed.\n"
                         "Reassignment of partition foo-0 is completed.\n"
                         "Reassignment of replica foo-0-3 completed successfully.\n"
                         "Clearing broker-level throttles on brokers 0,1,2,3,4\n"
                         "Clearing topic-level throttles on topics foo,baz\n")
    rc, out = run_tool(cluster, TOPICS, "--describe", "--topic", "foo")
    assert rc == 0
    assert "\tTopic: foo\tPartition: 0\tLeader: 0\tReplicas: 0,1,3\tIsr: 0,1,3" in out
    topics = tmp_path / "topics.json"
    topics.write_text('{"version":1,"topics":[{"topic":"bar"}]}')
    rc, out = run_tool(cluster, REASSIGN, "--generate", "--topics-to-move-json-file",
                       str(topics), "--broker-list", "2,3,4")
    assert rc == 0, out
    lines = out.split("\n")
    assert lines[:3] == ["Current partition replica assignment",
                         '{"version":1,"partitions":[{"topic":"bar","partition":0,"replicas":'
                         f'[3,2,1],"log_dirs":[{DIRS}]}}]}}', ""]
    assert lines[3] == "Proposed partition reassignment configuration"
    assert sorted(json.loads(lines[4])["partitions"][0]["replicas"]) == [2, 3, 4]
    bad = tmp_path / "shrink.json"
    bad.write_text(json.dumps({"version": 1, "partitions": [
        {"topic": "bar", "partition": 0, "replicas": [3]}]}))
    rc, out = run_tool(cluster, REASSIGN, "--execute", "--reassignment-json-file", str(bad),
                       "--disallow-replication-factor-change")
    assert rc == 1 and out.endswith("Error reassigning partition(s):\n"
                                    "bar-0: The replication factor is changed from 3 to 1\n")
