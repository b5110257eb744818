"""A minimal raw Kafka protocol connection for tests that need exact requests.

Real clients hide error codes and retry; these tests speak the wire protocol
directly with our codec to see exactly what the broker answers.
"""

from __future__ import annotations

import base64
import socket

from client_tests.targets import KafkaTarget
from emulator import Cluster
from emulator.blocking_client import KAFKA_REQUEST_TIMEOUT_S, BlockingConnection, ConnectionClosed
from emulator.testing import wait_for

CORR = 7  # the first correlation id of a Conn


def _address(cluster: Cluster | KafkaTarget, broker_index: int) -> tuple[str, int]:
    """The broker's address on either target (client_tests/targets.py)."""
    if isinstance(cluster, KafkaTarget):
        return "127.0.0.1", cluster.kafka.listener_port(cluster.broker_ids[broker_index])
    b = sorted(cluster.state.brokers.values(), key=lambda b: b.id)[broker_index]
    return b.host, b.port


class Conn(BlockingConnection):
    """A raw connection to one broker of either target (emulator/blocking_client.py): ``call``,
    ``send_raw`` and ``read_frame`` for hand-made bytes, ``closed``."""

    def __init__(self, cluster: Cluster | KafkaTarget, broker_index: int = 0,
                 client_id: str = "bad-input-test") -> None:
        super().__init__(socket.create_connection(_address(cluster, broker_index),
                                                  timeout=KAFKA_REQUEST_TIMEOUT_S),
                         client_id, CORR)

    def call(self, key: int, version: int, body: dict) -> dict:
        try:
            return super().call(key, version, body)
        except ConnectionClosed as e:
            raise AssertionError("connection closed") from e


def produce_body(topic: str, partition: int, records: bytes | None, acks: int = 1) -> dict:
    return {"acks": acks, "timeout_ms": 5000, "topic_data": [
        {"name": topic, "partition_data": [{"index": partition, "records": records}]}]}


def fetch_body(topic: str, offset: int = 0, *, partition: int = 0,
               topic_id: bytes | None = None, min_bytes: int = 0, max_wait: int = 0,
               max_bytes: int = 10 << 20, part_max: int = 1 << 20, isolation: int = 0) -> dict:
    """A sessionless consumer Fetch of ``topic``'s ``partition`` from ``offset``: by name,
    or by ``topic_id`` too (v13 and later). Each field a version does not have is left
    out when encoded."""
    topic_entry: dict = {"topic": topic, "partitions": [
        {"partition": partition, "fetch_offset": offset, "partition_max_bytes": part_max,
         "current_leader_epoch": -1, "last_fetched_epoch": -1, "log_start_offset": -1}]}
    if topic_id is not None:
        topic_entry["topic_id"] = topic_id
    return {"replica_id": -1, "max_wait_ms": max_wait, "min_bytes": min_bytes,
            "max_bytes": max_bytes, "isolation_level": isolation, "session_id": 0,
            "session_epoch": -1, "topics": [topic_entry], "forgotten_topics_data": [],
            "rack_id": ""}


def produce_error(resp: dict) -> int:
    return resp["responses"][0]["partition_responses"][0]["error_code"]


def any_conn(cluster: Cluster | KafkaTarget) -> Conn:
    """A connection to the first broker that is up."""
    for i in range(len(cluster.broker_ids)):
        try:
            return Conn(cluster, i)
        except OSError:
            continue
    raise AssertionError("no broker is up")


def metadata_brokers(cluster: Cluster | KafkaTarget) -> set[int]:
    """The broker ids Metadata lists (asked of the first broker that is up)."""
    c = any_conn(cluster)
    try:
        md = c.call(3, 12, {"topics": [], "allow_auto_topic_creation": False})
    finally:
        c.close()
    return {b["node_id"] for b in md["brokers"]}


def crash(cluster: Cluster | KafkaTarget, broker: int) -> None:
    """Stop ``broker`` and wait until it is fenced (at once on the emulator, after
    broker.session.timeout.ms on Kafka): until then it is still listed to clients, the
    controller counts it in the ISRs, and clients may pick it."""
    cluster.stop_broker(broker)
    wait_for(lambda: broker not in metadata_brokers(cluster), f"broker {broker} fenced", 60)


