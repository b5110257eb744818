"""Metadata propagation: each broker learns an admin change a moment after the call returns.

On Kafka 4.4 every broker learns the controller's changes through its own metadata cache,
a little after CreateTopics, DeleteTopics, CreatePartitions or an election answered
(conformance/metadata_envelope.py measures how long). A client that sends its next
request to another broker right away can miss the change; one that waits until every
broker shows it works everywhere. The first test runs on both targets
(``--target kafka``) and, on the emulator, under ``--fidelity kafka`` too (the emulator's
per-broker metadata views, emulator/cluster/metadata_views.py). The others are the
emulator's own: under ``kafka`` a request to a broker that has not learned the change
gets Kafka's answer for that window (made long and certain with ``set_lag``), under
``fast`` (the default) every broker knows at once.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pytest

from client_tests.rawkafka import Conn, create_assigned, fetch_body, produce_body, replicas_of
from client_tests.targets import KafkaTarget
from emulator import Cluster
from emulator.testing import wait_for
from wire.errors import ErrorCode as E
from wire.records import build_batch

Target = Cluster | KafkaTarget


def metadata(conn: Conn, topic: str) -> dict:
    r = conn.call(3, 12, {"topics": [{"topic_id": bytes(16), "name": topic}],
                          "allow_auto_topic_creation": False,
                          "include_topic_authorized_operations": False})
    (t,) = r["topics"]
    return t


def create(conn: Conn, topic: str, partitions: int = 2) -> None:
    r = conn.call(19, 7, {"topics": [{"name": topic, "num_partitions": partitions,
                                      "replication_factor": 3, "assignments": [],
                                      "configs": []}],
                          "timeout_ms": 30000, "validate_only": False})
    assert r["topics"][0]["error_code"] == E.NONE, r


def delete(conn: Conn, topic: str) -> None:
    r = conn.call(20, 6, {"topics": [{"name": topic, "topic_id": bytes(16)}],
                          "timeout_ms": 30000})
    assert r["responses"][0]["error_code"] == E.NONE, r


def produce(conn: Conn, topic: str, partition: int = 0) -> dict:
    r = conn.call(0, 11, produce_body(topic, partition, build_batch([(b"k", b"v")])))
    return r["responses"][0]["partition_responses"][0]


def produce_to_leader(cs: list[Conn], target: Target, topic: str, partition: int) -> None:
    """Produce one record to the partition's leader as every broker's metadata names it,
    retrying NOT_LEADER_OR_FOLLOWER as a real producer does (a retriable error: Kafka's
    producer refreshes metadata and sends again). On Kafka 4.4 a broker's metadata cache
    takes a change before its ReplicaManager does (BrokerMetadataPublisher), so the
    leader every Metadata answer names can still refuse the first Produce for a moment:
    seen once in CI right after CreatePartitions. Any other error fails at once."""
    def attempt() -> bool:
        leader = next(p["leader_id"] for p in metadata(cs[-1], topic)["partitions"]
                      if p["partition_index"] == partition)
        code = produce(cs[target.broker_ids.index(leader)], topic, partition)["error_code"]
        assert code in (E.NONE, E.NOT_LEADER_OR_FOLLOWER), code
        return code == E.NONE
    wait_for(attempt, f"{topic}-{partition}'s leader taking a record", timeout=10)


def conns(target: Target) -> list[Conn]:
    return [Conn(target, i) for i in range(len(target.broker_ids))]


def knows(conn: Conn, topic: str, partitions: int) -> bool:
    t = metadata(conn, topic)
    return t["error_code"] == E.NONE and len(t["partitions"]) == partitions and all(
        p["leader_id"] >= 0 for p in t["partitions"])


def waits_for_every_broker(target: Target, topic: str) -> None:
    """The correct client: after each admin call, wait until every broker shows the
    change before using it anywhere."""
    cs = conns(target)
    try:
        create(cs[0], topic, 2)
        wait_for(lambda: all(knows(c, topic, 2) for c in cs), f"{topic} on every broker")
        for index in (0, 1):
            produce_to_leader(cs, target, topic, index)
        r = cs[1].call(37, 3, {"topics": [{"name": topic, "count": 3, "assignments": None}],
                               "timeout_ms": 30000, "validate_only": False})
        assert r["results"][0]["error_code"] == E.NONE, r
        wait_for(lambda: all(knows(c, topic, 3) for c in cs), f"{topic}'s third partition")
        produce_to_leader(cs, target, topic, 2)
        delete(cs[2], topic)
        wait_for(lambda: all(metadata(c, topic)["error_code"] == E.UNKNOWN_TOPIC_OR_PARTITION
                             for c in cs), f"{topic} gone from every broker")
    finally:
        for c in cs:
            c.close()


def test_a_client_that_waits_for_every_broker_works(cluster: Target, topic_name: str) -> None:
    waits_for_every_broker(cluster, topic_name)


@pytest.fixture
def kafka_fidelity() -> Iterator[Cluster]:
    with Cluster(brokers=3, port=0, fidelity="kafka") as c:
        yield c


@pytest.mark.emulator_only  # the emulator's --fidelity kafka (Kafka runs the test above)
def test_a_client_that_waits_works_under_kafka_fidelity(kafka_fidelity: Cluster,
                                                        topic_name: str) -> None:
    waits_for_every_broker(kafka_fidelity, topic_name)


@contextlib.contextmanager
def lagging(fidelity: str) -> Iterator[Cluster]:
    """A cluster in ``fidelity``; under kafka, brokers 2 and 3 learn each change a minute
    late (``set_lag``), so that the window Kafka leaves open for a few ms is certain."""
    with Cluster(brokers=3, port=0, fidelity=fidelity) as c:
        if fidelity == "kafka":
            c.call(lambda: [c.state.metadata_views.set_lag(b, 60_000) for b in (2, 3)])
        yield c


@pytest.mark.emulator_only  # the emulator's fidelity modes and set_lag
@pytest.mark.parametrize("fidelity", ["fast", "kafka"])
def test_a_request_right_after_create_topics_to_another_broker(fidelity: str,
                                                               topic_name: str) -> None:
    with lagging(fidelity) as c:
        a, b, _ = cs = conns(c)
        create(a, topic_name)
        wait_for(lambda: knows(a, topic_name, 2), "broker 1 knows the topic")
        t = metadata(b, topic_name)
        if fidelity == "fast":
            assert t["error_code"] == E.NONE and len(t["partitions"]) == 2
        else:  # as on Kafka: broker 2 has not learned of the topic yet
            assert (t["error_code"], t["partitions"]) == (E.UNKNOWN_TOPIC_OR_PARTITION, [])
            r = b.call(3, 12, {"topics": None, "allow_auto_topic_creation": False,
                               "include_topic_authorized_operations": False})
            assert topic_name not in {x["name"] for x in r["topics"]}
        for x in cs:
            x.close()


@pytest.mark.emulator_only  # the emulator's fidelity modes and set_lag
@pytest.mark.parametrize("fidelity", ["fast", "kafka"])
def test_a_request_right_after_delete_topics_to_another_broker(fidelity: str,
                                                               topic_name: str) -> None:
    with Cluster(brokers=3, port=0, fidelity=fidelity) as c:
        a, b, _ = cs = conns(c)
        create(a, topic_name)
        wait_for(lambda: all(knows(x, topic_name, 2) for x in cs), "the topic everywhere")
        if fidelity == "kafka":
            c.call(lambda: c.state.metadata_views.set_lag(2, 60_000))
        delete(a, topic_name)
        wait_for(lambda: metadata(a, topic_name)["error_code"] != E.NONE, "gone on broker 1")
        t = metadata(b, topic_name)
        if fidelity == "fast":
            assert t["error_code"] == E.UNKNOWN_TOPIC_OR_PARTITION
        else:  # broker 2 still describes the deleted topic, as a lagging Kafka broker does
            assert t["error_code"] == E.NONE and len(t["partitions"]) == 2
        for x in cs:
            x.close()


@pytest.mark.emulator_only  # the emulator's fidelity modes and set_lag
@pytest.mark.parametrize("fidelity", ["fast", "kafka"])
def test_a_produce_right_after_a_leader_change_to_the_new_leader(fidelity: str,
                                                                 topic_name: str) -> None:
    with Cluster(brokers=3, port=0, fidelity=fidelity) as c:
        create_assigned(c, topic_name, {0: [1, 2, 3]})
        cs = conns(c)
        r = cs[0].call(45, 0, {"timeout_ms": 30000, "topics": [{"name": topic_name,
                       "partitions": [{"partition_index": 0, "replicas": [2, 3, 1]}]}]})
        assert r["responses"][0]["partitions"][0]["error_code"] == E.NONE, r
        wait_for(lambda: all(metadata(x, topic_name)["partitions"][0]["replica_nodes"]
                             == [2, 3, 1] for x in cs), "the replicas reordered everywhere")
        assert replicas_of(c, topic_name)[2] == 1
        if fidelity == "kafka":  # the new leader learns of its election a minute late
            c.call(lambda: c.state.metadata_views.set_lag(2, 60_000))
        r = cs[0].call(43, 2, {"election_type": 0, "topic_partitions": [
            {"topic": topic_name, "partitions": [0]}], "timeout_ms": 30000})
        assert r["replica_election_results"][0]["partition_result"][0]["error_code"] == 0, r
        wait_for(lambda: metadata(cs[0], topic_name)["partitions"][0]["leader_id"] == 2,
                 "broker 1 knows broker 2 leads")
        answer = produce(cs[1], topic_name)
        if fidelity == "fast":
            assert answer["error_code"] == E.NONE
        else:  # broker 2 does not know it leads: NOT_LEADER_OR_FOLLOWER, naming the old one
            assert answer["error_code"] == E.NOT_LEADER_OR_FOLLOWER
            assert answer["current_leader"]["leader_id"] == 1
            assert metadata(cs[1], topic_name)["partitions"][0]["leader_id"] == 1
        for x in cs:
            x.close()


@pytest.mark.emulator_only  # the harness's Cluster.create_topic under --fidelity kafka
def test_the_harness_create_topic_returns_once_every_broker_knows(kafka_fidelity: Cluster,
                                                                  topic_name: str) -> None:
    """Cluster.create_topic waits for every broker's metadata, as the Kafka target's does
    (client_tests/targets.py), so tests that use it meet no window it did not open."""
    kafka_fidelity.create_topic(topic_name, 2)
    cs = conns(kafka_fidelity)
    try:
        assert all(knows(c, topic_name, 2) for c in cs)
    finally:
        for c in cs:
            c.close()


@pytest.mark.emulator_only  # the emulator's fidelity modes and set_lag
@pytest.mark.parametrize("fidelity", ["fast", "kafka"])
def test_reads_right_after_create_topics_on_the_leader(fidelity: str, topic_name: str) -> None:
    """Fetch by name (v12) and by topic id (v13) and ListOffsets, sent to the new topic's
    leader before it learned of the topic: Kafka's ReplicaManager answers
    UNKNOWN_TOPIC_OR_PARTITION, and UNKNOWN_TOPIC_ID for an id its metadata lacks."""
    with lagging(fidelity) as c:
        c.call(lambda: c.state.metadata_views.set_lag(1, 60_000) if fidelity == "kafka"
               else None)
        cs = conns(c)
        r = cs[0].call(19, 7, {"topics": [{"name": topic_name, "num_partitions": 1,
                                           "replication_factor": 3, "assignments": [],
                                           "configs": []}],
                               "timeout_ms": 30000, "validate_only": False})
        tid = r["topics"][0]["topic_id"]
        leader = c.call(lambda: c.state.topics[topic_name].partitions[0].leader)
        conn = cs[c.broker_ids.index(leader)]
        by_name = conn.call(1, 12, fetch_body(topic_name, topic_id=bytes(16), max_bytes=1 << 20))
        by_id = conn.call(1, 13, fetch_body("", topic_id=tid, max_bytes=1 << 20))
        offsets = conn.call(2, 7, {"replica_id": -1, "isolation_level": 0, "topics": [
            {"name": topic_name, "partitions": [{"partition_index": 0, "timestamp": -1,
                                                 "current_leader_epoch": -1}]}]})
        codes = (by_name["responses"][0]["partitions"][0]["error_code"],
                 by_id["responses"][0]["partitions"][0]["error_code"],
                 offsets["topics"][0]["partitions"][0]["error_code"])
        if fidelity == "fast":
            assert codes == (E.NONE, E.NONE, E.NONE)
        else:
            assert codes == (E.UNKNOWN_TOPIC_OR_PARTITION, E.UNKNOWN_TOPIC_ID,
                             E.UNKNOWN_TOPIC_OR_PARTITION)
        for x in cs:
            x.close()
