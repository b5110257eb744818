"""KIP-848 consumer groups (ConsumerGroupHeartbeat) as a pure state machine.

Server-side assignment (uniform and range), the revoke-before-reassign handshake,
leaves, session and rebalance timeouts, static members, and the request errors.
"""

from __future__ import annotations

import pytest
from cluster_sim import new_cluster

from emulator.coordinators.consumer.group import _range, _uniform
from emulator.coordinators.groups.coordinator import GroupCoordinator
from wire.errors import ErrorCode as E

G = "cg"
SESSION = 45_000


class Harness:
    def __init__(self, partitions: int = 6) -> None:
        self.state = new_cluster(3, **{"offsets.topic.num.partitions": "3"}).state
        self.gc = GroupCoordinator(self.state)
        self.topic = self.state.create_topic("t", partitions, 1)
        self.tid = self.topic.id
        self.owned: dict[str, set[int]] = {}
        self.epochs: dict[str, int] = {}

    def hb(self, member: str, epoch: int | None = None, *, topics=("t",), owned=None,
           assignor: str | None = None, instance: str | None = None, full: bool = False,
           regex: str | None = None, rebalance: int = 60_000) -> dict:
        """One heartbeat from ``member``; applies the returned assignment like a client."""
        if epoch is None:
            epoch = self.epochs.get(member, 0)
        joining = epoch == 0
        if owned is None:
            owned = self.owned.get(member, set())
        tps = [{"topic_id": self.tid, "partitions": sorted(owned)}] if owned else []
        r = self.gc.consumer_group_heartbeat(
            G, member, epoch, instance_id=instance,
            rebalance_timeout_ms=rebalance if joining or full else -1,
            subscribed_topic_names=list(topics) if joining or full else None,
            subscribed_topic_regex=regex, server_assignor=assignor,
            topic_partitions=[] if joining else tps, client_id="c")
        if r["error_code"] == E.NONE:
            self.epochs[member] = r["member_epoch"]
            if r["assignment"] is not None:
                got = set()
                for tp in r["assignment"]["topic_partitions"]:
                    assert tp["topic_id"] == self.tid
                    got |= set(tp["partitions"])
                self.owned[member] = got
        return r

    def settle(self, members: list[str], rounds: int = 6) -> None:
        for _ in range(rounds):
            for m in members:
                self.hb(m)

    def group(self):
        return self.gc.groups[G]


def test_single_member_gets_every_partition() -> None:
    h = Harness()
    r = h.hb("m1")
    assert r["error_code"] == E.NONE and r["member_epoch"] == 1
    assert h.owned["m1"] == set(range(6))
    assert r["heartbeat_interval_ms"] == 5000
    assert h.group().state == "Stable"
    r = h.hb("m1")
    assert r["assignment"] is None  # nothing changed: no assignment in the response


def test_second_member_waits_for_revocation_then_balances() -> None:
    h = Harness()
    h.hb("m1")
    r2 = h.hb("m2")
    assert r2["member_epoch"] == 2
    assert h.owned["m2"] == set()  # its partitions are still owned by m1
    assert h.group().state == "Reconciling"
    r1 = h.hb("m1")  # m1 learns what to give up; keeps its epoch until it has
    assert r1["member_epoch"] == 1 and len(h.owned["m1"]) == 3
    h.hb("m1")  # reports only its kept partitions: revocation done
    assert h.epochs["m1"] == 2
    h.hb("m2")
    assert h.owned["m2"] == set(range(6)) - h.owned["m1"] and len(h.owned["m2"]) == 3
    assert h.group().state == "Stable"


