"""Bad group requests over TCP get Kafka's error codes and never break the group.

Two real librdkafka members form a Stable group; a raw connection then sends what a
buggy or stale client would: a protocol type mismatch, old generations, unknown
members, commits to unknown partitions, oversized commit metadata, requests to the
wrong broker. Each gets its error code, and the real members keep their generation.
"""

from __future__ import annotations

import uuid

from client_tests.group_members import (
    PARTITIONS,
    ConfluentMember,
    balanced,
)
from client_tests.rawkafka import Conn, classic_generation, describe_group, find_coordinator
from client_tests.targets import KafkaTarget
from emulator import Cluster
from emulator.testing import wait_for
from wire.errors import ErrorCode as E

# Runs on both targets (--target kafka): the coordinator found with FindCoordinator and
# the group read with DescribeGroups, as a client would.
Target = Cluster | KafkaTarget


def test_bad_requests_leave_the_group_intact(group_cluster: Target,
                                             topic_name: str) -> None:
    c = group_cluster
    c.create_topic(topic_name, PARTITIONS, 3)
    group = f"bad-input-{topic_name}"
    members = [ConfluentMember(f"ok-{i}", c.bootstrap_servers, topic_name, group)
               for i in range(2)]
    for m in members:
        m.start()
    try:
        check_bad_requests(c, members, group)
    finally:
        for m in members:
            m.stop()


def check_bad_requests(c: Target, members: list[ConfluentMember], GROUP: str) -> None:  # noqa: N803
    wait_for(balanced(members, [3, 3]), "a stable group of two")
    topic_name = members[0].topic
    index = c.broker_ids.index(find_coordinator(c, GROUP))
    conn = Conn(c, index)
    other = Conn(c, (index + 1) % len(c.broker_ids))
    before = describe_group(conn, GROUP)
    assert before["group_state"] == "Stable", before
    member_id = before["members"][0]["member_id"]
    generation = classic_generation(conn, GROUP, member_id)
    try:
        join = {"group_id": GROUP, "session_timeout_ms": 6000, "rebalance_timeout_ms": 6000,
                "member_id": "", "protocol_type": "connect",
                "protocols": [{"name": "range", "metadata": b""}]}
        assert conn.call(11, 5, join)["error_code"] == E.INCONSISTENT_GROUP_PROTOCOL
        assert conn.call(11, 5, dict(join, protocol_type="consumer", protocols=[
            {"name": "nobody-has-this", "metadata": b""}]))["error_code"] == \
            E.INCONSISTENT_GROUP_PROTOCOL
        assert conn.call(11, 5, dict(join, session_timeout_ms=1))["error_code"] == \
            E.INVALID_SESSION_TIMEOUT
        assert other.call(11, 5, join)["error_code"] == E.NOT_COORDINATOR
        hb = {"group_id": GROUP, "generation_id": generation - 1, "member_id": member_id}
        assert conn.call(12, 3, hb)["error_code"] == E.ILLEGAL_GENERATION
        assert conn.call(12, 3, dict(hb, generation_id=generation, member_id="ghost"))[
            "error_code"] == E.UNKNOWN_MEMBER_ID
        sync = {"group_id": GROUP, "generation_id": generation + 5, "member_id": member_id,
                "assignments": []}
        assert conn.call(14, 3, sync)["error_code"] == E.ILLEGAL_GENERATION
        commit = {"group_id": GROUP, "generation_id_or_member_epoch": generation,
                  "member_id": member_id, "topics": [
                      {"name": "no-such-topic", "partitions": [
                          {"partition_index": 0, "committed_offset": 1,
                           "committed_metadata": ""}]},
                      {"name": topic_name, "partitions": [
                          {"partition_index": 0, "committed_offset": 1,
                           "committed_metadata": "m" * 5000},
                          {"partition_index": 99, "committed_offset": 1,
                           "committed_metadata": ""}]}]}
        # Unknown topics and partitions are answered before the group coordinator sees
        # the request (KafkaApis), so they come first and whatever the generation.
        def codes(r: dict) -> list:
            return [(t["name"], [(p["partition_index"], p["error_code"])
                                 for p in t["partitions"]]) for t in r["topics"]]

        assert codes(conn.call(8, 8, commit)) == [
            ("no-such-topic", [(0, E.UNKNOWN_TOPIC_OR_PARTITION)]),
            (topic_name, [(99, E.UNKNOWN_TOPIC_OR_PARTITION),
                          (0, E.OFFSET_METADATA_TOO_LARGE)])]
        r = conn.call(8, 8, dict(commit, generation_id_or_member_epoch=generation - 1))
        assert codes(r) == [
            ("no-such-topic", [(0, E.UNKNOWN_TOPIC_OR_PARTITION)]),
            (topic_name, [(99, E.UNKNOWN_TOPIC_OR_PARTITION), (0, E.ILLEGAL_GENERATION)])]
        leave = {"group_id": GROUP, "members": [{"member_id": "ghost"}]}
        r = conn.call(13, 3, leave)
        assert [m["error_code"] for m in r["members"]] == [E.UNKNOWN_MEMBER_ID]
        assert conn.call(42, 2, {"groups_names": [GROUP]})["results"][0]["error_code"] == \
            E.NON_EMPTY_GROUP
        r = conn.call(47, 0, {"group_id": GROUP, "topics": [
            {"name": topic_name, "partitions": [{"partition_index": 0}]}]})
        assert r["error_code"] == E.NONE
        assert r["topics"][0]["partitions"][0]["error_code"] == E.GROUP_SUBSCRIBED_TO_TOPIC
        after = describe_group(conn, GROUP)
        assert after["group_state"] == "Stable", after
        assert classic_generation(conn, GROUP, member_id) == generation
    finally:
        conn.close()
        other.close()
    assert balanced(members, [3, 3])()


