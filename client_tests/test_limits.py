"""Kafka's controller limits over real TCP, answered as Kafka 4.4 answers them.

The codes and messages were taken from a real Kafka 4.4.0 cluster (client_tests/
kafka_cluster.py) sent the same requests: more than 10,000 partitions in one CreateTopics
or CreatePartitions request fail the whole request with POLICY_VIOLATION, one topic of
10,000 partitions is 10,001 metadata records (over MAX_RECORDS_PER_USER_OP), and a
manual assignment naming an unknown broker is INVALID_REPLICA_ASSIGNMENT.
"""

from __future__ import annotations

import logging
import select
import struct
import time

import pytest
from rawkafka import (
    Conn,
    produce_body,
    produce_error,
    set_group_config,
    topic_metadata,
    wait_for_topic,
)

from client_tests.targets import KafkaTarget
from emulator import Cluster
from emulator.testing import wait_for
from wire.connection import size_prefixed
from wire.errors import ErrorCode as E
from wire.records import build_batch

# The refusals run on both targets (--target kafka, unique topic names); growing a topic
# to 10,001 partitions, the emulator's steps, its log and its process are emulator_only.
Target = Cluster | KafkaTarget


def exists(cluster: Target, topic: str) -> bool:
    return topic_metadata(cluster, topic)["error_code"] == E.NONE


def create_topics(c: Conn, topics: list[tuple[str, int, int, list | None]],
                  validate_only: bool = False) -> list[dict]:
    body = {"topics": [{"name": n, "num_partitions": p, "replication_factor": r,
                        "assignments": a or [], "configs": []} for n, p, r, a in topics],
            "timeout_ms": 60000, "validate_only": validate_only}
    return c.call(19, 7, body)["topics"]


def create_partitions(c: Conn, topics: list[tuple[str, int, list | None]],
                      validate_only: bool = False) -> list[dict]:
    body = {"topics": [{"name": n, "count": k, "assignments": a} for n, k, a in topics],
            "timeout_ms": 60000, "validate_only": validate_only}
    return c.call(37, 3, body)["results"]


def errors(results: list[dict]) -> list[tuple[int, str | None]]:
    return [(r["error_code"], r["error_message"]) for r in results]


def test_create_topics_over_the_partition_cap_fails_whole(cluster: Target,
                                                          topic_name: str) -> None:
    c = Conn(cluster)
    big, a1, a2, b, ok = (f"{topic_name}-{x}" for x in ("big", "a1", "a2", "b", "ok"))
    many = "Excessively large number of partitions per request."
    assert errors(create_topics(c, [(big, 1_000_000, 1, None)])) == [(E.POLICY_VIOLATION, many)]
    assert errors(create_topics(c, [(a1, 6000, 1, None), (a2, 6000, 1, None)])) == [
        (E.POLICY_VIOLATION, many)] * 2
    # 10,000 partitions + the TopicRecord are 10,001 records: over MAX_RECORDS_PER_USER_OP.
    assert errors(create_topics(c, [(b, 10_000, 1, None)], validate_only=True)) == [
        (E.POLICY_VIOLATION, "Unable to perform excessively large batch operation.")]
    assert not any(exists(cluster, t) for t in (big, a1, a2, b))
    # The brokers still answer at once.
    assert errors(create_topics(c, [(ok, 3, 3, None)])) == [(E.NONE, None)]
    c.close()


def test_create_partitions_over_the_cap_fails_whole(cluster: Target,
                                                    topic_name: str) -> None:
    c = Conn(cluster)
    t1, t2 = f"{topic_name}-t1", f"{topic_name}-t2"
    assert errors(create_topics(c, [(t1, 1, 1, None), (t2, 1, 1, None)])) == [(0, None)] * 2
    many = "Excessively large number of additional partitions per request."
    assert errors(create_partitions(c, [(t1, 16_777_216, None)])) == [
        (E.POLICY_VIOLATION, many)]
    assert errors(create_partitions(c, [(t1, 6001, None), (t2, 6001, None)])) == [
        (E.POLICY_VIOLATION, many)] * 2
    # (Kafka's brokers learn of a topic after CreateTopics answers.)
    for t in (t1, t2):
        wait_for_topic(cluster, t, 1)
    assert errors(create_partitions(c, [(t2, 0, None)])) == [
        (E.INVALID_PARTITIONS, f"The topic {t2} currently has 1 partition(s); 0 would not be "
         "an increase.")]
    c.close()


