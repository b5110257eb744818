"""Share groups (KIP-932) on the wire: exact requests over TCP, exact answers, the same
requests against both targets (``pytest client_tests/test_share_groups_raw.py --target
kafka`` runs them on a real Kafka 4.4).

The Java KafkaShareConsumer tests (test_share_groups_java.py) show real clients work;
these show the codes Kafka gives for each step and each kind of bad input.

What Kafka 4.4 does that the steps below wait for, as its clients do:
- a new group's coordinator may still be loading its __consumer_offsets partition
  (NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS): ``coordinator`` waits it out;
- a member is assigned only partitions whose share-partition state the group coordinator
  has initialized (InitializeShareGroupState, sent after the heartbeat that first saw the
  topic): its first heartbeat answers an empty assignment, and a later one, after the
  group epoch moved on, the partitions (``assigned``).
"""

from __future__ import annotations

import time
import uuid

import pytest

from client_tests.rawkafka import (
    Conn,
    alter_group_config,
    find_coordinator,
    group_configs,
    set_group_config,
    share_all_finished,
    share_partition_offsets,
    topic_metadata,
)
from client_tests.targets import KafkaTarget
from emulator import Cluster
from emulator.coordinators.share.state import kafka_uuid
from emulator.testing import wait_for
from wire.errors import ErrorCode as E
from wire.records import build_batch, decode_records, iter_batches

Target = Cluster | KafkaTarget
WAIT = 5000  # MaxWaitMs of a ShareFetch that expects records


def conn_to(c: Target, broker_id: int) -> Conn:
    return Conn(c, sorted(c.broker_ids).index(broker_id))


def leader_and_id(c: Target, topic: str) -> tuple[bytes, int]:
    """(topic id, leader of partition 0), once Metadata names a leader."""
    md = wait_for(lambda: (m := topic_metadata(c, topic))["partitions"] and m,
                  f"{topic} in Metadata")
    return md["topic_id"], next(p["leader_id"] for p in md["partitions"]
                                if p["partition_index"] == 0)


def produce(c: Target, topic: str, leader: int, n: int) -> None:
    conn = conn_to(c, leader)
    try:
        for i in range(n):
            r = conn.call(0, 9, {"transactional_id": None, "acks": -1, "timeout_ms": 5000,
                                 "topic_data": [{"name": topic, "partition_data": [{
                                     "index": 0,
                                     # stamped now: records stamped 0 are past
                                     # retention.ms, and the emulator's retention
                                     # check may delete them mid-test
                                     "records": build_batch([(None, f"v{i}".encode())],
                                                            timestamp=int(time.time() * 1000)
                                                            )}]}]})
            assert r["responses"][0]["partition_responses"][0]["error_code"] == E.NONE
    finally:
        conn.close()


def setup(c: Target, topic: str, group: str, n: int) -> tuple[bytes, int]:
    """A topic of one partition (three replicas) with ``n`` records of one record per
    batch, and a group that starts from the earliest offset: (topic id, leader)."""
    c.create_topic(topic, partitions=1, replication_factor=3)
    set_group_config(c, group, "share.auto.offset.reset", "earliest")
    tid, leader = leader_and_id(c, topic)
    produce(c, topic, leader, n)
    return tid, leader


def heartbeat(conn: Conn, group: str, member: str, epoch: int, topics=None) -> dict:
    return conn.call(76, 1, {"group_id": group, "member_id": member, "member_epoch": epoch,
                             "rack_id": None, "subscribed_topic_names": topics})


def assigned(conn: Conn, group: str, member: str, last: dict, tid: bytes,
             partitions: list[int]) -> int:
    """Heartbeat until the member is assigned ``partitions`` of ``tid`` (``last`` is its
    latest heartbeat answer, which may already say so); its epoch then.

    Kafka assigns a partition once its share-partition state is initialized, which
    happens after the heartbeat that subscribed; the next heartbeat then moves the
    group epoch and assigns it."""
    want = {"topic_partitions": [{"topic_id": tid, "partitions": partitions}]}
    assert last["error_code"] == E.NONE, last
    state = {"epoch": last["member_epoch"]}
    if last["assignment"] == want:
        return state["epoch"]

    def done() -> bool:
        r = heartbeat(conn, group, member, state["epoch"])
        assert r["error_code"] == E.NONE, r
        state["epoch"] = r["member_epoch"]
        return r["assignment"] == want

    wait_for(done, f"{member} assigned {partitions}", interval=0.1)
    return state["epoch"]


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


