"""Online classic <-> consumer group migration (KIP-848's upgrade and downgrade on join)
as pure state on a manual clock: a classic group with members converts when a
ConsumerGroupHeartbeat joins, classic members go on through JoinGroup/SyncGroup/
Heartbeat/LeaveGroup translated onto the consumer group, no partition is ever owned by
two members, and the group turns classic again when the last consumer-protocol member
leaves or is fenced.
"""

from __future__ import annotations

import random

from cluster_sim import new_cluster

from emulator.coordinators.classic.group import PREPARING_REBALANCE, STABLE
from emulator.coordinators.groups.coordinator import GroupCoordinator
from wire.consumer_protocol import (
    ConsumerProtocolError,
    decode_assignment,
    decode_subscription,
    encode_assignment,
    encode_subscription,
)
from wire.errors import ErrorCode as E

G = "mig"
SESSION = 10_000
REBALANCE = 20_000


class Classic:
    """A classic consumer as the client library runs it (eager: revokes before rejoining)."""

    def __init__(self, h: Harness, name: str, version: int = 7, sub_version: int = 0) -> None:
        self.h, self.name, self.version, self.sub_version = h, name, version, sub_version
        self.member_id = ""
        self.generation = -1
        self.owned: list[tuple[str, list[int]]] = []
        self.leader = False
        self.protocol = "range"

    def protocols(self) -> list[tuple[str, bytes]]:
        meta = encode_subscription(["t"], self.sub_version, owned_partitions=self.owned)
        return [("range", meta), ("roundrobin", meta)]

    def join(self) -> dict:
        fut = self.h.gc.join_group(G, self.member_id, None, "consumer", self.protocols(),
                                   SESSION, REBALANCE, client_id=self.name,
                                   client_host="/127.0.0.1", version=self.version)
        self.h.gc.tick()
        self.pending = fut
        if fut.result is None:
            return {}
        return self.joined()

    def joined(self) -> dict:
        r = self.pending.result
        if r is None:
            return {}
        if r["error_code"] == E.MEMBER_ID_REQUIRED:
            self.member_id = r["member_id"]
            return self.join()
        if r["error_code"] == E.NONE:
            self.member_id, self.generation = r["member_id"], r["generation_id"]
            self.leader = r["leader"] == self.member_id
            self.protocol = r["protocol_name"]
            self.members = r["members"]
        return r

    def sync(self, assignments: list[tuple[str, bytes]] | None = None) -> dict:
        fut = self.h.gc.sync_group(G, self.member_id, self.generation, None, "consumer",
                                   self.protocol, assignments or [])
        self.h.gc.tick()
        r = fut.result or {}
        if r.get("error_code") == E.NONE:
            self.owned = decode_assignment(r["assignment"])
        return r

    def heartbeat(self) -> int:
        return self.h.gc.heartbeat(G, self.member_id, self.generation)

    def rejoin(self) -> dict:
        """Eager protocol: give up everything, join, sync."""
        self.owned = []
        r = self.join()
        assert r.get("error_code") == E.NONE, r
        r = self.sync()
        assert r["error_code"] == E.NONE, r
        return r

    def partitions(self) -> set[int]:
        return {p for _, ps in self.owned for p in ps}


class Harness:
    def __init__(self, **config: str) -> None:
        cfg = {"offsets.topic.num.partitions": "3"}
        cfg.update(config)
        self.state = new_cluster(3, **cfg).state
        self.gc = GroupCoordinator(self.state)
        self.tid = self.state.create_topic("t", 6, 1).id
        self.owned: dict[str, set[int]] = {}
        self.epochs: dict[str, int] = {}

    def advance(self, ms: int) -> None:
        self.state.clock.advance(ms)
        self.gc.tick()

    def hb(self, member: str, epoch: int | None = None) -> dict:
        """A KIP-848 consumer's heartbeat; applies the assignment like the client."""
        if epoch is None:
            epoch = self.epochs.get(member, 0)
        joining = epoch == 0
        owned = self.owned.get(member, set())
        r = self.gc.consumer_group_heartbeat(
            G, member, epoch, rebalance_timeout_ms=REBALANCE if joining else -1,
            subscribed_topic_names=["t"] if joining else None,
            topic_partitions=[] if joining or not owned else
            [{"topic_id": self.tid, "partitions": sorted(owned)}], client_id=member)
        if r["error_code"] == E.NONE and epoch >= 0:
            self.epochs[member] = r["member_epoch"]
            if r["assignment"] is not None:
                self.owned[member] = {p for tp in r["assignment"]["topic_partitions"]
                                      for p in tp["partitions"]}
        return r

    def group(self):
        return self.gc.groups[G]

    def stable_classic_group(self, *names: str) -> list[Classic]:
        """A classic group whose leader assigns range-style (two members: 3 + 3)."""
        members = [Classic(self, n) for n in names]
        for m in members:
            m.join()
        for m in members:  # the first one's join completed alone: it rejoins
            if m.generation >= 1:
                m.join()
        self.advance(0)
        for m in members:
            m.joined()
        assert len({m.generation for m in members}) == 1, [m.generation for m in members]
        leader = next(m for m in members if m.leader)
        ids = sorted(x["member_id"] for x in leader.members)
        per = 6 // len(ids)
        assignments = [(mid, encode_assignment([("t", list(range(i * per, (i + 1) * per)))]))
                       for i, mid in enumerate(ids)]
        for m in members:
            m.sync(assignments if m is leader else None)
        assert self.group().state == STABLE
        return members


