"""Partition reassignment through the Admin API (KIP-455), on either target.

AlterPartitionReassignments and ListPartitionReassignments over raw frames and through
kafka-python 3's admin client, on the 3-broker cluster of the conftest (the emulator, or
a real Kafka with --target kafka). A reassignment is held in progress by a target broker
that is down (a crash on either target: it stays registered, so the move is accepted and
waits for it to catch up), which is how this module sees one in flight without the
emulator's pause_follower (test_reassign_kafka_python.py uses that on 4 brokers).
Whatever a test leaves in flight it cancels, and the fixture starts the broker again.
"""

from __future__ import annotations

import uuid

import pytest
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import KafkaAdminClient
from kafka.errors import (
    InvalidReplicationAssignmentError,
    NoReassignmentInProgressError,
    UnknownTopicOrPartitionError,
)

from client_tests.rawkafka import Conn, create_assigned, metadata_brokers, replicas_of
from client_tests.rawkafka import alter_reassignments as alter_raw
from client_tests.rawkafka import reassignment_results as results
from client_tests.targets import KafkaTarget
from emulator import Cluster
from emulator.testing import wait_for
from wire.errors import ErrorCode as E

Target = Cluster | KafkaTarget
MSG = "The manual partition assignment includes "


def listed(conn: Conn, topic: str, partitions: list[int]) -> dict:
    resp = conn.call(46, 0, {"timeout_ms": 30000, "topics": [
        {"name": topic, "partition_indexes": partitions}]})
    assert resp["error_code"] == 0, resp
    return {(t["name"], p["partition_index"]): (p["replicas"], p["adding_replicas"],
                                                p["removing_replicas"])
            for t in resp["topics"] for p in t["partitions"]}


@pytest.mark.kafka_slow  # a crash: fencing, restart and rebalance on Kafka
def test_every_invalid_request_gets_kafkas_code_and_message(cluster: Target) -> None:
    b1, b2, b3 = cluster.broker_ids
    foo = f"foo-{uuid.uuid4().hex[:8]}"
    nope = f"nope-{uuid.uuid4().hex[:8]}"
    create_assigned(cluster, foo, {0: [b1, b2], 1: [b1, b2], 2: [b1, b2]})
    cluster.stop_broker(b3)  # the target of foo-0's move: it waits for b3
    conn = Conn(cluster, 0)
    try:
        resp = alter_raw(conn, [
            (foo, [(0, [b1, b2, b3]), (1, []), (2, [b1, 9]), (3, [b1]), (-1, [b1]),
                   (1, [b3, b3, b2])]),
            (nope, [(0, [b1])])])
        assert (resp["error_code"], resp["error_message"]) == (0, None)
        assert resp["allow_replication_factor_change"] is True
        assert results(resp) == {
            (foo, 0): (0, None),
            (foo, 1): (E.INVALID_REPLICA_ASSIGNMENT, MSG + f"the broker {b3} more than once."),
            (foo, 2): (E.INVALID_REPLICA_ASSIGNMENT,
                       MSG + "broker 9, but no such broker is registered."),
            (foo, 3): (E.UNKNOWN_TOPIC_OR_PARTITION, f"Unable to find partition {foo}:3."),
            (foo, -1): (E.UNKNOWN_TOPIC_OR_PARTITION, f"Unable to find partition {foo}:-1."),
            (nope, 0): (E.UNKNOWN_TOPIC_OR_PARTITION, f"Unable to find a topic named {nope}.")}
        # foo-1 appears twice above; the last answer for it wins in the dict: check the first
        first = resp["responses"][0]["partitions"][1]
        assert (first["error_code"], first["error_message"]) == (
            E.INVALID_REPLICA_ASSIGNMENT, MSG + "an empty replica list.")
        # The good one is in flight (Kafka's metadata learns of it from the log).
        wait_for(lambda: listed(conn, foo, [0, 1, 2]) == {(foo, 0): ([b1, b2, b3], [b3], [])},
                 "foo-0's reassignment listed")
        resp = alter_raw(conn, [(foo, [(1, [b2]), (2, None)])], allow_rf=False)
        assert resp["allow_replication_factor_change"] is False
        assert results(resp) == {
            (foo, 1): (E.INVALID_REPLICATION_FACTOR,
                       "The replication factor is changed from 2 to 1"),
            (foo, 2): (E.NO_REASSIGNMENT_IN_PROGRESS, None)}
        resp = alter_raw(conn, [], timeout_ms=0)  # nothing to do: an immediate success
        assert (resp["error_code"], resp["responses"]) == (0, [])
        # v0 has no AllowReplicationFactorChange: a change of it is allowed (KIP-860)
        resp = alter_raw(conn, [(foo, [(1, [b1])])], version=0)
        assert (resp["throttle_time_ms"], results(resp)) == (0, {(foo, 1): (0, None)})
        # ListPartitionReassignments: unknown names and indexes are skipped
        assert conn.call(46, 0, {"timeout_ms": 30000, "topics": [
            {"name": foo, "partition_indexes": [7]}, {"name": nope,
                                                     "partition_indexes": [0]}]}) == {
            "throttle_time_ms": 0, "error_code": 0, "error_message": None, "topics": []}
        # ElectLeaders
        resp = conn.call(43, 2, {"election_type": 5, "topic_partitions": [
            {"topic": foo, "partitions": [0]}], "timeout_ms": 1000})
        assert resp["error_code"] == E.INVALID_REQUEST
        assert resp["replica_election_results"][0]["partition_result"][0]["error_message"] == \
            "Unknown election type 5"
        resp = conn.call(43, 0, {"topic_partitions": [{"topic": foo, "partitions": [9, 3]}]})
        assert [(r["error_code"], r["error_message"]) for r in
                resp["replica_election_results"][0]["partition_result"]] == [
            (E.UNKNOWN_TOPIC_OR_PARTITION, f"No such partition as {foo}-9"),
            (E.UNKNOWN_TOPIC_OR_PARTITION, f"No such partition as {foo}-3")]  # one past the last
        # A cancellation (v0) puts the replicas back.
        assert alter_raw(conn, [(foo, [(0, None)])], version=0)["responses"][0][
            "partitions"][0]["error_code"] == 0
        wait_for(lambda: listed(conn, foo, [0]) == {}, "foo-0's reassignment cancelled")
        wait_for(lambda: replicas_of(cluster, foo)[0] == [b1, b2], "foo-0 back on b1, b2")
    finally:
        conn.close()


