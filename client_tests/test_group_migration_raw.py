"""Online group migration on the wire, the same requests against both targets
(``pytest client_tests/test_group_migration_raw.py --target kafka`` runs them on a real
Kafka 4.4): a classic member's group is upgraded by a ConsumerGroupHeartbeat, the
classic member is told to rejoin (Heartbeat REBALANCE_IN_PROGRESS), its JoinGroup is
answered at once with generation = its member epoch, no leader and no member list, its
SyncGroup carries the assignment the coordinator computed (consumer protocol v0 bytes),
offsets commit with the new generation, and when the consumer-protocol member leaves
the group is classic again and rebalances.
"""

from __future__ import annotations

import uuid

from rawkafka import Conn, find_coordinator

from emulator import Cluster
from wire.consumer_protocol import decode_assignment, encode_assignment, encode_subscription
from wire.errors import ErrorCode as E

PARTITIONS = 6


def coordinator_conn(cluster: Cluster, group: str) -> Conn:
    """A connection to the group's coordinator, once it has loaded the group's partition
    (rawkafka.find_coordinator)."""
    return Conn(cluster, sorted(cluster.broker_ids).index(find_coordinator(cluster, group)))


def test_classic_member_through_upgrade_and_downgrade_on_the_wire(cluster: Cluster,
                                                                   topic_name: str) -> None:
    group = f"migr-{topic_name}"
    cluster.create_topic(topic_name, PARTITIONS, 3)
    meta = encode_subscription([topic_name], 0)
    conn = coordinator_conn(cluster, group)

    def join(member_id: str) -> dict:
        return conn.call(11, 9, {
            "group_id": group, "session_timeout_ms": 10000, "rebalance_timeout_ms": 10000,
            "member_id": member_id, "group_instance_id": None, "protocol_type": "consumer",
            "protocols": [{"name": "range", "metadata": meta}], "reason": None})

    def sync(member_id: str, generation: int, assignments=()) -> dict:
        return conn.call(14, 5, {
            "group_id": group, "generation_id": generation, "member_id": member_id,
            "group_instance_id": None, "protocol_type": "consumer", "protocol_name": "range",
            "assignments": [{"member_id": m, "assignment": a} for m, a in assignments]})

    def heartbeat(member_id: str, generation: int) -> int:
        return conn.call(12, 4, {"group_id": group, "generation_id": generation,
                                 "member_id": member_id, "group_instance_id": None}
                         )["error_code"]

    def consumer_hb(epoch: int, owned: list[int] | None = None) -> dict:
        joining = epoch == 0
        tps = [] if not owned else [{"topic_id": tid, "partitions": owned}]
        return conn.call(68, 1, {
            "group_id": group, "member_id": kip848, "member_epoch": epoch,
            "instance_id": None, "rack_id": None,
            "rebalance_timeout_ms": 10000 if joining else -1,
            "subscribed_topic_names": [topic_name] if joining else None,
            "subscribed_topic_regex": None, "server_assignor": None,
            "topic_partitions": tps if epoch >= 0 else None})

    def group_type() -> str:
        r = conn.call(16, 5, {"states_filter": [], "types_filter": []})
        return next(g["group_type"] for g in r["groups"] if g["group_id"] == group)

    try:
        first = join("")
        assert first["error_code"] == E.MEMBER_ID_REQUIRED, first
        classic = first["member_id"]
        joined = join(classic)  # parks for group.initial.rebalance.delay.ms on Kafka
        assert joined["error_code"] == E.NONE and joined["leader"] == classic
        generation = joined["generation_id"]
        everything = encode_assignment([(topic_name, list(range(PARTITIONS)))], 0)
        assert sync(classic, generation, [(classic, everything)])["error_code"] == E.NONE
        assert group_type() == "classic"

        meta_r = conn.call(3, 12, {"topics": [{"topic_id": bytes(16), "name": topic_name}],
                                   "allow_auto_topic_creation": False,
                                   "include_topic_authorized_operations": False})
        tid = meta_r["topics"][0]["topic_id"]
        kip848 = uuid.uuid4().hex[:22]
        r = consumer_hb(0)
        assert r["error_code"] == E.NONE, r
        assert r["member_epoch"] == generation + 1
        assert r["assignment"] is not None and r["assignment"]["topic_partitions"] == []
        assert group_type() == "consumer"
        epoch = r["member_epoch"]

        assert heartbeat(classic, generation) == E.REBALANCE_IN_PROGRESS
        rejoined = join(classic)
        assert rejoined["error_code"] == E.NONE, rejoined
        assert (rejoined["generation_id"], rejoined["protocol_type"], rejoined["protocol_name"],
                rejoined["leader"], rejoined["members"]) == (epoch, "consumer", "range", "", [])
        synced = sync(classic, epoch)
        assert synced["error_code"] == E.NONE and synced["assignment"][:2] == b"\0\0"
        mine = {p for _, ps in decode_assignment(synced["assignment"]) for p in ps}
        assert len(mine) == PARTITIONS // 2
        assert heartbeat(classic, epoch) == E.NONE

        r = consumer_hb(epoch)
        assert r["error_code"] == E.NONE
        theirs = {p for tp in r["assignment"]["topic_partitions"] for p in tp["partitions"]}
        assert theirs == set(range(PARTITIONS)) - mine
        described = conn.call(69, 1, {"group_ids": [group],
                                      "include_authorized_operations": False})["groups"][0]
        assert described["group_state"] == "Stable"
        assert sorted(m["member_type"] for m in described["members"]) == [0, 1]

        commit = {"group_id": group, "generation_id_or_member_epoch": epoch,
                  "member_id": classic, "group_instance_id": None, "retention_time_ms": -1,
                  "topics": [{"name": topic_name, "partitions": [
                      {"partition_index": min(mine), "committed_offset": 0,
                       "committed_leader_epoch": -1, "committed_metadata": None}]}]}
        code = conn.call(8, 7, commit)["topics"][0]["partitions"][0]["error_code"]
        assert code == E.NONE
        # Kafka 4.4's assignment epochs: the older generation still commits a partition
        # held since then; a newer one is refused
        older = dict(commit, generation_id_or_member_epoch=epoch - 1)
        code = conn.call(8, 7, older)["topics"][0]["partitions"][0]["error_code"]
        assert code == E.NONE
        newer = dict(commit, generation_id_or_member_epoch=epoch + 1)
        code = conn.call(8, 7, newer)["topics"][0]["partitions"][0]["error_code"]
        assert code == E.ILLEGAL_GENERATION

        left = consumer_hb(-1)
        assert left["error_code"] == E.NONE and left["member_epoch"] == -1
        assert group_type() == "classic"
        assert heartbeat(classic, epoch) == E.REBALANCE_IN_PROGRESS
        again = join(classic)
        assert again["error_code"] == E.NONE and again["leader"] == classic
        assert again["generation_id"] == epoch + 1
    finally:
        conn.close()

