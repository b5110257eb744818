"""The response differential's battery (conformance/response_diff.py): each case sends
the same requests to a side and returns what came back, naming the generated values and
brokers it met by their role (Side.alias, Side.roles) so they can be compared.

The first cases are error answers and single requests; ``success_cases`` are the
successful paths - rebalances of both protocols, offsets, transactions with their
markers, share-group delivery, a reassignment in progress, configs with synonyms.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable

from conformance.response_diff import RETRIABLE, Case, Side
from wire.consumer_protocol import encode_assignment, encode_subscription
from wire.records import build_batch


def now_ms() -> int:
    return int(time.time() * 1000)


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
    batch = build_batch([(b"k", b"v")], timestamp=now_ms())
    return side.call(0, 9, {"transactional_id": None, "acks": -1, "timeout_ms": 10000,
                            "topic_data": [
        {"name": topic, "partition_data": [{"index": 0, "records": batch}]}]},
        broker if broker is not None else side.leader(topic))


def cases() -> list[Case]:
    def with_topic(name: str, fn: Callable[[Side, str], dict], partitions: int = 1
                   ) -> Callable[[Side], dict]:
        def run(side: Side) -> dict:
            create(side, topic_spec(name, partitions, 3))
            side.ready(name, partitions)
            return fn(side, name)
        return run

    def not_leader(side: Side, t: str) -> dict:
        leader = side.leader(t)
        other = next(b for b in side.ports if b != leader)
        side.roles[other] = f"a follower of {t}-0"
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
        # a partition of a real topic, so that the answer carries its per-partition
        # error (with no topics the answer is only the throttle time)
        Case("OffsetCommit: unknown member of an empty group", with_topic(
            "rd-oc", lambda s, t: s.call(8, 8, {
                "group_id": "rd-g1", "generation_id_or_member_epoch": 5,
                "member_id": "nobody", "group_instance_id": None, "topics": [
                    {"name": t, "partitions": [{
                        "partition_index": 0, "committed_offset": 1,
                        "committed_leader_epoch": -1, "committed_metadata": None}]}]},
                s.coordinator("rd-g1")))),
        Case("Heartbeat: unknown group", lambda s: s.call(12, 4, {
            "group_id": "rd-g2", "generation_id": 1, "member_id": "nobody",
            "group_instance_id": None}, s.coordinator("rd-g2")),
            few_fields="Heartbeat's answer is throttle_time_ms and error_code, all of it"),
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
        *success_cases(),
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
                {"partition_index": 0}]}]}, s.coordinator("rd-g9")),
            few_fields="a group-level error answers no topics: error_code and "
                       "throttle_time_ms are the whole answer"),
        Case("ConsumerGroupHeartbeat: unknown member of a new group", lambda s: s.call(68, 0, {
            "group_id": "rd-g10", "member_id": "nobody-nobody-nob", "member_epoch": 5,
            "instance_id": None, "rack_id": None, "rebalance_timeout_ms": -1,
            "subscribed_topic_names": None, "server_assignor": None,
            "topic_partitions": None}, s.coordinator("rd-g10"))),
        Case("ConsumerGroupDescribe: unknown group", lambda s: s.call(69, 0, {
            "group_ids": ["rd-g11"], "include_authorized_operations": False},
            s.coordinator("rd-g11"))),
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
            "transactional_id": None, "acks": 2, "timeout_ms": 10000, "topic_data": [
                {"name": t, "partition_data": [
                    {"index": 0, "records": build_batch([(b"k", b"v")], timestamp=now_ms())}]}]},
            s.leader(t)))),
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
            "group_id": "rd-g12"}, s.coordinator("rd-txn-never2", 1)),
            few_fields="AddOffsetsToTxn's answer is throttle_time_ms and error_code, all "
                       "of it"),
        Case("DescribeTransactions: unknown transactional id", lambda s: s.call(65, 0, {
            "transactional_ids": ["rd-txn-never3"]}, s.coordinator("rd-txn-never3", 1))),
        Case("DescribeClientQuotas: nothing matches", lambda s: s.call(48, 1, {
            "components": [{"entity_type": "user", "match_type": 0, "match": "rd-nobody"}],
            "strict": False})),
        Case("DescribeUserScramCredentials: unknown user", lambda s: s.call(50, 0, {
            "users": [{"name": "rd-nobody"}]})),
        Case("FindCoordinator: a group", lambda s: s.call(10, 4, {
            "key_type": 0, "coordinator_keys": ["rd-fc"]})),
        Case("FindCoordinator: a share key before v6", lambda s: s.call(10, 4, {
            "key_type": 2, "coordinator_keys": ["rd-fc:AAAAAAAAAAAAAAAAAAAAAQ:0"]})),
        Case("FindCoordinator: a share key", lambda s: s.call(10, 6, {
            "key_type": 2, "coordinator_keys": ["rd-fc:AAAAAAAAAAAAAAAAAAAAAQ:0"]})),
        Case("FindCoordinator: v3, a transactional id", lambda s: s.call(10, 3, {
            "key": "rd-fc-txn", "key_type": 1})),
        Case("DeleteAcls: no authorizer", lambda s: s.call(31, 3, {"filters": [{
            "resource_type_filter": 2, "resource_name_filter": "rd-acl",
            "pattern_type_filter": 3, "principal_filter": None, "host_filter": None,
            "operation": 1, "permission_type": 1}]})),
        Case("DescribeConfigs: another broker's configs", lambda s: s.call(32, 4, {
            "resources": [{"resource_type": 4, "resource_name": "2",
                           "configuration_keys": ["num.partitions"]}]}, 1)),
        Case("IncrementalAlterConfigs: another broker's configs", lambda s: s.call(44, 1, {
            "resources": [{"resource_type": 4, "resource_name": "2", "configs": [
                {"name": "log.cleaner.threads", "config_operation": 0, "value": "2"}]}],
            "validate_only": True}, 1)),
    ]




# ---- the successful paths ---------------------------------------------------------------

SESSION_MS = 10000
CONCURRENT_TRANSACTIONS = 51


def b64_uuid() -> str:
    """A member id as a KIP-848 client makes one: a random UUID, base64url, unpadded."""
    import base64

    return base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")


def until(what: str, fn: Callable[[], dict | None], timeout: float = 30.0,
          interval: float = 0.1) -> dict:
    """The first non-None answer of ``fn`` within ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        r = fn()
        if r is not None:
            return r
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out waiting for {what}")
        time.sleep(interval)