@pytest.mark.kafka_slow  # a crash: fencing, restart and rebalance on Kafka
def test_kafka_python_reassigns_lists_cancels_and_the_data_moves(cluster: Target) -> None:
    b1, b2, b3 = cluster.broker_ids
    moving = f"moving-{uuid.uuid4().hex[:8]}"
    held = f"held-{uuid.uuid4().hex[:8]}"
    create_assigned(cluster, moving, {0: [b1, b2], 1: [b2, b3]})
    create_assigned(cluster, held, {0: [b1, b2]})
    producer = KafkaProducer(bootstrap_servers=cluster.bootstrap_servers, acks="all")
    for i in range(200):
        producer.send(moving, b"%d" % i, partition=0)
    producer.flush()
    a = KafkaAdminClient(bootstrap_servers=cluster.bootstrap_servers,
                         request_timeout_ms=30000)
    try:
        res = a.alter_partition_reassignments({
            TopicPartition(moving, 0): [b3, b2], TopicPartition(moving, 7): [b1],
            TopicPartition(moving, 1): [b2, b2], TopicPartition(f"{moving}-nope", 0): [b1]})
        assert res == {TopicPartition(moving, 0): None,
                       TopicPartition(moving, 7): UnknownTopicOrPartitionError,
                       TopicPartition(moving, 1): InvalidReplicationAssignmentError,
                       TopicPartition(f"{moving}-nope", 0): UnknownTopicOrPartitionError}
        wait_for(lambda: not a.list_partition_reassignments({moving: [0, 1]}),
                 "the move of moving-0 to complete")
        wait_for(lambda: replicas_of(cluster, moving)[:2] == ([b3, b2], [b2, b3]),
                 "moving-0 on b3, b2 with both in the ISR")
        assert a.alter_partition_reassignments({TopicPartition(moving, 0): None}) == {
            TopicPartition(moving, 0): NoReassignmentInProgressError}
        # A move to a broker that is down stays in flight until it is cancelled.
        cluster.stop_broker(b3)
        # kafka-python sends these to the controller it was told of, which KRaft brokers
        # report as a random live broker and may be b3: once b3 is fenced (at once on the
        # emulator, after broker.session.timeout.ms on Kafka) a new client asks again.
        wait_for(lambda: b3 not in metadata_brokers(cluster), f"broker {b3} fenced", 60)
        a.close()
        a = KafkaAdminClient(bootstrap_servers=cluster.bootstrap_servers,
                             request_timeout_ms=30000)
        assert a.alter_partition_reassignments({TopicPartition(held, 0): [b3, b1]}) == {
            TopicPartition(held, 0): None}
        in_flight = {TopicPartition(held, 0): {
            "replicas": [b3, b1, b2], "adding_replicas": [b3], "removing_replicas": [b2]}}
        wait_for(lambda: a.list_partition_reassignments({held: [0]}) == in_flight,
                 "held-0's reassignment listed")
        assert a.list_partition_reassignments([TopicPartition(moving, 1)]) == {}
        assert a.alter_partition_reassignments({TopicPartition(held, 0): None}) == {
            TopicPartition(held, 0): None}
        wait_for(lambda: a.list_partition_reassignments({held: [0]}) == {},
                 "held-0's reassignment cancelled")
        wait_for(lambda: replicas_of(cluster, held)[0] == [b1, b2], "held-0 back on b1, b2")
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


