"""The classic group coordinator as a pure state machine under a manual clock.

Joins (with MEMBER_ID_REQUIRED), leader choice, SyncGroup, heartbeats, leaves,
crashes (session expiry), the rebalance timeout, static members, Kafka's error codes
for bad input, committed offsets and coordinator placement.
"""

from __future__ import annotations

import struct

import pytest
from cluster_sim import new_cluster

from emulator.cluster import controller
from emulator.cluster.clock import ManualClock
from emulator.cluster.state import ClusterState
from emulator.coordinators.classic.group import Future
from emulator.coordinators.groups.base import OFFSETS_TOPIC
from emulator.coordinators.groups.coordinator import GroupCoordinator
from emulator.coordinators.runtime.placement import java_hash, partition_for
from wire.errors import ErrorCode as E
from wire.errors import KafkaError

SESSION = 10_000
REBALANCE = 30_000
G = "g"


def cluster(n: int = 3, **config: str) -> ClusterState:
    cfg = {"offsets.topic.num.partitions": "5", "offsets.topic.replication.factor": "3"}
    cfg.update(config)
    return new_cluster(n, **cfg).state


def subscription(*topics: str) -> bytes:
    """ConsumerProtocolSubscription v0: the consumer protocol's member metadata."""
    out = struct.pack(">hi", 0, len(topics))
    for t in topics:
        out += struct.pack(">h", len(t)) + t.encode()
    return out + struct.pack(">i", -1)


PROTOCOLS = [("range", subscription("t")), ("roundrobin", subscription("t"))]


class Harness:
    def __init__(self, **config: str) -> None:
        self.state = cluster(**config)
        self.clock: ManualClock = self.state.clock
        self.gc = GroupCoordinator(self.state)
        self.state.create_topic("t", 6, 1)

    def advance(self, ms: int) -> None:
        self.clock.advance(ms)
        self.gc.tick()

    def join(self, member_id: str = "", instance: str | None = None, protocols=None,
             protocol_type: str = "consumer", session: int = SESSION,
             rebalance: int = REBALANCE, version: int = 7) -> Future:
        fut = self.gc.join_group(G, member_id, instance, protocol_type, protocols or PROTOCOLS,
                                 session, rebalance, client_id="c", client_host="/127.0.0.1",
                                 version=version)
        self.gc.tick()  # what the handler's check does
        return fut

    def join_new(self, **kw) -> tuple[str, Future]:
        """A dynamic member's two-step join (MEMBER_ID_REQUIRED first)."""
        first = self.join(**kw)
        assert first.result["error_code"] == E.MEMBER_ID_REQUIRED
        mid = first.result["member_id"]
        return mid, self.join(mid, **kw)

    def group(self):
        return self.gc.groups[G]


def test_first_member_gets_member_id_then_leads_generation_one() -> None:
    h = Harness()
    mid, fut = h.join_new()
    assert mid.startswith("c-")
    r = fut.result
    assert r["error_code"] == E.NONE
    assert (r["generation_id"], r["leader"], r["member_id"]) == (1, mid, mid)
    assert r["protocol_name"] == "range"
    assert [m["member_id"] for m in r["members"]] == [mid]
    assert h.group().state == "CompletingRebalance"
    sync = h.gc.sync_group(G, mid, 1, assignments=[(mid, b"A")])
    assert sync.result == {"error_code": E.NONE, "protocol_type": "consumer",
                           "protocol_name": "range", "assignment": b"A"}
    assert h.group().state == "Stable"
    assert h.gc.heartbeat(G, mid, 1) == E.NONE


