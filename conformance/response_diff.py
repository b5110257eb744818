"""Response differential: the same requests to Apache Kafka and to the emulator, compared.

A battery of admin and data requests, error cases included (unknown topics, bad replica
sets, invalid configs, out-of-range offsets, wrong epochs, unknown members), is sent
with our codec to a real Kafka cluster (client_tests/kafka_cluster.py, 3 brokers) and to
an emulator of 3 brokers. The responses are normalized - ids, hosts, ports, throttle
times, leader/replica placement and free-text messages removed, lists sorted - and
compared field by field. Each difference is printed; docs/conformance.md lists them.

    python -m conformance.response_diff
"""

from __future__ import annotations

import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from client_tests.kafka_cluster import DEFAULT_VERSION, KafkaCluster, request
from client_tests.targets import KAFKA_TEST_CONFIG
from emulator import Cluster
from wire.records import build_batch

# Fields whose values legitimately differ between two clusters (placement, identity,
# timing) or are free text: left out of the comparison.
IGNORED = {"throttle_time_ms", "topic_id", "cluster_id", "host", "port", "node_id",
           "leader_id", "controller_id", "replica_nodes", "isr_nodes", "offline_replicas",
           "leader_epoch", "producer_id", "member_id", "error_message", "coordinator_id",
           "brokers", "log_append_time_ms", "timestamp", "session_id", "documentation",
           "synonyms", "node_endpoints", "current_leader", "eligible_leader_replicas",
           "last_known_elr", "topic_authorized_operations", "partition_index_order",
           "cluster_authorized_operations", "generation_id", "leader", "protocol_name",
           "member_epoch", "assignment", "preferred_read_replica", "last_stable_offset"}


class Side:
    """One system under comparison: brokers by id, and a way to ask them."""

    def __init__(self, name: str, ports: dict[int, int]) -> None:
        self.name = name
        self.ports = ports

    def call(self, key: int, version: int, body: dict, broker: int | None = None) -> dict:
        port = self.ports[broker if broker is not None else min(self.ports)]
        with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
            return request(s, key, version, body, "response-diff", 11)

    def leader(self, topic: str, partition: int = 0, timeout: float = 30) -> int:
        deadline = time.monotonic() + timeout
        while True:
            md = self.call(3, 12, {"topics": [{"topic_id": b"\0" * 16, "name": topic}],
                                   "allow_auto_topic_creation": False})
            for p in md["topics"][0]["partitions"]:
                if p["partition_index"] == partition and p["leader_id"] >= 0:
                    return p["leader_id"]
            if time.monotonic() > deadline:
                raise RuntimeError(f"{self.name}: no leader for {topic}-{partition}")
            time.sleep(0.1)

    def ready(self, topic: str, timeout: float = 30) -> None:
        """Wait until the topic's leader serves it (Kafka's brokers learn a new topic from
        the metadata log after CreateTopics answers; the emulator's at once)."""
        deadline = time.monotonic() + timeout
        while True:
            r = self.call(2, 7, {"replica_id": -1, "isolation_level": 0, "topics": [
                {"name": topic, "partitions": [{"partition_index": 0, "timestamp": -1}]}]},
                self.leader(topic))
            if r["topics"][0]["partitions"][0]["error_code"] == 0:
                return
            if time.monotonic() > deadline:
                raise RuntimeError(f"{self.name}: {topic} not served")
            time.sleep(0.1)

    def _group_loaded(self, group: str, node: int) -> bool:
        """Whether the group's coordinator has loaded its partition: while it loads,
        Kafka answers some requests as if all were well (a Heartbeat gets NONE, "blindly",
        GroupCoordinatorService), which is start-up, not behaviour to compare."""
        r = self.call(15, 5, {"groups": [group], "include_authorized_operations": False}, node)
        return r["groups"][0]["error_code"] not in RETRIABLE

    def coordinator(self, key: str, key_type: int = 0) -> int:
        """The coordinator of a group (key_type 0) or a transactional id (1)."""
        deadline = time.monotonic() + 30
        while True:
            r = self.call(10, 4, {"key_type": key_type, "coordinator_keys": [key]})
            c = r["coordinators"][0]
            if c["error_code"] == 0 and (key_type != 0 or self._group_loaded(key, c["node_id"])):
                return c["node_id"]
            if time.monotonic() > deadline:
                raise RuntimeError(f"{self.name}: no coordinator for {key}")
            time.sleep(0.2)


