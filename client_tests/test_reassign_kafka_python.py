"""Partition reassignment and leader election over TCP with kafka-python 3 and raw frames.

kafka-python 3's KafkaAdminClient drives alter_partition_reassignments,
list_partition_reassignments and elect_leaders; the raw protocol (our codec over a
socket) checks the codes of requests past their deadline and of AlterReplicaLogDirs
(client_tests/test_reassign_admin_api.py checks every invalid reassignment's code and
message). Producers and a consumer run through a reassignment that moves the leader:
nothing lost, duplicated or reordered.

All but the last test run on either target (the conftest's 3 brokers: the emulator, or a
real Kafka with --target kafka), with unique topic names. A reassignment is held in flight
by a target broker that is down (a crash on either target: it stays registered, so the
move waits for it); a replica is put out of sync the same way.
"""

from __future__ import annotations

import json
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator

import pytest
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import KafkaAdminClient
from kafka.errors import (
    InvalidReplicationAssignmentError,
    NoReassignmentInProgressError,
    UnknownTopicOrPartitionError,
)

from client_tests.rawkafka import Conn, crash, create_assigned, replicas_of, restart
from client_tests.rawkafka import alter_reassignments as alter_raw
from client_tests.rawkafka import reassignment_results as results
from client_tests.targets import KafkaTarget
from emulator import Cluster
from emulator.cluster.log_dirs import DEFAULT_LOG_DIR
from emulator.testing import wait_for
from emulator.tools.reassign import main as reassign_tool
from wire.errors import ErrorCode as E

Target = Cluster | KafkaTarget


def unique(name: str) -> str:
    return f"{name}-{uuid.uuid4().hex[:8]}"


def admin(c: Target) -> KafkaAdminClient:
    return KafkaAdminClient(bootstrap_servers=c.bootstrap_servers, request_timeout_ms=15000)


def ours(listed: dict, topic: str) -> dict:
    """The reassignments of ``topic`` only (a Kafka session's cluster is shared)."""
    return {tp: r for tp, r in listed.items() if tp.topic == topic}


def hosted(cluster: Target, broker: int, topic: str) -> list[int]:
    """The partitions of ``topic`` with a replica log on ``broker`` (DescribeLogDirs)."""
    c = Conn(cluster, cluster.broker_ids.index(broker))
    try:
        resp = c.call(35, 4, {"topics": None})
    finally:
        c.close()
    return sorted(p["partition_index"] for r in resp["results"] for t in r["topics"]
                  if t["name"] == topic for p in t["partitions"])


def configured_log_dir(cluster: Target, broker: int) -> str:
    """The broker's one log directory as configured: Kafka's test brokers each have their
    own data directory; the emulator's default is Kafka's default."""
    if isinstance(cluster, KafkaTarget):
        return str(cluster.kafka.workdir / f"data-{broker}")
    return DEFAULT_LOG_DIR


# ---- kafka-python 3 ------------------------------------------------------------------------
def test_kafka_python_reassigns_lists_and_the_data_moves(cluster: Target) -> None:
    b1, b2, b3 = cluster.broker_ids
    moving, nope = unique("moving"), unique("nope")
    create_assigned(cluster, moving, {0: [b1], 1: [b2]})
    producer = KafkaProducer(bootstrap_servers=cluster.bootstrap_servers, acks="all")
    for i in range(200):
        producer.send(moving, b"%d" % i, partition=0)
    producer.flush()
    crash(cluster, b3)  # one of moving-0's two targets: the move waits for it
    a = admin(cluster)
    try:
        res = a.alter_partition_reassignments({
            TopicPartition(moving, 0): [b2, b3], TopicPartition(moving, 7): [b1],
            TopicPartition(moving, 1): [b2, b2], TopicPartition(nope, 0): [b1]})
        assert res == {TopicPartition(moving, 0): None,
                       TopicPartition(moving, 7): UnknownTopicOrPartitionError,
                       TopicPartition(moving, 1): InvalidReplicationAssignmentError,
                       TopicPartition(nope, 0): UnknownTopicOrPartitionError}
        in_flight = {TopicPartition(moving, 0): {
            "replicas": [b2, b3, b1], "adding_replicas": [b2, b3],
            "removing_replicas": [b1]}}
        # Kafka's brokers learn of the reassignment from the metadata log, a moment later
        wait_for(lambda: ours(a.list_partition_reassignments(), moving) == in_flight,
                 "moving-0's reassignment listed")
        assert a.list_partition_reassignments({moving: [0, 1], nope: [0]}) == in_flight
        assert a.list_partition_reassignments([TopicPartition(moving, 1)]) == {}
        wait_for(lambda: b2 in replicas_of(cluster, moving)[1], f"replica {b2} to join the ISR")
        assert replicas_of(cluster, moving)[2] == b1  # the leader waits for every target
        restart(cluster, b3)
        wait_for(lambda: not ours(a.list_partition_reassignments(), moving),
                 "the reassignment to complete", 60)
        # the removed leader hands over to the first target replica in the ISR
        wait_for(lambda: replicas_of(cluster, moving) == ([b2, b3], sorted([b2, b3]), b2),
                 f"moving-0 on {b2}, {b3}")
        wait_for(lambda: hosted(cluster, b1, moving) == [], f"{b1}'s replica deleted")
        assert a.alter_partition_reassignments({TopicPartition(moving, 0): None}) == {
            TopicPartition(moving, 0): NoReassignmentInProgressError}
    finally:
        a.close()
    producer.send(moving, b"200", partition=0)  # the producer follows the new leader
    producer.flush()
    producer.close()
    consumer = KafkaConsumer(bootstrap_servers=cluster.bootstrap_servers,
                             auto_offset_reset="earliest", consumer_timeout_ms=10000)
    consumer.assign([TopicPartition(moving, 0)])
    got = []
    for m in consumer:
        got.append(int(m.value))
        if len(got) == 201:
            break
    consumer.close()
    assert got == list(range(201))