def test_a_second_revocation_keeps_the_member_epoch() -> None:
    """Kafka 4.2+ (CurrentAssignmentBuilder, UNREVOKED_PARTITIONS): a member that has
    revoked what it was asked to but must now revoke more (the target moved on while it
    revoked) stays at its epoch; once the second revocation is done it goes straight to
    the target epoch. It used to be bumped by one in between, an epoch at which the
    partition it still held was also another member's."""
    h = Harness()
    h.hb("m1")
    h.hb("m2")  # group epoch 2: m1 must give up three partitions
    r1 = h.hb("m1")
    assert r1["member_epoch"] == 1 and len(h.owned["m1"]) == 3
    h.hb("m3")  # group epoch 3: m1 is to keep two
    r1 = h.hb("m1")  # reports the three it kept: the first revocation is done
    assert h.group().members["m1"].state == "unrevoked_partitions"
    assert r1["member_epoch"] == 1
    assert len(h.owned["m1"]) == 2
    r1 = h.hb("m1")  # the second revocation done
    assert r1["member_epoch"] == 3
    assert h.group().members["m1"].state == "stable"


def test_no_partition_is_ever_owned_twice() -> None:
    h = Harness()
    members = ["a", "b", "c"]
    for m in members:
        h.hb(m)
        for _ in range(3):
            for x in members[: members.index(m) + 1]:
                h.hb(x)
                owners = [p for mm in h.owned.values() for p in mm]
                assert len(owners) == len(set(owners))
    assert sorted(len(v) for v in h.owned.values()) == [2, 2, 2]
    assert set().union(*h.owned.values()) == set(range(6))


