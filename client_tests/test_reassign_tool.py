"""``kafka-emulator reassign`` over TCP: Kafka's ReassignPartitionsCommandTest scenarios.

The setup is Kafka's: 5 brokers (0-4) on racks 0,0,1,1,1, replica.lag.time.max.ms
1000, no automatic leader rebalance, topics foo {0:[0,1,2], 1:[1,2,3]}, bar
{0:[3,2,1]} and baz {0:[1,0,2], 1:[2,0,1], 2:[0,2,1]}. Output lines are compared
with what Kafka's own tool prints.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from kafka import KafkaProducer

from emulator import Cluster
from emulator.cluster.metadata_views import CURRENT
from emulator.testing import wait_for
from emulator.tools.reassign import main

# Not run with --target kafka: the emulator's own reassignment tool.
pytestmark = pytest.mark.emulator_only

THROTTLE_KEYS = ("leader.replication.throttled.rate", "follower.replication.throttled.rate",
                 "replica.alter.log.dirs.io.max.bytes.per.second")
ROLLBACK = "Save this to use as the --reassignment-json-file option during rollback"



@pytest.fixture
def cluster() -> Iterator[Cluster]:
    c = Cluster(brokers=5, port=0, first_broker_id=0,
                config={"replica.lag.time.max.ms": "1000",
                        "auto.leader.rebalance.enable": "false"})
    for b, rack in zip(range(5), ["rack0", "rack0", "rack1", "rack1", "rack1"], strict=True):
        c.state.brokers[b].rack = rack
    with c:
        for name, a in (("foo", {0: [0, 1, 2], 1: [1, 2, 3]}), ("bar", {0: [3, 2, 1]}),
                        ("baz", {0: [1, 0, 2], 1: [2, 0, 1], 2: [0, 2, 1]})):
            c.call(lambda n=name, a=a: c.state.create_topic(n, assignments=a))
        # every broker knows them (under --fidelity kafka each learns them a bit late)
        wait_for(lambda: c.call(c.state.metadata_views.caught_up), "the topics everywhere")
        yield c


def produce(c: Cluster, topic: str, partition: int, n: int) -> None:
    p = KafkaProducer(bootstrap_servers=c.bootstrap_servers, acks="all",
                      max_request_size=2_000_000)
    for _ in range(n):
        p.send(topic, bytes(10000), partition=partition)
    p.flush()
    p.close()


def tool(c: Cluster, *args: str, bootstrap: str = "--bootstrap-server") -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    rc = main([bootstrap, c.bootstrap_servers, *args], out=out, err=err)
    return rc, out.getvalue(), err.getvalue()


def assignment_file(tmp_path: Path, parts: list[tuple[str, int, list[int]]],
                    log_dirs: dict[tuple[str, int], list[str]] | None = None) -> str:
    f = tmp_path / f"reassign-{len(list(tmp_path.iterdir()))}.json"
    f.write_text(json.dumps({"version": 1, "partitions": [
        {"topic": t, "partition": p, "replicas": r,
         "log_dirs": (log_dirs or {}).get((t, p), ["any"] * len(r))} for t, p, r in parts]}))
    return str(f)


def replicas(c: Cluster, topic: str, index: int) -> list[int]:
    return c.call(lambda: list(c.state.get_partition(topic, index).replicas))


def known_replicas(c: Cluster, topic: str, index: int) -> list[int] | None:
    """The partition's replicas once every broker's metadata has them (None until then:
    under --fidelity kafka each broker learns a change a bit late, and the tool asks any
    of them): what a test waits for before asking the tool again."""
    def known() -> list[int] | None:
        views = c.state.metadata_views
        now = list(c.state.get_partition(topic, index).replicas)
        for b in c.broker_ids:
            img = views.view(b, topic)
            if img is not CURRENT and (img is None or list(img.partitions[index].replicas)
                                       != now):
                return None
        return now

    return c.call(known)


def hosts(c: Cluster, topic: str, index: int) -> list[int]:
    return c.call(lambda: sorted(c.state.get_partition(topic, index).logs))


def broker_throttles(c: Cluster) -> dict[int, dict[str, str]]:
    return c.call(lambda: {b: {k: v for k, v in o.items() if k in THROTTLE_KEYS}
                           for b, o in c.state.broker_overrides.items()})


def topic_throttles(c: Cluster, topic: str) -> dict[str, str]:
    return c.call(lambda: {k: v for k, v in c.state.topics[topic].configs.items()
                           if k.endswith("throttled.replicas")})


def test_reassignment_verify_and_high_watermark(cluster: Cluster, tmp_path: Path) -> None:
    """testReassignment and testHighWaterMarkAfterPartitionReassignment."""
    produce(cluster, "foo", 0, 100)
    f = assignment_file(tmp_path, [("foo", 0, [0, 1, 3]), ("bar", 0, [3, 2, 0])])
    rc, out, _ = tool(cluster, "--verify", "--reassignment-json-file", f)
    assert rc == 0
    assert out.startswith(
        "Status of partition reassignment:\n"
        "There is no active reassignment of partition bar-0, but replica set is 3,2,1 rather "
        "than 3,2,0.\n"
        "There is no active reassignment of partition foo-0, but replica set is 0,1,2 rather "
        "than 0,1,3.\n\n"
        "Clearing broker-level throttles on brokers 0,1,2,3,4\n"
        "Clearing topic-level throttles on topics bar,foo\n")
    rc, out, _ = tool(cluster, "--execute", "--reassignment-json-file", f)
    assert rc == 0, out
    assert out == (
        "Current partition replica assignment\n\n"
        '{"version":1,"partitions":[{"topic":"bar","partition":0,"replicas":[3,2,1],'
        '"log_dirs":["any","any","any"]},{"topic":"foo","partition":0,"replicas":[0,1,2],'
        '"log_dirs":["any","any","any"]}]}\n\n'
        f"{ROLLBACK}\n"
        "Successfully started partition reassignments for bar-0,foo-0\n")
    assert broker_throttles(cluster) == {b: {} for b in range(5)}
    wait_for(lambda: "is completed" in tool(cluster, "--verify", "--reassignment-json-file", f)[1]
             and known_replicas(cluster, "foo", 0) == [0, 1, 3]
             and known_replicas(cluster, "bar", 0) == [3, 2, 0], "the reassignment to complete")
    rc, out, _ = tool(cluster, "--verify", "--reassignment-json-file", f)
    assert out.startswith("Status of partition reassignment:\n"
                          "Reassignment of partition bar-0 is completed.\n"
                          "Reassignment of partition foo-0 is completed.\n\n")
    assert hosts(cluster, "foo", 0) == [0, 1, 3] and hosts(cluster, "bar", 0) == [0, 2, 3]
    assert cluster.call(lambda: cluster.state.get_partition("foo", 0).high_watermark) == 100
    rc, out, _ = tool(cluster, "--list")
    assert (rc, out) == (0, "No partition reassignments found.\n")


def test_generate_then_execute(cluster: Cluster, tmp_path: Path) -> None:
    topics = tmp_path / "topics.json"
    topics.write_text('{"version":1,"topics":[{"topic":"foo"},{"topic":"baz"}]}')
    rc, out, _ = tool(cluster, "--generate", "--topics-to-move-json-file", str(topics),
                      "--broker-list", "1,2,3")
    assert rc == 0, out
    head, current, blank, head2, proposed, end = out.split("\n")
    assert (head, blank, head2, end) == ("Current partition replica assignment", "",
                                         "Proposed partition reassignment configuration", "")
    assert json.loads(current)["partitions"][0] == {
        "topic": "baz", "partition": 0, "replicas": [1, 0, 2], "log_dirs": ["any"] * 3}
    plan = json.loads(proposed)
    assert [(p["topic"], p["partition"]) for p in plan["partitions"]] == [
        ("baz", 0), ("baz", 1), ("baz", 2), ("foo", 0), ("foo", 1)]
    for p in plan["partitions"]:
        assert len(p["replicas"]) == 3 and set(p["replicas"]) == {1, 2, 3}
    f = tmp_path / "plan.json"
    f.write_text(proposed)
    rc, out, _ = tool(cluster, "--execute", "--reassignment-json-file", str(f))
    assert rc == 0 and "Successfully started partition reassignments for baz-0,baz-1,baz-2," \
        "foo-0,foo-1" in out
    wait_for(lambda: all(
        set(known_replicas(cluster, p["topic"], p["partition"]) or ()) == {1, 2, 3}
        for p in plan["partitions"]), "the plan to be applied")
    rc, out, _ = tool(cluster, "--generate", "--topics-to-move-json-file", str(topics),
                      "--broker-list", "1,2,9,9")
    assert (rc, out) == (1, "Error: Broker list contains duplicate entries: [9]\n")
    rc, out, _ = tool(cluster, "--generate", "--topics-to-move-json-file", str(topics),
                      "--broker-list", "1,2")
    assert (rc, out) == (1, "Error: The target replication factor of 3 cannot be reached "
                         "because only 2 broker(s) are registered.\n")
    cluster.call(lambda: setattr(cluster.state.brokers[4], "rack", None))
    rc, out, _ = tool(cluster, "--generate", "--topics-to-move-json-file", str(topics),
                      "--broker-list", "2,3,4")
    assert (rc, out) == (1, "Error: Not all brokers have rack information. Add "
                         "--disable-rack-aware in command line to make replica assignment "
                         "without rack information.\n")
    rc, _, _ = tool(cluster, "--generate", "--topics-to-move-json-file", str(topics),
                    "--broker-list", "2,3,4", "--disable-rack-aware")
    assert rc == 0


def test_throttled_reassignment_and_raising_the_throttle(cluster: Cluster,
                                                         tmp_path: Path) -> None:
    """testThrottledReassignment and testAlterReassignmentThrottle."""
    produce(cluster, "foo", 0, 200)
    produce(cluster, "baz", 2, 200)
    f = assignment_file(tmp_path, [("foo", 0, [0, 3, 2]), ("baz", 2, [3, 2, 1])])
    rc, out, _ = tool(cluster, "--execute", "--reassignment-json-file", f, "--throttle", "1")
    assert rc == 0
    assert out.endswith(
        f"{ROLLBACK}\n"
        "Warning: You must run --verify periodically, until the reassignment completes, to "
        "ensure the throttle is removed.\n"
        "The inter-broker throttle limit was set to 1 B/s\n"
        "Successfully started partition reassignments for baz-2,foo-0\n")
    assert broker_throttles(cluster) == {
        **{b: {THROTTLE_KEYS[0]: "1", THROTTLE_KEYS[1]: "1"} for b in (0, 1, 2, 3)}, 4: {}}
    assert topic_throttles(cluster, "foo") == {
        "leader.replication.throttled.replicas": "0:0,0:1,0:2",
        "follower.replication.throttled.replicas": "0:3"}
    assert topic_throttles(cluster, "baz") == {
        "leader.replication.throttled.replicas": "2:0,2:1,2:2",
        "follower.replication.throttled.replicas": "2:3"}
    # --verify reports the adding replica's progress once it has started to fetch.
    rc, out, _ = wait_for(lambda: (lambda r: r if "baz-2: replica 3: " in r[1] else None)(
        tool(cluster, "--verify", "--reassignment-json-file", f, "--preserve-throttles")),
        "--verify to report the adding replica's progress")
    assert out.startswith("Status of partition reassignment:\n"
                          "Reassignment of partition baz-2 is still in progress.\n"
                          "Reassignment of partition foo-0 is still in progress.\n\n"
                          "Progress of the replicas being added (bytes caught up):\n"
                          "baz-2: replica 3: ")
    assert "Clearing" not in out
    rc, out, _ = tool(cluster, "--list")
    assert out.startswith("Current partition reassignments:\n"
                          "baz-2: replicas: 3,2,1,0. adding: 3. removing: 0.\n"
                          "foo-0: replicas: 0,3,2,1. adding: 3. removing: 1.\n"
                          "Progress of the replicas being added (bytes caught up):\n")
    rc, out, _ = tool(cluster, "--execute", "--reassignment-json-file", f, "--throttle", "300000")
    assert (rc, out) == (1, "Cannot execute because there is an existing partition assignment."
                         "  Use --additional to override this and create a new partition "
                         "assignment in addition to the existing one. The --additional flag "
                         "can also be used to change the throttle by resubmitting the current "
                         "reassignment.\n")
    rc, out, _ = tool(cluster, "--execute", "--reassignment-json-file", f, "--throttle",
                      "3000000", "--additional")
    assert rc == 0 and "The inter-broker throttle limit was set to 3000000 B/s" in out
    assert broker_throttles(cluster)[3] == {THROTTLE_KEYS[0]: "3000000",
                                            THROTTLE_KEYS[1]: "3000000"}
    wait_for(lambda: "still in progress" not in tool(
        cluster, "--verify", "--reassignment-json-file", f, "--preserve-throttles")[1],
        "the throttled reassignment to complete")
    assert broker_throttles(cluster)[0] != {}  # preserved
    rc, out, _ = tool(cluster, "--verify", "--reassignment-json-file", f)
    assert out.endswith("Clearing broker-level throttles on brokers 0,1,2,3,4\n"
                        "Clearing topic-level throttles on topics foo,baz\n")
    assert broker_throttles(cluster) == {b: {} for b in range(5)}
    assert topic_throttles(cluster, "foo") == {} and topic_throttles(cluster, "baz") == {}


@pytest.mark.parametrize("bootstrap", ["--bootstrap-server", "--bootstrap-controller"])
def test_cancellation(cluster: Cluster, tmp_path: Path, bootstrap: str) -> None:
    """testCancellationWithBootstrapServer / WithBootstrapController."""
    produce(cluster, "foo", 0, 200)
    produce(cluster, "baz", 1, 200)
    f = assignment_file(tmp_path, [("foo", 0, [0, 1, 3]), ("baz", 1, [0, 2, 3])])
    rc, _, _ = tool(cluster, "--execute", "--reassignment-json-file", f, "--throttle", "1")
    assert rc == 0
    rc, out, _ = tool(cluster, "--list", bootstrap=bootstrap)
    assert out.startswith("Current partition reassignments:\n"
                          "baz-1: replicas: 0,2,3,1. adding: 3. removing: 1.\n"
                          "foo-0: replicas: 0,1,3,2. adding: 3. removing: 2.\n")
    rc, out, _ = tool(cluster, "--cancel", "--reassignment-json-file", f,
                      "--preserve-throttles", bootstrap=bootstrap)
    assert (rc, out) == (0, "Successfully cancelled partition reassignments for: baz-1,foo-0\n"
                         "None of the specified partition moves are active.")
    assert broker_throttles(cluster)[3] != {}  # preserved
    rc, out, _ = tool(cluster, "--cancel", "--reassignment-json-file", f, bootstrap=bootstrap)
    assert (rc, out) == (0, "None of the specified partition reassignments are active.\n"
                         "None of the specified partition moves are active.Clearing "
                         "broker-level throttles on brokers 0,1,2,3,4\n"
                         "Clearing topic-level throttles on topics foo,baz\n")
    assert broker_throttles(cluster) == {b: {} for b in range(5)}
    # the revert keeps the current order: baz-1's [2,0,1] comes back as [0,2,1]
    assert replicas(cluster, "foo", 0) == [0, 1, 2] and replicas(cluster, "baz", 1) == [0, 2, 1]
    assert 3 not in hosts(cluster, "foo", 0) and 3 not in hosts(cluster, "baz", 1)
    rc, out, _ = tool(cluster, "--execute", "--reassignment-json-file", f,
                      bootstrap="--bootstrap-controller")
    assert rc == 1 and "Option \"[bootstrap-controller]\" can't be used with action " \
        "\"[execute]\"" in _


def test_disallowed_replication_factor_change(cluster: Cluster, tmp_path: Path) -> None:
    f = assignment_file(tmp_path, [("foo", 0, [0, 1]), ("foo", 1, [0, 1, 2, 3]),
                                   ("bar", 0, [3])])
    rc, out, _ = tool(cluster, "--execute", "--reassignment-json-file", f,
                      "--disallow-replication-factor-change")
    assert rc == 1
    assert out.endswith("Error reassigning partition(s):\n"
                        "bar-0: The replication factor is changed from 3 to 1\n"
                        "foo-0: The replication factor is changed from 3 to 2\n"
                        "foo-1: The replication factor is changed from 3 to 4\n")


def test_log_dirs_in_the_reassignment_file(cluster: Cluster, tmp_path: Path) -> None:
    f = assignment_file(tmp_path, [("foo", 0, [0, 1, 3])],
                        {("foo", 0): ["/tmp/kafka-logs", "any", "/tmp/kafka-logs"]})
    rc, out, _ = tool(cluster, "--execute", "--reassignment-json-file", f)
    assert rc == 0
    assert out.endswith(
        "Successfully started partition reassignment for foo-0\n"
        "Successfully started moving log directory to /tmp/kafka-logs for replica foo-0 with "
        "broker 0 \n"
        "Successfully started moving log directory to /tmp/kafka-logs for replica foo-0 with "
        "broker 3 \n")
    wait_for(lambda: known_replicas(cluster, "foo", 0) == [0, 1, 3], "the reassignment")
    rc, out, _ = tool(cluster, "--verify", "--reassignment-json-file", f)
    assert out.startswith("Status of partition reassignment:\n"
                          "Reassignment of partition foo-0 is completed.\n"
                          "Reassignment of replica foo-0-0 completed successfully.\n"
                          "Reassignment of replica foo-0-3 completed successfully.\n"
                          "Clearing broker-level throttles")
    f = assignment_file(tmp_path, [("foo", 0, [0, 1, 3])],
                        {("foo", 0): ["any", "any", "/data/other"]})
    rc, out, _ = tool(cluster, "--execute", "--reassignment-json-file", f)
    assert rc == 1 and out.endswith("Error: Failed to alter dir for foo-0-3\n")


BAD_FILES = [
    ('{"version":1,"partitions":[{"topic":"foo",', None),
    ('[1,2]', "Error: Expected JSON object, received [1,2]\n"),
    ('{"version":2,"partitions":[]}', "Error: Not supported version field value 2\n"),
    ('{"version":"1"}', 'Error: Expected `Integer` value, received "1"\n'),
    ('{"version":1,"partitions":[]}', "Error: Partition reassignment list cannot be empty\n"),
    ('{"partitions":[{"topic":"foo","partition":0}]}',
     "Error: No such field exists: `replicas`\n"),
    ('{"partitions":[{"topic":"foo","partition":0,"replicas":[]}]}',
     "Error: Partition replica list cannot be empty\n"),
    ('{"partitions":[{"topic":"foo","partition":"0","replicas":[1]}]}',
     'Error: Expected `Integer` value, received "0"\n'),
    ('{"partitions":[{"topic":"foo","partition":0,"replicas":[1,2],"log_dirs":["any"]}]}',
     "Error: Size of replicas list [1, 2] is different from size of log dirs list [any] for "
     "partition foo-0\n"),
    ('{"partitions":[{"topic":"foo","partition":0,"replicas":[1]},'
     '{"topic":"foo","partition":0,"replicas":[2]}]}',
     "Error: Partition reassignment contains duplicate topic partitions: foo-0\n"),
    ('{"partitions":[{"topic":"foo","partition":0,"replicas":[1,1,2,2]}]}',
     "Error: Partition replica lists may not contain duplicate entries: foo-0 contains "
     "multiple entries for 1,2\n"),
    ('{"partitions":[{"topic":"foo","partition":0,"replicas":[1,7]}]}',
     "Error: Unknown broker id 7\n"),
    ('{"partitions":[{"topic":"nope","partition":0,"replicas":[1]}]}',
     "Error: org.apache.kafka.common.errors.UnknownTopicOrPartitionException: Topic nope not "
     "found.\n"),
    ('{"partitions":[{"topic":"foo","partition":10,"replicas":[1]}]}',
     "Error: org.apache.kafka.common.errors.UnknownTopicOrPartitionException: Unable to find "
     "partition: foo-10\n"),
]


def test_bad_reassignment_files_exit_1_with_a_clear_message(cluster: Cluster,
                                                             tmp_path: Path) -> None:
    for i, (text, expected) in enumerate(BAD_FILES):
        f = tmp_path / f"bad-{i}.json"
        f.write_text(text)
        rc, out, _ = tool(cluster, "--execute", "--reassignment-json-file", str(f))
        assert rc == 1, (text, out)
        if expected is None:
            assert out.startswith("Error: Unable to parse the JSON: ") and "line 1" in out
        else:
            assert out == expected, text
    rc, out, _ = tool(cluster, "--execute", "--reassignment-json-file", str(tmp_path / "no.json"))
    assert (rc, out) == (1, f"Error: {tmp_path / 'no.json'} (No such file or directory)\n")
    topics = tmp_path / "topics.json"
    topics.write_text("{nope")
    rc, out, _ = tool(cluster, "--generate", "--topics-to-move-json-file", str(topics),
                      "--broker-list", "1,2")
    assert (rc, out) == (1, "Error: The input string is not a valid JSON\n")
    assert replicas(cluster, "foo", 0) == [0, 1, 2]  # nothing was changed by any of them


def test_argument_rules(cluster: Cluster) -> None:
    rc, out, err = tool(cluster, "--list", "--verify")
    assert rc == 1 and err.startswith("Command must include exactly one action: --generate, "
                                      "--execute, --verify, --cancel, --list\n")
    rc, out, err = tool(cluster, "--verify")
    assert rc == 1 and err.startswith('Missing required argument "[reassignment-json-file]"')
    rc, out, err = tool(cluster, "--list", "--throttle", "5")
    assert rc == 1 and err.startswith('Option "[throttle]" can\'t be used with action "[list]"')
    out_, err_ = io.StringIO(), io.StringIO()
    assert main(["--list"], out=out_, err=err_) == 1
    assert err_.getvalue().startswith("Please specify either --bootstrap-server or "
                                      "--bootstrap-controller")


def test_the_command_line_entry_point(cluster: Cluster, tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    r = subprocess.run([sys.executable, "-m", "emulator", "reassign", "--bootstrap-server",
                        cluster.bootstrap_servers, "--list"], capture_output=True, text=True,
                       env=env, timeout=60)
    assert (r.returncode, r.stdout) == (0, "No partition reassignments found.\n")
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    r = subprocess.run([sys.executable, "-m", "emulator", "reassign", "--bootstrap-server",
                        cluster.bootstrap_servers, "--verify", "--reassignment-json-file",
                        str(bad)], capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode == 1 and r.stdout.startswith("Error: Unable to parse the JSON")