def topic(s: Side, name: str, partitions: int = 1, rf: int = 3,
          configs: dict | None = None) -> dict:
    r = create(s, topic_spec(name, partitions, rf, configs=configs))
    s.ready(name, partitions)
    return r


def join(s: Side, node: int, g: str, member: str, topics: list[str]) -> dict:
    return s.call(11, 9, {"group_id": g, "session_timeout_ms": SESSION_MS,
                          "rebalance_timeout_ms": SESSION_MS, "member_id": member,
                          "group_instance_id": None, "protocol_type": "consumer",
                          "protocols": [{"name": "range",
                                         "metadata": encode_subscription(topics)}],
                          "reason": None}, node)


def sync(s: Side, node: int, g: str, gen: int, member: str, assignments: list) -> dict:
    return s.call(14, 5, {"group_id": g, "generation_id": gen, "member_id": member,
                          "group_instance_id": None, "protocol_type": "consumer",
                          "protocol_name": "range", "assignments": assignments}, node)


def heartbeat(s: Side, node: int, g: str, gen: int, member: str) -> dict:
    return s.call(12, 4, {"group_id": g, "generation_id": gen, "member_id": member,
                          "group_instance_id": None}, node)


def offset_fetch(s: Side, node: int, g: str, t: str | None, parts: list[int]) -> dict:
    topics = None if t is None else [{"name": t, "partition_indexes": parts}]
    return s.call(9, 9, {"groups": [{"group_id": g, "member_id": None, "member_epoch": -1,
                                     "topics": topics}], "require_stable": True}, node)


def every_broker(s: Side, key: int, version: int, body: dict, items: str,
                 keep: Callable[[dict], bool]) -> dict:
    """A listing each broker answers for what it coordinates (ListGroups,
    ListTransactions), asked of every broker and merged, as admin clients do; the
    answers' other fields are compared broker by broker."""
    answers = [s.call(key, version, body, b) for b in sorted(s.ports)]
    merged = [x for a in answers for x in a[items] if keep(x)]
    return {"merged": merged, "others": [{k: v for k, v in a.items() if k != items}
                                         for a in answers]}