def stable_pair(h: Harness) -> tuple[str, str]:
    """Two members in a Stable generation 2 (a leads)."""
    a, fa = h.join_new()
    h.gc.sync_group(G, a, 1, assignments=[(a, b"a1")])
    b, fb = h.join_new()
    assert fb.result is None  # parked until the known member rejoins
    assert h.group().state == "PreparingRebalance"
    assert h.gc.heartbeat(G, a, 1) == E.REBALANCE_IN_PROGRESS
    fa2 = h.join(a)
    assert fa2.result["generation_id"] == 2 and fb.result["generation_id"] == 2
    assert fa2.result["leader"] == a and fb.result["leader"] == a
    assert len(fa2.result["members"]) == 2 and fb.result["members"] == []
    fsb = h.gc.sync_group(G, b, 2)
    assert fsb.result is None  # the follower waits for the leader's assignment
    fsa = h.gc.sync_group(G, a, 2, assignments=[(a, b"A"), (b, b"B")])
    assert fsa.result["assignment"] == b"A" and fsb.result["assignment"] == b"B"
    assert h.group().state == "Stable"
    return a, b


def test_second_member_triggers_rebalance_and_gets_the_leaders_assignment() -> None:
    stable_pair(Harness())



def test_expire_member_removes_it_as_a_session_timeout_would() -> None:
    """--fidelity adversarial's kick (emulator/faults/adversary.py): the member is gone
    (UNKNOWN_MEMBER_ID), the others rebalance; nothing happens for an unknown member,
    an unknown group, or a group of another type."""
    h = Harness()
    a, b = stable_pair(h)
    assert not h.gc.classic.expire_member(G, "nobody")
    assert not h.gc.classic.expire_member("no-such-group", a)
    assert h.group().state == "Stable"
    assert h.gc.classic.expire_member(G, b)
    assert b not in h.group().members
    assert h.group().state == "PreparingRebalance"
    assert h.gc.heartbeat(G, b, 2) == E.UNKNOWN_MEMBER_ID
    assert h.gc.heartbeat(G, a, 2) == E.REBALANCE_IN_PROGRESS
    assert not h.gc.migration.expire_member(G, a)  # a classic group: not the consumer kind

def test_leave_group_rebalances_the_rest() -> None:
    h = Harness()
    a, b = stable_pair(h)
    assert h.gc.leave_group(G, [(b, None)]) == (E.NONE, [E.NONE])
    assert h.group().state == "PreparingRebalance"
    assert h.gc.heartbeat(G, a, 2) == E.REBALANCE_IN_PROGRESS
    fa = h.join(a)
    assert fa.result["generation_id"] == 3 and [m["member_id"] for m in
                                                fa.result["members"]] == [a]
    assert h.gc.heartbeat(G, b, 2) == E.UNKNOWN_MEMBER_ID


def test_leader_leaving_hands_leadership_to_a_rejoining_member() -> None:
    h = Harness()
    a, b = stable_pair(h)
    h.gc.leave_group(G, [(a, None)])
    fb = h.join(b)
    assert fb.result["leader"] == b and fb.result["generation_id"] == 3


