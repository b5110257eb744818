"""Committed offsets expire as Kafka 4.4's group coordinator expires them
(OffsetMetadataManager.cleanupExpiredOffsets and each group's
offsetExpirationCondition; emulator/coordinators/coordinator_log.py): while a classic
consumer group is Stable, only the offsets of topics it does not subscribe to expire,
offsets.retention.minutes after their commit; once it is Empty, its offsets expire that
long after it became Empty, however old their commits are. And a classic or consumer
group that is empty and holds no offsets is deleted at the next check, as Kafka's
maybeDeleteGroup does; an empty share group, or one whose offsets have not expired, is
kept.

One broker with offsets.retention.minutes=1 (its least) checked every second: here the
emulator (emulator_only: the session's Kafka keeps Kafka's week of retention), in
test_offset_expiry_kafka.py a Kafka 4.4 broker configured so. The expiry scenario takes
about 70 s on each, mostly heartbeating through the minute; the deletion one seconds.
"""

from __future__ import annotations

import struct
import time
import uuid
from collections.abc import Iterator

import pytest

from client_tests.rawkafka import Conn, find_coordinator
from client_tests.targets import KafkaTarget
from emulator import Cluster
from emulator.testing import wait_for
from wire.errors import ErrorCode as E

EXPIRY = {"offsets.retention.minutes": "1", "offsets.retention.check.interval.ms": "1000"}
RETENTION_S = 60


# The emulator alone: a retention of one minute, which the session's Kafka has not (its
# twin, test_offset_expiry_kafka.py, starts a Kafka that has).
pytestmark = pytest.mark.emulator_only


@pytest.fixture(scope="module")
def expiry_cluster() -> Iterator[Cluster]:
    with Cluster(brokers=1, port=0, config=EXPIRY) as c:
        yield c


def _subscription(*topics: str) -> bytes:
    """ConsumerProtocolSubscription v0: the consumer protocol's member metadata."""
    out = struct.pack(">hi", 0, len(topics))
    for t in topics:
        out += struct.pack(">h", len(t)) + t.encode()
    return out + struct.pack(">i", -1)


def _committed(conn: Conn, group: str, topic: str) -> int:
    r = conn.call(9, 7, {"group_id": group, "require_stable": False,
                         "topics": [{"name": topic, "partition_indexes": [0]}]})
    assert r["error_code"] == E.NONE, r
    return int(r["topics"][0]["partitions"][0]["committed_offset"])


def test_offsets_expire_by_subscription_while_stable_and_from_emptiness_once_empty(
        expiry_cluster: Cluster) -> None:
    expiry_scenario(expiry_cluster)


def test_empty_groups_without_offsets_are_deleted_share_groups_kept(
        expiry_cluster: Cluster) -> None:
    empty_groups_scenario(expiry_cluster)


def _classic_join_sync(conn: Conn, group: str, topic: str) -> tuple[str, int]:
    """One consumer-protocol member alone in ``group``'s first generation: (id, gen)."""
    join = {"group_id": group, "session_timeout_ms": 30_000,
            "rebalance_timeout_ms": 30_000, "member_id": "", "group_instance_id": None,
            "protocol_type": "consumer",
            "protocols": [{"name": "range", "metadata": _subscription(topic)}]}
    r = conn.call(11, 5, join)
    assert r["error_code"] == E.MEMBER_ID_REQUIRED, r
    member = r["member_id"]
    r = conn.call(11, 5, dict(join, member_id=member))
    assert r["error_code"] == E.NONE, r
    generation = r["generation_id"]
    r = conn.call(14, 3, {"group_id": group, "generation_id": generation,
                          "member_id": member, "group_instance_id": None,
                          "assignments": [{"member_id": member, "assignment": b""}]})
    assert r["error_code"] == E.NONE, r
    return member, generation


def _commit(conn: Conn, group: str, topics: list[str], member: str, generation: int) -> None:
    """Offset 5 of each topic's partition 0, in one OffsetCommit."""
    r = conn.call(8, 8, {
        "group_id": group, "generation_id_or_member_epoch": generation,
        "member_id": member, "group_instance_id": None,
        "topics": [{"name": t, "partitions": [{
            "partition_index": 0, "committed_offset": 5, "committed_leader_epoch": -1,
            "committed_metadata": ""}]} for t in topics]})
    assert [p["error_code"] for t in r["topics"] for p in t["partitions"]] == [
        E.NONE] * len(topics), r


