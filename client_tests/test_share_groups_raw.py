"""Share groups (KIP-932) on the wire: exact requests over TCP, exact answers.

The Java KafkaShareConsumer tests (test_share_groups_java.py) show real clients work;
these show the codes Kafka gives for each step and each kind of bad input.
"""

from __future__ import annotations

import uuid

import pytest

from client_tests.rawkafka import Conn
from emulator import Cluster
from emulator.cluster.share_coordinator import kafka_uuid
from emulator.testing import wait_for
from wire.errors import ErrorCode as E
from wire.records import build_batch, decode_records, iter_batches

# Not run with --target kafka: raw frames addressed through the emulator's state.
pytestmark = pytest.mark.emulator_only


def conn_to(c: Cluster, broker_id: int) -> Conn:
    return Conn(c, sorted(c.state.brokers).index(broker_id))


def setup(c: Cluster, topic: str, group: str, n: int) -> tuple[bytes, int]:
    if topic not in c.state.topics:
        c.create_topic(topic, partitions=1, replication_factor=3)
    sc = c.server.services["share"]
    c.call(lambda: sc.set_group_config(group, "share.auto.offset.reset", "earliest"))
    t = c.state.topics[topic]
    leader = t.partitions[0].leader
    conn = conn_to(c, leader)
    try:
        for i in range(n):
            r = conn.call(0, 9, {"transactional_id": None, "acks": -1, "timeout_ms": 5000,
                                 "topic_data": [{"name": topic, "partition_data": [{
                                     "index": 0,
                                     "records": build_batch([(None, f"v{i}".encode())])}]}]})
            assert r["responses"][0]["partition_responses"][0]["error_code"] == E.NONE
    finally:
        conn.close()
    return t.id, leader


def heartbeat(conn: Conn, group: str, member: str, epoch: int, topics=None) -> dict:
    return conn.call(76, 1, {"group_id": group, "member_id": member, "member_epoch": epoch,
                             "rack_id": None, "subscribed_topic_names": topics})


def fetch(conn: Conn, group: str, member: str, epoch: int, tid: bytes, acks=(),
          max_records: int = 100, wait: int = 0) -> dict:
    parts = [{"partition_index": 0, "acknowledgement_batches": list(acks)}]
    return conn.call(78, 1, {"group_id": group, "member_id": member,
                             "share_session_epoch": epoch, "max_wait_ms": wait, "min_bytes": 1,
                             "max_bytes": 1 << 20, "max_records": max_records,
                             "batch_size": 100, "topics": [{"topic_id": tid,
                                                            "partitions": parts}]})


def values(part: dict) -> list[bytes]:
    return [r.value for b in iter_batches(part["records"]) for r in decode_records(b)]


def coordinator(c: Cluster, group: str) -> int:
    conn = conn_to(c, min(c.state.alive_brokers()))
    try:
        r = conn.call(10, 6, {"key_type": 0, "coordinator_keys": [group]})
        return r["coordinators"][0]["node_id"]
    finally:
        conn.close()