@pytest.mark.emulator_only  # 10,001 partitions: too heavy for the shared Kafka test cluster
def test_create_partitions_of_exactly_the_cap_is_legal(cluster: Cluster) -> None:
    c = Conn(cluster)
    assert errors(create_topics(c, [("t1", 1, 1, None)])) == [(0, None)]
    # Exactly 10,000 more is legal (and served without holding the other brokers).
    assert errors(create_partitions(c, [("t1", 10_001, None)])) == [(E.NONE, None)]
    assert len(cluster.state.topics["t1"].partitions) == 10_001
    c.close()


def test_assignments_naming_unknown_brokers(cluster: Target, topic_name: str) -> None:
    c = Conn(cluster)
    ub, t = f"{topic_name}-ub", f"{topic_name}-t"
    unknown = "The manual partition assignment includes broker 7, but no such broker is registered."
    assert errors(create_topics(c, [(ub, -1, -1, [{"partition_index": 0, "broker_ids": [7]}])])
                  ) == [(E.INVALID_REPLICA_ASSIGNMENT, unknown)]
    # Every partition of a manual assignment has the first one's replication factor.
    assert errors(create_topics(c, [(ub, -1, -1, [
        {"partition_index": 0, "broker_ids": [1, 2]},
        {"partition_index": 1, "broker_ids": [1, 2, 3]}])])) == [(
            E.INVALID_REPLICA_ASSIGNMENT, "The manual partition assignment includes a "
            "partition with 3 replica(s), but this is not consistent with previous "
            "partitions, which have 2 replica(s).")]
    assert errors(create_topics(c, [(t, 1, 1, None)])) == [(0, None)]
    assert errors(create_partitions(c, [(t, 2, [{"broker_ids": [7]}])])) == [
        (E.INVALID_REPLICA_ASSIGNMENT, unknown)]
    assert errors(create_partitions(c, [(t, 2, [{"broker_ids": [1, 1]}])])) == [
        (E.INVALID_REPLICA_ASSIGNMENT,
         "The manual partition assignment includes the broker 1 more than once.")]
    assert errors(create_partitions(c, [(t, 3, [{"broker_ids": [1]}])])) == [
        (E.INVALID_REPLICA_ASSIGNMENT,
         "Attempted to add 2 additional partition(s), but only 1 assignment(s) were specified.")]
    c.close()