def classic_rebalance(s: Side) -> dict:
    """Two consumers of the classic protocol: A joins alone (MEMBER_ID_REQUIRED first),
    syncs and heartbeats; B joins, A learns of the rebalance from its heartbeat and
    rejoins, the leader assigns one partition each; they commit, are described and
    listed, and B leaves."""
    t, g = "rd-classic-t", "rd-classic"
    out: dict = {"create": topic(s, t, 2)}
    node = s.coordinator(g)
    out["A joins without an id"] = r = join(s, node, g, "", [t])
    a = s.alias(r["member_id"], "member A")
    out["A joins"] = r = join(s, node, g, a, [t])
    gen = r["generation_id"]
    out["A syncs"] = sync(s, node, g, gen, a, [
        {"member_id": a, "assignment": encode_assignment([(t, [0, 1])])}])
    out["A heartbeats"] = heartbeat(s, node, g, gen, a)
    out["B joins without an id"] = r = join(s, node, g, "", [t])
    b = s.alias(r["member_id"], "member B")
    box: dict = {}
    th = threading.Thread(target=lambda: box.update(r=join(s, node, g, b, [t])))
    th.start()
    out["A heartbeats in the rebalance"] = until("REBALANCE_IN_PROGRESS", lambda: (
        r if (r := heartbeat(s, node, g, gen, a))["error_code"] == 27 else None))
    out["A rejoins"] = ra = join(s, node, g, a, [t])
    th.join(SESSION_MS / 1000 + 5)
    out["B's join answered"] = rb = box.get("r", {"no answer": True})
    gen = ra["generation_id"]
    plan = {a: [0], b: [1]}
    leader = ra["leader"]
    assignments = [{"member_id": m, "assignment": encode_assignment([(t, p)])}
                   for m, p in plan.items()]
    first, second = (a, b) if leader == a else (b, a)
    out["the leader syncs"] = sync(s, node, g, gen, first, assignments)
    out["the follower syncs"] = sync(s, node, g, gen, second, [])
    out["A heartbeats after"] = heartbeat(s, node, g, gen, a)
    out["B heartbeats after"] = heartbeat(s, node, g, rb.get("generation_id", -1), b)
    out["A commits"] = s.call(8, 9, {
        "group_id": g, "generation_id_or_member_epoch": gen, "member_id": a,
        "group_instance_id": None, "topics": [{"name": t, "partitions": [
            {"partition_index": 0, "committed_offset": 0, "committed_leader_epoch": -1,
             "committed_metadata": "by A"}]}]}, node)
    out["offsets fetched"] = offset_fetch(s, node, g, t, [0, 1])
    out["described"] = s.call(15, 5, {"groups": [g], "include_authorized_operations": False},
                              node)
    out["listed as Stable"] = every_broker(s, 16, 5, {
        "states_filter": ["Stable"], "types_filter": ["classic"]}, "groups",
        lambda x: x["group_id"] == g)
    out["B leaves"] = s.call(13, 5, {"group_id": g, "members": [
        {"member_id": b, "group_instance_id": None, "reason": "done"}]}, node)
    out["A heartbeats after B left"] = heartbeat(s, node, g, gen, a)
    return out


def cgh(s: Side, node: int, g: str, member: str, epoch: int, topics: list[str] | None,
        owned: list | None) -> dict:
    return s.call(68, 1, {"group_id": g, "member_id": member, "member_epoch": epoch,
                          "instance_id": None, "rack_id": None,
                          "rebalance_timeout_ms": SESSION_MS if epoch == 0 else -1,
                          "subscribed_topic_names": topics, "subscribed_topic_regex": None,
                          "server_assignor": None, "topic_partitions": owned}, node)


class Member848:
    """A KIP-848 member's side of reconciliation: it owns what the last assignment gave
    it and says so in its next heartbeat, as the consumer does."""

    def __init__(self, s: Side, node: int, g: str, role: str) -> None:
        self.s, self.node, self.g = s, node, g
        self.id = s.alias(b64_uuid(), role)
        self.epoch = 0
        self.owned: list = []
        self.last: dict = {}

    def beat(self, topics: list[str] | None = None) -> dict:
        r = cgh(self.s, self.node, self.g, self.id, self.epoch, topics,
                self.owned if self.epoch > 0 else [])
        self.last = r
        if r["error_code"] == 0:
            self.epoch = r["member_epoch"]
            if r["assignment"] is not None:
                self.owned = [{"topic_id": x["topic_id"], "partitions": sorted(x["partitions"])}
                              for x in r["assignment"]["topic_partitions"]]
        return r

    def count(self) -> int:
        return sum(len(x["partitions"]) for x in self.owned)