def coordinator(c: Target, group: str) -> int:
    """The group's coordinator, once it has loaded the group's __consumer_offsets
    partition (rawkafka.find_coordinator waits for that)."""
    return find_coordinator(c, group)


def test_share_fetch_acknowledge_and_redelivery(cluster: Target, topic_name: str) -> None:
    c = cluster
    g = "sg-" + topic_name
    tid, leader = setup(c, topic_name, g, 3)
    gconn = conn_to(c, coordinator(c, g))
    lconn = conn_to(c, leader)
    m1, m2 = str(uuid.uuid4()), str(uuid.uuid4())
    try:
        r = heartbeat(gconn, g, m1, 0, [topic_name])
        # a new group's first member: group epoch 2 (Kafka 4.4), nothing assigned until
        # the share-partition is initialized
        assert (r["error_code"], r["member_epoch"]) == (E.NONE, 2)
        assert r["assignment"] == {"topic_partitions": []}
        e1 = assigned(gconn, g, m1, r, tid, [0])
        assert e1 == 3
        r = heartbeat(gconn, g, m2, 0, [topic_name])
        assert r["error_code"] == E.NONE
        assigned(gconn, g, m2, r, tid, [0])

        # waiting (MaxWaitMs): Kafka's share-partition leader loads the state from the
        # share coordinator when first asked, so a fetch that does not wait may get nothing
        r = fetch(lconn, g, m1, 0, tid, max_records=2, wait=WAIT)
        assert r["error_code"] == E.NONE and r["acquisition_lock_timeout_ms"] == 30000
        (p,) = r["responses"][0]["partitions"]
        # whole batches: one record per batch here, so exactly two
        assert p["acquired_records"] == [{"first_offset": 0, "last_offset": 1,
                                          "delivery_count": 1}]
        assert values(p) == [b"v0", b"v1"]
        # m2 cannot get what m1 holds: only offset 2
        r2 = fetch(lconn, g, m2, 0, tid, wait=WAIT)
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
        # (waiting, as a fetch that expects records must: with no wait a loaded Kafka
        # may answer before the share partition can acquire, with nothing)
        r2 = fetch(lconn, g, m2, 1, tid, acks=[{"first_offset": 2, "last_offset": 2,
                                                "acknowledge_types": [3]}], wait=WAIT)
        (p2,) = r2["responses"][0]["partitions"]
        assert p2["acknowledge_error_code"] == E.NONE
        assert p2["acquired_records"] == [{"first_offset": 1, "last_offset": 1,
                                           "delivery_count": 2}]
        # another member's record, a stale acknowledgement (0 is done: below the start
        # offset, Kafka 4.4 ignores it) and one for offsets never delivered
        r = conn_ack(lconn, g, m1, 2, tid, 1, 1, 1)
        assert r["error_code"] == E.NONE
        assert r["responses"][0]["partitions"][0]["error_code"] == E.INVALID_RECORD_STATE
        assert r["responses"][0]["partitions"][0]["error_message"] == \
            "Member is not the owner of offset"
        r = conn_ack(lconn, g, m2, 2, tid, 0, 0, 1)
        assert r["responses"][0]["partitions"][0]["error_code"] == E.NONE
        r = conn_ack(lconn, g, m2, 3, tid, 1, 1, 1)
        assert r["responses"][0]["partitions"][0]["error_code"] == E.NONE
        # all of 0-2 are done, so nothing is in flight
        r = conn_ack(lconn, g, m2, 4, tid, 50, 60, 1)
        assert r["responses"][0]["partitions"][0]["error_code"] == E.INVALID_RECORD_STATE
        assert r["responses"][0]["partitions"][0]["error_message"] == \
            "Batch record not found. The request batch offsets are not found in the cache."

        # the offsets admin view: all three are done (0, 1 accepted, 2 rejected)
        def offsets() -> tuple[int, int]:
            r = gconn.call(90, 1, {"groups": [{"group_id": g, "topics": None}]})
            (grp,) = r["groups"]
            assert grp["error_code"] == E.NONE
            (part,) = grp["topics"][0]["partitions"]
            return part["start_offset"], part["lag"]

        # Kafka's share-partition leader writes its state to the share coordinator after
        # answering: the admin view catches up a moment later. The start offset is the
        # one last written, with the last acknowledgement: 1, from before it (the start
        # offset moves past the finished records afterwards, unwritten).
        wait_for(lambda: offsets() == (1, 0), "start offset 1, lag 0")

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