@dataclass
class Case:
    name: str
    run: Callable[[Side], dict]


def topic_spec(name: str, partitions: int = 3, rf: int = 3, assignments: list | None = None,
               configs: dict | None = None) -> dict:
    return {"name": name, "num_partitions": partitions, "replication_factor": rf,
            "assignments": assignments or [],
            "configs": [{"name": k, "value": v} for k, v in (configs or {}).items()]}


def create(side: Side, *specs: dict) -> dict:
    return side.call(19, 7, {"topics": list(specs), "timeout_ms": 30000})


def fetch_body(topic: str, offset: int, epoch: int = -1) -> dict:
    return {"replica_id": -1, "max_wait_ms": 0, "min_bytes": 0, "max_bytes": 1 << 20,
            "isolation_level": 0, "session_id": 0, "session_epoch": -1,
            "topics": [{"topic": topic, "partitions": [
                {"partition": 0, "fetch_offset": offset, "partition_max_bytes": 1 << 20,
                 "current_leader_epoch": epoch, "log_start_offset": -1}]}],
            "forgotten_topics_data": [], "rack_id": ""}


def produce(side: Side, topic: str, broker: int | None = None) -> dict:


    batch = build_batch([(b"k", b"v")])
    return side.call(0, 9, {"acks": -1, "timeout_ms": 10000, "topic_data": [
        {"name": topic, "partition_data": [{"index": 0, "records": batch}]}]},
        broker if broker is not None else side.leader(topic))


