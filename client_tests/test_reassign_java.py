"""Kafka's Java Admin client and Kafka's own kafka-reassign-partitions and kafka-topics
over TCP, on either target (the emulator, or a real Kafka with --target kafka).

The jars come from Maven Central through client_tests/java/pom.xml (Kafka 4.4.0,
the version kept there only; the tools 4.3.1, see there); scripts/setup.d/30-java.sh resolves them and compiles
client_tests/java/src/ReassignClient.java, a line-driven Admin client session (one
JVM per test). Kafka's tools run by their main classes with ``java -cp``.

A reassignment is held in flight the way client_tests/test_reassign_admin_api.py holds
one: its target broker is down (a crash on either target; the broker stays registered,
so the move is accepted and waits for it). Topic names are unique per test, since one
Kafka cluster serves the whole session.
"""

from __future__ import annotations

import json
import subprocess
import uuid
from pathlib import Path

import pytest
from kafka import KafkaProducer

from client_tests.rawkafka import Conn, crash, create_assigned, replicas_of
from client_tests.targets import KafkaTarget
from emulator import Cluster
from emulator.testing import wait_for

Target = Cluster | KafkaTarget

JAVA_DIR = Path(__file__).resolve().parent / "java"
JVM_OPTS = ["java", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xshare:auto"]
# The Admin client session runs on kafka-clients of the pom's release; Kafka's tools on
# their own classpath (kafka-tools 4.4.0 is not on Maven Central: see the pom).
JVM = [*JVM_OPTS, "-cp", f"{JAVA_DIR / '.classes'}:{JAVA_DIR / '.jars'}/*"]
TOOLS_JVM = [*JVM_OPTS, "-cp", f"{JAVA_DIR / '.tools-jars'}/*"]
REASSIGN = "org.apache.kafka.tools.reassign.ReassignPartitionsCommand"
TOPICS = "org.apache.kafka.tools.TopicCommand"
MSG = "The manual partition assignment includes"


def require_java() -> None:
    """Fail clearly when the Java builds are missing (also called by the other Java
    client test modules, which import it)."""
    missing = [p for p in (JAVA_DIR / ".jars", JAVA_DIR / ".tools-jars",
                           JAVA_DIR / ".classes" / "ReassignClient.class") if not p.exists()]
    if missing:
        raise AssertionError(f"{missing[0]} is missing: run scripts/setup.d/30-java.sh "
                             "(needs a JDK and Maven) before these tests")


@pytest.fixture(autouse=True)
def java_built() -> None:
    require_java()


def log_dir(cluster: Target, broker: int) -> str:
    """The broker's (one) log directory as DescribeLogDirs names it: Kafka's is the
    broker's data directory, the emulator's Kafka's default."""
    c = Conn(cluster, cluster.broker_ids.index(broker))
    try:
        resp = c.call(35, 4, {"topics": []})
    finally:
        c.close()
    assert len(resp["results"]) == 1, resp
    return resp["results"][0]["log_dir"]


def dynamic_topic_configs(cluster: Target, topic: str) -> dict[str, str]:
    """The topic's own (dynamic) configs, by DescribeConfigs: source 1 is DYNAMIC_TOPIC_CONFIG."""
    c = Conn(cluster, 0)
    try:
        resp = c.call(32, 4, {"resources": [{"resource_type": 2, "resource_name": topic,
                                             "configuration_keys": None}],
                              "include_synonyms": False, "include_documentation": False})
    finally:
        c.close()
    res = resp["results"][0]
    assert res["error_code"] == 0, res
    return {x["name"]: x["value"] for x in res["configs"] if x["config_source"] == 1}


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


def names() -> tuple[str, ...]:
    s = uuid.uuid4().hex[:8]
    return tuple(f"{n}-{s}" for n in ("foo", "bar", "baz", "nope"))


def test_java_admin_client(cluster: Target) -> None:
    b1, b2, b3 = cluster.broker_ids
    foo, bar, led, nope = names()
    create_assigned(cluster, foo, {0: [b1, b2], 1: [b2, b1]})
    create_assigned(cluster, bar, {0: [b2, b1]})
    create_assigned(cluster, led, {0: [b3, b1]})  # b3 its preferred leader
    java = AdminSession(cluster.bootstrap_servers)
    try:
        assert java(f"describe {foo}") == [
            f"DESCRIBE {foo} 0 leader={b1} replicas={b1},{b2} isr={b1},{b2}",
            f"DESCRIBE {foo} 1 leader={b2} replicas={b2},{b1} isr={b2},{b1}"]
        crash(cluster, b3)  # the target of foo-0's move: it waits for b3
        assert java(f"alter {foo}:0={b1},{b3} {foo}:1={b2},{b2} {foo}:9={b1} {bar}:0={b2},7 "
                    f"{nope}:0={b1}") == sorted([
            f"RESULT {bar} 0 ERROR InvalidReplicaAssignmentException {MSG} broker 7, but no "
            "such broker is registered.",
            f"RESULT {foo} 0 OK",
            f"RESULT {foo} 1 ERROR InvalidReplicaAssignmentException {MSG} the broker {b2} "
            "more than once.",
            f"RESULT {foo} 9 ERROR UnknownTopicOrPartitionException Unable to find partition "
            f"{foo}:9.",
            f"RESULT {nope} 0 ERROR UnknownTopicOrPartitionException Unable to find a topic "
            f"named {nope}."])
        in_flight = [f"LIST {foo} 0 replicas={b1},{b3},{b2} adding={b3} removing={b2}"]
        # Kafka's brokers learn of the reassignment from the metadata log, a moment later
        wait_for(lambda: [x for x in java("list") if foo in x] == in_flight,
                 f"{foo}-0's reassignment listed")
        assert java(f"list {foo}:0 {foo}:1 {nope}:3") == in_flight
        assert java(f"alter --no-rf-change {foo}:0={b1} {bar}:0={b1},{b2}") == sorted([
            f"RESULT {bar} 0 OK",
            f"RESULT {foo} 0 ERROR InvalidReplicationFactorException The replication factor "
            "is changed from 2 to 1"])
        assert java(f"alter {foo}:0=cancel {foo}:1=cancel") == [
            f"RESULT {foo} 0 OK",
            f"RESULT {foo} 1 ERROR NoReassignmentInProgressException No partition "
            "reassignment is in progress."]
        wait_for(lambda: java(f"describe {foo}")[0] ==
                 f"DESCRIBE {foo} 0 leader={b1} replicas={b1},{b2} isr={b1},{b2}",
                 f"{foo}-0 back on {b1}, {b2}")
        assert java(f"elect preferred {foo}:0 {foo}:7 {nope}:0") == sorted([
            f"RESULT {foo} 0 ERROR ElectionNotNeededException Leader election not needed for "
            "topic partition.",
            f"RESULT {foo} 7 ERROR UnknownTopicOrPartitionException No such partition as "
            f"{foo}-7",
            f"RESULT {nope} 0 ERROR UnknownTopicOrPartitionException No such topic as {nope}"])
        # led-0's preferred leader b3 is down, out of the ISR
        assert java(f"elect preferred {led}:0") == [
            f"RESULT {led} 0 ERROR PreferredLeaderNotAvailableException The preferred leader "
            "was not available."]
        cluster.start_broker(b3)
        wait_for(lambda: b3 in replicas_of(cluster, led)[1], f"broker {b3} to rejoin the ISR",
                 60)
        assert java(f"elect preferred {led}:0") == [f"RESULT {led} 0 OK"]
        wait_for(lambda: java(f"describe {led}")[0].startswith(
            f"DESCRIBE {led} 0 leader={b3} "), f"{b3} leading {led}-0")
        assert java(f"elect unclean {led}:0") == [
            f"RESULT {led} 0 ERROR ElectionNotNeededException Leader election not needed for "
            "topic partition."]
    finally:
        java.close()


def run_tool(c: Target, main_class: str, *args: str) -> tuple[int, str]:
    r = subprocess.run(TOOLS_JVM + [main_class, "--bootstrap-server", c.bootstrap_servers, *args],
                       capture_output=True, text=True, timeout=120)
    return r.returncode, r.stdout


def move_file(path: Path, moves: dict[tuple[str, int], tuple[list[int], list[str]]]) -> None:
    path.write_text(json.dumps({"version": 1, "partitions": [
        {"topic": t, "partition": p, "replicas": r, "log_dirs": d}
        for (t, p), (r, d) in moves.items()]}))


def current_json(cluster: Target, parts: list[tuple[str, int, list[int]]]) -> str:
    """The assignment as the tool prints it: since Kafka 4.3 it asks DescribeLogDirs for
    each replica's current directory (it printed "any" before)."""
    return json.dumps({"version": 1, "partitions": [
        {"topic": t, "partition": p, "replicas": r,
         "log_dirs": [log_dir(cluster, b) for b in r]} for t, p, r in sorted(parts)]},
        separators=(",", ":"))


def throttle_lines(out: str) -> tuple[str, set[str]]:
    """The tool's output without its last line, and the topics that line names (the tool
    lists them in a Java set's order)."""
    rest, last = out.rstrip("\n").rsplit("\n", 1)
    prefix = "Clearing topic-level throttles on topics "
    assert last.startswith(prefix), out
    return rest + "\n", set(last[len(prefix):].split(","))


def fill(cluster: Target, topic: str, partition: int, megabytes: int) -> None:
    """``megabytes`` MB in the partition, so that a move throttled to 1 B/s stays in flight:
    a new replica gets one fetch (replica.fetch.max.bytes, 1 MB) and then waits until the
    quota's samples (11 of 1 s) have forgotten it, on either target."""
    producer = KafkaProducer(bootstrap_servers=cluster.bootstrap_servers, acks="all",
                             batch_size=262144, linger_ms=5, max_request_size=2000000)
    for _ in range(megabytes * 16):
        producer.send(topic, b"x" * 65536, partition=partition)
    producer.flush()
    producer.close()


def test_kafka_reassign_partitions_and_kafka_topics(cluster: Target, tmp_path: Path) -> None:
    """Kafka's own tool, unchanged, drives a throttled reassignment (held in flight by its
    1 B/s throttle), a cancel, a completed move with --verify clearing the throttles,
    --generate and the KIP-860 refusal. The tool refuses a move to a broker that is down
    (DescribeCluster does not list it: "Unknown broker id"), so the throttle holds this one."""
    b1, b2, b3 = cluster.broker_ids
    foo, bar, baz, _ = names()
    create_assigned(cluster, foo, {0: [b1, b2]})
    create_assigned(cluster, bar, {0: [b2, b1]})
    create_assigned(cluster, baz, {0: [b1, b2], 1: [b2, b1]})
    fill(cluster, foo, 0, 5)
    fill(cluster, baz, 1, 5)
    moved = sorted([f"{baz}-1", f"{foo}-0"])
    f = tmp_path / "move.json"
    move_file(f, {(foo, 0): ([b1, b3], ["any", "any"]), (baz, 1): ([b2, b3], ["any", "any"])})
    before = current_json(cluster, [(foo, 0, [b1, b2]), (baz, 1, [b2, b1])])
    rc, out = run_tool(cluster, REASSIGN, "--execute", "--reassignment-json-file", str(f),
                       "--throttle", "1")
    assert (rc, out) == (0, f"Current partition replica assignment\n\n{before}\n\n"
                         "Save this to use as the --reassignment-json-file option during "
                         "rollback\n"
                         "Warning: You must run --verify periodically, until the reassignment "
                         "completes, to ensure the throttle is removed.\n"
                         "The inter-broker throttle limit was set to 1 B/s\n"
                         f"Successfully started partition reassignments for {','.join(moved)}\n")
    # the throttles stay until --verify sees the moves done (or --cancel)
    wait_for(lambda: dynamic_topic_configs(cluster, foo) == {
        "leader.replication.throttled.replicas": f"0:{b1},0:{b2}",
        "follower.replication.throttled.replicas": f"0:{b3}"}, "the topic throttles")
    in_flight = {f"{baz}-1: replicas: {b2},{b3},{b1}. adding: {b3}. removing: {b1}.",
                 f"{foo}-0: replicas: {b1},{b3},{b2}. adding: {b3}. removing: {b2}."}

    def listed() -> set[str]:
        rc, out = run_tool(cluster, REASSIGN, "--list")
        assert rc == 0 and out.startswith("Current partition reassignments:\n"), out
        return {line for line in out.splitlines()[1:] if foo.split("-")[1] in line}

    wait_for(lambda: listed() == in_flight, "the reassignments listed")
    rc, out = run_tool(cluster, REASSIGN, "--verify", "--reassignment-json-file", str(f))
    assert (rc, out) == (0, "Status of partition reassignment:\n"
                         + "".join(f"Reassignment of partition {p} is still in progress.\n"
                                   for p in moved) + "\n")
    rc, out = run_tool(cluster, TOPICS, "--describe", "--topic", foo)
    assert rc == 0 and (f"\tTopic: {foo}\tPartition: 0\tLeader: {b1}\tReplicas: {b1},{b3},{b2}"
                        f"\tIsr: {b1},{b2}\tAdding Replicas: {b3}\tRemoving Replicas: {b2}\t"
                        ) in out, out
    rc, out = run_tool(cluster, REASSIGN, "--cancel", "--reassignment-json-file", str(f))
    rest, throttled = throttle_lines(out)
    assert (rc, rest) == (0, f"Successfully cancelled partition reassignments for: "
                          f"{','.join(moved)}\n"
                          "None of the specified partition moves are active.Clearing "
                          f"broker-level throttles on brokers {b1},{b2},{b3}\n")
    assert throttled == {foo, baz}
    wait_for(lambda: dynamic_topic_configs(cluster, foo) == {}, "the throttles cleared")
    wait_for(lambda: replicas_of(cluster, foo)[0] == [b1, b2]
             and replicas_of(cluster, baz, 1)[0] == [b2, b1], "the replicas back")
    # again, unthrottled, naming a log directory for the new replica (AlterReplicaLogDirs,
    # then DescribeLogDirs in --verify): the moves complete
    dir3 = log_dir(cluster, b3)
    move_file(f, {(foo, 0): ([b1, b3], ["any", dir3]), (baz, 1): ([b2, b3], ["any", "any"])})
    rc, out = run_tool(cluster, REASSIGN, "--execute", "--reassignment-json-file", str(f))
    assert rc == 0 and out.endswith(
        f"Successfully started partition reassignments for {','.join(moved)}\n"
        f"Successfully started moving log directory to {dir3} for replica {foo}-0 with "
        f"broker {b3} \n"), out
    wait_for(lambda: replicas_of(cluster, foo)[:2] == ([b1, b3], [b1, b3])
             and replicas_of(cluster, baz, 1)[0] == [b2, b3], "the reassignment", 60)
    rc, out = run_tool(cluster, REASSIGN, "--verify", "--reassignment-json-file", str(f))
    rest, throttled = throttle_lines(out)
    assert (rc, rest) == (0, "Status of partition reassignment:\n"
                          + "".join(f"Reassignment of partition {p} is completed.\n"
                                    for p in moved)
                          + f"Reassignment of replica {foo}-0-{b3} completed successfully.\n"
                          f"Clearing broker-level throttles on brokers {b1},{b2},{b3}\n")
    assert throttled == {foo, baz}
    rc, out = run_tool(cluster, TOPICS, "--describe", "--topic", foo)
    assert rc == 0
    assert f"\tTopic: {foo}\tPartition: 0\tLeader: {b1}\tReplicas: {b1},{b3}\tIsr: {b1},{b3}" \
        in out, out
    topics = tmp_path / "topics.json"
    topics.write_text(json.dumps({"version": 1, "topics": [{"topic": bar}]}))
    rc, out = run_tool(cluster, REASSIGN, "--generate", "--topics-to-move-json-file",
                       str(topics), "--broker-list", f"{b2},{b3}")
    assert rc == 0, out
    lines = out.split("\n")
    assert lines[:3] == ["Current partition replica assignment",
                         current_json(cluster, [(bar, 0, [b2, b1])]), ""]
    assert lines[3] == "Proposed partition reassignment configuration"
    assert sorted(json.loads(lines[4])["partitions"][0]["replicas"]) == [b2, b3]
    bad = tmp_path / "shrink.json"
    bad.write_text(json.dumps({"version": 1, "partitions": [
        {"topic": bar, "partition": 0, "replicas": [b2]}]}))
    rc, out = run_tool(cluster, REASSIGN, "--execute", "--reassignment-json-file", str(bad),
                       "--disallow-replication-factor-change")
    assert rc == 1 and out.endswith("Error reassigning partition(s):\n"
                                    f"{bar}-0: The replication factor is changed from 2 to 1\n"
                                    ), out