def test_kafka_python_cancels_and_reverts(cluster: Target) -> None:
    b1, b2, b3 = cluster.broker_ids
    cancelled = unique("cancelled")
    create_assigned(cluster, cancelled, {0: [b1, b2]})
    crash(cluster, b3)
    a = admin(cluster)
    try:
        assert a.alter_partition_reassignments({TopicPartition(cancelled, 0): [b3, b1]}) == {
            TopicPartition(cancelled, 0): None}
        wait_for(lambda: ours(a.list_partition_reassignments(), cancelled) == {
            TopicPartition(cancelled, 0): {"replicas": [b3, b1, b2], "adding_replicas": [b3],
                                           "removing_replicas": [b2]}}, "listed")
        assert a.alter_partition_reassignments({TopicPartition(cancelled, 0): None}) == {
            TopicPartition(cancelled, 0): None}
        wait_for(lambda: ours(a.list_partition_reassignments(), cancelled) == {}, "cancelled")
        wait_for(lambda: replicas_of(cluster, cancelled)[0] == [b1, b2], "reverted")
    finally:
        a.close()


@pytest.mark.kafka_slow  # three crashes, each waiting for the fencing: ~35 s on Kafka
def test_kafka_python_elects_preferred_and_unclean_leaders(cluster: Target) -> None:
    b1, b2, b3 = cluster.broker_ids
    pref, lonely = unique("pref"), unique("lonely")
    create_assigned(cluster, pref, {0: [b1, b2, b3]})
    create_assigned(cluster, lonely, {0: [b3, b2]})
    crash(cluster, b1)
    wait_for(lambda: replicas_of(cluster, pref)[2] == b2, f"{b2} leading {pref}-0")
    restart(cluster, b1)
    wait_for(lambda: b1 in replicas_of(cluster, pref)[1], f"broker {b1} to rejoin the ISR", 60)
    a = admin(cluster)
    try:
        r = a.elect_leaders(0, {pref: [0]})
        codes = {(t.topic, p.partition_id): p.error_code
                 for t in r.replica_election_results for p in t.partition_result}
        assert codes == {(pref, 0): 0}
        wait_for(lambda: replicas_of(cluster, pref)[2] == b1, f"{b1} leading {pref}-0")
        r = a.elect_leaders(0, {pref: [0]}, raise_errors=False)
        assert r.replica_election_results[0].partition_result[0].error_code == \
            E.ELECTION_NOT_NEEDED
        # lonely: its ISR shrinks to b3 (b2 dies), then b3 dies: leaderless; b2 comes back
        # out of sync, and only an unclean election gives the partition a leader again
        a.close()
        crash(cluster, b2)
        wait_for(lambda: replicas_of(cluster, lonely)[1:] == ([b3], b3), f"ISR {b3}")
        crash(cluster, b3)
        wait_for(lambda: replicas_of(cluster, lonely)[2] == -1, f"{lonely}-0 leaderless")
        restart(cluster, b2)
        assert replicas_of(cluster, lonely)[2] == -1
        # kafka-python keeps the controller id it was told, a random live broker (as on
        # KRaft) that may be one just stopped: a new client asks again
        a = admin(cluster)
        r = a.elect_leaders(1, {lonely: [0]}, raise_errors=False)
        p = r.replica_election_results[0].partition_result[0]
        assert (p.error_code, p.error_message) == (0, None)
        wait_for(lambda: replicas_of(cluster, lonely)[1:] == ([b2], b2), f"{b2} leading")
    finally:
        a.close()