def consumer_rebalance(s: Side) -> dict:
    """Two KIP-848 consumers: A joins and reconciles to both partitions; B joins, A
    revokes one, B gets it; both are described; A leaves."""
    t, g = "rd-848-t", "rd-848"
    out: dict = {"create": topic(s, t, 2)}
    node = s.coordinator(g)
    a, b = Member848(s, node, g, "member A"), Member848(s, node, g, "member B")
    out["A joins"] = a.beat([t])
    until("A owns both partitions", lambda: (
        a.last if a.count() == 2 and a.beat()["assignment"] is None else None))
    out["A reconciled"] = a.last
    out["B joins"] = b.beat([t])

    def settled() -> dict | None:
        ra, rb = a.beat(), b.beat()
        if a.count() == 1 and b.count() == 1 and a.epoch == b.epoch \
                and ra["assignment"] is None and rb["assignment"] is None:
            return {"A": ra, "B": rb}
        return None
    out["both reconciled"] = until("one partition each", settled)
    out["described"] = s.call(69, 1, {"group_ids": [g], "include_authorized_operations": False},
                              node)
    out["A commits"] = s.call(8, 9, {
        "group_id": g, "generation_id_or_member_epoch": a.epoch, "member_id": a.id,
        "group_instance_id": None, "topics": [{"name": t, "partitions": [
            {"partition_index": p, "committed_offset": 0, "committed_leader_epoch": -1,
             "committed_metadata": None} for x in a.owned for p in x["partitions"]]}]}, node)
    out["A fetches its offsets"] = s.call(9, 9, {"groups": [{
        "group_id": g, "member_id": a.id, "member_epoch": a.epoch,
        "topics": [{"name": t, "partition_indexes": [0, 1]}]}], "require_stable": True}, node)
    out["A leaves"] = cgh(s, node, g, a.id, -1, None, None)
    return out


def offsets_commit_and_fetch(s: Side) -> dict:
    """A group without members (as an admin or a consumer with manual assignment uses
    one): commit, fetch by partition and all, delete one, fetch again."""
    t, g = "rd-offsets-t", "rd-offsets"
    out: dict = {"create": topic(s, t, 2)}
    node = s.coordinator(g)
    out["commit"] = s.call(8, 9, {
        "group_id": g, "generation_id_or_member_epoch": -1, "member_id": "",
        "group_instance_id": None, "topics": [{"name": t, "partitions": [
            {"partition_index": 0, "committed_offset": 7, "committed_leader_epoch": 0,
             "committed_metadata": "meta"},
            {"partition_index": 1, "committed_offset": 3, "committed_leader_epoch": -1,
             "committed_metadata": None}]}]}, node)
    out["fetch by partition"] = offset_fetch(s, node, g, t, [0, 1, 5])
    out["fetch all"] = offset_fetch(s, node, g, None, [])
    out["described"] = s.call(15, 5, {"groups": [g], "include_authorized_operations": False},
                              node)
    out["delete partition 1"] = s.call(47, 0, {"group_id": g, "topics": [
        {"name": t, "partitions": [{"partition_index": 1}]}]}, node)
    out["fetch after the delete"] = offset_fetch(s, node, g, t, [0, 1])
    return out


def txn_produce(s: Side, leader: int, t: str, tid: str | None, pid: int, epoch: int,
                seq: int, values: list[bytes], transactional: bool = True) -> dict:
    batch = build_batch([(b"k", v) for v in values], timestamp=now_ms(), producer_id=pid,
                        producer_epoch=epoch, base_sequence=seq, transactional=transactional)
    return s.call(0, 9, {"transactional_id": tid, "acks": -1, "timeout_ms": 10000,
                         "topic_data": [{"name": t, "partition_data": [
                             {"index": 0, "records": batch}]}]}, leader)