def empty_groups_scenario(c: Cluster | KafkaTarget) -> None:
    """Five groups made empty at once: a classic group whose member left without
    committing and a consumer group whose member left are deleted within seconds (the
    check runs every second): ListGroups stops listing them, DescribeGroups calls the
    classic one Dead, ConsumerGroupDescribe answers GROUP_ID_NOT_FOUND. A classic group
    whose member committed before leaving, a group with only an admin's commit, and an
    empty share group are still listed, Empty, well after."""
    run = uuid.uuid4().hex[:8]
    topic = f"t-{run}"
    c.create_topic(topic, 1, 1)
    kinds = ("left", "committed", "simple", "consumer", "share")
    groups = {k: f"{k}-{run}" for k in kinds}
    conns = {k: Conn(c, sorted(c.broker_ids).index(find_coordinator(c, g)))
             for k, g in groups.items()}
    try:
        for k in ("left", "committed"):
            member, generation = _classic_join_sync(conns[k], groups[k], topic)
            if k == "committed":
                _commit(conns[k], groups[k], [topic], member, generation)
            r = conns[k].call(13, 3, {"group_id": groups[k], "members": [
                {"member_id": member, "group_instance_id": None}]})
            assert r["error_code"] == E.NONE, r
        _commit(conns["simple"], groups["simple"], [topic], "", -1)
        member = uuid.uuid4().hex[:22]
        for epoch, names in ((0, [topic]), (-1, None)):
            r = conns["consumer"].call(68, 0, {
                "group_id": groups["consumer"], "member_id": member, "member_epoch": epoch,
                "instance_id": None, "rack_id": None,
                "rebalance_timeout_ms": 30_000 if names else -1,
                "subscribed_topic_names": names, "server_assignor": None,
                "topic_partitions": [] if names else None})
            assert r["error_code"] == E.NONE, r
            r = conns["share"].call(76, 1, {
                "group_id": groups["share"], "member_id": member, "member_epoch": epoch,
                "rack_id": None, "subscribed_topic_names": names})
            assert r["error_code"] == E.NONE, r
        lister = conns["left"]

        def listed() -> dict[str, str]:
            r = lister.call(16, 5, {"states_filter": [], "types_filter": []})
            assert r["error_code"] == E.NONE, r
            return {k: g["group_state"] for k, name in groups.items()
                    for g in r["groups"] if g["group_id"] == name}

        wait_for(lambda: not {"left", "consumer"} & listed().keys(),
                 "the empty groups without offsets to be deleted", 15, interval=0.5)
        time.sleep(2)  # two more checks: the others stay
        assert listed() == {"committed": "Empty", "simple": "Empty", "share": "Empty"}
        r = conns["left"].call(15, 5, {"groups": [groups["left"]],
                                       "include_authorized_operations": False})
        assert (r["groups"][0]["error_code"], r["groups"][0]["group_state"]) == (
            E.NONE, "Dead"), r
        r = conns["consumer"].call(69, 0, {"group_ids": [groups["consumer"]],
                                           "include_authorized_operations": False})
        assert r["groups"][0]["error_code"] == E.GROUP_ID_NOT_FOUND, r
    finally:
        for conn in conns.values():
            conn.close()


def expiry_scenario(c: Cluster | KafkaTarget) -> None:
    """A classic consumer member subscribed to one topic commits it and another, stays
    Stable past the retention (the other's offset goes, its own stays), leaves, and its
    offset, committed over a minute before, is still there once the group is Empty."""
    run = uuid.uuid4().hex[:8]
    subscribed, other, group = f"sub-{run}", f"other-{run}", f"g-{run}"
    for t in (subscribed, other):
        c.create_topic(t, 1, 1)
    conn = Conn(c, sorted(c.broker_ids).index(find_coordinator(c, group)))
    try:
        member, generation = _classic_join_sync(conn, group, subscribed)
        _commit(conn, group, [subscribed, other], member, generation)
        committed_at = time.monotonic()
        # Stable, heartbeating, past the retention: the other topic's offset goes
        while time.monotonic() < committed_at + RETENTION_S + 3:
            hb = conn.call(12, 3, {"group_id": group, "generation_id": generation,
                                   "member_id": member, "group_instance_id": None})
            assert hb["error_code"] == E.NONE, hb
            time.sleep(2)
        wait_for(lambda: _committed(conn, group, other) == -1,
                 "the unsubscribed topic's offset expired", 10, interval=0.5)
        assert _committed(conn, group, subscribed) == 5  # subscribed: kept while Stable
        r = conn.call(13, 3, {"group_id": group, "members": [
            {"member_id": member, "group_instance_id": None}]})
        assert r["error_code"] == E.NONE, r
        empty_at = time.monotonic()
        # Empty now, its offset committed over a minute ago: kept a minute from now
        time.sleep(4)
        assert _committed(conn, group, subscribed) == 5
        assert time.monotonic() - empty_at < RETENTION_S - 10  # the check above was early
    finally:
        conn.close()