def test_share_fetch_acknowledge_and_redelivery(cluster: Cluster, topic_name: str) -> None:
    c = cluster
    g = "sg-" + topic_name
    tid, leader = setup(c, topic_name, g, 3)
    gconn = conn_to(c, coordinator(c, g))
    lconn = conn_to(c, leader)
    m1, m2 = str(uuid.uuid4()), str(uuid.uuid4())
    try:
        r = heartbeat(gconn, g, m1, 0, [topic_name])
        assert r["error_code"] == E.NONE and r["member_epoch"] == 1
        assert r["assignment"]["topic_partitions"] == [{"topic_id": tid, "partitions": [0]}]
        assert heartbeat(gconn, g, m2, 0, [topic_name])["error_code"] == E.NONE

        r = fetch(lconn, g, m1, 0, tid, max_records=2)
        assert r["error_code"] == E.NONE and r["acquisition_lock_timeout_ms"] == 30000
        (p,) = r["responses"][0]["partitions"]
        # whole batches: one record per batch here, so exactly two
        assert p["acquired_records"] == [{"first_offset": 0, "last_offset": 1,
                                          "delivery_count": 1}]
        assert values(p) == [b"v0", b"v1"]
        # m2 cannot get what m1 holds: only offset 2
        r2 = fetch(lconn, g, m2, 0, tid)
        (p2,) = r2["responses"][0]["partitions"]
        assert p2["acquired_records"] == [{"first_offset": 2, "last_offset": 2,
                                           "delivery_count": 1}]
        # m1 accepts 0 and releases 1 (ShareAcknowledge); 1 is redelivered to m2, whose
        # next fetch carries its rejection of 2
        r = lconn.call(79, 1, {"group_id": g, "member_id": m1, "share_session_epoch": 1,
                               "topics": [{"topic_id": tid, "partitions": [{
                                   "partition_index": 0, "acknowledgement_batches": [{
                                       "first_offset": 0, "last_offset": 1,
                                       "acknowledge_types": [1, 2]}]}]}]})
        assert r["responses"][0]["partitions"][0]["error_code"] == E.NONE
        r2 = fetch(lconn, g, m2, 1, tid, acks=[{"first_offset": 2, "last_offset": 2,
                                                "acknowledge_types": [3]}])
        (p2,) = r2["responses"][0]["partitions"]
        assert p2["acknowledge_error_code"] == E.NONE
        assert p2["acquired_records"] == [{"first_offset": 1, "last_offset": 1,
                                           "delivery_count": 2}]
        # a stale acknowledgement (0 is done) and one for offsets never delivered
        r = conn_ack(lconn, g, m2, 2, tid, 0, 0, 1)
        assert r["error_code"] == E.NONE
        assert r["responses"][0]["partitions"][0]["error_code"] == E.INVALID_RECORD_STATE
        r = conn_ack(lconn, g, m2, 3, tid, 1, 1, 1)
        assert r["responses"][0]["partitions"][0]["error_code"] == E.NONE
        r = conn_ack(lconn, g, m2, 4, tid, 50, 60, 1)
        assert r["responses"][0]["partitions"][0]["error_code"] == E.INVALID_RECORD_STATE

        # the offsets admin view: all three are done (0, 1 accepted, 2 rejected)
        r = gconn.call(90, 1, {"groups": [{"group_id": g, "topics": None}]})
        (grp,) = r["groups"]
        assert grp["error_code"] == E.NONE
        (part,) = grp["topics"][0]["partitions"]
        assert (part["start_offset"], part["lag"]) == (3, 0)

        # ListGroups types and states
        r = gconn.call(16, 5, {"states_filter": [], "types_filter": ["share"]})
        assert {"group_id": g, "protocol_type": "share", "group_state": "Stable",
                "group_type": "share"} in r["groups"]
        r = gconn.call(15, 6, {"groups": [g], "include_authorized_operations": False})
        assert r["groups"][0]["error_code"] == E.GROUP_ID_NOT_FOUND
        assert r["groups"][0]["error_message"] == f"Group {g} is not a classic group."
        r = gconn.call(77, 1, {"group_ids": [g], "include_authorized_operations": False})
        assert r["groups"][0]["group_state"] == "Stable" and len(r["groups"][0]["members"]) == 2
        assert r["groups"][0]["assignor_name"] == "simple"
    finally:
        gconn.close()
        lconn.close()


def conn_ack(conn: Conn, g: str, m: str, epoch: int, tid: bytes, first: int, last: int,
             t: int) -> dict:
    return conn.call(79, 1, {"group_id": g, "member_id": m, "share_session_epoch": epoch,
                             "topics": [{"topic_id": tid, "partitions": [{
                                 "partition_index": 0, "acknowledgement_batches": [{
                                     "first_offset": first, "last_offset": last,
                                     "acknowledge_types": [t]}]}]}]})