def test_share_session_and_partition_errors(cluster: Target, topic_name: str) -> None:
    c = cluster
    g = "sg-" + topic_name
    tid, leader = setup(c, topic_name, g, 1)
    gconn = conn_to(c, coordinator(c, g))
    follower = next(b for b in sorted(c.broker_ids) if b != leader)
    lconn, fconn = conn_to(c, leader), conn_to(c, follower)
    try:
        assigned(gconn, g, "m", heartbeat(gconn, g, "m", 0, [topic_name]), tid, [0])
        r = fetch(lconn, g, "m", 4, tid)
        assert r["error_code"] == E.SHARE_SESSION_NOT_FOUND
        assert r["acquisition_lock_timeout_ms"] == 0  # 0 with a top-level error
        r = fetch(lconn, g, "m", 0, tid, acks=[{"first_offset": 0, "last_offset": 0,
                                               "acknowledge_types": [1]}])
        assert r["error_code"] == E.INVALID_REQUEST
        r = fetch(lconn, g, "m", 0, tid, wait=WAIT)
        assert r["error_code"] == E.NONE
        assert r["responses"][0]["partitions"][0]["acquired_records"] == [
            {"first_offset": 0, "last_offset": 0, "delivery_count": 1}]
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
        r = fetch(lconn, g, "m", 1, tid)
        assert r["error_code"] == E.NONE
        # the final epoch (-1) closes the session and releases what the member holds;
        # without acknowledgements it answers nothing (Kafka 4.4: no error either)
        r = fetch(lconn, g, "m", -1, tid)
        assert (r["error_code"], r["responses"]) == (E.NONE, [])
        assert fetch(lconn, g, "m", 2, tid)["error_code"] == E.SHARE_SESSION_NOT_FOUND
        assert conn_ack(lconn, g, "m", -1, tid, 0, 0, 1)["error_code"] == \
            E.SHARE_SESSION_NOT_FOUND
        r = fetch(lconn, g, "m3", 0, tid, wait=WAIT)
        assert r["responses"][0]["partitions"][0]["acquired_records"] == [
            {"first_offset": 0, "last_offset": 0, "delivery_count": 2}]
        # a ShareAcknowledge at the final epoch acknowledges, then closes the session
        r = conn_ack(lconn, g, "m3", -1, tid, 0, 0, 2)
        assert r["error_code"] == E.NONE
        assert r["responses"][0]["partitions"][0]["error_code"] == E.NONE
        assert fetch(lconn, g, "m3", 1, tid)["error_code"] == E.SHARE_SESSION_NOT_FOUND
        r = fetch(lconn, g, "m", 0, tid, wait=WAIT)
        assert r["responses"][0]["partitions"][0]["acquired_records"] == [
            {"first_offset": 0, "last_offset": 0, "delivery_count": 3}]
    finally:
        gconn.close()
        lconn.close()
        fconn.close()


def test_group_errors(cluster: Target, topic_name: str) -> None:
    c = cluster
    g = "sg-" + topic_name
    c.create_topic(topic_name, partitions=1, replication_factor=1)
    coord = coordinator(c, g)
    gconn = conn_to(c, coord)
    other = conn_to(c, next(b for b in sorted(c.broker_ids) if b != coord))
    try:
        assert heartbeat(other, g, "m", 0, [topic_name])["error_code"] == E.NOT_COORDINATOR
        assert heartbeat(gconn, g, "", 0, [topic_name])["error_code"] == E.INVALID_REQUEST
        assert heartbeat(gconn, g, "m", 0, None)["error_code"] == E.INVALID_REQUEST
        assert heartbeat(gconn, g, "m", 5, None)["error_code"] == E.GROUP_ID_NOT_FOUND
        r = heartbeat(gconn, g, "m", 0, [topic_name])
        assert r["member_epoch"] == 2
        # (its share-partition initialized, so that DeleteShareGroupOffsets below finds it)
        epoch = assigned(gconn, g, "m", r, leader_and_id(c, topic_name)[0], [0])
        assert heartbeat(gconn, g, "x", 5, None)["error_code"] == E.UNKNOWN_MEMBER_ID
        assert heartbeat(gconn, g, "m", epoch + 5, None)["error_code"] == \
            E.FENCED_MEMBER_EPOCH
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