class TxnProducer:
    def __init__(self, s: Side, tid: str, role: str) -> None:
        self.s, self.tid = s, tid
        def init() -> dict | None:
            # a transaction coordinator still loading answers NOT_COORDINATOR or
            # COORDINATOR_LOAD_IN_PROGRESS: found again and retried, as clients do
            self.node = s.coordinator(tid, 1)
            r = s.call(22, 4, {"transactional_id": tid, "transaction_timeout_ms": 60000,
                               "producer_id": -1, "producer_epoch": -1}, self.node)
            return None if r["error_code"] in RETRIABLE else r
        self.init = until(f"InitProducerId for {tid}", init, 60, 0.3)
        self.pid, self.epoch = self.init["producer_id"], self.init["producer_epoch"]
        s.aliases[("producer", self.pid)] = role
        self.seq = 0

    def add(self, t: str) -> dict:
        """AddPartitionsToTxn, retried on CONCURRENT_TRANSACTIONS as producers retry it:
        Kafka's coordinator answers so while the previous transaction's markers are
        still being written (the emulator's completes at once; docs/conformance.md)."""
        def attempt() -> dict | None:
            r = self.s.call(24, 3, {"v3_and_below_transactional_id": self.tid,
                                    "v3_and_below_producer_id": self.pid,
                                    "v3_and_below_producer_epoch": self.epoch,
                                    "v3_and_below_topics": [{"name": t, "partitions": [0]}]},
                            self.node)
            codes = {p["partition_error_code"] for x in r["results_by_topic_v3_and_below"]
                     for p in x["results_by_partition"]}
            return None if CONCURRENT_TRANSACTIONS in codes else r
        return until(f"{self.tid}'s previous transaction complete", attempt)

    def send(self, leader: int, t: str, values: list[bytes]) -> dict:
        r = txn_produce(self.s, leader, t, self.tid, self.pid, self.epoch, self.seq, values)
        self.seq += len(values)
        return r

    def end(self, commit: bool) -> dict:
        return self.s.call(26, 4, {"transactional_id": self.tid, "producer_id": self.pid,
                                   "producer_epoch": self.epoch, "committed": commit},
                           self.node)


def fetch_all(s: Side, leader: int, t: str, isolation: int) -> dict:
    body = fetch_body(t, 0)
    body["isolation_level"] = isolation
    return s.call(1, 12, body, leader)


def markers_written(s: Side, leader: int, t: str, end: int) -> dict:
    """Wait until the last stable offset reaches ``end`` (Kafka writes the markers after
    EndTxn answers)."""
    def done() -> dict | None:
        r = fetch_all(s, leader, t, 1)
        p = r["responses"][0]["partitions"][0]
        return r if p["high_watermark"] == end and p["last_stable_offset"] == end else None
    return until(f"{t}'s markers", done)


def transactions_commit_and_abort(s: Side) -> dict:
    """One transactional producer commits a transaction of two batches, then aborts one;
    both markers read back, read_uncommitted and read_committed, and the transaction
    described."""
    t = "rd-txn-t"
    out: dict = {"create": topic(s, t)}
    leader = s.leader(t)
    p = TxnProducer(s, "rd-txn-a", "the transactional producer")
    out["init"] = p.init
    for i, commit in enumerate((True, False)):
        out[f"add partition {i}"] = p.add(t)
        out[f"produce {i}.0"] = p.send(leader, t, [b"a", b"b"])
        out[f"produce {i}.1"] = p.send(leader, t, [b"c"])
        out[f"end {i}"] = p.end(commit)
    markers_written(s, leader, t, 8)
    out["read_uncommitted"] = fetch_all(s, leader, t, 0)
    out["read_committed"] = fetch_all(s, leader, t, 1)
    out["described"] = until("the transaction complete", lambda: (
        r if (r := s.call(65, 0, {"transactional_ids": [p.tid]}, p.node)
              )["transaction_states"][0]["transaction_state"] == "CompleteAbort" else None))
    out["listed"] = every_broker(s, 66, 1, {"state_filters": [], "producer_id_filters": [
        p.pid], "duration_filter": -1}, "transaction_states", lambda x: True)
    out["producers"] = s.call(61, 0, {"topics": [{"name": t, "partition_indexes": [0]}]},
                              leader)
    return out


def interleaved_transactions(s: Side) -> dict:
    """Batches of two transactions and an idempotent producer interleaved in one
    partition; one transaction aborts. A read_committed fetch of the whole log returns
    every batch with the aborted transaction listed, and stops at the last stable offset
    while one is open."""
    t = "rd-txn-mix"
    out: dict = {"create": topic(s, t)}
    leader = s.leader(t)
    p1 = TxnProducer(s, "rd-txn-b1", "producer 1 (aborts)")
    p2 = TxnProducer(s, "rd-txn-b2", "producer 2 (commits)")
    idem = until("an idempotent producer id", lambda: (
        None if (r := s.call(22, 4, {"transactional_id": None, "transaction_timeout_ms": 60000,
                                     "producer_id": -1, "producer_epoch": -1})
                 )["error_code"] in RETRIABLE else r))
    s.aliases[("producer", idem["producer_id"])] = "the idempotent producer"
    out["idempotent init"] = idem
    out["p1 add"], out["p2 add"] = p1.add(t), p2.add(t)
    out["p1 first"] = p1.send(leader, t, [b"1a", b"1b"])
    out["p2 first"] = p2.send(leader, t, [b"2a"])
    out["idempotent"] = txn_produce(s, leader, t, None, idem["producer_id"],
                                    idem["producer_epoch"], 0, [b"i"], transactional=False)
    out["p1 second"] = p1.send(leader, t, [b"1c"])
    out["read_committed while open"] = fetch_all(s, leader, t, 1)
    out["p2 commits"] = p2.end(True)
    out["p1 aborts"] = p1.end(False)
    markers_written(s, leader, t, 7)
    out["read_committed"] = fetch_all(s, leader, t, 1)
    out["read_uncommitted"] = fetch_all(s, leader, t, 0)
    out["latest committed"] = s.call(2, 7, {"replica_id": -1, "isolation_level": 1, "topics": [
        {"name": t, "partitions": [{"partition_index": 0, "timestamp": -1}]}]}, leader)
    return out