def restart(cluster: Cluster | KafkaTarget, broker: int) -> None:
    """Start ``broker`` again and wait until Metadata lists it."""
    cluster.start_broker(broker)
    wait_for(lambda: broker in metadata_brokers(cluster), f"broker {broker} back", 60)


def topic_metadata(cluster: Cluster | KafkaTarget, topic: str) -> dict:
    """The topic as Metadata (v12) reports it: asked over the wire, so on either target."""
    c = any_conn(cluster)
    try:
        resp = c.call(3, 12, {"topics": [{"topic_id": b"\x00" * 16, "name": topic}],
                              "allow_auto_topic_creation": False})
    finally:
        c.close()
    return resp["topics"][0]


def leader_conn(cluster: Cluster | KafkaTarget, topic: str) -> Conn:
    leader = next(p["leader_id"] for p in topic_metadata(cluster, topic)["partitions"]
                  if p["partition_index"] == 0)
    return Conn(cluster, cluster.broker_ids.index(leader))


def partition_leader(cluster: Cluster | KafkaTarget, topic: str,
                     partition: int = 0) -> tuple[int, int]:
    """(leader id, leader epoch) of a partition, from Metadata: on either target."""
    p = next(p for p in topic_metadata(cluster, topic)["partitions"]
             if p["partition_index"] == partition)
    return p["leader_id"], p["leader_epoch"]


def list_offset(conn: Conn, topic: str, partition: int = 0, timestamp: int = -1) -> int:
    """ListOffsets (v7) on this connection: the latest offset by default (-1), the
    earliest with -2. Asks the broker the connection is to, so use the leader's."""
    resp = conn.call(2, 7, {"replica_id": -1, "topics": [
        {"name": topic, "partitions": [{"partition_index": partition,
                                        "timestamp": timestamp}]}]})
    part = resp["topics"][0]["partitions"][0]
    assert part["error_code"] == 0, part
    return part["offset"]


# A coordinator that is not ready for a key yet: COORDINATOR_LOAD_IN_PROGRESS,
# COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR.
NOT_READY = (14, 15, 16)


def find_coordinator(cluster: Cluster | KafkaTarget, key: str, key_type: int = 0,
                     timeout: float = 60.0) -> int:
    """The node id of the group (0), transaction (1) or share (2, "group:topicId:partition")
    coordinator of ``key``, found with FindCoordinator as a client does, once it is ready.

    Kafka answers COORDINATOR_NOT_AVAILABLE while it creates __consumer_offsets or
    __transaction_state, then names the leader of the key's partition as soon as it
    leads it, before its coordinator has loaded that partition (the coordinator runtime
    loads it after the ReplicaManager applied the leadership): until then that broker
    answers the key's requests COORDINATOR_LOAD_IN_PROGRESS or NOT_COORDINATOR. So for a
    group or a transactional id this asks the named broker a request that changes
    nothing (DescribeGroups, DescribeTransactions) until it answers otherwise, finding
    the coordinator again each time (a crashed broker is named until it is fenced). A
    share-partition's share coordinator (2) loads __share_group_state the same way and
    is asked ReadShareGroupStateSummary of the key (a read; for a share-partition never
    initialized it answers NONE with start offset -1): until it has loaded, the
    share-partition leader's state read in a ShareFetch waits on it."""
    def ready(node: int) -> bool:
        try:
            conn = Conn(cluster, sorted(cluster.broker_ids).index(node))
        except OSError:  # a crashed broker, named until it is fenced
            return False
        try:
            if key_type == 0:
                code = describe_group(conn, key)["error_code"]
            elif key_type == 1:
                code = conn.call(65, 0, {"transactional_ids": [key]})[
                    "transaction_states"][0]["error_code"]
            else:
                group, topic_id, partition = key.rsplit(":", 2)
                code = conn.call(87, 1, {"group_id": group, "topics": [{
                    "topic_id": base64.urlsafe_b64decode(topic_id + "=="),
                    "partitions": [{"partition": int(partition), "leader_epoch": 0}]}]})[
                    "results"][0]["partitions"][0]["error_code"]
        finally:
            conn.close()
        return code not in NOT_READY

    def coordinator() -> dict | None:
        c = any_conn(cluster)
        try:
            # key type 2 (a share-partition's share coordinator) needs v6
            r = c.call(10, 6 if key_type == 2 else 4,
                       {"key_type": key_type, "coordinator_keys": [key]})
        finally:
            c.close()
        x = r["coordinators"][0]
        if x["error_code"] != 0 or not ready(x["node_id"]):
            return None
        return x

    return wait_for(coordinator, f"a coordinator ready for {key}", timeout=timeout,
                    interval=0.2)["node_id"]