def owners(h: Harness, classics: list[Classic], consumers: list[str]) -> list[int]:
    """Every partition's owners, to check that none is owned twice."""
    seen = [0] * 6
    for c in classics:
        for p in c.partitions():
            seen[p] += 1
    for m in consumers:
        for p in h.owned.get(m, ()):
            seen[p] += 1
    return seen


def test_consumer_member_upgrades_a_non_empty_classic_group() -> None:
    h = Harness()
    a, b = h.stable_classic_group("a", "b")
    generation = h.group().generation_id
    r = h.hb("k")
    assert r["error_code"] == E.NONE
    g = h.group()
    assert g.type == "consumer"
    assert g.group_epoch == generation + 1  # the joining member bumps it
    assert {m.member_id for m in g.members.values() if m.classic} == {a.member_id, b.member_id}
    assert h.owned["k"] == set()  # every partition is still owned by a classic member
    # classic members keep their generation and assignment until told to rejoin
    assert a.heartbeat() == E.REBALANCE_IN_PROGRESS
    assert owners(h, [a, b], ["k"]) == [1] * 6
    # they rejoin (eager: owning nothing), one at a time; k picks up what is freed
    a.rejoin()
    assert a.generation == g.group_epoch
    h.hb("k")
    assert max(owners(h, [a, b], ["k"])) == 1
    b.rejoin()
    h.hb("k")
    h.hb("k")
    assert owners(h, [a, b], ["k"]) == [1] * 6
    assert sorted(len(x) for x in (a.partitions(), b.partitions(), h.owned["k"])) == [2, 2, 2]
    assert a.heartbeat() == E.NONE and b.heartbeat() == E.NONE
    assert g.state == "Stable"
    described = h.gc.describe_consumer_groups([G])[0]
    assert sorted(m["member_type"] for m in described["members"]) == [0, 0, 1]


def test_classic_member_commits_with_its_generation_in_a_consumer_group() -> None:
    h = Harness()
    a, _ = h.stable_classic_group("a", "b")
    h.hb("k")
    a.rejoin()
    [(_, [(_, err)])] = h.gc.commit_offsets(G, a.member_id, a.generation,
                                            [("t", [(0, 5, -1, None)])], version=7)
    assert err == E.NONE  # an old OffsetCommit version is fine for a classic member
    held = sorted(a.partitions())
    gone = sorted(set(range(6)) - a.partitions())
    # Kafka 4.4: an older generation commits the partitions held since then (assignment
    # epochs), not others; a newer one never: ILLEGAL_GENERATION, as it speaks generations
    [(_, res)] = h.gc.commit_offsets(G, a.member_id, a.generation - 1,
                                     [("t", [(held[0], 5, -1, None), (gone[0], 5, -1, None)])],
                                     version=7)
    assert res == [(held[0], E.NONE), (gone[0], E.ILLEGAL_GENERATION)]
    [(_, [(_, err)])] = h.gc.commit_offsets(G, a.member_id, a.generation - 2,
                                            [("t", [(held[0], 5, -1, None)])], version=7)
    assert err == E.ILLEGAL_GENERATION  # before the conversion's generation
    [(_, [(_, err)])] = h.gc.commit_offsets(G, a.member_id, a.generation + 1,
                                            [("t", [(held[0], 5, -1, None)])], version=7)
    assert err == E.ILLEGAL_GENERATION


def test_cooperative_member_reports_owned_partitions_and_revokes_in_two_steps() -> None:
    h = Harness()
    a, b = h.stable_classic_group("a", "b")
    a.sub_version = b.sub_version = 1  # v1+ subscriptions carry the owned partitions
    h.hb("k")
    kept = list(a.owned)
    r = a.join()  # rejoins still owning all three: must revoke first
    assert r["error_code"] == E.NONE
    m = h.group().members[a.member_id]
    assert m.state == "unrevoked_partitions"
    a.sync()
    assert len(a.partitions()) < 3 and a.partitions() <= {p for _, ps in kept for p in ps}
    assert a.heartbeat() == E.REBALANCE_IN_PROGRESS  # revoke done: come back
    a.join()
    a.sync()
    assert h.group().members[a.member_id].state == "stable"
    assert a.heartbeat() == E.NONE
    assert max(owners(h, [a, b], ["k"])) == 1