def share_cycle(s: Side) -> dict:
    """A share consumer is assigned the partition, acquires two records, accepts one and
    releases one, acquires the rest with the released one redelivered, and leaves."""
    t, g = "rd-share-t", "rd-share"
    out: dict = {"create": topic(s, t)}
    out["reset earliest"] = s.call(44, 1, {"resources": [{
        "resource_type": 32, "resource_name": g, "configs": [{
            "name": "share.auto.offset.reset", "config_operation": 0,
            "value": "earliest"}]}], "validate_only": False})
    leader = s.leader(t)
    tid = s.metadata(t)["topic_id"]
    for i in range(3):
        out[f"produce {i}"] = txn_produce(s, leader, t, None, -1, -1, -1, [f"v{i}".encode()],
                                          transactional=False)
    node = s.coordinator(g)
    m = s.alias(b64_uuid(), "member A")

    def sgh(epoch: int, topics: list[str] | None) -> dict:
        return s.call(76, 1, {"group_id": g, "member_id": m, "member_epoch": epoch,
                              "rack_id": None, "subscribed_topic_names": topics}, node)
    out["joins"] = r = sgh(0, [t])
    state = {"epoch": r["member_epoch"]}

    def assigned() -> dict | None:
        r = sgh(state["epoch"], None)
        state["epoch"] = r["member_epoch"]
        return r if r["assignment"] and r["assignment"]["topic_partitions"] else None
    out["assigned"] = assigned() if not (r["assignment"] and r["assignment"][
        "topic_partitions"]) else r
    if not out["assigned"]:
        out["assigned"] = until("the partition assigned", assigned)

    with s.connect(leader) as conn:
        def share_fetch(epoch: int, acks: list, max_records: int) -> dict:
            return conn.call(78, 1, {
                "group_id": g, "member_id": m, "share_session_epoch": epoch,
                "max_wait_ms": 5000, "min_bytes": 1, "max_bytes": 1 << 20,
                "max_records": max_records, "batch_size": 100, "topics": [{
                    "topic_id": tid, "partitions": [
                        {"partition_index": 0, "acknowledgement_batches": acks}]}]})

        def acknowledge(epoch: int, first: int, last: int, types: list[int]) -> dict:
            return conn.call(79, 1, {
                "group_id": g, "member_id": m, "share_session_epoch": epoch, "topics": [{
                    "topic_id": tid, "partitions": [{
                        "partition_index": 0, "acknowledgement_batches": [
                            {"first_offset": first, "last_offset": last,
                             "acknowledge_types": types}]}]}]})
        out["acquires two"] = share_fetch(0, [], 2)
        out["accepts 0, releases 1"] = acknowledge(1, 0, 1, [1, 2])
        out["acquires the rest"] = share_fetch(2, [], 10)
        out["accepts them"] = acknowledge(3, 1, 2, [1])
        out["closes the session"] = conn.call(79, 1, {
            "group_id": g, "member_id": m, "share_session_epoch": -1, "topics": []})
    out["described"] = s.call(77, 1, {"group_ids": [g], "include_authorized_operations": False},
                              node)
    # the share coordinator learns of acknowledgements a moment later on Kafka: the first
    # start offset past 0 (docs/conformance.md, "Share-group state records")
    out["offsets"] = until("the share-partition's start offset moved", lambda: (
        r if (r := s.call(90, 0, {"groups": [{"group_id": g, "topics": [
            {"topic_name": t, "partitions": [0]}]}]}, node)
        )["groups"][0]["topics"][0]["partitions"][0]["start_offset"] > 0 else None))
    out["leaves"] = sgh(-1, None)
    return out