def test_share_coordinator_apis(cluster: Target, topic_name: str) -> None:
    c = cluster
    g = "sg-" + topic_name
    c.create_topic(topic_name, partitions=1, replication_factor=1)
    tid, _ = leader_and_id(c, topic_name)
    key = f"{g}:{kafka_uuid(tid)}:0"
    node = find_coordinator(c, key, key_type=2)
    if isinstance(c, Cluster):  # the emulator's own view of the share coordinator
        sc = c.server.services.share
        assert node == c.call(lambda: sc.coordinator_for(key))
    sconn = conn_to(c, node)
    wrong = conn_to(c, next(b for b in sorted(c.broker_ids) if b != node))

    def req(**extra) -> dict:
        return {"group_id": g, "topics": [{"topic_id": tid, "partitions": [
            dict({"partition": 0}, **extra)]}]}

    def code(r: dict) -> int:
        return r["results"][0]["partitions"][0]["error_code"]
    try:
        assert code(wrong.call(84, 0, req(leader_epoch=0))) == E.NOT_COORDINATOR
        # no state yet: Read refuses, Write too, the summary says "start offset -1"
        r = sconn.call(84, 0, req(leader_epoch=0))
        assert (code(r), r["results"][0]["partitions"][0]["error_message"]) == (
            E.INVALID_REQUEST, "Read operation on uninitialized share partition not allowed.")
        r = sconn.call(85, 1, req(state_epoch=1, leader_epoch=3, start_offset=10,
                                  state_batches=[]))
        assert (code(r), r["results"][0]["partitions"][0]["error_message"]) == (
            E.INVALID_REQUEST, "Write operation on uninitialized share partition not allowed.")
        p = sconn.call(87, 1, req(leader_epoch=0))["results"][0]["partitions"][0]
        assert (p["error_code"], p["state_epoch"], p["start_offset"]) == (E.NONE, 0, -1)
        # Initialize at state epoch 2; the same epoch again is accepted, an older fenced
        assert code(sconn.call(83, 0, req(state_epoch=2, start_offset=10))) == E.NONE
        assert code(sconn.call(83, 0, req(state_epoch=2, start_offset=10))) == E.NONE
        assert code(sconn.call(83, 0, req(state_epoch=1, start_offset=10))) == \
            E.FENCED_STATE_EPOCH
        batches = [{"first_offset": 10, "last_offset": 11, "delivery_state": 2,
                    "delivery_count": 1},
                   {"first_offset": 12, "last_offset": 12, "delivery_state": 4,
                    "delivery_count": 5},
                   {"first_offset": 14, "last_offset": 14, "delivery_state": 0,
                    "delivery_count": 2}]
        assert code(sconn.call(85, 1, req(state_epoch=1, leader_epoch=3, start_offset=10,
                                          state_batches=batches))) == E.FENCED_STATE_EPOCH
        # a newer state epoch writes, but the stored one stays (only Initialize sets it)
        assert code(sconn.call(85, 1, req(state_epoch=3, leader_epoch=3, start_offset=10,
                                          state_batches=batches))) == E.NONE
        r = sconn.call(84, 0, req(leader_epoch=3))
        p = r["results"][0]["partitions"][0]
        # the state as written: the start offset and every batch, acknowledged ones too
        assert (p["error_code"], p["state_epoch"], p["start_offset"]) == (E.NONE, 2, 10)
        assert p["state_batches"] == batches
        assert code(sconn.call(84, 0, req(leader_epoch=2))) == E.FENCED_LEADER_EPOCH
        assert code(sconn.call(85, 1, req(state_epoch=2, leader_epoch=2, start_offset=10,
                                          state_batches=[]))) == E.FENCED_LEADER_EPOCH
        # a later start offset drops what lies below it
        assert code(sconn.call(85, 1, req(state_epoch=2, leader_epoch=4, start_offset=11,
                                          state_batches=[]))) == E.NONE
        p = sconn.call(84, 0, req(leader_epoch=4))["results"][0]["partitions"][0]
        assert p["start_offset"] == 11 and p["state_batches"] == [
            {"first_offset": 11, "last_offset": 11, "delivery_state": 2, "delivery_count": 1},
            *batches[1:]]
        # the summary does not check the leader epoch
        p = sconn.call(87, 1, req(leader_epoch=1))["results"][0]["partitions"][0]
        assert (p["error_code"], p["start_offset"], p["leader_epoch"], p["state_epoch"]) == \
            (E.NONE, 11, 4, 2)
        assert code(sconn.call(86, 0, req())) == E.NONE
        p = sconn.call(87, 1, req(leader_epoch=3))["results"][0]["partitions"][0]
        assert (p["error_code"], p["start_offset"]) == (E.NONE, -1)
        assert code(sconn.call(84, 0, req(leader_epoch=3))) == E.INVALID_REQUEST
    finally:
        sconn.close()
        wrong.close()