# ---- raw protocol: deadlines and log directories ---------------------------------------------
def test_requests_past_their_deadline_change_nothing(cluster: Target) -> None:
    """timeout_ms 0: AlterPartitionReassignments and ElectLeaders answer REQUEST_TIMED_OUT
    for every partition and change nothing; a request with nothing to do succeeds."""
    b1, b2, b3 = cluster.broker_ids
    foo = unique("foo")
    create_assigned(cluster, foo, {0: [b1, b2], 1: [b2, b1]})
    crash(cluster, b3)  # the target of foo-0's move: it waits for b3
    conn = Conn(cluster, 0)
    try:
        assert results(alter_raw(conn, [(foo, [(0, [b1, b3])])])) == {(foo, 0): (0, None)}
        wait_for(lambda: replicas_of(cluster, foo)[0] == [b1, b3, b2], "foo-0 in flight")
        resp = alter_raw(conn, [(foo, [(0, None), (1, [b1])])], timeout_ms=0)
        assert (resp["error_code"], resp["error_message"]) == (E.REQUEST_TIMED_OUT, None)
        assert resp["throttle_time_ms"] == 0  # not throttled: timed out
        assert results(resp) == {(foo, 0): (E.REQUEST_TIMED_OUT, None),
                                 (foo, 1): (E.REQUEST_TIMED_OUT, None)}
        resp = alter_raw(conn, [], timeout_ms=0)  # nothing to do: an immediate success
        assert (resp["error_code"], resp["responses"], resp["throttle_time_ms"]) == (0, [], 0)
        resp = conn.call(43, 1, {"election_type": 0, "topic_partitions": [
            {"topic": foo, "partitions": [0, 9]}], "timeout_ms": 0})
        assert resp["error_code"] == E.REQUEST_TIMED_OUT
        assert {(p["partition_id"], p["error_code"])
                for p in resp["replica_election_results"][0]["partition_result"]} == {
            (0, E.REQUEST_TIMED_OUT), (9, E.REQUEST_TIMED_OUT)}
        assert conn.call(46, 0, {"timeout_ms": 0, "topics": [
            {"name": foo, "partition_indexes": [1, 7]}]})["topics"] == []
        time.sleep(0.5)  # anything the timed-out requests did would show by now
        assert replicas_of(cluster, foo)[0] == [b1, b3, b2]
        assert replicas_of(cluster, foo, 1)[0] == [b2, b1]
        assert alter_raw(conn, [(foo, [(0, None)])], version=0)["responses"][0][
            "partitions"][0]["error_code"] == 0
        wait_for(lambda: replicas_of(cluster, foo)[0] == [b1, b2], "foo-0 back on b1, b2")
    finally:
        conn.close()


def test_any_broker_accepts_reassignments(cluster: Target) -> None:
    anywhere = unique("anywhere")
    b1, b2, b3 = cluster.broker_ids
    create_assigned(cluster, anywhere, {0: [b1]})
    for i, target in enumerate([[b2], [b3], [b1]]):
        conn = Conn(cluster, i)
        try:
            assert results(alter_raw(conn, [(anywhere, [(0, target)])])) == {
                (anywhere, 0): (0, None)}
        finally:
            conn.close()
        wait_for(lambda t=target: replicas_of(cluster, anywhere)[0] == t, f"replicas {target}")