def share_session_gone_with_its_connection(s: Side) -> dict:
    """A share session lives as long as the connection that opened it: a ShareFetch
    opens one and acquires a record, its connection closes, and a ShareAcknowledge of
    the session's next epoch on a new connection finds no session; the record was
    released and is acquired again."""
    t, g = "rd-share-conn-t", "rd-share-conn"
    out: dict = {"create": topic(s, t)}
    out["reset earliest"] = s.call(44, 1, {"resources": [{
        "resource_type": 32, "resource_name": g, "configs": [{
            "name": "share.auto.offset.reset", "config_operation": 0,
            "value": "earliest"}]}], "validate_only": False})
    leader = s.leader(t)
    tid = s.metadata(t)["topic_id"]
    out["produce"] = txn_produce(s, leader, t, None, -1, -1, -1, [b"v"], transactional=False)
    node = s.coordinator(g)
    m = s.alias(b64_uuid(), "member A")
    state = {"epoch": 0}

    def assigned() -> dict | None:
        r = s.call(76, 1, {"group_id": g, "member_id": m, "member_epoch": state["epoch"],
                           "rack_id": None,
                           "subscribed_topic_names": [t] if state["epoch"] == 0 else None},
                   node)
        state["epoch"] = r["member_epoch"]
        return r if r["assignment"] and r["assignment"]["topic_partitions"] else None
    out["assigned"] = until("the partition assigned", assigned)
    fetch = {"group_id": g, "member_id": m, "share_session_epoch": 0, "max_wait_ms": 5000,
             "min_bytes": 1, "max_bytes": 1 << 20, "max_records": 10, "batch_size": 100,
             "topics": [{"topic_id": tid, "partitions": [
                 {"partition_index": 0, "acknowledgement_batches": []}]}]}
    with s.connect(leader) as conn:
        out["acquires"] = conn.call(78, 1, fetch)
    time.sleep(0.5)  # the broker notices the closed connection
    out["acknowledges on another connection"] = s.call(79, 1, {
        "group_id": g, "member_id": m, "share_session_epoch": 1, "topics": [{
            "topic_id": tid, "partitions": [{"partition_index": 0, "acknowledgement_batches": [
                {"first_offset": 0, "last_offset": 0, "acknowledge_types": [1]}]}]}]}, leader)
    with s.connect(leader) as conn:
        out["acquires it again"] = conn.call(78, 1, fetch)
    out["leaves"] = s.call(76, 1, {"group_id": g, "member_id": m, "member_epoch": -1,
                                   "rack_id": None, "subscribed_topic_names": None}, node)
    return out


def reassignment_in_progress(s: Side) -> dict:
    """A partition of one replica on broker 1 with data, moved to broker 2 while every
    broker's replication is throttled to 1 byte/s: the reassignment stays in progress and
    ListPartitionReassignments and Metadata show it; then it is cancelled."""
    t = "rd-move"
    out: dict = {"create": create(s, topic_spec(t, -1, -1, [
        {"partition_index": 0, "broker_ids": [1]}]))}
    s.ready(t)
    for i in range(5):
        out[f"produce {i}"] = txn_produce(s, 1, t, None, -1, -1, -1, [b"x" * 10000],
                                          transactional=False)

    def broker_configs(op: int) -> list[dict]:
        """Each broker's own throttle rates, sent to that broker (a broker alters only
        its own configs)."""
        return [s.call(44, 1, {"resources": [
            {"resource_type": 4, "resource_name": str(b), "configs": [
                {"name": n, "config_operation": op, "value": "1" if op == 0 else None}
                for n in ("leader.replication.throttled.rate",
                          "follower.replication.throttled.rate")]}],
            "validate_only": False}, b) for b in sorted(s.ports)]
    out["throttle brokers"] = broker_configs(0)
    out["throttle the topic"] = s.call(44, 1, {"resources": [{
        "resource_type": 2, "resource_name": t, "configs": [
            {"name": "leader.replication.throttled.replicas", "config_operation": 0,
             "value": "*"},
            {"name": "follower.replication.throttled.replicas", "config_operation": 0,
             "value": "*"}]}], "validate_only": False})
    time.sleep(1)
    out["move to broker 2"] = s.call(45, 0, {"timeout_ms": 30000, "topics": [
        {"name": t, "partitions": [{"partition_index": 0, "replicas": [2]}]}]})
    out["in progress"] = until("the reassignment listed", lambda: (
        r if (r := s.call(46, 0, {"timeout_ms": 30000, "topics": None}))["topics"] else None))
    out["metadata"] = until("the adding replica in Metadata", lambda: (
        md if len((md := s.metadata(t))["partitions"][0]["replica_nodes"]) == 2 else None))
    out["listed by partition"] = s.call(46, 0, {"timeout_ms": 30000, "topics": [
        {"name": t, "partition_indexes": [0]}]})
    out["cancelled"] = s.call(45, 0, {"timeout_ms": 30000, "topics": [
        {"name": t, "partitions": [{"partition_index": 0, "replicas": None}]}]})
    out["none left"] = until("no reassignment listed", lambda: (
        r if not (r := s.call(46, 0, {"timeout_ms": 30000, "topics": None}))["topics"]
        else None))
    out["metadata after"] = until("one replica again", lambda: (
        md if len((md := s.metadata(t))["partitions"][0]["replica_nodes"]) == 1 else None))
    out["unthrottle brokers"] = broker_configs(1)
    return out