def test_last_consumer_member_leaving_downgrades_to_classic() -> None:
    h = Harness()
    a, b = h.stable_classic_group("a", "b")
    h.hb("k")
    a.rejoin()
    b.rejoin()
    h.hb("k")
    epoch = h.group().group_epoch
    r = h.hb("k", -1)
    assert r["error_code"] == E.NONE
    g = h.group()
    assert g.type == "classic" and g.state == PREPARING_REBALANCE
    assert g.generation_id == epoch
    assert set(g.members) == {a.member_id, b.member_id}
    # their assignments are their consumer-group targets, in the consumer protocol (k's
    # two partitions wait for the rebalance, as in Kafka's ClassicGroup.fromConsumerGroup)
    assigned = [decode_assignment(m.assignment) for m in g.members.values()]
    assert sorted(len(ps) for x in assigned for _, ps in x) == [2, 2]
    assert a.heartbeat() == E.REBALANCE_IN_PROGRESS
    # the classic rebalance runs again: a and b rejoin and the leader assigns
    fa = h.gc.join_group(G, a.member_id, None, "consumer", a.protocols(), SESSION, REBALANCE,
                         version=7)
    fb = h.gc.join_group(G, b.member_id, None, "consumer", b.protocols(), SESSION, REBALANCE,
                         version=7)
    h.gc.tick()
    assert fa.result["error_code"] == fb.result["error_code"] == E.NONE
    assert fa.result["generation_id"] == epoch + 1