def test_share_session_and_partition_errors(cluster: Cluster, topic_name: str) -> None:
    c = cluster
    g = "sg-" + topic_name
    tid, leader = setup(c, topic_name, g, 1)
    follower = next(b for b in sorted(c.state.brokers) if b != leader)
    lconn, fconn = conn_to(c, leader), conn_to(c, follower)
    try:
        r = fetch(lconn, g, "m", 4, tid)
        assert r["error_code"] == E.SHARE_SESSION_NOT_FOUND
        r = fetch(lconn, g, "m", 0, tid, acks=[{"first_offset": 0, "last_offset": 0,
                                               "acknowledge_types": [1]}])
        assert r["error_code"] == E.INVALID_REQUEST
        assert fetch(lconn, g, "m", 0, tid)["error_code"] == E.NONE
        assert fetch(lconn, g, "m", 7, tid)["error_code"] == E.INVALID_SHARE_SESSION_EPOCH
        assert conn_ack(lconn, g, "m", 0, tid, 0, 0, 1)["error_code"] == \
            E.INVALID_SHARE_SESSION_EPOCH
        r = fetch(fconn, g, "m", 0, tid)
        (p,) = r["responses"][0]["partitions"]
        assert p["error_code"] == E.NOT_LEADER_OR_FOLLOWER
        assert p["current_leader"]["leader_id"] == leader
        assert r["node_endpoints"][0]["node_id"] == leader
        r = fetch(lconn, g, "m2", 0, b"\x01" * 16)
        assert r["responses"][0]["partitions"][0]["error_code"] == E.UNKNOWN_TOPIC_ID
        # the final epoch releases what the member holds
        r = fetch(lconn, g, "m", 1, tid)
        assert r["error_code"] == E.NONE
        r = fetch(lconn, g, "m", -1, tid)
        assert r["error_code"] == E.INVALID_REQUEST  # a final fetch must not fetch
        r = conn_ack(lconn, g, "m", -1, tid, 0, 0, 2)
        assert r["error_code"] == E.NONE
        assert fetch(lconn, g, "m", 2, tid)["error_code"] == E.SHARE_SESSION_NOT_FOUND
    finally:
        lconn.close()
        fconn.close()


def test_group_errors(cluster: Cluster, topic_name: str) -> None:
    c = cluster
    g = "sg-" + topic_name
    c.create_topic(topic_name, partitions=1, replication_factor=1)
    coord = coordinator(c, g)
    gconn = conn_to(c, coord)
    other = conn_to(c, next(b for b in sorted(c.state.brokers) if b != coord))
    try:
        assert heartbeat(other, g, "m", 0, [topic_name])["error_code"] == E.NOT_COORDINATOR
        assert heartbeat(gconn, g, "", 0, [topic_name])["error_code"] == E.INVALID_REQUEST
        assert heartbeat(gconn, g, "m", 0, None)["error_code"] == E.INVALID_REQUEST
        assert heartbeat(gconn, g, "m", 5, None)["error_code"] == E.GROUP_ID_NOT_FOUND
        assert heartbeat(gconn, g, "m", 0, [topic_name])["member_epoch"] == 1
        assert heartbeat(gconn, g, "x", 5, None)["error_code"] == E.UNKNOWN_MEMBER_ID
        assert heartbeat(gconn, g, "m", 5, None)["error_code"] == E.FENCED_MEMBER_EPOCH
        r = gconn.call(91, 0, {"group_id": g, "topics": [{"topic_name": topic_name,
                                                          "partitions": [{
                                                              "partition_index": 0,
                                                              "start_offset": 0}]}]})
        assert r["error_code"] == E.NON_EMPTY_GROUP
        r = gconn.call(42, 2, {"groups_names": [g]})
        assert r["results"][0]["error_code"] == E.NON_EMPTY_GROUP
        assert heartbeat(gconn, g, "m", -1, None)["member_epoch"] == -1
        r = gconn.call(92, 0, {"group_id": g, "topics": [{"topic_name": topic_name},
                                                         {"topic_name": "absent"}]})
        assert r["error_code"] == E.NONE
        assert [x["error_code"] for x in r["responses"]] == [E.NONE,
                                                             E.UNKNOWN_TOPIC_OR_PARTITION]
        r = gconn.call(42, 2, {"groups_names": [g]})
        assert r["results"][0]["error_code"] == E.NONE
        r = gconn.call(77, 1, {"group_ids": [g], "include_authorized_operations": True})
        assert r["groups"][0]["error_code"] == E.GROUP_ID_NOT_FOUND
    finally:
        gconn.close()
        other.close()