def test_group_config_resource(cluster: Target, topic_name: str) -> None:
    """share.* group configs through IncrementalAlterConfigs/DescribeConfigs (type 32)."""
    c = cluster
    g = "sg-" + topic_name
    tid, leader = setup(c, topic_name, g, 2)

    def alter(key: str, value: str | None) -> dict:
        return alter_group_config(c, g, key, value)

    assert alter("share.record.lock.duration.ms", "20000")["error_code"] == E.NONE
    assert alter("share.record.lock.duration.ms", "100")["error_code"] == E.INVALID_CONFIG
    assert alter("share.delivery.count.limit", "11")["error_code"] == E.INVALID_CONFIG
    assert alter("share.auto.offset.reset", "sometimes")["error_code"] == E.INVALID_CONFIG
    assert alter("no.such.key", "1")["error_code"] == E.INVALID_CONFIG
    for i in range(len(c.broker_ids)):
        wait_for(lambda i=i: group_configs(c, g, i)["share.record.lock.duration.ms"][
            "value"] == "20000", f"broker {i} sees the new lock duration")
    configs = group_configs(c, g)
    assert configs["share.record.lock.duration.ms"]["value"] == "20000"
    assert configs["share.record.lock.duration.ms"]["config_source"] == 8  # GROUP_CONFIG
    assert configs["share.auto.offset.reset"]["value"] == "earliest"
    assert configs["share.delivery.count.limit"]["value"] == "5"
    assert configs["share.delivery.count.limit"]["config_source"] == 5  # DEFAULT
    lconn = conn_to(c, leader)
    hconn = conn_to(c, coordinator(c, g))
    # the share coordinator of the share-partition has loaded __share_group_state
    find_coordinator(c, f"{g}:{kafka_uuid(tid)}:0", key_type=2)
    try:
        # no share coordinator state yet: the group coordinator initializes it when a
        # member's heartbeat subscribes to the topic (InitializeShareGroupState)
        # (Kafka 4.4: a fetch that waits gets UNKNOWN_SERVER_ERROR for the partition when
        # the wait ends; one that does not wait, nothing). A waiting fetch may also get
        # nothing on Kafka: CI saw it when the share coordinator's read of the state had
        # not answered by the end of the wait (__share_group_state still loading, as when
        # this is the first share test of a run). Either way nothing is acquired.
        r = fetch(lconn, g, "m", 0, tid, wait=1000)
        assert r["error_code"] == E.NONE, r
        if r["responses"]:
            (p,) = r["responses"][0]["partitions"]
            assert (p["error_code"], p["acquired_records"]) == (E.UNKNOWN_SERVER_ERROR, [])
        else:
            assert isinstance(c, KafkaTarget), "the emulator answers UNKNOWN_SERVER_ERROR"
        r = fetch(lconn, g, "m", 1, tid)
        assert r["error_code"] == E.NONE, r
        if r["responses"]:
            # Kafka 4.4 tries the share-partition's state read again on this fetch, and
            # its UNKNOWN_SERVER_ERROR may come back before the answer does (two Kafka
            # passes saw it, once with the share coordinator loaded): the share-partition
            # leader's timing. Nothing is acquired either way; the emulator answers nothing.
            assert isinstance(c, KafkaTarget), r
            (p,) = r["responses"][0]["partitions"]
            assert (p["error_code"], p["acquired_records"]) == (E.UNKNOWN_SERVER_ERROR, [])
        assigned(hconn, g, "m", heartbeat(hconn, g, "m", 0, [topic_name]), tid, [0])
        r = fetch(lconn, g, "m", 2, tid, wait=WAIT)
        assert r["acquisition_lock_timeout_ms"] == 20000
        assert r["responses"][0]["partitions"][0]["acquired_records"][0]["last_offset"] == 1
    finally:
        lconn.close()
        hconn.close()


