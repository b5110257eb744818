"""Partition reassignment and leader election over TCP with kafka-python 3 and raw frames.

kafka-python 3's KafkaAdminClient drives alter_partition_reassignments,
list_partition_reassignments and elect_leaders; the raw protocol (our codec over a
socket) checks the exact codes and messages of every invalid request of
specs/reassignment.md section 2, partition by partition. Producers and a consumer
run through a reassignment that moves the leader: nothing lost, duplicated or
reordered.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import KafkaAdminClient
from kafka.errors import (
    InvalidReplicationAssignmentError,
    NoReassignmentInProgressError,
    UnknownTopicOrPartitionError,
)

from client_tests.rawkafka import Conn
from client_tests.rawkafka import alter_reassignments as alter_raw
from client_tests.rawkafka import reassignment_results as results
from emulator import Cluster
from emulator.testing import wait_for
from emulator.tools.reassign import main as reassign_tool
from wire.errors import ErrorCode as E

# Not run with --target kafka: holds reassignments with the emulator's pause_follower fault.
pytestmark = pytest.mark.emulator_only

MSG = "The manual partition assignment includes "



@pytest.fixture
def cluster() -> Iterator[Cluster]:
    with Cluster(brokers=4, port=0) as c:
        yield c


def create(c: Cluster, name: str, assignments: dict[int, list[int]], **configs: str) -> None:
    c.call(lambda: c.state.create_topic(name, assignments=assignments, configs=configs))


def partition(c: Cluster, topic: str, index: int = 0) -> tuple[list[int], list[int], int]:
    def read() -> tuple[list[int], list[int], int]:
        p = c.state.get_partition(topic, index)
        return list(p.replicas), list(p.isr), p.leader
    return c.call(read)


def admin(c: Cluster) -> KafkaAdminClient:
    return KafkaAdminClient(bootstrap_servers=c.bootstrap_servers, request_timeout_ms=15000)


# ---- kafka-python 3 ------------------------------------------------------------------------
def test_kafka_python_reassigns_lists_and_the_data_moves(cluster: Cluster) -> None:
    create(cluster, "moving", {0: [1, 2], 1: [2, 3]})
    producer = KafkaProducer(bootstrap_servers=cluster.bootstrap_servers, acks="all")
    for i in range(200):
        producer.send("moving", b"%d" % i, partition=0)
    producer.flush()
    cluster.pause_follower(4)
    a = admin(cluster)
    try:
        res = a.alter_partition_reassignments({
            TopicPartition("moving", 0): [3, 4], TopicPartition("moving", 7): [1],
            TopicPartition("moving", 1): [2, 2], TopicPartition("nope", 0): [1]})
        assert res == {TopicPartition("moving", 0): None,
                       TopicPartition("moving", 7): UnknownTopicOrPartitionError,
                       TopicPartition("moving", 1): InvalidReplicationAssignmentError,
                       TopicPartition("nope", 0): UnknownTopicOrPartitionError}
        listed = a.list_partition_reassignments()
        assert listed == {TopicPartition("moving", 0): {
            "replicas": [3, 4, 1, 2], "adding_replicas": [3, 4], "removing_replicas": [1, 2]}}
        assert a.list_partition_reassignments({"moving": [0, 1], "nope": [0]}) == listed
        assert a.list_partition_reassignments([TopicPartition("moving", 1)]) == {}
        wait_for(lambda: 3 in partition(cluster, "moving")[1], "replica 3 to join the ISR")
        assert partition(cluster, "moving")[2] == 1  # the leader waits for every target
        cluster.resume_follower(4)
        wait_for(lambda: not a.list_partition_reassignments(), "the reassignment to complete")
        assert partition(cluster, "moving") == ([3, 4], [3, 4], 3)
        assert cluster.call(lambda: sorted(cluster.state.get_partition("moving", 0).logs)) == [3, 4]
        assert a.alter_partition_reassignments({TopicPartition("moving", 0): None}) == {
            TopicPartition("moving", 0): NoReassignmentInProgressError}
    finally:
        a.close()
    producer.send("moving", b"200", partition=0)  # the producer follows the new leader
    producer.flush()
    producer.close()
    consumer = KafkaConsumer(bootstrap_servers=cluster.bootstrap_servers,
                             auto_offset_reset="earliest", consumer_timeout_ms=10000)
    consumer.assign([TopicPartition("moving", 0)])
    got = []
    for m in consumer:
        got.append(int(m.value))
        if len(got) == 201:
            break
    consumer.close()
    assert got == list(range(201))


def test_kafka_python_cancels_and_reverts(cluster: Cluster) -> None:
    create(cluster, "cancelled", {0: [1, 2]})
    cluster.pause_follower(3)
    a = admin(cluster)
    try:
        assert a.alter_partition_reassignments({TopicPartition("cancelled", 0): [3, 1]}) == {
            TopicPartition("cancelled", 0): None}
        assert a.list_partition_reassignments()[TopicPartition("cancelled", 0)] == {
            "replicas": [3, 1, 2], "adding_replicas": [3], "removing_replicas": [2]}
        assert a.alter_partition_reassignments({TopicPartition("cancelled", 0): None}) == {
            TopicPartition("cancelled", 0): None}
        assert a.list_partition_reassignments() == {}
        assert partition(cluster, "cancelled")[0] == [1, 2]
    finally:
        a.close()


def test_kafka_python_elects_preferred_and_unclean_leaders(cluster: Cluster) -> None:
    create(cluster, "pref", {0: [1, 2, 3]})
    create(cluster, "lonely", {0: [4, 3]})
    cluster.stop_broker(1)
    assert partition(cluster, "pref")[2] == 2
    cluster.start_broker(1)
    wait_for(lambda: 1 in partition(cluster, "pref")[1], "broker 1 to rejoin the ISR")
    a = admin(cluster)
    try:
        r = a.elect_leaders(0, {"pref": [0]})
        codes = {(t.topic, p.partition_id): p.error_code
                 for t in r.replica_election_results for p in t.partition_result}
        assert codes == {("pref", 0): 0}
        assert partition(cluster, "pref")[2] == 1
        r = a.elect_leaders(0, {"pref": [0]}, raise_errors=False)
        assert r.replica_election_results[0].partition_result[0].error_code == \
            E.ELECTION_NOT_NEEDED
        # "lonely": its ISR shrinks to 4, then 4 dies: leaderless, 3 out of sync
        cluster.pause_follower(3)
        cluster.call(lambda: cluster.state.shrink_isr(cluster.state.get_partition("lonely", 0),
                                                      [3]))
        cluster.stop_broker(4)
        assert partition(cluster, "lonely")[2] == -1
        # kafka-python keeps the controller id it was told, a random live broker (as on
        # KRaft) that may be the one just stopped: a new client asks again
        a.close()
        a = admin(cluster)
        r = a.elect_leaders(1, {"lonely": [0]}, raise_errors=False)
        p = r.replica_election_results[0].partition_result[0]
        assert (p.error_code, p.error_message) == (0, None)
        assert partition(cluster, "lonely")[1:] == ([3], 3)
    finally:
        a.close()


# ---- raw protocol: codes and messages ----------------------------------------------------------
def test_every_invalid_request_gets_kafkas_code_and_message(cluster: Cluster) -> None:
    create(cluster, "foo", {0: [1, 2, 3], 1: [2, 3, 4], 2: [1, 2, 3]})
    cluster.pause_follower(4)
    conn = Conn(cluster, 0)
    try:
        resp = alter_raw(conn, [
            ("foo", [(0, [1, 2, 4]), (1, []), (2, [1, 9]), (3, [1]), (-1, [1]), (1, [3, 3, 2])]),
            ("nope", [(0, [1])])])
        assert (resp["error_code"], resp["error_message"]) == (0, None)
        assert resp["allow_replication_factor_change"] is True
        assert results(resp) == {
            ("foo", 0): (0, None),
            ("foo", 1): (E.INVALID_REPLICA_ASSIGNMENT, MSG + "the broker 3 more than once."),
            ("foo", 2): (E.INVALID_REPLICA_ASSIGNMENT,
                         MSG + "broker 9, but no such broker is registered."),
            ("foo", 3): (E.UNKNOWN_TOPIC_OR_PARTITION, "Unable to find partition foo:3."),
            ("foo", -1): (E.UNKNOWN_TOPIC_OR_PARTITION, "Unable to find partition foo:-1."),
            ("nope", 0): (E.UNKNOWN_TOPIC_OR_PARTITION, "Unable to find a topic named nope.")}
        # foo-1 appears twice above; the last answer for it wins in the dict: check the first
        first = resp["responses"][0]["partitions"][1]
        assert (first["error_code"], first["error_message"]) == (
            E.INVALID_REPLICA_ASSIGNMENT, MSG + "an empty replica list.")
        assert partition(cluster, "foo")[0] == [1, 2, 4, 3]  # the good one proceeded
        resp = alter_raw(conn, [("foo", [(1, [2, 3]), (2, None)])], allow_rf=False)
        assert resp["allow_replication_factor_change"] is False
        assert results(resp) == {
            ("foo", 1): (E.INVALID_REPLICATION_FACTOR,
                         "The replication factor is changed from 3 to 2"),
            ("foo", 2): (E.NO_REASSIGNMENT_IN_PROGRESS, None)}
        # the deadline: a request that cannot start in time changes nothing
        resp = alter_raw(conn, [("foo", [(0, None), (1, [1])])], timeout_ms=0)
        assert (resp["error_code"], resp["error_message"]) == (E.REQUEST_TIMED_OUT, None)
        assert results(resp) == {("foo", 0): (E.REQUEST_TIMED_OUT, None),
                                 ("foo", 1): (E.REQUEST_TIMED_OUT, None)}
        assert partition(cluster, "foo")[0] == [1, 2, 4, 3]
        resp = alter_raw(conn, [], timeout_ms=0)  # nothing to do: an immediate success
        assert (resp["error_code"], resp["responses"]) == (0, [])
        assert alter_raw(conn, [("foo", [(0, None)])], version=0)["responses"][0][
            "partitions"][0]["error_code"] == 0
        # ListPartitionReassignments: unknown names and indexes are skipped
        assert conn.call(46, 0, {"timeout_ms": 0, "topics": [
            {"name": "foo", "partition_indexes": [0, 7]}, {"name": "nope",
                                                          "partition_indexes": [0]}]}) == {
            "throttle_time_ms": 0, "error_code": 0, "error_message": None, "topics": []}
        assert conn.call(46, 0, {"topics": []})["topics"] == []
        # ElectLeaders
        resp = conn.call(43, 2, {"election_type": 5, "topic_partitions": [
            {"topic": "foo", "partitions": [0]}], "timeout_ms": 1000})
        assert resp["error_code"] == E.INVALID_REQUEST
        assert resp["replica_election_results"][0]["partition_result"][0]["error_message"] == \
            "Unknown election type 5"
        resp = conn.call(43, 1, {"election_type": 0, "topic_partitions": [
            {"topic": "foo", "partitions": [0, 9]}], "timeout_ms": 0})
        assert resp["error_code"] == E.REQUEST_TIMED_OUT
        resp = conn.call(43, 0, {"topic_partitions": [{"topic": "foo", "partitions": [9]}]})
        assert resp["replica_election_results"][0]["partition_result"][0]["error_message"] == \
            "No such partition as foo-9"
    finally:
        conn.close()


def test_any_broker_accepts_reassignments(cluster: Cluster) -> None:
    create(cluster, "anywhere", {0: [1]})
    targets = [[2], [3], [4], [1]]
    for i, target in enumerate(targets):
        conn = Conn(cluster, i)
        try:
            assert results(alter_raw(conn, [("anywhere", [(0, target)])])) == {
                ("anywhere", 0): (0, None)}
        finally:
            conn.close()
        wait_for(lambda t=target: partition(cluster, "anywhere")[0] == t, f"replicas {target}")


def test_log_dirs_describe_the_replicas_a_broker_hosts(cluster: Cluster) -> None:
    create(cluster, "dirs", {0: [1, 2]})
    conn = Conn(cluster, 0)
    try:
        resp = conn.call(35, 4, {"topics": None})
        assert resp["results"][0]["log_dir"] == "/tmp/kafka-logs"
        names = {t["name"]: [p["partition_index"] for p in t["partitions"]]
                 for t in resp["results"][0]["topics"]}
        assert names["dirs"] == [0]
        resp = conn.call(34, 2, {"dirs": [
            {"path": "/tmp/kafka-logs", "topics": [{"name": "dirs", "partitions": [0]}]},
            {"path": "/elsewhere", "topics": [{"name": "dirs", "partitions": [0]}]}]})
        codes = [p["error_code"] for r in resp["results"] for p in r["partitions"]]
        assert codes == [0, E.LOG_DIR_NOT_FOUND]
    finally:
        conn.close()
    conn = Conn(cluster, 3)  # broker 4 hosts no replica of it
    try:
        resp = conn.call(34, 1, {"dirs": [
            {"path": "/tmp/kafka-logs", "topics": [{"name": "dirs", "partitions": [0]}]}]})
        assert resp["results"][0]["partitions"][0]["error_code"] == E.REPLICA_NOT_AVAILABLE
    finally:
        conn.close()


# ---- producers and consumers through a reassignment -----------------------------------------
def test_producers_and_consumers_run_through_a_reassignment(cluster: Cluster) -> None:
    """The leader moves away while an idempotent acks=all producer writes and a consumer
    reads: every record arrives once, in order (testProduceAndConsumeWithReassignmentInProgress)."""
    create(cluster, "busy", {0: [1, 2]}, **{"min.insync.replicas": "2"})
    total = 3000
    stop = threading.Event()
    consumed: list[int] = []

    def consume() -> None:
        c = KafkaConsumer(bootstrap_servers=cluster.bootstrap_servers,
                          auto_offset_reset="earliest", consumer_timeout_ms=500,
                          fetch_max_wait_ms=100, metadata_max_age_ms=1000)
        c.assign([TopicPartition("busy", 0)])
        while not stop.is_set() or len(consumed) < total:
            for m in c:
                consumed.append(int(m.value))
            if stop.is_set() and len(consumed) >= total:
                break
        c.close()

    reader = threading.Thread(target=consume, daemon=True)
    reader.start()
    producer = KafkaProducer(bootstrap_servers=cluster.bootstrap_servers, acks="all",
                             enable_idempotence=True, linger_ms=2, retries=1000,
                             retry_backoff_ms=50, metadata_max_age_ms=1000,
                             max_in_flight_requests_per_connection=5)
    futures = []
    for i in range(total):
        futures.append(producer.send("busy", b"%d" % i, partition=0))
        if i == total // 5:
            # a slow move: 200 KB/s on the new replicas' brokers, leader removed
            import json
            import tempfile

            with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
                json.dump({"version": 1, "partitions": [
                    {"topic": "busy", "partition": 0, "replicas": [3, 4]}]}, f)
            assert reassign_tool(["--bootstrap-server", cluster.bootstrap_servers,
                                  "--execute", "--reassignment-json-file", f.name,
                                  "--throttle", "200000"]) == 0
        if i % 300 == 0:
            time.sleep(0.05)
    for f in futures:
        f.get(timeout=60)
    producer.close()
    wait_for(lambda: partition(cluster, "busy")[0] == [3, 4], "the reassignment", 60)
    stop.set()
    reader.join(timeout=60)
    assert consumed == list(range(total))


def test_a_reassignment_through_a_dead_target_and_a_controller_failover(
        cluster: Cluster) -> None:
    """A target broker is down (the reassignment waits), then the controller, which is
    also the leader and a replica being removed, dies: the new controller carries the
    reassignment to its end when the target comes back, with every record kept."""
    create(cluster, "faulty", {0: [1, 2]})
    producer = KafkaProducer(bootstrap_servers=cluster.bootstrap_servers, acks="all",
                             retries=100, metadata_max_age_ms=500)
    for i in range(100):
        producer.send("faulty", b"%d" % i, partition=0)
    producer.flush()
    assert cluster.call(lambda: cluster.state.controller_id) == 1
    cluster.stop_broker(4)
    a = admin(cluster)
    try:
        assert a.alter_partition_reassignments({TopicPartition("faulty", 0): [2, 3, 4]}) == {
            TopicPartition("faulty", 0): None}
        wait_for(lambda: 3 in partition(cluster, "faulty")[1], "replica 3 to catch up")
        assert a.list_partition_reassignments() == {TopicPartition("faulty", 0): {
            "replicas": [2, 3, 4, 1], "adding_replicas": [3, 4], "removing_replicas": [1]}}
        cluster.stop_broker(1)  # the controller, the leader and a replica being removed
        assert cluster.call(lambda: cluster.state.controller_id) == 2
        assert partition(cluster, "faulty")[2] in (2, 3)
        a.close()  # kafka-python keeps asking the dead node it knew as controller
        a = admin(cluster)
        for i in range(100, 150):
            producer.send("faulty", b"%d" % i, partition=0)
        producer.flush()
        assert a.list_partition_reassignments()[TopicPartition("faulty", 0)][
            "adding_replicas"] == [3, 4]  # answered by the new controller's brokers
        assert partition(cluster, "faulty")[0] == [2, 3, 4, 1]  # waiting for broker 4
        cluster.start_broker(4)
        wait_for(lambda: not a.list_partition_reassignments(), "the reassignment to finish")
        assert partition(cluster, "faulty")[0] == [2, 3, 4]
        cluster.start_broker(1)
        wait_for(lambda: 1 not in cluster.call(
            lambda: list(cluster.state.get_partition("faulty", 0).logs)), "1's log deleted")
    finally:
        a.close()
        producer.close()
    consumer = KafkaConsumer(bootstrap_servers=cluster.bootstrap_servers,
                             auto_offset_reset="earliest", consumer_timeout_ms=10000)
    consumer.assign([TopicPartition("faulty", 0)])
    got = []
    for m in consumer:
        got.append(int(m.value))
        if len(got) == 150:
            break
    consumer.close()
    assert got == list(range(150))