def test_find_coordinator_batched_keys(group_cluster: Target) -> None:
    c = group_cluster
    conn = Conn(c)
    try:
        keys = ["g-1", "g-2", "g-3"]
        r = _find(conn, {"key_type": 0, "coordinator_keys": keys})
        md = conn.call(3, 12, {"topics": [], "allow_auto_topic_creation": False})
        ports = {b["node_id"]: b["port"] for b in md["brokers"]}
        assert [x["key"] for x in r["coordinators"]] == keys
        for x in r["coordinators"]:
            assert x["error_code"] == E.NONE
            assert x["port"] == ports[x["node_id"]]
        # The batched answer names the coordinator v1 names for the key (no batching).
        one = conn.call(10, 1, {"key": "g-1", "key_type": 0})
        assert one["error_code"] == E.NONE
        assert one["node_id"] == r["coordinators"][0]["node_id"]
        # An empty transactional id is looked up like any other (Kafka 4.4 answers NONE).
        r = _find(conn, {"key_type": 1, "coordinator_keys": ["tx", ""]})
        assert [x["error_code"] for x in r["coordinators"]] == [E.NONE, E.NONE]
        r = conn.call(10, 4, {"key_type": 2, "coordinator_keys": ["share"]})
        assert r["coordinators"][0]["error_code"] == E.INVALID_REQUEST
    finally:
        conn.close()


def _find(conn: Conn, request: dict) -> dict:
    """FindCoordinator v4, again while a key answers COORDINATOR_NOT_AVAILABLE: Kafka
    answers that while it creates __consumer_offsets or __transaction_state on first use."""
    def answer() -> dict | None:
        r = conn.call(10, 4, request)
        return r if all(x["error_code"] != E.COORDINATOR_NOT_AVAILABLE
                        for x in r["coordinators"]) else None

    return wait_for(answer, "FindCoordinator without COORDINATOR_NOT_AVAILABLE", timeout=30,
                    interval=0.2)


def test_txn_offset_commit_naming_an_instance_id_needs_that_member(cluster: Target,
                                                                   topic_name: str) -> None:
    """TxnOffsetCommit to a consumer group that has a member: a producer outside group
    management names no member id, no generation (-1) and no group instance id, and its
    offsets are taken; naming a group instance id without a member id has it checked
    (Kafka 4.4's ConsumerGroup.validateOffsetCommit: UNKNOWN_MEMBER_ID)."""
    c = cluster
    c.create_topic(topic_name, 1, 3)
    group, tid = f"txn-commit-{topic_name}", f"tid-{topic_name}"
    gconn = Conn(c, sorted(c.broker_ids).index(find_coordinator(c, group)))
    tconn = Conn(c, sorted(c.broker_ids).index(find_coordinator(c, tid, key_type=1)))
    member = uuid.uuid4().hex[:22]
    try:
        hb = gconn.call(68, 1, {
            "group_id": group, "member_id": member, "member_epoch": 0, "instance_id": None,
            "rack_id": None, "rebalance_timeout_ms": 30000,
            "subscribed_topic_names": [topic_name], "subscribed_topic_regex": None,
            "server_assignor": "uniform", "topic_partitions": []})
        assert hb["error_code"] == E.NONE, hb

        def init() -> dict | None:
            r = tconn.call(22, 4, {"transactional_id": tid, "transaction_timeout_ms": 60000,
                                   "producer_id": -1, "producer_epoch": -1})
            return r if r["error_code"] == E.NONE else None

        r = wait_for(init, "a producer id")
        pid, epoch = r["producer_id"], r["producer_epoch"]
        txn = {"transactional_id": tid, "producer_id": pid, "producer_epoch": epoch}
        add = tconn.call(25, 3, dict(txn, group_id=group))
        assert add["error_code"] == E.NONE, add

        def commit(member_id: str, instance_id: str | None) -> int:
            r = gconn.call(28, 3, dict(
                txn, group_id=group, generation_id_or_member_epoch=-1, member_id=member_id,
                group_instance_id=instance_id, topics=[{"name": topic_name, "partitions": [{
                    "partition_index": 0, "committed_offset": 1,
                    "committed_leader_epoch": -1, "committed_metadata": None}]}]))
            code: int = r["topics"][0]["partitions"][0]["error_code"]
            return code

        assert commit("", "not-a-member") == E.UNKNOWN_MEMBER_ID
        assert commit("", None) == E.NONE
        assert tconn.call(26, 3, dict(txn, committed=False))["error_code"] == E.NONE
    finally:
        gconn.close()
        tconn.close()