def test_fenced_consumer_member_downgrades_too_and_policy_can_forbid_it() -> None:
    h = Harness()
    a, b = h.stable_classic_group("a", "b")
    h.hb("k")
    kinds = []
    for _ in range(12):  # the classic members keep heartbeating, k goes silent
        h.advance(SESSION // 2)
        for c in (a, b):
            if c.heartbeat() == E.REBALANCE_IN_PROGRESS and h.group().type == "consumer":
                c.rejoin()
        kinds.append(h.group().type)
    # k's session (group.consumer.session.timeout.ms, 45 s) expires at the 9th step
    assert kinds == ["consumer"] * 8 + ["classic"] * 4
    assert set(h.group().members) == {a.member_id, b.member_id}

    h2 = Harness(**{"group.consumer.migration.policy": "upgrade"})
    h2.stable_classic_group("a", "b")
    h2.hb("k")
    h2.hb("k", -1)
    assert h2.group().type == "consumer"  # no downgrade allowed


def test_expiring_the_last_consumer_member_downgrades_as_its_session_would() -> None:
    """--fidelity adversarial's kick (expire_member) fences the member through migration
    as the session timer does: the last member using the consumer protocol gone, the
    group turns classic with the classic members."""
    h = Harness()
    a, b = h.stable_classic_group("a", "b")
    h.hb("k")
    epoch = h.group().group_epoch
    assert h.gc.migration.expire_member(G, "k")
    g = h.group()
    assert g.type == "classic" and g.generation_id == epoch
    assert set(g.members) == {a.member_id, b.member_id}
    assert not h.gc.migration.expire_member(G, a.member_id)  # a classic group now


def test_upgrade_refused_by_policy_or_protocol() -> None:
    h = Harness(**{"group.consumer.migration.policy": "downgrade"})
    h.stable_classic_group("a", "b")
    r = h.hb("k")
    assert r["error_code"] == E.GROUP_ID_NOT_FOUND
    assert h.group().type == "classic"


def test_classic_member_timers_fence_it() -> None:
    h = Harness()
    a, b = h.stable_classic_group("a", "b")
    h.hb("k")
    assert a.heartbeat() == E.REBALANCE_IN_PROGRESS  # join timer: the rebalance timeout
    for _ in range(4):  # b heartbeats (told to rejoin at 5 s), a is silent
        h.advance(REBALANCE // 4)
        h.hb("k")
        b.heartbeat()
    g = h.group()
    assert a.member_id not in g.members  # 20 s: a's join timer fenced it
    assert b.member_id in g.members  # heartbeats do not stop its join timer...
    h.advance(REBALANCE // 4)
    assert set(h.group().members) == {"k"}  # ...which fences it at 25 s
    h.hb("k")
    h.hb("k")
    assert h.owned["k"] == set(range(6)) and h.group().state == "Stable"


def test_classic_leave_and_errors_in_a_consumer_group() -> None:
    h = Harness()
    a, b = h.stable_classic_group("a", "b")
    h.hb("k")
    assert h.gc.heartbeat(G, "ghost", 1) == E.UNKNOWN_MEMBER_ID
    assert h.gc.heartbeat(G, "k", h.epochs["k"]) == E.UNKNOWN_MEMBER_ID  # not classic
    assert h.gc.heartbeat(G, a.member_id, a.generation + 5) == E.ILLEGAL_GENERATION
    sync = h.gc.sync_group(G, a.member_id, a.generation, None, "consumer", "range", [])
    assert sync.result["error_code"] == E.REBALANCE_IN_PROGRESS  # behind the group epoch
    epoch = h.group().group_epoch
    err, results = h.gc.leave_group(G, [(a.member_id, None), ("ghost", None)])
    assert (err, results) == (E.NONE, [E.NONE, E.UNKNOWN_MEMBER_ID])
    assert h.group().group_epoch == epoch + 1 and a.member_id not in h.group().members


def test_consumer_protocol_codec_round_trips() -> None:
    raw = encode_subscription(["a", "b"], 3, owned_partitions=[("a", [1, 2])], generation_id=7,
                              rack_id="r1", user_data=b"x")
    sub = decode_subscription(raw)
    assert (sub.version, sub.topics, sub.user_data, sub.owned_partitions, sub.generation_id,
            sub.rack_id) == (3, ["a", "b"], b"x", [("a", [1, 2])], 7, "r1")
    assert decode_assignment(encode_assignment([("t", [0, 3])], 1)) == [("t", [0, 3])]
    assert decode_assignment(b"") == []


def test_malformed_embedded_protocol_gets_kafkas_codes() -> None:
    # a classic group whose member metadata is not the consumer protocol cannot upgrade
    h = Harness()
    fut = h.gc.join_group(G, "", None, "consumer", [("range", b"\x00\x00\xff\xff\xff")],
                          SESSION, REBALANCE, version=3)
    h.gc.tick()
    assert fut.result["error_code"] == E.NONE
    r = h.hb("k")
    assert r["error_code"] == E.GROUP_ID_NOT_FOUND and "malformed" in r["error_message"]
    assert h.group().type == "classic"
    # a classic member with garbage metadata joining a consumer group: Kafka's
    # IllegalStateException, UNKNOWN_SERVER_ERROR
    h2 = Harness()
    h2.stable_classic_group("a", "b")
    h2.hb("k")
    fut = h2.gc.join_group(G, "", None, "consumer", [("range", b"\x00")], SESSION,
                           REBALANCE, version=3)
    assert fut.result["error_code"] == E.UNKNOWN_SERVER_ERROR


def test_consumer_protocol_decoder_never_fails_otherwise() -> None:
    rng = random.Random(15)
    good = encode_subscription(["a", "b"], 3, owned_partitions=[("a", [1, 2])])
    for _ in range(3000):
        data = bytearray(good if rng.random() < 0.7 else rng.randbytes(rng.randrange(40)))
        for _ in range(rng.randrange(4)):
            if data:
                data[rng.randrange(len(data))] = rng.randrange(256)
        for decode in (decode_subscription, decode_assignment):
            try:
                decode(bytes(data))
            except ConsumerProtocolError:
                pass


def test_classic_static_member_replacing_the_last_consumer_member_downgrades() -> None:
    """validateOnlineDowngradeWithReplacedMemberId: a static consumer-protocol member is
    replaced by a classic one with its group.instance.id (a rolling downgrade of that
    instance): the group is classic at once, Stable, the joiner keeps the assignment."""
    h = Harness()
    a, b = h.stable_classic_group("a", "b")
    r = h.gc.consumer_group_heartbeat(G, "k", 0, instance_id="inst-k",
                                      rebalance_timeout_ms=REBALANCE,
                                      subscribed_topic_names=["t"], topic_partitions=[])
    assert r["error_code"] == E.NONE
    h.epochs["k"] = r["member_epoch"]
    a.rejoin()
    b.rejoin()
    h.hb("k")
    h.hb("k")
    k_parts = set(h.owned["k"])
    assert len(k_parts) == 2
    meta = encode_subscription(["t"], 0)
    fut = h.gc.join_group(G, "", "inst-k", "consumer", [("range", meta)], SESSION, REBALANCE,
                          client_id="k2", version=7)
    resp = fut.result
    assert resp["error_code"] == E.NONE, resp
    g = h.group()
    assert g.type == "classic" and g.state == STABLE
    assert resp["member_id"] in g.members and "k" not in g.members
    sync = h.gc.sync_group(G, resp["member_id"], resp["generation_id"], "inst-k", "consumer",
                           "range", []).result
    assert sync["error_code"] == E.NONE
    assert {p for _, ps in decode_assignment(sync["assignment"]) for p in ps} == k_parts