def test_share_coordinator_apis(cluster: Cluster, topic_name: str) -> None:
    c = cluster
    g = "sg-" + topic_name
    c.create_topic(topic_name, partitions=1, replication_factor=1)
    tid = c.state.topics[topic_name].id
    sc = c.server.services["share"]
    key = f"{g}:{kafka_uuid(tid)}:0"
    conn = Conn(c)
    try:
        r = conn.call(10, 6, {"key_type": 2, "coordinator_keys": [key]})
        node = r["coordinators"][0]["node_id"]
        assert r["coordinators"][0]["error_code"] == E.NONE
        assert node == c.call(lambda: sc.coordinator_for(key))
    finally:
        conn.close()
    sconn = conn_to(c, node)
    wrong = conn_to(c, next(b for b in sorted(c.state.brokers) if b != node))

    def req(**extra) -> dict:
        return {"group_id": g, "topics": [{"topic_id": tid, "partitions": [
            dict({"partition": 0}, **extra)]}]}

    def code(r: dict) -> int:
        return r["results"][0]["partitions"][0]["error_code"]
    try:
        assert code(wrong.call(84, 0, req(leader_epoch=0))) == E.NOT_COORDINATOR
        assert code(sconn.call(84, 0, req(leader_epoch=0))) == E.UNKNOWN_TOPIC_OR_PARTITION
        assert code(sconn.call(83, 0, req(state_epoch=1, start_offset=10))) == E.NONE
        assert code(sconn.call(83, 0, req(state_epoch=1, start_offset=10))) == \
            E.FENCED_STATE_EPOCH
        batches = [{"first_offset": 10, "last_offset": 11, "delivery_state": 2,
                    "delivery_count": 1},
                   {"first_offset": 12, "last_offset": 12, "delivery_state": 4,
                    "delivery_count": 5},
                   {"first_offset": 14, "last_offset": 14, "delivery_state": 0,
                    "delivery_count": 2}]
        assert code(sconn.call(85, 1, req(state_epoch=1, leader_epoch=3, start_offset=10,
                                          state_batches=batches))) == E.NONE
        r = sconn.call(84, 0, req(leader_epoch=3))
        p = r["results"][0]["partitions"][0]
        assert (p["state_epoch"], p["start_offset"]) == (1, 13)
        assert p["state_batches"] == [{"first_offset": 14, "last_offset": 14,
                                       "delivery_state": 0, "delivery_count": 2}]
        assert code(sconn.call(84, 0, req(leader_epoch=2))) == E.FENCED_LEADER_EPOCH
        r = sconn.call(87, 1, req(leader_epoch=3))
        p = r["results"][0]["partitions"][0]
        assert (p["start_offset"], p["leader_epoch"], p["delivery_complete_count"]) == \
            (13, 3, 0)
        assert code(sconn.call(86, 0, req())) == E.NONE
        assert code(sconn.call(87, 1, req(leader_epoch=3))) == E.UNKNOWN_TOPIC_OR_PARTITION
    finally:
        sconn.close()
        wrong.close()


def test_group_config_resource(cluster: Cluster, topic_name: str) -> None:
    """share.* group configs through IncrementalAlterConfigs/DescribeConfigs (type 32)."""
    c = cluster
    g = "sg-" + topic_name
    tid, leader = setup(c, topic_name, g, 2)
    conn = Conn(c)
    try:
        def alter(key: str, value: str | None, op: int = 0) -> dict:
            return conn.call(44, 1, {"resources": [{
                "resource_type": 32, "resource_name": g, "configs": [
                    {"name": key, "config_operation": op, "value": value}]}],
                "validate_only": False})["responses"][0]

        assert alter("share.record.lock.duration.ms", "20000")["error_code"] == E.NONE
        assert alter("share.record.lock.duration.ms", "100")["error_code"] == E.INVALID_CONFIG
        assert alter("share.delivery.count.limit", "11")["error_code"] == E.INVALID_CONFIG
        assert alter("share.auto.offset.reset", "sometimes")["error_code"] == E.INVALID_CONFIG
        assert alter("no.such.key", "1")["error_code"] == E.INVALID_CONFIG
        r = conn.call(32, 4, {"resources": [{"resource_type": 32, "resource_name": g,
                                             "configuration_keys": None}],
                              "include_synonyms": False, "include_documentation": False})
        configs = {x["name"]: x for x in r["results"][0]["configs"]}
        assert configs["share.record.lock.duration.ms"]["value"] == "20000"
        assert configs["share.record.lock.duration.ms"]["config_source"] == 8  # GROUP_CONFIG
        assert configs["share.auto.offset.reset"]["value"] == "earliest"
        assert configs["share.delivery.count.limit"]["value"] == "5"
        assert configs["share.delivery.count.limit"]["config_source"] == 5  # DEFAULT
    finally:
        conn.close()
    lconn = conn_to(c, leader)
    hconn = conn_to(c, coordinator(c, g))
    try:
        # no share coordinator state yet: the group coordinator initializes it when a
        # member's heartbeat subscribes to the topic (InitializeShareGroupState)
        r = fetch(lconn, g, "m", 0, tid)
        assert r["responses"][0]["partitions"][0]["error_code"] == E.UNKNOWN_TOPIC_OR_PARTITION
        assert heartbeat(hconn, g, "m", 0, [topic_name])["error_code"] == E.NONE
        r = fetch(lconn, g, "m", 0, tid)
        assert r["acquisition_lock_timeout_ms"] == 20000
        assert r["responses"][0]["partitions"][0]["acquired_records"][0]["last_offset"] == 1
    finally:
        lconn.close()
        hconn.close()