@pytest.mark.emulator_only  # the emulator's steps between clients, seen in its state
def test_large_legal_operations_serve_others_meanwhile(cluster: Cluster) -> None:
    """CreateTopics of 9,999 partitions, CreatePartitions of +10,000 and deleting the
    topic again are legal and take a while: the emulator does them in steps between
    other clients' requests (emulator/cluster/steps.py). Each still gives Kafka's
    result, and small requests on other connections are answered meanwhile (how fast:
    bench/hostile_stall.py)."""
    c = Conn(cluster)
    assert errors(create_topics(c, [("small", -1, -1, [{"partition_index": 0,
                                                        "broker_ids": [1]}])])) == [(0, None)]
    answered_while_pending = []

    def observe(bid: int, key: int, version: int, frame: bytes, out: bytes | None) -> None:
        if key in (0, 3):  # runs on the event loop, right after the small request
            answered_while_pending.append(bool(cluster.state.pending_topics))

    cluster.server.frame_observers.append(observe)
    batch = build_batch([(b"k", b"v")], timestamp=int(time.time() * 1000))
    metadata = {"topics": [{"name": "small", "topic_id": bytes(16)}],
                "allow_auto_topic_creation": False}
    requests = [
        (19, 7, {"topics": [{"name": "big", "num_partitions": 9_999, "replication_factor": 3,
                             "assignments": [], "configs": []}], "timeout_ms": 60000}),
        (37, 3, {"topics": [{"name": "small", "count": 10_001, "assignments": None}],
                 "timeout_ms": 60000, "validate_only": False}),
        (20, 6, {"topics": [{"name": "big", "topic_id": bytes(16)}], "timeout_ms": 60000}),
    ]
    answers = []
    for key, version, body in requests:
        answered_while_pending.clear()
        big = Conn(cluster)
        big.client_id = "big"
        big.send(key, version, body)
        small = Conn(cluster)
        n = 0
        while not select.select([big.sock], [], [], 0)[0]:
            md = small.call(3, 12, metadata)["topics"][0]
            assert md["error_code"] == 0 and md["partitions"][0]["leader_id"] == 1
            assert produce_error(small.call(0, 9, produce_body("small", 0, batch))) == 0
            n += 1
        answers.append(big.receive().body)
        big.close()
        small.close()
        assert n and any(answered_while_pending), (n, answered_while_pending)
    assert [t["error_code"] for t in answers[0]["topics"]] == [0]
    assert answers[0]["topics"][0]["num_partitions"] == 9_999
    assert errors(answers[1]["results"]) == [(0, None)]
    assert answers[2]["responses"][0]["error_code"] == 0
    grown = c.call(3, 12, {"topics": [{"name": "small", "topic_id": bytes(16)}],
                           "allow_auto_topic_creation": False})["topics"][0]["partitions"]
    assert sorted(p["partition_index"] for p in grown) == list(range(10_001))
    assert all(p["leader_id"] in (1, 2, 3) and len(p["replica_nodes"]) == 1 for p in grown)
    # The name is free again once DeleteTopics has answered.
    assert errors(create_topics(c, [("big", 3, 3, None)])) == [(0, None)]
    assert not cluster.state.pending_topics
    c.close()


def test_alter_configs_over_10000_records_fail_whole(cluster: Target) -> None:
    """Kafka's ConfigurationControlManager collects a request's ConfigRecords in a list
    bounded by MAX_RECORDS_PER_USER_OP: a record per key whose value changes, and more
    than 10,000 fail every resource with POLICY_VIOLATION, changing nothing. Group
    resources need no topic or broker behind them (any group name may be configured)."""
    c = Conn(cluster)
    key = "consumer.session.timeout.ms"

    def incremental(n: int, value: str) -> set:
        body = {"resources": [{"resource_type": 32, "resource_name": f"g{i}", "configs": [
            {"name": key, "config_operation": 0, "value": value}]} for i in range(n)],
            "validate_only": False}
        return {(r["error_code"], r["error_message"]) for r in c.call(44, 1, body)["responses"]}

    big = (E.POLICY_VIOLATION, "Unable to perform excessively large batch operation.")
    assert incremental(10_000, "50000") == {(0, None)}  # 10,000 records: the most allowed
    assert incremental(10_001, "51000") == {big}

    def value(group: str) -> str:
        r = c.call(32, 4, {"resources": [{"resource_type": 32, "resource_name": group,
                                          "configuration_keys": [key]}],
                           "include_synonyms": False, "include_documentation": False})
        return r["results"][0]["configs"][0]["value"]

    # Nothing of the refused request was applied (on Kafka, read after propagation).
    wait_for(lambda: value("g0") == "50000", "g0's config")
    assert value("g10000") != "51000"
    # Unchanged values write no record: 10,001 resources of which one changes are fine.
    assert incremental(10_001, "50000") == {(0, None)}
    legacy = {"resources": [{"resource_type": 32, "resource_name": f"h{i}", "configs": [
        {"name": key, "value": "50000"}]} for i in range(10_001)], "validate_only": True}
    assert {(r["error_code"], r["error_message"])
            for r in c.call(33, 2, legacy)["responses"]} == {big}
    c.close()