def classic_generation(conn: Conn, group: str, member_id: str) -> int:
    """The generation of a Stable classic group, learnt on the wire: a Heartbeat from a
    member with the right generation answers NONE, any other ILLEGAL_GENERATION (a
    Heartbeat only refreshes the member's session, so probing is harmless)."""
    for generation in range(1, 100):
        code = conn.call(12, 3, {"group_id": group, "generation_id": generation,
                                 "member_id": member_id})["error_code"]
        if code == 0:
            return generation
        assert code == 22, f"Heartbeat answered {code}"  # ILLEGAL_GENERATION
    raise AssertionError(f"{group}: no generation below 100 answers")


def describe_group(conn: Conn, group: str) -> dict:
    """DescribeGroups (v5) of one classic group on this (coordinator's) connection."""
    return conn.call(15, 5, {"groups": [group], "include_authorized_operations": False})[
        "groups"][0]


def create_assigned(cluster: Cluster | KafkaTarget, topic: str,
                    assignments: dict[int, list[int]],
                    configs: dict[str, str] | None = None) -> None:
    """A topic with a manual replica assignment (CreateTopics v5), on either target,
    returned once every broker has applied it (``wait_for_topic``)."""
    c = Conn(cluster)
    try:
        resp = c.call(19, 5, {"topics": [{
            "name": topic, "num_partitions": -1, "replication_factor": -1,
            "assignments": [{"partition_index": i, "broker_ids": b}
                            for i, b in sorted(assignments.items())],
            "configs": [{"name": k, "value": v} for k, v in (configs or {}).items()]}],
            "timeout_ms": 30000, "validate_only": False})
    finally:
        c.close()
    assert resp["topics"][0]["error_code"] == 0, resp
    wait_for_topic(cluster, topic, len(assignments))


def wait_for_topic(cluster: Cluster | KafkaTarget, topic: str,
                   partitions: int | None = None) -> None:
    """After a CreateTopics a test sent itself: return once every broker has applied the
    topic. On Kafka, KafkaTarget.wait_for_topic (each live broker's Metadata names the
    leaders, each replica's log is in its broker's DescribeLogDirs, each leader answers
    ListOffsets). On the emulator, every running broker's Metadata names the leaders: at
    once by default, a few ms later under --fidelity kafka."""
    if isinstance(cluster, KafkaTarget):
        cluster.wait_for_topic(topic, partitions)
        return

    def every_broker_knows() -> bool:
        for i in range(len(cluster.broker_ids)):
            try:
                conn = Conn(cluster, i)
            except OSError:
                continue  # a stopped broker learns it when it starts again
            try:
                t = conn.call(3, 12, {"topics": [{"topic_id": bytes(16), "name": topic}],
                                      "allow_auto_topic_creation": False})["topics"][0]
            finally:
                conn.close()
            if t["error_code"] != 0 or not t["partitions"] or any(
                    p["leader_id"] < 0 for p in t["partitions"]):
                return False
            if partitions is not None and len(t["partitions"]) != partitions:
                return False
        return True

    wait_for(every_broker_knows, f"{topic}'s leaders on every broker")


def replicas_of(cluster: Cluster | KafkaTarget, topic: str,
                partition: int = 0) -> tuple[list[int], list[int], int]:
    """(replicas, ISR, leader) of a partition as Metadata reports them."""
    p = next(p for p in topic_metadata(cluster, topic)["partitions"]
             if p["partition_index"] == partition)
    return list(p["replica_nodes"]), sorted(p["isr_nodes"]), p["leader_id"]


def alter_reassignments(conn: Conn,
                        topics: list[tuple[str, list[tuple[int, list[int] | None]]]],
                        version: int = 1, timeout_ms: int = 30000,
                        allow_rf: bool = True) -> dict:
    """AlterPartitionReassignments (45) as raw requests: (topic, [(index, replicas or
    None to cancel)])."""
    return conn.call(45, version, {"timeout_ms": timeout_ms,
                                   "allow_replication_factor_change": allow_rf, "topics": [
                                       {"name": t, "partitions": [
                                           {"partition_index": i, "replicas": r}
                                           for i, r in parts]} for t, parts in topics]})