def cases() -> list[Case]:
    def with_topic(name: str, fn: Callable[[Side, str], dict], partitions: int = 1
                   ) -> Callable[[Side], dict]:
        def run(side: Side) -> dict:
            create(side, topic_spec(name, partitions, 3))
            side.ready(name)
            return fn(side, name)
        return run

    def not_leader(side: Side, t: str) -> dict:
        leader = side.leader(t)
        other = next(b for b in side.ports if b != leader)
        return produce(side, t, other)

    return [
        Case("Metadata: unknown topic, no auto-creation", lambda s: s.call(3, 12, {
            "topics": [{"topic_id": b"\0" * 16, "name": "rd-missing"}],
            "allow_auto_topic_creation": False})),
        Case("CreateTopics: a valid topic", lambda s: create(s, topic_spec("rd-ok"))),
        Case("CreateTopics: the same name again", lambda s: (
            create(s, topic_spec("rd-dup")), create(s, topic_spec("rd-dup")))[1]),
        Case("CreateTopics: replication factor above the broker count",
             lambda s: create(s, topic_spec("rd-rf", 1, 5))),
        Case("CreateTopics: a replica on an unknown broker", lambda s: create(s, topic_spec(
            "rd-assign", -1, -1, [{"partition_index": 0, "broker_ids": [1, 2, 9]}]))),
        Case("CreateTopics: duplicate brokers in a replica set", lambda s: create(s, topic_spec(
            "rd-dupbroker", -1, -1, [{"partition_index": 0, "broker_ids": [1, 1, 2]}]))),
        Case("CreateTopics: unknown config", lambda s: create(
            s, topic_spec("rd-badcfg", configs={"no.such.config": "1"}))),
        Case("CreateTopics: config of the wrong type", lambda s: create(
            s, topic_spec("rd-badval", configs={"retention.ms": "soon"}))),
        Case("CreateTopics: illegal name", lambda s: create(s, topic_spec("rd bad name"))),
        Case("CreateTopics: zero partitions", lambda s: create(s, topic_spec("rd-zero", 0))),
        Case("DeleteTopics: unknown topic", lambda s: s.call(20, 6, {
            "topics": [{"name": "rd-never", "topic_id": b"\0" * 16}], "timeout_ms": 30000})),
        Case("CreatePartitions: fewer than now", with_topic("rd-cp", lambda s, t: s.call(
            37, 3, {"topics": [{"name": t, "count": 1, "assignments": None}],
                    "timeout_ms": 30000, "validate_only": False}), 2)),
        Case("DescribeConfigs: unknown topic", lambda s: s.call(32, 4, {"resources": [
            {"resource_type": 2, "resource_name": "rd-never", "configuration_keys": None}]})),
        Case("IncrementalAlterConfigs: unknown topic config", with_topic(
            "rd-iac", lambda s, t: s.call(44, 1, {"resources": [
                {"resource_type": 2, "resource_name": t, "configs": [
                    {"name": "no.such.config", "config_operation": 0, "value": "1"}]}],
                "validate_only": False}))),
        Case("IncrementalAlterConfigs: broker sasl.kerberos.kinit.cmd", lambda s: s.call(
            44, 1, {"resources": [{"resource_type": 4, "resource_name": "1", "configs": [
                {"name": "sasl.kerberos.kinit.cmd", "config_operation": 0,
                 "value": "/usr/bin/kinit"}]}], "validate_only": True})),
        Case("IncrementalAlterConfigs: GROUP consumer.session.timeout.ms", lambda s: s.call(
            44, 1, {"resources": [{"resource_type": 32, "resource_name": "rd-group",
                                   "configs": [{"name": "consumer.session.timeout.ms",
                                                "config_operation": 0, "value": "50000"}]}],
                    "validate_only": True})),
        Case("IncrementalAlterConfigs: GROUP value below the broker minimum", lambda s: s.call(
            44, 1, {"resources": [{"resource_type": 32, "resource_name": "rd-group",
                                   "configs": [{"name": "consumer.session.timeout.ms",
                                                "config_operation": 0, "value": "10"}]}],
                    "validate_only": True})),
        Case("ListOffsets: earliest and latest of an empty topic", with_topic(
            "rd-lo", lambda s, t: s.call(2, 7, {"replica_id": -1, "isolation_level": 0,
                                                "topics": [{"name": t, "partitions": [
                                                    {"partition_index": 0, "timestamp": -2},
                                                ]}]}, s.leader(t)))),
        Case("ListOffsets: unknown topic", lambda s: s.call(2, 7, {
            "replica_id": -1, "isolation_level": 0, "topics": [
                {"name": "rd-never", "partitions": [{"partition_index": 0, "timestamp": -1}]}]})),
        Case("Produce: acks=all to the leader", with_topic("rd-prod", lambda s, t: produce(s, t))),
        Case("Produce: to a follower", with_topic("rd-follower", not_leader)),
        Case("Produce: unknown topic", lambda s: produce(s, "rd-never", min(s.ports))),
        Case("Fetch: offset out of range", with_topic(
            "rd-oor", lambda s, t: (produce(s, t), s.call(1, 12, fetch_body(t, 50),
                                                          s.leader(t)))[1])),
        Case("Fetch: a leader epoch from the future", with_topic(
            "rd-epoch", lambda s, t: s.call(1, 12, fetch_body(t, 0, 99), s.leader(t)))),
        Case("DeleteRecords: beyond the high watermark", with_topic(
            "rd-dr", lambda s, t: s.call(21, 2, {"topics": [{"name": t, "partitions": [
                {"partition_index": 0, "offset": 100}]}], "timeout_ms": 30000},
                s.leader(t)))),
        Case("OffsetCommit: unknown member of an empty group", lambda s: s.call(
            8, 8, {"group_id": "rd-g1", "generation_id_or_member_epoch": 5,
                   "member_id": "nobody", "group_instance_id": None, "topics": []},
            s.coordinator("rd-g1"))),
        Case("Heartbeat: unknown group", lambda s: s.call(12, 4, {
            "group_id": "rd-g2", "generation_id": 1, "member_id": "nobody",
            "group_instance_id": None}, s.coordinator("rd-g2"))),
        Case("JoinGroup: unknown member id", lambda s: s.call(11, 7, {
            "group_id": "rd-g3", "session_timeout_ms": 10000, "rebalance_timeout_ms": 10000,
            "member_id": "nobody", "group_instance_id": None, "protocol_type": "consumer",
            "protocols": [{"name": "range", "metadata": b""}], "reason": None},
            s.coordinator("rd-g3"))),
        Case("DescribeGroups: unknown group", lambda s: s.call(15, 5, {
            "groups": ["rd-g4"], "include_authorized_operations": False},
            s.coordinator("rd-g4"))),
        Case("LeaveGroup: unknown member", lambda s: s.call(13, 4, {
            "group_id": "rd-g5", "members": [{"member_id": "nobody",
                                              "group_instance_id": None}]},
            s.coordinator("rd-g5"))),
        Case("ElectLeaders: unknown topic", lambda s: s.call(43, 2, {
            "election_type": 0, "topic_partitions": [
                {"topic": "rd-never", "partitions": [0]}], "timeout_ms": 30000})),
        Case("AlterPartitionReassignments: unknown broker", with_topic(
            "rd-apr", lambda s, t: s.call(45, 0, {"timeout_ms": 30000, "topics": [
                {"name": t, "partitions": [{"partition_index": 0, "replicas": [1, 2, 9]}]}]}))),
        Case("AlterPartitionReassignments: unknown topic", lambda s: s.call(45, 0, {
            "timeout_ms": 30000, "topics": [{"name": "rd-never", "partitions": [
                {"partition_index": 0, "replicas": [1, 2, 3]}]}]})),
        Case("InitProducerId: idempotent producer", lambda s: s.call(22, 4, {
            "transactional_id": None, "transaction_timeout_ms": 60000, "producer_id": -1,
            "producer_epoch": -1})),
        Case("DescribeCluster", lambda s: s.call(60, 1, {
            "include_cluster_authorized_operations": False, "endpoint_type": 1})),
        *more_cases(with_topic),
    ]