CONFIG_KEYS = ["retention.ms", "cleanup.policy", "min.insync.replicas", "segment.bytes",
               "max.message.bytes", "message.timestamp.type", "retention.bytes",
               "unclean.leader.election.enable"]


def configs_with_synonyms(s: Side) -> dict:
    """DescribeConfigs with synonyms and documentation: a topic's override, a dynamic
    cluster default, a broker's static config and Kafka's defaults, each in its source."""
    t, plain = "rd-cfg-t", "rd-cfg-plain"
    out: dict = {"create": topic(s, t, configs={"retention.ms": "3600000",
                                                 "cleanup.policy": "compact"})}
    out["create plain"] = topic(s, plain)
    out["cluster default"] = s.call(44, 1, {"resources": [{
        "resource_type": 4, "resource_name": "", "configs": [
            {"name": "log.retention.bytes", "config_operation": 0, "value": "1073741824"}]}],
        "validate_only": False})
    time.sleep(1)  # Kafka's brokers apply a dynamic default from the metadata log

    def describe() -> dict:
        return s.call(32, 4, {"resources": [
            {"resource_type": 2, "resource_name": t, "configuration_keys": CONFIG_KEYS},
            {"resource_type": 2, "resource_name": plain, "configuration_keys": CONFIG_KEYS},
            {"resource_type": 4, "resource_name": "1", "configuration_keys": [
                "log.retention.bytes", "num.partitions", "log.retention.hours",
                "group.consumer.heartbeat.interval.ms", "auto.create.topics.enable",
                "offsets.topic.num.partitions", "log.segment.bytes"]}],
            "include_synonyms": True, "include_documentation": False}, 1)
    def applied() -> dict | None:
        r = describe()
        return r if any(c["name"] == "retention.bytes" and c["value"] == "1073741824"
                        for c in r["results"][1]["configs"]) else None
    out["described"] = until("the dynamic default applied", applied)
    out["cluster default removed"] = s.call(44, 1, {"resources": [{
        "resource_type": 4, "resource_name": "", "configs": [
            {"name": "log.retention.bytes", "config_operation": 1, "value": None}]}],
        "validate_only": False})
    return out


def success_cases() -> list[Case]:
    return [
        Case("Classic group: two members rebalance, commit, describe, list, leave",
             classic_rebalance),
        Case("Consumer group (KIP-848): two members reconcile, describe, commit, leave",
             consumer_rebalance),
        Case("Offsets: commit, fetch, delete and fetch again without members",
             offsets_commit_and_fetch),
        Case("Transactions: commit then abort, markers read back", transactions_commit_and_abort),
        Case("Fetch: interleaved transactions, one aborted, read_committed",
             interleaved_transactions),
        Case("Share group: acquire, accept, release, redeliver, leave", share_cycle),
        Case("Share group: a session ends with its connection",
             share_session_gone_with_its_connection),
        Case("Reassignment: in progress under a throttle, listed, cancelled",
             reassignment_in_progress),
        Case("DescribeConfigs: synonyms of topic, dynamic default, static and default",
             configs_with_synonyms),
        Case("DescribeConfigs: with documentation", lambda s: s.call(32, 4, {"resources": [
            {"resource_type": 4, "resource_name": "1",
             "configuration_keys": ["num.partitions", "log.retention.hours"]}],
            "include_synonyms": False, "include_documentation": True}, 1)),
    ]
