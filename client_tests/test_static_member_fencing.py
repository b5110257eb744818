"""A fenced static member is FENCED_INSTANCE_ID on every request it can send, on the
emulator and on Apache Kafka 4.4.

KIP-345: a static member (``group.instance.id``) that rejoins with no member id takes
over its instance id, and the coordinator fences the member id that held it. Every
request of the classic protocol the old member can still send then answers
FENCED_INSTANCE_ID (82): Heartbeat, SyncGroup, OffsetCommit, JoinGroup with the old
member id, LeaveGroup (per member), and TxnOffsetCommit in its name. Kafka's GroupMetadataManager checks the instance
id first on each of those paths (validateExistingMember, ClassicGroup.validateOffsetCommit,
the LeaveGroup member loop); a mutation run found only the Heartbeat path pinned. The
requests are raw (exact codes, no client retries) and go to the group's coordinator;
none of them may disturb the member that took the instance id over.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from rawkafka import Conn, find_coordinator

from client_tests.targets import KafkaTarget
from emulator import Cluster
from emulator.testing import wait_for

Target = Cluster | KafkaTarget
FENCED_INSTANCE_ID = 82
PROTOCOLS = [{"name": "range", "metadata": b"\x00\x03\x00\x00\x00\x00\x00\x00"}]


@pytest.fixture
def fenced(cluster: Target) -> Iterator[tuple[Conn, str, str, str, str, int]]:
    """A Stable group whose static member ``inst`` joined as member A, then rejoined (a
    restart) as member B: (coordinator connection, group, instance id, A, B, generation)."""
    group, inst = f"static-{uuid.uuid4().hex[:8]}", "inst-1"
    topic = f"static-t-{uuid.uuid4().hex[:8]}"
    cluster.create_topic(topic, 1, 3)
    conn = Conn(cluster, sorted(cluster.broker_ids).index(find_coordinator(cluster, group)))
    try:
        a = join(conn, group, inst, "")
        assert a["error_code"] == 0, a
        a_id, gen = a["member_id"], a["generation_id"]
        s = sync(conn, group, inst, a_id, gen, [{"member_id": a_id, "assignment": b""}])
        assert s["error_code"] == 0, s
        b = join(conn, group, inst, "")  # the same instance again, no member id: a restart
        assert b["error_code"] == 0, b
        assert b["member_id"] != a_id
        # a static member back with the same protocols: no rebalance, the same generation
        assert b["generation_id"] == gen
        conn.topic = topic  # type: ignore[attr-defined]
        yield conn, group, inst, a_id, b["member_id"], gen
    finally:
        conn.close()


def join(conn: Conn, group: str, inst: str, member_id: str) -> dict:
    return conn.call(11, 7, {"group_id": group, "session_timeout_ms": 10000,
                             "rebalance_timeout_ms": 10000, "member_id": member_id,
                             "group_instance_id": inst, "protocol_type": "consumer",
                             "protocols": PROTOCOLS})


def sync(conn: Conn, group: str, inst: str, member_id: str, gen: int,
         assignments: list[dict]) -> dict:
    return conn.call(14, 5, {"group_id": group, "generation_id": gen, "member_id": member_id,
                             "group_instance_id": inst, "protocol_type": "consumer",
                             "protocol_name": "range", "assignments": assignments})


def heartbeat(conn: Conn, group: str, inst: str, member_id: str, gen: int) -> int:
    return conn.call(12, 4, {"group_id": group, "generation_id": gen, "member_id": member_id,
                             "group_instance_id": inst})["error_code"]


def test_heartbeat_of_the_fenced_member(fenced: tuple) -> None:
    conn, group, inst, a, b, gen = fenced
    assert heartbeat(conn, group, inst, a, gen) == FENCED_INSTANCE_ID
    assert heartbeat(conn, group, inst, b, gen) == 0  # the new holder is untouched


def test_sync_group_of_the_fenced_member(fenced: tuple) -> None:
    conn, group, inst, a, b, gen = fenced
    r = sync(conn, group, inst, a, gen, [])
    assert r["error_code"] == FENCED_INSTANCE_ID, r
    assert heartbeat(conn, group, inst, b, gen) == 0


def test_offset_commit_of_the_fenced_member(fenced: tuple) -> None:
    conn, group, inst, a, b, gen = fenced
    topic = conn.topic

    def commit(member: str) -> list[int]:
        r = conn.call(8, 9, {"group_id": group, "generation_id_or_member_epoch": gen,
                             "member_id": member, "group_instance_id": inst, "topics": [
                                 {"name": topic, "partitions": [
                                     {"partition_index": 0, "committed_offset": 0,
                                      "committed_leader_epoch": -1,
                                      "committed_metadata": ""}]}]})
        return [p["error_code"] for t in r["topics"] for p in t["partitions"]]

    assert commit(a) == [FENCED_INSTANCE_ID]
    assert commit(b) == [0]  # the same commit by the holder is accepted
    assert heartbeat(conn, group, inst, b, gen) == 0


def test_join_group_of_the_fenced_member(fenced: tuple) -> None:
    conn, group, inst, a, b, gen = fenced
    r = join(conn, group, inst, a)
    assert r["error_code"] == FENCED_INSTANCE_ID, r
    assert heartbeat(conn, group, inst, b, gen) == 0


def test_leave_group_of_the_fenced_member(fenced: tuple) -> None:
    conn, group, inst, a, b, gen = fenced
    r = conn.call(13, 5, {"group_id": group, "members": [
        {"member_id": a, "group_instance_id": inst, "reason": "fenced"}]})
    assert r["error_code"] == 0, r
    assert [(m["member_id"], m["group_instance_id"], m["error_code"])
            for m in r["members"]] == [(a, inst, FENCED_INSTANCE_ID)]
    assert heartbeat(conn, group, inst, b, gen) == 0  # B still holds the instance id


def test_txn_offset_commit_of_the_fenced_member(cluster: Target, fenced: tuple) -> None:
    """A transactional producer commits offsets for the group (AddOffsetsToTxn, then
    TxnOffsetCommit to the group's coordinator) in the fenced member's name: the group
    coordinator validates the member as for OffsetCommit."""
    conn, group, inst, a, b, gen = fenced
    tid = f"static-txn-{uuid.uuid4().hex[:8]}"
    txn = Conn(cluster, sorted(cluster.broker_ids).index(find_coordinator(cluster, tid, 1)))
    retriable = {14, 15, 51}  # COORDINATOR_LOAD_IN_PROGRESS, _NOT_AVAILABLE, CONCURRENT_TXNS

    def until_answered(key: int, version: int, body: dict) -> dict:
        def answer() -> dict | None:
            r = txn.call(key, version, body)
            return None if r["error_code"] in retriable else r
        return wait_for(answer, f"API {key} answered", timeout=30, interval=0.1)

    try:
        init = until_answered(22, 4, {"transactional_id": tid, "transaction_timeout_ms": 60000,
                                      "producer_id": -1, "producer_epoch": -1})
        assert init["error_code"] == 0, init
        pid, epoch = init["producer_id"], init["producer_epoch"]
        added = until_answered(25, 3, {"transactional_id": tid, "producer_id": pid,
                                       "producer_epoch": epoch, "group_id": group})
        assert added["error_code"] == 0, added

        def commit(member: str) -> list[int]:
            r = conn.call(28, 3, {"transactional_id": tid, "group_id": group,
                                  "producer_id": pid, "producer_epoch": epoch,
                                  "generation_id_or_member_epoch": gen, "member_id": member,
                                  "group_instance_id": inst, "topics": [
                                      {"name": conn.topic, "partitions": [
                                          {"partition_index": 0, "committed_offset": 0,
                                           "committed_leader_epoch": -1,
                                           "committed_metadata": ""}]}]})
            return [p["error_code"] for t in r["topics"] for p in t["partitions"]]

        assert commit(a) == [FENCED_INSTANCE_ID]
        assert commit(b) == [0]
        ended = until_answered(26, 3, {"transactional_id": tid, "producer_id": pid,
                                       "producer_epoch": epoch, "committed": False})
        assert ended["error_code"] == 0, ended
    finally:
        txn.close()
    assert heartbeat(conn, group, inst, b, gen) == 0