def test_consumer_heartbeat_on_a_share_group(cluster: Target, topic_name: str) -> None:
    c = cluster
    g = "sg-" + topic_name
    c.create_topic(topic_name, partitions=1, replication_factor=1)
    conn = conn_to(c, coordinator(c, g))
    try:
        assert heartbeat(conn, g, "m", 0, [topic_name])["error_code"] == E.NONE
        r = conn.call(68, 1, {"group_id": g, "member_id": "x", "member_epoch": 0,
                              "instance_id": None, "rack_id": None,
                              "rebalance_timeout_ms": 5000,
                              "subscribed_topic_names": [topic_name],
                              "subscribed_topic_regex": None, "server_assignor": None,
                              "topic_partitions": []})
        assert r["error_code"] == E.GROUP_ID_NOT_FOUND
        assert r["error_message"] == f"Group {g} is not a consumer group."
    finally:
        conn.close()


@pytest.mark.kafka_slow  # two broker crashes (fencing waits) and a restart on Kafka
def test_share_state_survives_coordinator_and_leader_moves(cluster: Target,
                                                           topic_name: str) -> None:
    c = cluster
    c.create_topic(topic_name, partitions=1, replication_factor=3)
    tid, leader = leader_and_id(c, topic_name)
    # a group whose coordinator is not the data partition's leader
    g = next(g for i in range(100)
             if find_coordinator(c, g := f"sg-{topic_name}-{i}") != leader)
    set_group_config(c, g, "share.auto.offset.reset", "earliest")
    produce(c, topic_name, leader, 4)
    member = str(uuid.uuid4())
    coord = coordinator(c, g)
    assert coord != leader, "pick another group id"
    conn = conn_to(c, coord)
    try:
        epoch = assigned(conn, g, member, heartbeat(conn, g, member, 0, [topic_name]),
                         tid, [0])
    finally:
        conn.close()
    lconn = conn_to(c, leader)
    try:
        r = fetch(lconn, g, member, 0, tid, wait=WAIT)
        assert r["responses"][0]["partitions"][0]["acquired_records"] == [
            {"first_offset": 0, "last_offset": 3, "delivery_count": 1}]
        r = conn_ack(lconn, g, member, 1, tid, 0, 1, 1)
        assert r["responses"][0]["partitions"][0]["error_code"] == E.NONE
        # the partition leader crashes, the session's connection still open (closed, it
        # would release the acquired records first, as Kafka does): accepted records
        # stay done, acquired ones come back, with the delivery count they had before
        # (Kafka 4.4 writes a delivery count with an acknowledgement or release, not with
        # the acquisition the crash lost)
        c.stop_broker(leader)
    finally:
        lconn.close()

    def refetched() -> list[dict] | None:
        """The records the new leader hands out (asked afresh: Metadata may name a leader
        that does not know it yet, NOT_LEADER_OR_FOLLOWER)."""
        now_leader = leader_and_id(c, topic_name)[1]
        if now_leader in (leader, -1):
            return None
        conn = conn_to(c, now_leader)
        try:
            r = fetch(conn, g, member, 0, tid, wait=1000)
        finally:
            conn.close()
        parts = [p for t in r["responses"] for p in t["partitions"]]
        return parts[0]["acquired_records"] or None if parts else None

    assert wait_for(refetched, "the records again from the new leader", 60) == [
        {"first_offset": 2, "last_offset": 3, "delivery_count": 1}]
    # back, so that the next crash leaves two brokers (__share_group_state's min ISR 2)
    c.start_broker(leader)
    # the group coordinator crashes: membership and epochs are intact on the new one
    c.stop_broker(coord)
    new = wait_for(lambda: (n := coordinator(c, g)) != coord and n, "a new group coordinator",
                   60)
    conn = conn_to(c, new)
    try:
        r = heartbeat(conn, g, member, epoch)
        assert (r["error_code"], r["member_epoch"]) == (E.NONE, epoch)
    finally:
        conn.close()