def test_crashed_member_expires_after_session_timeout() -> None:
    h = Harness()
    a, b = stable_pair(h)
    for _ in range(3):
        h.advance(SESSION // 2)
        assert h.gc.heartbeat(G, a, 2) in (E.NONE, E.REBALANCE_IN_PROGRESS)
    # b never heartbeat: it is gone and a rebalance started
    assert b not in h.group().members
    assert h.group().state == "PreparingRebalance"
    fa = h.join(a)
    assert fa.result["generation_id"] == 3


def test_member_not_rejoining_is_dropped_at_rebalance_timeout() -> None:
    h = Harness()
    a, b = stable_pair(h)
    fa = h.join(a, protocols=[("range", subscription("t", "u"))])  # new metadata: rebalance
    assert fa.result is None
    h.advance(SESSION - 1)
    assert h.gc.heartbeat(G, b, 2) == E.REBALANCE_IN_PROGRESS  # b is alive but not rejoining
    h.advance(SESSION - 1)
    h.gc.heartbeat(G, b, 2)
    h.advance(SESSION - 1)
    h.gc.heartbeat(G, b, 2)
    assert fa.result is None
    h.advance(REBALANCE)  # past the rebalance timeout
    assert fa.result["generation_id"] == 3
    assert [m["member_id"] for m in fa.result["members"]] == [a]
    assert h.gc.heartbeat(G, b, 2) == E.UNKNOWN_MEMBER_ID


def test_pending_member_id_expires_if_never_used() -> None:
    h = Harness()
    first = h.join()
    mid = first.result["member_id"]
    assert mid in h.group().pending_members
    h.advance(SESSION + 1)
    assert mid not in h.group().pending_members
    late = h.join(mid)
    assert late.result["error_code"] == E.UNKNOWN_MEMBER_ID


def test_missing_sync_removes_members_at_rebalance_timeout() -> None:
    h = Harness()
    a, b = stable_pair(h)
    h.gc.leave_group(G, [(b, None)])
    fa = h.join(a)
    assert fa.result["generation_id"] == 3
    h.advance(REBALANCE + 1)  # a never sends SyncGroup
    assert h.group().state == "Empty" and not h.group().members


def test_static_member_restart_keeps_assignment_without_rebalance() -> None:
    h = Harness()
    fa = h.join(instance="i-a")
    a = fa.result["member_id"]
    assert fa.result["error_code"] == E.NONE and a.startswith("i-a-")
    h.gc.sync_group(G, a, 1, "i-a", assignments=[(a, b"A")])
    # the process restarts: it joins again with its group.instance.id and no member id
    fa2 = h.join(instance="i-a", version=9)
    a2 = fa2.result["member_id"]
    assert a2 != a and fa2.result["generation_id"] == 1
    assert fa2.result["skip_assignment"] is True  # it is the leader: no new assignment
    assert h.group().state == "Stable"
    assert h.gc.sync_group(G, a2, 1, "i-a").result["assignment"] == b"A"
    # the old incarnation is fenced
    assert h.gc.heartbeat(G, a, 1, "i-a") == E.FENCED_INSTANCE_ID
    assert h.gc.heartbeat(G, a2, 1, "i-a") == E.NONE


def test_static_member_survives_rebalance_timeout_but_not_session_timeout() -> None:
    h = Harness()
    fa = h.join(instance="i-a", session=60_000)
    a = fa.result["member_id"]
    h.gc.sync_group(G, a, 1, "i-a", assignments=[(a, b"A")])
    b, fb = h.join_new()
    h.advance(REBALANCE + 1)  # the static member a did not rejoin: it stays
    assert fb.result["generation_id"] == 2 and a in h.group().members
    h.gc.sync_group(G, b, 2, assignments=[])
    h.advance(60_000)
    h.gc.heartbeat(G, b, 2)
    assert a not in h.group().members


@pytest.mark.parametrize(("kwargs", "code"), [
    ({"protocol_type": "connect"}, E.INCONSISTENT_GROUP_PROTOCOL),
    ({"protocols": [("sticky", b"")]}, E.INCONSISTENT_GROUP_PROTOCOL),
    ({"session": 10}, E.INVALID_SESSION_TIMEOUT),
    ({"member_id": "nobody"}, E.UNKNOWN_MEMBER_ID),
])
def test_bad_joins_get_kafkas_codes_and_leave_the_group_intact(kwargs: dict, code: int) -> None:
    h = Harness()
    a, b = stable_pair(h)
    r = h.join(**kwargs).result
    assert r["error_code"] == code
    assert h.group().state == "Stable" and set(h.group().members) == {a, b}
    assert h.gc.heartbeat(G, a, 2) == E.NONE


def test_generation_and_member_errors() -> None:
    h = Harness()
    a, b = stable_pair(h)
    assert h.gc.heartbeat(G, a, 1) == E.ILLEGAL_GENERATION
    assert h.gc.heartbeat(G, "ghost", 2) == E.UNKNOWN_MEMBER_ID
    assert h.gc.heartbeat("other", a, 2) == E.UNKNOWN_MEMBER_ID
    assert h.gc.heartbeat("", a, 2) == E.INVALID_GROUP_ID
    assert h.gc.sync_group(G, a, 7).result["error_code"] == E.ILLEGAL_GENERATION
    assert h.gc.sync_group(G, a, 2, protocol_name="sticky").result["error_code"] == \
        E.INCONSISTENT_GROUP_PROTOCOL
    assert h.gc.leave_group(G, [("ghost", None), (b, "wrong-instance")]) == \
        (E.NONE, [E.UNKNOWN_MEMBER_ID, E.UNKNOWN_MEMBER_ID])
    assert h.group().state == "Stable"


def test_group_max_size() -> None:
    h = Harness(**{"group.max.size": "1"})
    stable = h.join_new()[0]
    h.gc.sync_group(G, stable, 1, assignments=[])
    r = h.join(version=3).result  # no MEMBER_ID_REQUIRED before v4
    assert r["error_code"] == E.GROUP_MAX_SIZE_REACHED


def test_old_join_version_joins_without_member_id_round_trip() -> None:
    h = Harness()
    r = h.join(version=3).result
    assert r["error_code"] == E.NONE and r["generation_id"] == 1


def test_rejoin_during_completing_rebalance_repeats_the_answer() -> None:
    h = Harness()
    a, fa = h.join_new()
    again = h.join(a)
    assert again.result["generation_id"] == 1 and again.result["members"]


# ---- offsets ----------------------------------------------------------------------------
def commit(h: Harness, member: str, gen: int, offset: int, *, topic: str = "t",
           part: int = 0, meta: str | None = "m", version: int = 8) -> int:
    [(_, [(_, err)])] = h.gc.commit_offsets(G, member, gen, [(topic, [(part, offset, 3, meta)])],
                                            version=version)
    return err


def fetched(h: Harness, group: str = G, part: int = 0, **kw) -> dict:
    [(_, [entry])] = h.gc.fetch_offsets(group, [("t", [part])], **kw)
    return entry


def test_simple_group_commit_and_fetch() -> None:
    h = Harness()
    assert commit(h, "", -1, 42) == E.NONE
    e = fetched(h)
    assert (e["committed_offset"], e["committed_leader_epoch"], e["metadata"]) == (42, 3, "m")
    assert fetched(h, part=1)["committed_offset"] == -1
    assert fetched(h, group="nobody")["committed_offset"] == -1
    assert h.gc.fetch_offsets(G, None) == [("t", [e])]


def test_commit_validation() -> None:
    h = Harness()
    a, b = stable_pair(h)
    assert commit(h, a, 2, 5) == E.NONE
    assert commit(h, a, 1, 5) == E.ILLEGAL_GENERATION
    assert commit(h, "ghost", 2, 5) == E.UNKNOWN_MEMBER_ID
    assert commit(h, "", -1, 5) == E.UNKNOWN_MEMBER_ID  # the group is not empty
    assert commit(h, a, 2, 5, topic="nope") == E.UNKNOWN_TOPIC_OR_PARTITION
    assert commit(h, a, 2, 5, part=99) == E.UNKNOWN_TOPIC_OR_PARTITION
    assert commit(h, a, 2, 5, meta="x" * 5000) == E.OFFSET_METADATA_TOO_LARGE
    h.gc.leave_group(G, [(b, None)])
    fa = h.join(a)
    assert fa.result["generation_id"] == 3
    assert commit(h, a, 3, 6) == E.REBALANCE_IN_PROGRESS  # CompletingRebalance
    assert fetched(h)["committed_offset"] == 5
    # unknown group with a generation: ILLEGAL_GENERATION before v9, GROUP_ID_NOT_FOUND after
    [(_, [(_, err)])] = h.gc.commit_offsets("x", "m", 1, [("t", [(0, 1, -1, None)])], version=8)
    assert err == E.ILLEGAL_GENERATION
    [(_, [(_, err)])] = h.gc.commit_offsets("x", "m", 1, [("t", [(0, 1, -1, None)])], version=9)
    assert err == E.GROUP_ID_NOT_FOUND
    # generation 0 is a generation too: only a negative one makes a simple group
    [(_, [(_, err)])] = h.gc.commit_offsets("x", "", 0, [("t", [(0, 1, -1, None)])], version=9)
    assert err == E.GROUP_ID_NOT_FOUND and "x" not in h.gc.groups


def test_classic_commit_checks_what_it_names_as_kafka_does() -> None:
    """Kafka 4.4's ClassicGroup.validateOffsetCommit case by case: a member id, a
    generation >= 0 or an instance id has the member and the generation checked; a
    commit naming none of them is an admin's or a self-assigning consumer's (only into
    an empty group), or a transactional producer's outside group management (always)."""
    h = Harness()
    a, b = stable_pair(h)

    def txn(member: str, gen: int) -> int:
        [(_, [(_, err)])] = h.gc.txn_offset_commit(G, 7, member, gen,
                                                   [("t", [(0, 1, -1, None)])])
        return err

    assert commit(h, a, -1, 5) == E.ILLEGAL_GENERATION  # a member named: generation checked
    assert txn("", -1) == E.NONE
    assert txn("", 2) == E.UNKNOWN_MEMBER_ID  # a generation names a member
    h.gc.leave_group(G, [(a, None), (b, None)])
    assert h.group().state == "Empty"
    assert commit(h, "", 0, 5) == E.UNKNOWN_MEMBER_ID  # generation 0 is a generation
    assert commit(h, "", -1, 5) == E.NONE


def test_commit_during_preparing_rebalance_is_allowed_for_cooperative_clients() -> None:
    h = Harness()
    a, b = stable_pair(h)
    h.join_new()  # a third member: PreparingRebalance
    assert h.group().state == "PreparingRebalance"
    assert commit(h, a, 2, 9) == E.NONE


def test_offsets_survive_the_coordinator_moving() -> None:
    h = Harness()
    old = h.gc.coordinator_for(G)
    h.gc.check_coordinator(old, G)
    a, b = stable_pair(h)
    assert commit(h, a, 2, 77) == E.NONE
    fb = h.gc.sync_group(G, b, 2)  # nothing parked: Stable answers at once
    assert fb.result["error_code"] == E.NONE
    controller.broker_stopped(h.state, old)
    new = h.gc.coordinator_for(G)
    assert new != old
    with pytest.raises(KafkaError) as e:
        h.gc.check_coordinator(old, G)
    assert e.value.code == E.NOT_COORDINATOR
    h.gc.check_coordinator(new, G)
    h.gc.tick()
    assert fetched(h)["committed_offset"] == 77
    assert h.gc.heartbeat(G, a, 2) == E.NONE  # the group is intact on the new coordinator


def test_coordinator_move_answers_parked_joins_not_coordinator() -> None:
    h = Harness()
    a, b = stable_pair(h)
    fa = h.join(a, protocols=[("range", subscription("u"))])
    assert fa.result is None
    controller.broker_stopped(h.state, h.gc.coordinator_for(G))
    h.gc.tick()
    assert fa.result["error_code"] == E.NOT_COORDINATOR


def test_java_hash_and_placement() -> None:
    assert java_hash("hello") == 99162322
    assert java_hash("") == 0
    assert java_hash("polygenelubricants") == -(1 << 31)  # abs() would overflow: Kafka uses 0
    assert partition_for("polygenelubricants", 50) == 0
    assert partition_for("hello", 50) == 99162322 % 50
    assert java_hash("\u00e9t\u00e9") == 0xE9 * 961 + 0x74 * 31 + 0xE9


def test_offsets_topic_is_created_lazily_with_configured_partitions() -> None:
    h = Harness()
    assert OFFSETS_TOPIC not in h.state.topics
    with pytest.raises(KafkaError) as e:
        h.gc.check_coordinator(1, G)
    assert e.value.code == E.NOT_COORDINATOR
    h.gc.coordinator_for(G)
    t = h.state.topics[OFFSETS_TOPIC]
    assert len(t.partitions) == 5 and len(t.partitions[0].replicas) == 3 and t.is_internal


def test_coordinator_not_available_without_enough_brokers() -> None:
    """__consumer_offsets is placed as any topic (Kafka's StripedReplicaPlacer): a fenced
    broker still takes a replica, so one broker down leaves the coordinator available;
    with every broker fenced the topic cannot be created: COORDINATOR_NOT_AVAILABLE."""
    h = Harness()
    brokers = sorted(h.state.brokers)
    controller.broker_stopped(h.state, brokers[0])
    h.gc.coordinator_for(G)
    assert len(h.state.topics["__consumer_offsets"].partitions[0].replicas) == min(3, len(brokers))
    fresh = Harness()
    for b in brokers:
        controller.broker_stopped(fresh.state, b)
    with pytest.raises(KafkaError) as e:
        fresh.gc.coordinator_for(G)
    assert e.value.code == E.COORDINATOR_NOT_AVAILABLE
    assert "All brokers are currently fenced." in e.value.message


# ---- administration ---------------------------------------------------------------------
def test_describe_list_and_delete_groups() -> None:
    h = Harness()
    a, b = stable_pair(h)
    d = h.gc.describe_group(G)
    assert (d["group_state"], d["protocol_type"], d["protocol_data"]) == \
        ("Stable", "consumer", "range")
    assert {m["member_id"]: m["member_assignment"] for m in d["members"]} == \
        {a: b"A", b: b"B"}
    assert d["members"][0]["member_metadata"] == subscription("t")
    assert h.gc.describe_group("nope")["error_code"] == E.GROUP_ID_NOT_FOUND
    assert h.gc.describe_group("nope", version=5)["group_state"] == "Dead"
    commit(h, "", -1, 1)  # nothing: a is a member, so no simple commit; make a simple group
    h.gc.commit_offsets("simple", "", -1, [("t", [(0, 1, -1, None)])])
    listed = {g["group_id"]: g for g in h.gc.list_groups()}
    assert listed[G]["group_state"] == "Stable" and listed["simple"]["group_state"] == "Empty"
    assert listed["simple"]["protocol_type"] == ""
    assert [g["group_id"] for g in h.gc.list_groups(states=["empty"])] == ["simple"]
    assert [g["group_id"] for g in h.gc.list_groups(types=["consumer"])] == []
    assert len(h.gc.list_groups(types=["Classic"])) == 2
    assert h.gc.delete_group(G) == E.NON_EMPTY_GROUP
    assert h.gc.delete_group("nope") == E.GROUP_ID_NOT_FOUND
    assert h.gc.delete_group("simple") == E.NONE
    assert h.gc.fetch_offsets("simple", [("t", [0])])[0][1][0]["committed_offset"] == -1


def test_offset_delete() -> None:
    h = Harness()
    a, b = stable_pair(h)
    commit(h, a, 2, 3)
    [(_, res)] = h.gc.delete_offsets(G, [("t", [0])])
    assert res == [(0, E.GROUP_SUBSCRIBED_TO_TOPIC)]
    h.state.create_topic("other", 1, 1)
    [(_, [(_, err)])] = h.gc.commit_offsets(G, a, 2, [("other", [(0, 1, -1, None)])])
    assert err == E.NONE
    assert h.gc.delete_offsets(G, [("other", [0])]) == [("other", [(0, E.NONE)])]
    assert h.gc.fetch_offsets(G, [("other", [0])])[0][1][0]["committed_offset"] == -1
    with pytest.raises(KafkaError) as e:
        h.gc.delete_offsets("nope", [("t", [0])])
    assert e.value.code == E.GROUP_ID_NOT_FOUND


def test_offsets_of_a_deleted_topic_are_dropped() -> None:
    h = Harness()
    assert commit(h, "", -1, 42) == E.NONE
    h.state.delete_topic("t")
    h.state.create_topic("t", 6, 1)
    assert fetched(h)["committed_offset"] == -1