def more_cases(with_topic: Callable[..., Callable[[Side], dict]]) -> list[Case]:
    """The second half of the battery: configs at cluster level, groups, reassignments,
    elections, transactions, ACLs without an authorizer and more error answers."""
    def txn(s: Side) -> int:
        return s.coordinator("rd-txn", 1)

    def reassign(t: str, replicas: list[int] | None) -> dict:
        return {"timeout_ms": 30000, "topics": [
            {"name": t, "partitions": [{"partition_index": 0, "replicas": replicas}]}]}

    return [
        Case("DescribeConfigs: cluster-level broker defaults", lambda s: s.call(32, 4, {
            "resources": [{"resource_type": 4, "resource_name": "",
                           "configuration_keys": None}], "include_synonyms": True})),
        Case("DescribeConfigs: a broker's min.insync.replicas", lambda s: s.call(32, 4, {
            "resources": [{"resource_type": 4, "resource_name": "1",
                           "configuration_keys": ["min.insync.replicas"]}],
            "include_synonyms": True})),
        Case("IncrementalAlterConfigs: delete the cluster-level min.insync.replicas",
             lambda s: s.call(44, 1, {"resources": [{
                 "resource_type": 4, "resource_name": "", "configs": [
                     {"name": "min.insync.replicas", "config_operation": 1, "value": None}]}],
                 "validate_only": True})),
        Case("AlterConfigs: unknown topic config", with_topic(
            "rd-ac", lambda s, t: s.call(33, 2, {"resources": [{
                "resource_type": 2, "resource_name": t,
                "configs": [{"name": "no.such.config", "value": "1"}]}],
                "validate_only": True}))),
        Case("OffsetFetch: unknown group", lambda s: s.call(9, 9, {"groups": [{
            "group_id": "rd-g6", "member_id": None, "member_epoch": -1,
            "topics": [{"name": "rd-never", "partition_indexes": [0]}]}],
            "require_stable": False}, s.coordinator("rd-g6"))),
        Case("SyncGroup: unknown member", lambda s: s.call(14, 5, {
            "group_id": "rd-g7", "generation_id": 1, "member_id": "nobody",
            "group_instance_id": None, "protocol_type": "consumer", "protocol_name": "range",
            "assignments": []}, s.coordinator("rd-g7"))),
        Case("DeleteGroups: unknown group", lambda s: s.call(42, 2, {
            "groups_names": ["rd-g8"]}, s.coordinator("rd-g8"))),
        Case("OffsetDelete: unknown group", lambda s: s.call(47, 0, {
            "group_id": "rd-g9", "topics": [{"name": "rd-never", "partitions": [
                {"partition_index": 0}]}]}, s.coordinator("rd-g9"))),
        Case("ConsumerGroupHeartbeat: unknown member of a new group", lambda s: s.call(68, 0, {
            "group_id": "rd-g10", "member_id": "nobody-nobody-nob", "member_epoch": 5,
            "instance_id": None, "rack_id": None, "rebalance_timeout_ms": -1,
            "subscribed_topic_names": None, "server_assignor": None,
            "topic_partitions": None}, s.coordinator("rd-g10"))),
        Case("ConsumerGroupDescribe: unknown group", lambda s: s.call(69, 0, {
            "group_ids": ["rd-g11"], "include_authorized_operations": False},
            s.coordinator("rd-g11"))),
        Case("ListGroups: consumer groups in state Stable", lambda s: s.call(16, 5, {
            "states_filter": ["Stable"], "types_filter": []})),
        Case("ListPartitionReassignments: none in progress", with_topic(
            "rd-lpr", lambda s, t: s.call(46, 0, {"timeout_ms": 30000, "topics": [
                {"name": t, "partition_indexes": [0]}]}))),
        Case("AlterPartitionReassignments: cancel with none in progress", with_topic(
            "rd-cancel", lambda s, t: s.call(45, 0, reassign(t, None)))),
        Case("AlterPartitionReassignments: a broker twice", with_topic(
            "rd-twice", lambda s, t: s.call(45, 0, reassign(t, [1, 1, 2])))),
        Case("AlterPartitionReassignments: no replicas", with_topic(
            "rd-empty", lambda s, t: s.call(45, 0, reassign(t, [])))),
        Case("AlterPartitionReassignments: a partition that does not exist", with_topic(
            "rd-nopart", lambda s, t: s.call(45, 0, {"timeout_ms": 30000, "topics": [
                {"name": t, "partitions": [{"partition_index": 7, "replicas": [1, 2, 3]}]}]}))),
        Case("ElectLeaders: preferred leader already leads", with_topic(
            "rd-pref", lambda s, t: s.call(43, 2, {"election_type": 0, "topic_partitions": [
                {"topic": t, "partitions": [0]}], "timeout_ms": 30000}))),
        Case("ElectLeaders: unclean with a live leader", with_topic(
            "rd-unclean", lambda s, t: s.call(43, 2, {"election_type": 1, "topic_partitions": [
                {"topic": t, "partitions": [0]}], "timeout_ms": 30000}))),
        Case("CreatePartitions: from 1 to 3", with_topic("rd-grow", lambda s, t: s.call(
            37, 3, {"topics": [{"name": t, "count": 3, "assignments": None}],
                    "timeout_ms": 30000, "validate_only": False}))),
        Case("CreatePartitions: unknown topic", lambda s: s.call(37, 3, {
            "topics": [{"name": "rd-never", "count": 3, "assignments": None}],
            "timeout_ms": 30000, "validate_only": False})),
        Case("CreatePartitions: assignments of the wrong length", with_topic(
            "rd-cplen", lambda s, t: s.call(37, 3, {"topics": [{
                "name": t, "count": 3, "assignments": [{"broker_ids": [1, 2, 3]}]}],
                "timeout_ms": 30000, "validate_only": True}))),
        Case("DescribeAcls: no authorizer", lambda s: s.call(29, 3, {
            "resource_type_filter": 1, "resource_name_filter": None, "pattern_type_filter": 1,
            "principal_filter": None, "host_filter": None, "operation": 1,
            "permission_type": 1})),
        Case("CreateAcls: no authorizer", lambda s: s.call(30, 3, {"creations": [{
            "resource_type": 2, "resource_name": "rd-acl", "resource_pattern_type": 3,
            "principal": "User:alice", "host": "*", "operation": 3, "permission_type": 3}]})),
        Case("OffsetForLeaderEpoch: epoch 0 after one record", with_topic(
            "rd-ofle", lambda s, t: (produce(s, t), s.call(23, 4, {
                "replica_id": -1, "topics": [{"topic": t, "partitions": [
                    {"partition": 0, "current_leader_epoch": -1, "leader_epoch": 0}]}]},
                s.leader(t)))[1])),
        Case("OffsetForLeaderEpoch: unknown topic", lambda s: s.call(23, 4, {
            "replica_id": -1, "topics": [{"topic": "rd-never", "partitions": [
                {"partition": 0, "current_leader_epoch": -1, "leader_epoch": 0}]}]})),
        Case("DescribeTopicPartitions: a known and an unknown topic", with_topic(
            "rd-dtp", lambda s, t: s.call(75, 0, {"topics": [{"name": t}, {"name": "rd-never"}],
                                                 "response_partition_limit": 2000,
                                                 "cursor": None}), 2)),
        Case("Fetch: a consumer fetching from a follower", with_topic(
            "rd-fff", lambda s, t: (produce(s, t), time.sleep(1), s.call(
                1, 12, fetch_body(t, 0),
                next(b for b in s.ports if b != s.leader(t))))[2])),
        Case("ListOffsets: max timestamp after one record", with_topic(
            "rd-maxts", lambda s, t: (produce(s, t), s.call(2, 7, {
                "replica_id": -1, "isolation_level": 0, "topics": [{"name": t, "partitions": [
                    {"partition_index": 0, "timestamp": -3}]}]}, s.leader(t)))[1])),
        Case("Produce: acks=2", with_topic("rd-acks2", lambda s, t: s.call(0, 9, {
            "acks": 2, "timeout_ms": 10000, "topic_data": [{"name": t, "partition_data": [
                {"index": 0, "records": build_batch([(b"k", b"v")])}]}]}, s.leader(t)))),
        Case("DeleteRecords: unknown topic", lambda s: s.call(21, 2, {"topics": [{
            "name": "rd-never", "partitions": [{"partition_index": 0, "offset": 0}]}],
            "timeout_ms": 30000})),
        Case("DescribeProducers: a partition that does not exist", with_topic(
            "rd-dp", lambda s, t: s.call(61, 0, {"topics": [
                {"name": t, "partition_indexes": [5]}]}))),
        Case("InitProducerId: transaction timeout above the maximum", lambda s: s.call(22, 4, {
            "transactional_id": "rd-txn", "transaction_timeout_ms": 3600000,
            "producer_id": -1, "producer_epoch": -1}, txn(s))),
        Case("EndTxn: unknown transactional id", lambda s: s.call(26, 4, {
            "transactional_id": "rd-txn-never", "producer_id": 4242, "producer_epoch": 0,
            "committed": True}, s.coordinator("rd-txn-never", 1))),
        Case("AddOffsetsToTxn: unknown transactional id", lambda s: s.call(25, 3, {
            "transactional_id": "rd-txn-never2", "producer_id": 4242, "producer_epoch": 0,
            "group_id": "rd-g12"}, s.coordinator("rd-txn-never2", 1))),
        Case("DescribeTransactions: unknown transactional id", lambda s: s.call(65, 0, {
            "transactional_ids": ["rd-txn-never3"]}, s.coordinator("rd-txn-never3", 1))),
        Case("DescribeClientQuotas: nothing matches", lambda s: s.call(48, 1, {
            "components": [{"entity_type": "user", "match_type": 0, "match": "rd-nobody"}],
            "strict": False})),
        Case("DescribeUserScramCredentials: unknown user", lambda s: s.call(50, 0, {
            "users": [{"name": "rd-nobody"}]})),
    ]