def test_subscription_change_drops_the_old_topic_at_once(cluster: Target,
                                                         topic_name: str) -> None:
    """A member that changes its subscription is answered, in that very heartbeat, an
    assignment without the old topic's partitions (Kafka's ShareGroupAssignmentBuilder
    filters the target assignment by the member's subscription), even while the group's
    new target assignment waits for share.assignment.interval.ms."""
    c = cluster
    g = "sg-" + topic_name
    a, b = topic_name, topic_name + "-b"
    c.create_topic(a, partitions=1, replication_factor=1)
    c.create_topic(b, partitions=1, replication_factor=1)
    # a long interval, so that the subscription change comes before the next target
    set_group_config(c, g, "share.assignment.interval.ms", "5000")
    tid_a, tid_b = leader_and_id(c, a)[0], leader_and_id(c, b)[0]
    conn = conn_to(c, coordinator(c, g))
    m = str(uuid.uuid4())
    try:
        epoch = assigned(conn, g, m, heartbeat(conn, g, m, 0, [a]), tid_a, [0])
        r = heartbeat(conn, g, m, epoch, [b])
        assert r["error_code"] == E.NONE, r
        assert r["assignment"] == {"topic_partitions": []}
        assert r["member_epoch"] == epoch  # no new target yet
        # nothing of a at the next heartbeats either, and b's partition once its
        # share-partition is initialized and the interval has passed
        assigned(conn, g, m, r, tid_b, [0])
    finally:
        conn.close()


def test_leaving_member_acknowledgements_land(cluster: Target, topic_name: str) -> None:
    """Leaving the group (ShareGroupHeartbeat at epoch -1) does not close the member's
    share sessions: a consumer that leaves and sends its last acknowledgements on close
    (ShareAcknowledge at the session's epoch, then at the final epoch) has them land,
    and the next member is not handed the acknowledged records again. (Kafka's Java
    share consumer acknowledges first, then leaves; the group coordinator and the
    share-partition leaders do not tell each other, so either order works on Kafka.)"""
    c = cluster
    g = "sg-" + topic_name
    tid, leader = setup(c, topic_name, g, 3)
    gconn = conn_to(c, coordinator(c, g))
    lconn = conn_to(c, leader)
    m1, m2 = str(uuid.uuid4()), str(uuid.uuid4())
    try:
        e1 = assigned(gconn, g, m1, heartbeat(gconn, g, m1, 0, [topic_name]), tid, [0])
        r = fetch(lconn, g, m1, 0, tid, wait=WAIT)
        assert r["responses"][0]["partitions"][0]["acquired_records"] == [
            {"first_offset": 0, "last_offset": 2, "delivery_count": 1}]
        r = heartbeat(gconn, g, m1, -1)
        assert (r["error_code"], r["member_epoch"]) == (E.NONE, -1)
        assert e1 > 0
        r = conn_ack(lconn, g, m1, 1, tid, 0, 1, 1)
        assert r["error_code"] == E.NONE, r
        assert r["responses"][0]["partitions"][0]["error_code"] == E.NONE
        r = conn_ack(lconn, g, m1, -1, tid, 2, 2, 1)
        assert r["error_code"] == E.NONE, r
        assert r["responses"][0]["partitions"][0]["error_code"] == E.NONE
        wait_for(lambda: share_all_finished(c, g, topic_name, 3), "all three accepted")
        # the next member gets nothing of 0-2
        assigned(gconn, g, m2, heartbeat(gconn, g, m2, 0, [topic_name]), tid, [0])
        r = fetch(lconn, g, m2, 0, tid, wait=500)
        assert [p["acquired_records"] for t in r["responses"] for p in t["partitions"]] \
            in ([], [[]]), r
    finally:
        gconn.close()
        lconn.close()