def test_leave_and_session_expiry_reassign() -> None:
    h = Harness()
    for m in ("a", "b", "c"):
        h.hb(m)
    h.settle(["a", "b", "c"])
    r = h.hb("c", -1)
    assert r["member_epoch"] == -1 and "c" not in h.group().members
    h.settle(["a", "b"])
    assert sorted(len(h.owned[m]) for m in "ab") == [3, 3]
    # b crashes: only a heartbeats
    for _ in range(5):
        h.state.clock.advance(SESSION // 4)
        h.gc.tick()
        h.hb("a")
    assert "b" not in h.group().members
    assert h.owned["a"] == set(range(6))



def test_expire_member_fences_it_as_a_session_timeout_would() -> None:
    """--fidelity adversarial's kick (emulator/faults/adversary.py): the member is fenced
    (UNKNOWN_MEMBER_ID on its next heartbeat) and its partitions go to the others; nothing
    happens for an unknown member, an unknown group, or a group of another type."""
    h = Harness()
    for m in ("a", "b"):
        h.hb(m)
    h.settle(["a", "b"])
    epoch = h.group().group_epoch
    assert not h.gc.migration.expire_member(G, "nobody")
    assert not h.gc.migration.expire_member("no-such-group", "a")
    assert not h.gc.classic.expire_member(G, "a")  # a consumer group: not the classic kind
    assert h.group().group_epoch == epoch
    assert h.gc.migration.expire_member(G, "b")
    assert "b" not in h.group().members and h.group().group_epoch == epoch + 1
    assert h.hb("b")["error_code"] == E.UNKNOWN_MEMBER_ID
    h.settle(["a"])
    assert h.owned["a"] == set(range(6))

def test_group_overrides_of_session_timeout_and_heartbeat_interval() -> None:
    """consumer.session.timeout.ms / consumer.heartbeat.interval.ms set on the group (the
    GROUP config resource) act from the next heartbeat, as Kafka's coordinator reads them
    per heartbeat; another group keeps the broker's values."""
    h = Harness()
    h.hb("a")
    h.hb("b")
    h.state.group_configs[G] = {"consumer.session.timeout.ms": "60000",
                                "consumer.heartbeat.interval.ms": "7000"}
    assert h.hb("a")["heartbeat_interval_ms"] == 7000
    assert h.hb("b")["heartbeat_interval_ms"] == 7000
    # b stops: with the broker's 45 s it would be gone after 50 s; the group's 60 s holds it
    for _ in range(5):
        h.state.clock.advance(10_000)
        h.gc.tick()
        h.hb("a")
    assert "b" in h.group().members
    for _ in range(2):
        h.state.clock.advance(10_000)
        h.gc.tick()
        h.hb("a")
    assert "b" not in h.group().members
    other = h.gc.consumer_group_heartbeat("other", "x", 0, rebalance_timeout_ms=60_000,
                                          subscribed_topic_names=["t"], topic_partitions=[])
    assert other["heartbeat_interval_ms"] == 5000


def test_member_that_does_not_revoke_is_fenced_at_rebalance_timeout() -> None:
    h = Harness()
    h.hb("a", rebalance=10_000)
    h.hb("b")
    h.hb("a", owned=set(range(6)))  # a is told to revoke but keeps reporting everything
    assert h.group().members["a"].state == "unrevoked_partitions"
    h.state.clock.advance(5_000)
    h.gc.tick()
    assert "a" in h.group().members  # half its rebalance timeout: still a member
    assert h.hb("a", owned=set(range(6)))["error_code"] == E.NONE
    h.hb("b")
    h.state.clock.advance(5_001)
    h.gc.tick()
    assert "a" not in h.group().members
    h.hb("b")
    assert h.owned["b"] == set(range(6))


def test_static_member_leaves_temporarily_and_comes_back() -> None:
    h = Harness()
    h.hb("a", instance="ia")
    h.hb("b")
    h.settle(["a", "b"])
    kept = set(h.owned["a"])
    r = h.hb("a", -2, instance="ia")
    assert r["member_epoch"] == -2
    h.hb("b")
    assert h.owned["b"] == set(range(6)) - kept  # a's partitions are held for it
    r = h.gc.consumer_group_heartbeat(G, "a2", 0, instance_id="ia", rebalance_timeout_ms=60_000,
                                      subscribed_topic_names=["t"], topic_partitions=[])
    assert r["error_code"] == E.NONE
    assert {p for tp in r["assignment"]["topic_partitions"] for p in tp["partitions"]} == kept
    # another process with the same instance id while a2 is active is refused
    r = h.gc.consumer_group_heartbeat(G, "a3", 0, instance_id="ia", rebalance_timeout_ms=60_000,
                                      subscribed_topic_names=["t"], topic_partitions=[])
    assert r["error_code"] == E.UNRELEASED_INSTANCE_ID


def test_range_assignor() -> None:
    h = Harness()
    h.hb("a", assignor="range")
    h.hb("b", assignor="range")
    h.settle(["a", "b"])
    assert h.owned == {"a": {0, 1, 2}, "b": {3, 4, 5}}
    assert h.gc.describe_consumer_groups([G])[0]["assignor_name"] == "range"


def test_partition_growth_bumps_the_group_epoch() -> None:
    h = Harness(partitions=2)
    h.hb("a")
    epoch = h.epochs["a"]
    h.state.create_partitions("t", 4, None, False)
    h.hb("a")
    assert h.epochs["a"] == epoch + 1 and h.owned["a"] == {0, 1, 2, 3}


def test_regex_subscription() -> None:
    h = Harness()
    h.state.create_topic("t-other", 2, 1)
    r = h.gc.consumer_group_heartbeat(G, "a", 0, rebalance_timeout_ms=60_000,
                                      subscribed_topic_regex="t.*", topic_partitions=[])
    assert r["error_code"] == E.NONE
    assert sum(len(tp["partitions"]) for tp in r["assignment"]["topic_partitions"]) == 8


@pytest.mark.parametrize(("kwargs", "code"), [
    ({"member_epoch": 0, "rebalance_timeout_ms": -1}, E.INVALID_REQUEST),
    ({"member_epoch": 0, "subscribed_topic_names": None}, E.INVALID_REQUEST),
    ({"member_epoch": 0, "topic_partitions": None}, E.INVALID_REQUEST),
    ({"member_epoch": 0, "server_assignor": "fancy"}, E.UNSUPPORTED_ASSIGNOR),
    ({"member_epoch": -3}, E.INVALID_REQUEST),
    ({"member_epoch": 0, "member_id": ""}, E.INVALID_REQUEST),
    ({"member_epoch": 5, "member_id": "ghost"}, E.UNKNOWN_MEMBER_ID),
    # RE2/J's syntax, as a real 4.4 broker answers: INVALID_REGULAR_EXPRESSION
    ({"member_epoch": 0, "subscribed_topic_regex": "(", "subscribed_topic_names": None},
     E.INVALID_REGULAR_EXPRESSION),
    ({"member_epoch": 0, "subscribed_topic_regex": "(?=t)t", "subscribed_topic_names": None},
     E.INVALID_REGULAR_EXPRESSION),
])
def test_request_errors(kwargs: dict, code: int) -> None:
    h = Harness()
    h.hb("a")
    args = {"member_id": "x", "member_epoch": 0, "rebalance_timeout_ms": 60_000,
            "subscribed_topic_names": ["t"], "topic_partitions": []}
    args.update(kwargs)
    r = h.gc.consumer_group_heartbeat(G, args.pop("member_id"), args.pop("member_epoch"), **args)
    assert r["error_code"] == code
    assert h.hb("a")["error_code"] == E.NONE  # the group is fine


def test_fenced_member_epoch_and_rejoin() -> None:
    h = Harness()
    h.hb("a")
    assert h.hb("a", 7)["error_code"] == E.FENCED_MEMBER_EPOCH
    r = h.hb("a", 0)
    assert r["error_code"] == E.NONE and r["member_epoch"] >= 1


def test_fenced_member_epoch_says_which_side_is_ahead() -> None:
    """ConsumerGroupHeartbeat's ErrorMessage, as Kafka 4.4's
    throwIfConsumerGroupMemberEpochIsInvalid words it: a client logs it, and the two
    cases (a greater epoch than the coordinator's, a smaller one that is not the
    previous epoch's retry) are told apart only there."""
    h = Harness()
    h.hb("a")
    ep = h.epochs["a"]
    tail = (f"than the one known by the group coordinator ({ep}). The member must "
            "abandon all its partitions and rejoin.")
    r = h.hb("a", ep + 5)
    assert r["error_code"] == E.FENCED_MEMBER_EPOCH
    assert r["error_message"] == ("The consumer group member has a greater member epoch "
                                  f"({ep + 5}) " + tail)
    h.hb("b")
    h.settle(["a", "b"])
    ep = h.epochs["a"]
    tail = (f"than the one known by the group coordinator ({ep}). The member must "
            "abandon all its partitions and rejoin.")
    # the previous epoch owning only what it is assigned: the answer to its last
    # heartbeat was lost, so it is let through
    older = h.group().members["a"].previous_member_epoch
    assert 0 < older < ep and h.owned["a"] != set(range(6))
    assert h.hb("a", older)["error_code"] == E.NONE
    # the previous epoch, owning more than its assignment now holds: not a lost answer
    r = h.hb("a", older, owned=set(range(6)))
    assert r["error_code"] == E.FENCED_MEMBER_EPOCH
    assert r["error_message"] == ("The consumer group member has a smaller member epoch "
                                  f"({older}) " + tail)


def test_only_consumer_protocol_classic_members_join_a_consumer_group() -> None:
    h = Harness()
    h.hb("a")
    fut = h.gc.join_group(G, "", None, "connect", [("range", b"")], 10_000, 10_000)
    assert fut.result["error_code"] == E.INCONSISTENT_GROUP_PROTOCOL
    # a consumer-protocol classic member is let in (online migration): a member id first
    fut = h.gc.join_group(G, "", None, "consumer", [("range", b"")], 10_000, 10_000)
    assert fut.result["error_code"] == E.MEMBER_ID_REQUIRED
    listed = h.gc.list_groups(types=["consumer"])
    assert [g["group_id"] for g in listed] == [G] and listed[0]["protocol_type"] == "consumer"


def test_commit_needs_the_member_epoch() -> None:
    h = Harness()
    h.hb("a")
    ep = h.epochs["a"]
    [(_, [(_, err)])] = h.gc.commit_offsets(G, "a", ep, [("t", [(0, 5, -1, None)])], version=9)
    assert err == E.NONE
    [(_, [(_, err)])] = h.gc.commit_offsets(G, "a", ep - 1, [("t", [(0, 6, -1, None)])],
                                            version=9)
    assert err == E.STALE_MEMBER_EPOCH
    [(_, [(_, err)])] = h.gc.commit_offsets(G, "a", ep, [("t", [(0, 6, -1, None)])], version=8)
    assert err == E.UNSUPPORTED_VERSION
    [(_, [entry])] = h.gc.fetch_offsets(G, [("t", [0])], member_id="a", member_epoch=ep)
    assert entry["committed_offset"] == 5
    # Kafka 4.4's assignment epochs: after a rebalance, the old epoch still commits the
    # partitions the member kept since then; a newer epoch never commits
    h.hb("b")
    h.settle(["a", "b"])
    new = h.epochs["a"]
    assert new > ep
    kept = min(h.owned["a"])
    [(_, [(_, err)])] = h.gc.commit_offsets(G, "a", ep, [("t", [(kept, 7, -1, None)])],
                                            version=9)
    assert err == E.NONE
    [(_, [(_, err)])] = h.gc.commit_offsets(G, "a", new + 1, [("t", [(kept, 7, -1, None)])],
                                            version=9)
    assert err == E.STALE_MEMBER_EPOCH


def test_a_commit_needs_no_member_only_where_kafka_lets_it() -> None:
    """Kafka 4.4's ConsumerGroup.validateOffsetCommit before it looks the member up: a
    negative epoch commits without one only while the group has no member (an admin's
    or a self-assigning consumer's commit), and a TxnOffsetCommit without one only when
    it names no member id, no generation and no group instance id (a producer outside
    group management); naming any of them has them checked."""
    h = Harness()
    h.hb("a")
    ep = h.epochs["a"]

    def commit(member: str, epoch: int) -> int:
        [(_, [(_, err)])] = h.gc.commit_offsets(G, member, epoch, [("t", [(0, 1, -1, None)])],
                                                version=9)
        return err

    def txn(member: str, epoch: int, instance: str | None = None) -> int:
        [(_, [(_, err)])] = h.gc.txn_offset_commit(G, 7, member, epoch,
                                                   [("t", [(0, 1, -1, None)])],
                                                   group_instance_id=instance)
        return err

    assert commit("", -1) == E.UNKNOWN_MEMBER_ID  # the group has a member
    assert commit("", ep) == E.UNKNOWN_MEMBER_ID
    assert txn("", -1) == E.NONE
    assert txn("", -1, instance="i") == E.UNKNOWN_MEMBER_ID
    assert txn("x", -1) == E.UNKNOWN_MEMBER_ID
    assert txn("", 0) == E.UNKNOWN_MEMBER_ID
    assert txn("a", ep + 1) == E.ILLEGAL_GENERATION  # checked as a classic generation
    assert txn("a", ep) == E.NONE
    assert h.hb("a", -1)["error_code"] == E.NONE  # a leaves: the group is empty
    assert not h.group().members
    assert commit("", 0) == E.UNKNOWN_MEMBER_ID  # not negative: a member is named
    assert commit("", -1) == E.NONE


def test_describe() -> None:
    h = Harness()
    h.hb("a")
    [d] = h.gc.describe_consumer_groups([G])
    assert d["group_state"] == "Stable" and d["group_epoch"] == 1
    [m] = d["members"]
    assert m["member_id"] == "a" and m["assignment"]["topic_partitions"][0]["topic_name"] == "t"
    assert h.gc.describe_consumer_groups(["nope"])[0]["error_code"] == E.GROUP_ID_NOT_FOUND


def test_assignors_directly() -> None:
    topics = {"x": (b"X" * 16, 5), "y": (b"Y" * 16, 1)}
    subs = {"m1": {"x", "y"}, "m2": {"x", "y"}}
    out = _uniform(subs, topics, {})
    sizes = sorted(sum(len(p) for p in a.values()) for a in out.values())
    assert sizes == [3, 3]
    # sticky: with a third member, the first two keep most of theirs
    out3 = _uniform({**subs, "m3": {"x", "y"}}, topics, out)
    for m in ("m1", "m2"):
        kept = sum(len(out[m].get(t, set()) & out3[m].get(t, set())) for t in out[m])
        assert kept == 2
    rng = _range({"m1": {"x"}, "m2": {"x", "y"}}, topics, {})
    assert rng["m1"] == {b"X" * 16: {0, 1, 2}} and rng["m2"] == {b"X" * 16: {3, 4},
                                                                  b"Y" * 16: {0}}