def normalize(v: Any) -> Any:
    if isinstance(v, dict):
        return {k: normalize(x) for k, x in v.items() if k not in IGNORED}
    if isinstance(v, list):
        items = [normalize(x) for x in v]
        return sorted(items, key=repr)
    if isinstance(v, bytes | bytearray | memoryview):
        return f"<{len(v)} bytes>"
    return v


def differences(a: Any, b: Any, path: str = "") -> list[str]:
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for k in sorted(a.keys() | b.keys()):
            out += differences(a.get(k, "<absent>"), b.get(k, "<absent>"), f"{path}.{k}")
        return out
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        out = []
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            out += differences(x, y, f"{path}[{i}]")
        return out
    return [] if a == b else [f"{path or '.'}: Kafka {a!r}, emulator {b!r}"]


# COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR: a coordinator
# still loading its partition, anywhere in the answer (clients retry these).
RETRIABLE = {14, 15, 16}


def _error_codes(v: Any) -> set[int]:
    if isinstance(v, dict):
        out = {v["error_code"]} if isinstance(v.get("error_code"), int) else set()
        for x in v.values():
            out |= _error_codes(x)
        return out
    if isinstance(v, list):
        return set().union(*map(_error_codes, v)) if v else set()
    return set()


def _settled(case: Case, side: Side, timeout: float = 30.0) -> dict:
    """The case's answer once the cluster is past start-up (a freshly started Kafka
    answers some requests COORDINATOR_LOAD_IN_PROGRESS for a while: not a difference)."""
    deadline = time.monotonic() + timeout
    while True:
        resp = case.run(side)
        if not _error_codes(resp) & RETRIABLE or time.monotonic() > deadline:
            return resp
        time.sleep(0.5)