def test_log_dirs_describe_the_replicas_a_broker_hosts(cluster: Target) -> None:
    b1, b2, b3 = cluster.broker_ids
    dirs = unique("dirs")
    create_assigned(cluster, dirs, {0: [b1, b2], 1: [b2, b1]})
    own = configured_log_dir(cluster, b1)
    conn = Conn(cluster, 0)
    try:
        # (create_assigned returned once each replica's broker lists its log: Kafka 4.4
        # creates a follower's log when its ReplicaManager applies the metadata change,
        # after every broker's Metadata names the leaders)
        resp = conn.call(35, 4, {"topics": None})
        assert [r["log_dir"] for r in resp["results"]] == [own]
        names = {t["name"]: sorted(p["partition_index"] for p in t["partitions"])
                 for t in resp["results"][0]["topics"]}
        assert names[dirs] == [0, 1]
        # a partition named under two directories is answered once, for the last one
        # (Kafka reads the request into a map of partition to directory)
        resp = conn.call(34, 2, {"dirs": [
            {"path": own, "topics": [{"name": dirs, "partitions": [0, 1]}]},
            {"path": "/elsewhere", "topics": [{"name": dirs, "partitions": [1]}]}]})
        assert sorted((p["partition_index"], p["error_code"])
                      for r in resp["results"] for p in r["partitions"]) == [
            (0, E.NONE), (1, E.LOG_DIR_NOT_FOUND)]
    finally:
        conn.close()
    conn = Conn(cluster, 2)  # b3 hosts no replica of it
    try:
        resp = conn.call(34, 1, {"dirs": [
            {"path": configured_log_dir(cluster, b3),
             "topics": [{"name": dirs, "partitions": [0]}]}]})
        assert resp["results"][0]["partitions"][0]["error_code"] == E.REPLICA_NOT_AVAILABLE
    finally:
        conn.close()


# ---- producers and consumers through a reassignment -----------------------------------------
def test_producers_and_consumers_run_through_a_reassignment(cluster: Target) -> None:
    """The leader moves away while an idempotent acks=all producer writes and a consumer
    reads: every record arrives once, in order (testProduceAndConsumeWithReassignmentInProgress).
    The move is started and finished (--verify clears its throttles) by the emulator's
    kafka-reassign-partitions (emulator/tools/reassign/), a client like Kafka's."""
    b1, b2, b3 = cluster.broker_ids
    busy = unique("busy")
    create_assigned(cluster, busy, {0: [b1, b2]}, {"min.insync.replicas": "2"})
    total = 3000
    stop = threading.Event()
    consumed: list[int] = []

    def consume() -> None:
        c = KafkaConsumer(bootstrap_servers=cluster.bootstrap_servers,
                          auto_offset_reset="earliest", consumer_timeout_ms=500,
                          fetch_max_wait_ms=100, metadata_max_age_ms=1000)
        c.assign([TopicPartition(busy, 0)])
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
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump({"version": 1, "partitions": [
            {"topic": busy, "partition": 0, "replicas": [b3, b2]}]}, f)
    futures = []
    for i in range(total):
        futures.append(producer.send(busy, b"%d" % i, partition=0))
        if i == total // 5:
            # a slow move: 200 KB/s on the new replica's broker, the leader removed
            assert reassign_tool(["--bootstrap-server", cluster.bootstrap_servers,
                                  "--execute", "--reassignment-json-file", f.name,
                                  "--throttle", "200000"]) == 0
        if i % 300 == 0:
            time.sleep(0.05)
    for fut in futures:
        fut.get(timeout=60)
    producer.close()
    wait_for(lambda: replicas_of(cluster, busy)[0] == [b3, b2], "the reassignment", 60)
    stop.set()
    reader.join(timeout=60)
    assert consumed == list(range(total))
    assert reassign_tool(["--bootstrap-server", cluster.bootstrap_servers, "--verify",
                          "--reassignment-json-file", f.name]) == 0


# ---- the emulator's controller ---------------------------------------------------------------
@pytest.fixture
def four_brokers() -> Iterator[Cluster]:
    with Cluster(brokers=4, port=0) as c:
        yield c


@pytest.mark.emulator_only  # it crashes the controller, which on Kafka is its own process
def test_a_reassignment_through_a_dead_target_and_a_controller_failover(
        four_brokers: Cluster) -> None:
    """A target broker is down (the reassignment waits), then the controller, which is
    also the leader and a replica being removed, dies: the new controller carries the
    reassignment to its end when the target comes back, with every record kept.

    The emulator's controller is one of its brokers (the lowest live id); Kafka's test
    cluster runs its controller as a process of its own that the target-neutral calls do
    not stop, and its brokers carry no controller state to fail over."""
    cluster = four_brokers
    cluster.call(lambda: cluster.state.create_topic("faulty", assignments={0: [1, 2]}))
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


def partition(c: Cluster, topic: str, index: int = 0) -> tuple[list[int], list[int], int]:
    """(replicas, ISR, leader) from the emulator's state."""
    def read() -> tuple[list[int], list[int], int]:
        p = c.state.get_partition(topic, index)
        return list(p.replicas), list(p.isr), p.leader
    return c.call(read)