def test_share_fetch_is_throttled_by_the_consumer_byte_rate(cluster: Target,
                                                             topic_name: str) -> None:
    """ShareFetch counts against the client's consumer_byte_rate quota, as Fetch does
    (measured on Kafka 4.4): a ShareFetch reads at most what the quota window allows; one
    whose records would put the client over its quota is answered throttle_time_ms and no
    records (its acknowledgements still land), and the client waits that long."""
    c = cluster
    g = "sg-" + topic_name
    client_id = f"quota-{topic_name}"
    tid, leader = setup(c, topic_name, g, 0)
    entity = [{"entity_type": "client-id", "entity_name": client_id}]
    conn = conn_to(c, leader)  # the admin connection, under no quota
    gconn = conn_to(c, coordinator(c, g))
    try:
        for _ in range(5):  # five batches of ~4 KB
            batch = build_batch([(None, b"x" * 4000)], timestamp=int(time.time() * 1000))
            r = conn.call(0, 9, {"transactional_id": None, "acks": -1, "timeout_ms": 5000,
                                 "topic_data": [{"name": topic_name, "partition_data": [
                                     {"index": 0, "records": batch}]}]})
            assert r["responses"][0]["partition_responses"][0]["error_code"] == E.NONE
        r = conn.call(49, 1, {"entries": [{"entity": entity, "ops": [
            {"key": "consumer_byte_rate", "value": 1000.0, "remove": False}]}],
            "validate_only": False})
        assert r["entries"][0]["error_code"] == E.NONE
        # on Kafka the leader learns the quota from the metadata log after the answer
        wait_for(lambda: (e := conn.call(48, 1, {"components": [
            {"entity_type": "client-id", "match_type": 0, "match": client_id}],
            "strict": True})["entries"]) and e[0]["values"] == [
            {"key": "consumer_byte_rate", "value": 1000.0}], "the quota on the leader")
        assigned(gconn, g, "m", heartbeat(gconn, g, "m", 0, [topic_name]), tid, [0])
        # a connection of its own with the quota's client id: a throttled answer mutes it
        consumer = conn_to(c, leader)
        consumer.client_id = client_id
        try:
            # 1 KB/s over Kafka's 11 one-second windows: two of the ~4 KB batches fit
            r = fetch(consumer, g, "m", 0, tid, wait=WAIT)
            assert r["throttle_time_ms"] == 0
            (p,) = r["responses"][0]["partitions"]
            assert p["acquired_records"] == [
                {"first_offset": 0, "last_offset": 1, "delivery_count": 1}]
            # the next two would make ~16 KB in the windows: throttled, nothing acquired
            # for the member, its acknowledgement applied. It waits for records (WAIT) as
            # the first does: with no wait, a loaded Kafka once answered before its share
            # partition could acquire (the acknowledgement still being written), an empty
            # answer that counts no bytes and so is not throttled.
            r = fetch(consumer, g, "m", 1, tid, acks=[
                {"first_offset": 0, "last_offset": 1, "acknowledge_types": [1]}], wait=WAIT)
            assert r["error_code"] == E.NONE and r["throttle_time_ms"] > 0
            (p,) = r["responses"][0]["partitions"]
            assert (p["acknowledge_error_code"], p["acquired_records"], p["records"]) == (
                E.NONE, [], b"")
            # what the throttled answer left out stays acquired by "m" (Kafka 4.4) while
            # its session lives (its connection open: closed, it would release them):
            # another member (with no quota) gets only the last record
            assigned(gconn, g, "m2", heartbeat(gconn, g, "m2", 0, [topic_name]), tid, [0])
            r = fetch(conn, g, "m2", 0, tid, wait=WAIT)
            assert r["responses"][0]["partitions"][0]["acquired_records"] == [
                {"first_offset": 4, "last_offset": 4, "delivery_count": 1}]
        finally:
            consumer.close()
        wait_for(lambda: (o := share_partition_offsets(c, g, topic_name)) is not None and
                 o["lag"] == 3, "0 and 1 accepted")
    finally:
        conn.call(49, 1, {"entries": [{"entity": entity, "ops": [
            {"key": "consumer_byte_rate", "value": 0.0, "remove": True}]}],
            "validate_only": False})
        conn.close()
        gconn.close()