def run_battery(version: str = DEFAULT_VERSION) -> list[tuple[str, list[str]]]:
    """[(case, differences)] for every case of the battery."""
    results: list[tuple[str, list[str]]] = []
    with KafkaCluster(brokers=3, version=version, broker_config=KAFKA_TEST_CONFIG) as k, \
            Cluster(brokers=3, port=0) as emu:
        kafka = Side(f"Kafka {version}", {i: k.listener_port(i) for i in k.broker_ids})
        emulator = Side("emulator", {b.id: b.port for b in emu.state.brokers.values()})
        for case in cases():
            got = []
            for side in (kafka, emulator):
                try:
                    got.append(normalize(_settled(case, side)))
                except Exception as e:  # noqa: BLE001 - a failed case is a finding too
                    got.append({"failed": f"{type(e).__name__}: {e}"})
            results.append((case.name, differences(got[0], got[1])))
    return results


def main() -> None:
    t0 = time.monotonic()
    results = run_battery()
    differing = [(n, d) for n, d in results if d]
    print(f"{len(results)} requests, {len(differing)} answered differently "
          f"({time.monotonic() - t0:.0f} s)")
    for name, diffs in results:
        print(f"{'DIFF' if diffs else 'same'}  {name}")
        for d in diffs:
            print(f"        {d}")


if __name__ == "__main__":
    main()