def reassignment_results(resp: dict) -> dict:
    """{(topic, index): (error code, message)} of an AlterPartitionReassignments answer."""
    return {(t["name"], p["partition_index"]): (p["error_code"], p["error_message"])
            for t in resp["responses"] for p in t["partitions"]}


GROUP_CONFIG = 32  # the GROUP config resource type (share.*, consumer.*, streams.* keys)


def alter_group_config(c: Cluster | KafkaTarget, group: str, key: str, value: str | None,
                       op: int = 0) -> dict:
    """IncrementalAlterConfigs (v1) of one key of the GROUP resource ``group``."""
    conn = Conn(c)
    try:
        return conn.call(44, 1, {"resources": [{
            "resource_type": GROUP_CONFIG, "resource_name": group, "configs": [
                {"name": key, "config_operation": op, "value": value}]}],
            "validate_only": False})["responses"][0]
    finally:
        conn.close()


def group_configs(c: Cluster | KafkaTarget, group: str,
                  broker_index: int = 0) -> dict[str, dict]:
    """DescribeConfigs (v4) of the GROUP resource ``group`` as one broker answers it."""
    conn = Conn(c, broker_index)
    try:
        r = conn.call(32, 4, {"resources": [{"resource_type": GROUP_CONFIG,
                                             "resource_name": group,
                                             "configuration_keys": None}],
                              "include_synonyms": False, "include_documentation": False})
    finally:
        conn.close()
    return {x["name"]: x for x in r["results"][0]["configs"]}


def set_group_config(c: Cluster | KafkaTarget, group: str, key: str, value: str) -> None:
    """Set a share.* group config and wait until every broker sees it (Kafka applies a
    GROUP config through the metadata log, so a broker learns it a moment later; the
    share-partition leader reads share.auto.offset.reset when it loads the state)."""
    r = alter_group_config(c, group, key, value)
    assert r["error_code"] == 0, r
    for i in range(len(c.broker_ids)):
        wait_for(lambda i=i: group_configs(c, group, i)[key]["value"] == value,
                 f"broker {i} sees {key}={value}")


def coordinator_call(c: Cluster | KafkaTarget, group: str, key: int, version: int,
                     body: dict) -> dict:
    """One request to ``group``'s coordinator (found with FindCoordinator)."""
    conn = Conn(c, sorted(c.broker_ids).index(find_coordinator(c, group)))
    try:
        return conn.call(key, version, body)
    finally:
        conn.close()


def share_partition_offsets(c: Cluster | KafkaTarget, group: str, topic: str,
                            partition: int = 0) -> dict | None:
    """The share-partition's row of DescribeShareGroupOffsets v1 (start offset, lag), or
    None while the coordinator loads or the group has no state for it."""
    r = coordinator_call(c, group, 90, 1, {"groups": [{"group_id": group, "topics": None}]})
    (grp,) = r["groups"]
    if grp["error_code"] != 0:
        return None
    return next((p for t in grp["topics"] if t["topic_name"] == topic
                 for p in t["partitions"] if p["partition_index"] == partition), None)


def share_all_finished(c: Cluster | KafkaTarget, group: str, topic: str, n: int) -> bool:
    """Are all ``n`` records of the topic's partition 0 finished (accepted or archived)
    for the share group? DescribeShareGroupOffsets says a start offset and lag 0. Kafka
    4.4's start offset is the one its share-partition leader last wrote, which may stay
    behind finished records, so the lag is what is checked."""
    p = share_partition_offsets(c, group, topic)
    return p is not None and p["error_code"] == 0 and 0 <= p["start_offset"] <= n and \
        p["lag"] == 0


def share_group_members(c: Cluster | KafkaTarget, group: str,
                        assigned: bool = False) -> int:
    """How many members ShareGroupDescribe names (0 while the coordinator loads or the
    group does not exist); with ``assigned``, only those assigned some partition (Kafka
    4.4 assigns a partition once its share state is initialized, and computes a new
    assignment at most once per group.share.assignment.interval.ms)."""
    r = coordinator_call(c, group, 77, 1, {"group_ids": [group],
                                           "include_authorized_operations": False})
    g = r["groups"][0]
    if g["error_code"] != 0:
        return 0
    return sum(1 for m in g["members"]
               if not assigned or any(tp["partitions"]
                                      for tp in m["assignment"]["topic_partitions"]))