def test_describe_configs_of_many_resources_in_steps(cluster: Cluster) -> None:
    """A DescribeConfigs of hundreds of resources is described in steps and its answer
    encoded off the event loop: the same answers as one by one."""
    # (Kafka applies a GROUP config through the metadata log: set_group_config returns
    # once every broker describes it, as the many below are asked of one broker)
    set_group_config(cluster, "g7", "consumer.session.timeout.ms", "50000")
    c = Conn(cluster)

    def describe(names: list[str]) -> list[dict]:
        return c.call(32, 4, {"resources": [
            {"resource_type": 32, "resource_name": n, "configuration_keys": None}
            for n in names], "include_synonyms": True, "include_documentation": False})[
            "results"]

    many = describe([f"g{i}" for i in range(300)])
    assert [r["resource_name"] for r in many] == [f"g{i}" for i in range(300)]
    assert many[7] == describe(["g7"])[0] and many[8] == describe(["g8"])[0]
    assert {e["value"] for e in many[7]["configs"]
            if e["name"] == "consumer.session.timeout.ms"} == {"50000"}
    c.close()


# Request bodies whose first array (non-nullable in Kafka's schema) is sent as null:
# compact length 0 in these flexible versions, where an empty array would be 1.
NULL_ARRAY_BODIES = {
    "produce": (0, 9, b"\x00" + struct.pack(">hi", -1, 1000) + b"\x00\x00"),
    "fetch": (1, 12, struct.pack(">iiiibii", -1, 500, 1, 1 << 20, 0, 0, -1) + b"\x00\x00"),
    "list_offsets": (2, 7, struct.pack(">ib", -1, 0) + b"\x00\x00"),
    "create_topics": (19, 7, b"\x00" + struct.pack(">ib", 1000, 0) + b"\x00"),
}


@pytest.mark.emulator_only  # checks the emulator's log line
@pytest.mark.parametrize("api", sorted(NULL_ARRAY_BODIES))
def test_null_in_a_non_nullable_array_closes_with_one_line(
        cluster: Cluster, caplog: pytest.LogCaptureFixture, api: str) -> None:
    """Kafka's generated readers refuse it ("non-nullable field ... was serialized as
    null") and the broker closes the connection: one log line, never a traceback (a
    None reaching the handler used to raise TypeError, and for Produce, Fetch and
    ListOffsets the error reply failed too)."""
    key, version, body = NULL_ARRAY_BODIES[api]
    head = struct.pack(">hhih", key, version, 1, 1) + b"x" + b"\x00"
    caplog.set_level(logging.INFO, logger="kafka_emulator")
    c = Conn(cluster)
    c.send_raw(size_prefixed(head + body))
    assert c.closed()
    c.close()
    assert not [r for r in caplog.records if r.exc_info], "a traceback was logged"
    lines = [r.getMessage() for r in caplog.records if "serialized as null" in r.getMessage()]
    assert len(lines) == 1, [r.getMessage() for r in caplog.records]
    # The broker goes on serving.
    assert errors(create_topics(Conn(cluster), [(f"after-{api}", 1, 1, None)])) == [(0, None)]


# The emulator's own process (python -m emulator) and its SIGTERM handler.
@pytest.mark.emulator_only
def test_sigterm_stops_the_process_after_hostile_requests() -> None:
    """The probe's freeze: CreatePartitions to 16,777,216 then SIGTERM. Now refused at
    once, and SIGTERM ends the process (a Python-level handler, with a hard exit if the
    clean stop hangs)."""
    import signal
    import socket
    import subprocess
    import sys

    from emulator.blocking_client import call

    proc = subprocess.Popen([sys.executable, "-m", "emulator", "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        ready = proc.stdout.readline()
        assert "kafka-emulator ready" in ready, proc.stderr.read() if proc.poll() else ready
        host, port = ready.split("bootstrap servers ")[1].split(",")[0].strip().rsplit(":", 1)
        s = socket.create_connection((host, int(port)), timeout=30)
        ct = {"topics": [{"name": "t", "num_partitions": 1, "replication_factor": 1,
                          "assignments": [], "configs": []}], "timeout_ms": 1000}
        cp = {"topics": [{"name": "t", "count": 16_777_216, "assignments": None}],
              "timeout_ms": 1000, "validate_only": False}
        for key, version, body in ((19, 7, ct), (37, 3, cp)):
            resp = call(s, key, version, body, "t")
        assert resp["results"][0]["error_code"] == E.POLICY_VIOLATION
        proc.send_signal(signal.SIGTERM)
        wait_for(lambda: proc.poll() is not None, "the emulator to exit", timeout=20)
        assert proc.returncode == 0, proc.stderr.read()
        s.close()
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