def test_consumer_heartbeat_on_a_share_group(cluster: Cluster, topic_name: str) -> None:
    c = cluster
    g = "sg-" + topic_name
    c.create_topic(topic_name, partitions=1, replication_factor=1)
    conn = conn_to(c, coordinator(c, g))
    try:
        assert heartbeat(conn, g, "m", 0, [topic_name])["error_code"] == E.NONE
        r = conn.call(68, 1, {"group_id": g, "member_id": "x", "member_epoch": 0,
                              "rebalance_timeout_ms": 5000,
                              "subscribed_topic_names": [topic_name]})
        assert r["error_code"] == E.GROUP_ID_NOT_FOUND
        assert r["error_message"] == f"Group {g} is not a consumer group."
    finally:
        conn.close()


def test_share_state_survives_coordinator_and_leader_moves(topic_name: str) -> None:
    with Cluster(brokers=4, port=0) as c:
        c.create_topic(topic_name, partitions=1, replication_factor=3)
        leader_of = c.state.topics[topic_name].partitions[0].leader
        # a group whose coordinator is not the data partition's leader
        g = next(f"sg-{i}" for i in range(100) if coordinator(c, f"sg-{i}") != leader_of)
        tid, leader = setup(c, topic_name, g, 4)
        member = str(uuid.uuid4())
        coord = coordinator(c, g)
        assert coord != leader, "pick another group id"
        conn = conn_to(c, coord)
        try:
            r = heartbeat(conn, g, member, 0, [topic_name])
            epoch = r["member_epoch"]
        finally:
            conn.close()
        lconn = conn_to(c, leader)
        try:
            r = fetch(lconn, g, member, 0, tid)
            assert r["responses"][0]["partitions"][0]["acquired_records"] == [
                {"first_offset": 0, "last_offset": 3, "delivery_count": 1}]
            r = conn_ack(lconn, g, member, 1, tid, 0, 1, 1)
            assert r["responses"][0]["partitions"][0]["error_code"] == E.NONE
        finally:
            lconn.close()
        # the group coordinator moves: membership and epochs are intact on the new one
        c.stop_broker(coord)
        new = wait_for(lambda: (n := coordinator(c, g)) != coord and n >= 0 and n,
                       "a new group coordinator")
        conn = conn_to(c, new)
        try:
            r = heartbeat(conn, g, member, epoch)
            assert (r["error_code"], r["member_epoch"]) == (E.NONE, epoch)
        finally:
            conn.close()
        # the partition leader moves: accepted records stay done, acquired ones come back
        c.stop_broker(leader)
        p = c.state.topics[topic_name].partitions[0]
        new_leader = wait_for(lambda: p.leader not in (leader, -1) and p.leader,
                              "a new partition leader")
        lconn = conn_to(c, new_leader)
        try:
            r = fetch(lconn, g, member, 0, tid)
            assert r["responses"][0]["partitions"][0]["acquired_records"] == [
                {"first_offset": 2, "last_offset": 3, "delivery_count": 2}]
        finally:
            lconn.close()
