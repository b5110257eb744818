"""Bad group requests over TCP get Kafka's error codes and never break the group.

Two real librdkafka members form a Stable group; a raw connection then sends what a
buggy or stale client would: a protocol type mismatch, old generations, unknown
members, commits to unknown partitions, oversized commit metadata, requests to the
wrong broker. Each gets its error code, and the real members keep their generation.
"""

from __future__ import annotations

import pytest

from client_tests._groups_fixtures import (
    PARTITIONS,
    ConfluentMember,
    balanced,
    group_cluster,  # noqa: F401 - fixture
)
from client_tests.rawkafka import Conn
from emulator import Cluster
from emulator.testing import wait_for
from wire.errors import ErrorCode as E

# Not run with --target kafka: raw frames addressed through the emulator's state.
pytestmark = pytest.mark.emulator_only

GROUP = "bad-input-grp"


def test_bad_requests_leave_the_group_intact(group_cluster: Cluster,  # noqa: F811
                                             topic_name: str) -> None:
    c = group_cluster
    c.create_topic(topic_name, PARTITIONS, 3)
    members = [ConfluentMember(f"ok-{i}", c.bootstrap_servers, topic_name, GROUP)
               for i in range(2)]
    for m in members:
        m.start()
    try:
        check_bad_requests(c, members)
    finally:
        for m in members:
            m.stop()


def check_bad_requests(c: Cluster, members: list[ConfluentMember]) -> None:
    wait_for(balanced(members, [3, 3]), "a stable group of two")
    topic_name = members[0].topic
    gc = c.server.services["groups"]
    group = gc.groups[GROUP]
    generation = group.generation_id
    member_id = next(iter(group.members))
    coord = c.call(lambda: gc.coordinator_for(GROUP))
    index = c.broker_ids.index(coord)
    conn = Conn(c, index)
    other = Conn(c, (index + 1) % len(c.broker_ids))
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
        r = conn.call(8, 8, commit)
        codes = [[p["error_code"] for p in t["partitions"]] for t in r["topics"]]
        assert codes == [[E.UNKNOWN_TOPIC_OR_PARTITION],
                         [E.OFFSET_METADATA_TOO_LARGE, E.UNKNOWN_TOPIC_OR_PARTITION]]
        r = conn.call(8, 8, dict(commit, generation_id_or_member_epoch=generation - 1))
        assert {p["error_code"] for t in r["topics"] for p in t["partitions"]} == \
            {E.ILLEGAL_GENERATION}
        leave = {"group_id": GROUP, "members": [{"member_id": "ghost"}]}
        r = conn.call(13, 3, leave)
        assert [m["error_code"] for m in r["members"]] == [E.UNKNOWN_MEMBER_ID]
        assert conn.call(42, 2, {"groups_names": [GROUP]})["results"][0]["error_code"] == \
            E.NON_EMPTY_GROUP
        r = conn.call(47, 0, {"group_id": GROUP, "topics": [
            {"name": topic_name, "partitions": [{"partition_index": 0}]}]})
        assert r["error_code"] == E.NONE
        assert r["topics"][0]["partitions"][0]["error_code"] == E.GROUP_SUBSCRIBED_TO_TOPIC
    finally:
        conn.close()
        other.close()
    assert group.generation_id == generation and group.state == "Stable"
    assert balanced(members, [3, 3])()


def test_find_coordinator_batched_keys(group_cluster: Cluster) -> None:  # noqa: F811
    c = group_cluster
    conn = Conn(c)
    try:
        keys = ["g-1", "g-2", "g-3"]
        r = conn.call(10, 4, {"key_type": 0, "coordinator_keys": keys})
        gc = c.server.services["groups"]
        assert [x["key"] for x in r["coordinators"]] == keys
        for x in r["coordinators"]:
            assert x["error_code"] == E.NONE
            assert x["node_id"] == c.call(lambda k=x["key"]: gc.coordinator_for(k))
            assert x["port"] == c.state.brokers[x["node_id"]].port
        r = conn.call(10, 4, {"key_type": 1, "coordinator_keys": ["tx", ""]})
        assert [x["error_code"] for x in r["coordinators"]] == [E.NONE, E.INVALID_REQUEST]
        r = conn.call(10, 4, {"key_type": 2, "coordinator_keys": ["share"]})
        assert r["coordinators"][0]["error_code"] == E.INVALID_REQUEST
        r = conn.call(10, 1, {"key": "g-1", "key_type": 0})
        assert r["error_code"] == E.NONE and r["node_id"] == gc.coordinator_for("g-1")
    finally:
        conn.close()