@pytest.mark.emulator_only  # every broker of the session's Kafka unregistered would stay out
# until each restarts; Kafka's side is read in its source (ControllerApis hands the request
# to the controller quorum, which does not depend on the brokers being registered)
def test_served_at_once_with_every_broker_unregistered(kafka_timing_cluster: Target) -> None:
    """Kafka's controller quorum stands apart from the brokers: with every broker
    unregistered (each still running and answering, under Kafka's timing) it still
    serves AlterPartitionReassignments at once, where the emulator has no broker left
    to hold the controller role. And a deadline only 1 ms away is met by an idle
    controller: only one already past (TimeoutMs <= 0) times out."""
    cluster = kafka_timing_cluster
    b1, b2, b3 = cluster.broker_ids
    foo = f"foo-{uuid.uuid4().hex[:8]}"
    nope = f"nope-{uuid.uuid4().hex[:8]}"
    create_assigned(cluster, foo, {0: [b1, b2]})
    conn = Conn(cluster, 0)
    try:
        for b in (b1, b2, b3):
            assert conn.call(64, 0, {"broker_id": b})["error_code"] == 0
        wait_for(lambda: not metadata_brokers(cluster), "every broker unregistered")
        assert cluster.state.controller is None  # no broker holds the role
        resp = alter_raw(conn, [(foo, [(0, None)]), (nope, [(0, [b1])])], timeout_ms=3000)
        assert (resp["error_code"], resp["error_message"]) == (0, None)
        assert results(resp) == {
            (foo, 0): (E.NO_REASSIGNMENT_IN_PROGRESS, None),
            (nope, 0): (E.UNKNOWN_TOPIC_OR_PARTITION, f"Unable to find a topic named {nope}.")}
        resp = alter_raw(conn, [(foo, [(0, None)])], timeout_ms=1)
        assert (resp["error_code"], results(resp)) == (
            0, {(foo, 0): (E.NO_REASSIGNMENT_IN_PROGRESS, None)})
    finally:
        conn.close()


@pytest.mark.kafka_slow  # a broker restarted on Kafka
def test_a_broker_unregistered_while_it_runs_is_no_target(kafka_timing_cluster: Target) -> None:
    """Kafka 4.4's controller drops the registration of a running broker UnregisterBroker
    names (it stays out until it restarts; docs/fidelity.md, unregister-running-broker): a
    reassignment naming it is refused as one naming a broker that never was
    (validateManualPartitionAssignment)."""
    cluster = kafka_timing_cluster
    b1, b2, b3 = cluster.broker_ids
    foo = f"foo-{uuid.uuid4().hex[:8]}"
    create_assigned(cluster, foo, {0: [b1, b2]})
    conn = Conn(cluster, 0)
    try:
        assert conn.call(64, 0, {"broker_id": b3})["error_code"] == 0
        wait_for(lambda: b3 not in metadata_brokers(cluster), f"broker {b3} unregistered", 30)
        assert results(alter_raw(conn, [(foo, [(0, [b1, b3])])])) == {(foo, 0): (
            E.INVALID_REPLICA_ASSIGNMENT, MSG + f"broker {b3}, but no such broker is registered.")}
        assert replicas_of(cluster, foo)[0] == [b1, b2]
    finally:
        conn.close()
    cluster.stop_broker(b3)
    cluster.start_broker(b3)  # registers again
    wait_for(lambda: b3 in metadata_brokers(cluster), f"broker {b3} registered again", 60)
