"""Coordinator timers follow what is due (docs/architecture.md): the group coordinator's tick visits
only groups whose session, join, sync or revocation deadline came, the transaction
coordinator's only transactions whose timeout or expiration came, the share
coordinator's only share groups and share-partitions whose session or lock ran out,
and a parked
JoinGroup is re-checked only when its own group changes. Counted on the manual clock
(``visits``), so the property cannot silently regress; bench/idle_groups.py measures
the CPU it saves."""

from __future__ import annotations

import asyncio

from cluster_sim import new_cluster

from emulator.cluster.clock import ManualClock
from emulator.cluster.state import ClusterState
from emulator.coordinators.groups.coordinator import GroupCoordinator
from emulator.coordinators.share.coordinator import SharePartitionManager
from emulator.coordinators.transactions.coordinator import TransactionCoordinator
from emulator.coordinators.transactions.metadata import COMPLETE_ABORT, ONGOING
from emulator.handlers import api_011_join_group, api_078_share_fetch
from emulator.handlers.base import Delayed, RequestContext
from emulator.server.app import EmulatorServer
from emulator.services import Services
from wire.errors import ErrorCode as E
from wire.records import build_batch

GROUPS = 10_000
SESSION = 60_000  # classic members' session timeout
CONSUMER_SESSION = 45_000  # group.consumer.session.timeout.ms
PROTOCOLS = [("range", b"\x00\x00\x00\x00\x00\x00")]


def make() -> tuple[ClusterState, ManualClock, GroupCoordinator]:
    clock = ManualClock()
    s = new_cluster(3, clock, **{"group.initial.rebalance.delay.ms": "0",
                                 "group.consumer.session.timeout.ms": str(CONSUMER_SESSION),
                                 "offsets.topic.num.partitions": "10"}).state
    gc = GroupCoordinator(s)
    gc.ensure_offsets_topic()
    s.create_topic("in", 4, 3)
    return s, clock, gc


def classic_group(gc: GroupCoordinator, gid: str, members: int = 2,
                  session: int = SESSION) -> list[str]:
    """A Stable classic group (JoinGroup v3: no MEMBER_ID_REQUIRED round)."""
    futs = [gc.join_group(gid, "", None, "consumer", PROTOCOLS, session, 60_000, version=3)
            for _ in range(members)]
    gc.tick()
    results = [f.result for f in futs]
    assert all(r is not None and r["error_code"] == E.NONE for r in results), results
    ids = [r["member_id"] for r in results]
    leader = results[0]["leader"]
    gc.sync_group(gid, leader, results[0]["generation_id"],
                  assignments=[(m, b"") for m in ids])
    for m in ids:
        if m != leader:
            gc.sync_group(gid, m, results[0]["generation_id"])
    assert gc.groups.peek(gid).state == "Stable"
    return ids


def consumer_group(gc: GroupCoordinator, gid: str) -> str:
    r = gc.consumer_group_heartbeat(gid, f"{gid}-m", 0, rebalance_timeout_ms=60_000,
                                    subscribed_topic_names=["in"], topic_partitions=[])
    assert r["error_code"] == E.NONE, r
    return r["member_id"]


def idle_cluster() -> tuple[ClusterState, ManualClock, GroupCoordinator]:
    """GROUPS groups with members: half classic (two Stable members), half KIP-848."""
    s, clock, gc = make()
    for i in range(GROUPS // 2):
        classic_group(gc, f"c{i}")
        consumer_group(gc, f"k{i}")
    gc.tick()
    return s, clock, gc


class CountedChecks:
    """Wraps a parked request so the test can count how often the server re-checks it."""

    def __init__(self) -> None:
        self.n = 0

    def wrap(self, d: Delayed) -> Delayed:
        assert d.keys is not None

        def check() -> dict | None:
            self.n += 1
            return d.check()

        return Delayed(check, d.deadline_ms, d.expire, keys=d.keys)


def visits(gc: GroupCoordinator, clock: ManualClock, ticks: int, step_ms: int) -> int:
    before = gc.visits + gc.reschedules
    for _ in range(ticks):
        clock.advance(step_ms)
        gc.tick()
    return gc.visits + gc.reschedules - before


def test_idle_groups_cost_no_visit_until_something_is_due() -> None:
    s, clock, gc = idle_cluster()
    assert len(gc.groups) == GROUPS
    # 44 s of ticks every 50 ms (the server's period), just short of the first session
    # timeout: nothing is due, nothing is visited
    assert visits(gc, clock, ticks=880, step_ms=50) == 0
    assert all(g.members for g in gc.groups.values())
    s.tick(full=False)  # the cluster's tick runs the coordinator as a hook: also free
    assert visits(gc, clock, ticks=1, step_ms=0) == 0


def test_one_expiring_session_visits_only_its_group() -> None:
    s, clock, gc = idle_cluster()
    short = classic_group(gc, "short", session=10_000)
    gc.tick()
    clock.advance(5_000)
    gc.heartbeat("short", short[0], 1)  # one member keeps its session alive
    gc.tick()
    before = gc.visits
    assert visits(gc, clock, ticks=20, step_ms=200) == 0  # t = 9 s: nothing due yet
    clock.advance(1_000)  # t = 10 s: the other member's session ran out
    gc.tick()
    assert gc.visits - before == 1
    group = gc.groups.peek("short")
    assert list(group.members) == [short[0]] and group.state == "PreparingRebalance"
    assert all(len(gc.groups.peek(f"c{i}").members) == 2 for i in range(GROUPS // 2))


def test_consumer_group_sessions_expire_one_group_at_a_time() -> None:
    """Every KIP-848 member but one heartbeats halfway through its session: when the
    first session ends, only the silent member's group is visited."""
    s, clock, gc = idle_cluster()
    clock.advance(CONSUMER_SESSION // 2)
    for i in range(1, GROUPS // 2):
        r = gc.consumer_group_heartbeat(f"k{i}", f"k{i}-m", 1)
        assert r["error_code"] == E.NONE, r
    gc.tick()  # the heartbeated groups are rescheduled once
    before = gc.visits
    clock.advance(CONSUMER_SESSION // 2 + 1)
    gc.tick()
    assert gc.visits - before == 1
    assert not gc.groups.peek("k0").members  # fenced
    assert gc.groups.peek("k1").members
    assert all(len(gc.groups.peek(f"c{i}").members) == 2 for i in range(GROUPS // 2))


def test_a_transaction_timeout_visits_only_that_transaction() -> None:
    s, clock, gc = make()
    tc = TransactionCoordinator(s, gc)
    tc.ensure_txn_topic()
    for i in range(2_000):  # idle producers and long transactions
        tid = f"txn-{i}"
        err, pid, epoch = tc.init_producer_id(tid, 5_000 if i == 7 else 600_000)
        assert err == E.NONE
        if i % 2 or i == 7:
            assert tc.add_partitions(tid, pid, epoch, [("in", i % 4)]) == {("in", i % 4): 0}
    tc.tick()
    before = tc.visits
    for _ in range(50):  # 5 s, one tick every 100 ms: the short timeout not yet passed
        clock.advance(100)
        tc.tick()
    assert tc.visits == before
    clock.advance(1)
    assert tc.tick()
    assert tc.visits - before == 1
    assert tc.txns["txn-7"].state == COMPLETE_ABORT
    assert sum(t.state == ONGOING for t in tc.txns.values()) == 999  # the odd ones


def test_a_parked_join_is_rechecked_only_when_its_group_changes() -> None:
    """A JoinGroup parks until the other member rejoins: 200 other groups' joins and
    heartbeats, and an append, wake it not once; its group's change wakes it."""
    s, clock, gc = make()
    members = classic_group(gc, "target")
    others = {f"o{i}": classic_group(gc, f"o{i}") for i in range(200)}
    server = EmulatorServer(s)
    coordinator = gc.coordinator_for("target")
    ctx = RequestContext(s, coordinator, 11, 5, 1, "c", services=Services(groups=gc))
    counted = CountedChecks()

    def parked() -> Delayed:
        # the leader's JoinGroup starts a rebalance that waits for the other member
        d = api_011_join_group.handle(ctx, {
            "group_id": "target", "member_id": members[0], "group_instance_id": None,
            "session_timeout_ms": SESSION, "rebalance_timeout_ms": 60_000,
            "protocol_type": "consumer",
            "protocols": [{"name": n, "metadata": m} for n, m in PROTOCOLS]}, 5)
        assert isinstance(d, Delayed)
        return counted.wrap(d)

    async def scenario() -> dict:
        s.take_changes()  # what happened before the server was there
        task = asyncio.ensure_future(server.wait_delayed(parked()))
        await asyncio.sleep(0)
        assert counted.n == 1  # parked
        for gid, ids in others.items():
            gc.heartbeat(gid, ids[0], 1)
            gc.join_group(gid, ids[1], None, "consumer", PROTOCOLS, SESSION, 60_000,
                          version=5)  # a rebalance of another group
            gc.tick()
            await asyncio.sleep(0)
        p = s.get_partition("in", 0)
        s.append(p.leader, "in", 0, build_batch([(None, b"v")]), 1)
        await asyncio.sleep(0)
        assert counted.n == 1 and not task.done()
        gc.join_group("target", members[1], None, "consumer", PROTOCOLS, SESSION, 60_000,
                      version=5)  # the other member rejoins: the join phase completes
        result = await asyncio.wait_for(task, 5)
        return result

    result = asyncio.run(scenario())
    assert result["error_code"] == E.NONE and result["generation_id"] == 2
    assert counted.n == 2
    s.on_change = None


def test_share_groups_visit_only_the_expiring_lock_and_session() -> None:
    """2,000 share groups with a member each (8,000 share-partitions): ticks visit
    nothing until a lock runs out (its share-partition alone), then a session (its
    group alone)."""
    s, clock, gc = make()
    sc = SharePartitionManager(s, gc)
    for i in range(2_000):
        r = sc.share_group_heartbeat(f"s{i}", f"s{i}-m", 0, rack_id=None,
                                     subscribed_topic_names=["in"])
        assert r["error_code"] == E.NONE, r
    topic = s.topics["in"]
    p = topic.partitions[0]
    s.append(p.leader, "in", 0, build_batch([(None, b"v")] * 3), -1)
    s.tick()
    sc.set_group_config("s7", "share.auto.offset.reset", "earliest")
    _, got = sc.acquire(p.leader, "s7", "s7-m", topic.id, 0, 10, 1 << 20)
    assert got.ranges == [(0, 2, 1)]
    lock = sc.group_int("s7", "share.record.lock.duration.ms")
    session = sc.group_int("s7", "share.session.timeout.ms")
    assert lock < session - 1_000
    clock.advance(1_000)
    for i in range(1, 2_000):  # everybody but s0 heartbeats a second later
        sc.share_group_heartbeat(f"s{i}", f"s{i}-m", 2, rack_id=None,  # a new group: 2
                                 subscribed_topic_names=None)
    sc.tick()
    before = sc.visits
    for _ in range(lock // 100 - 11):  # up to just before the lock runs out
        clock.advance(100)
        sc.tick()
    assert sc.visits == before
    clock.advance(100)
    assert sc.tick()  # the lock ran out: that share-partition only
    assert sc.visits - before == 1
    assert sc.partitions[("s7", topic.id, 0)].next_lock_deadline() is None
    clock.advance(session - lock)  # s0's session ran out (the others' a second later)
    assert sc.tick()
    assert sc.visits - before == 2
    assert not sc.groups.peek("s0").members and sc.groups.peek("s1").members


def test_transaction_news_names_only_the_partitions_markers_went_to() -> None:
    """Parked fetches and produces wait on partitions: a transaction's steps wake none
    of them, its markers only those of their partitions."""
    s, clock, gc = make()
    tc = TransactionCoordinator(s, gc)
    tc.ensure_txn_topic()
    s.take_changes()
    err, pid, epoch = tc.init_producer_id("tx", 60_000)
    assert err == E.NONE
    assert tc.add_partitions("tx", pid, epoch, [("in", 1), ("in", 3)]) == {
        ("in", 1): 0, ("in", 3): 0}
    assert s.take_changes() == (False, set())
    assert tc.end_txn("tx", pid, epoch, commit=True)[0] == E.NONE
    assert s.take_changes() == (False, {("in", 1), ("in", 3)})


def test_a_regex_subscription_follows_topics_created_and_deleted() -> None:
    """Regex matches are cached per topic set (a heartbeat does not scan every topic):
    a created topic that matches joins the subscription, a deleted one leaves it."""
    s, clock, gc = make()
    for i in range(200):
        s.create_topic(f"other-{i}", 1, 1)
    s.create_topic("rx-a", 2, 1)

    def subscribed(epoch: int) -> tuple[int, set[str]]:
        r = gc.consumer_group_heartbeat("rx", "m", epoch, rebalance_timeout_ms=60_000,
                                        subscribed_topic_regex="rx-.*", topic_partitions=[]
                                        if epoch == 0 else None)
        assert r["error_code"] == E.NONE, r
        return r["member_epoch"], set(gc.groups.peek("rx").subscription_metadata)

    epoch, topics = subscribed(0)
    assert topics == {"rx-a"}
    epoch, topics = subscribed(epoch)
    assert topics == {"rx-a"}
    s.create_topic("rx-b", 1, 1)
    epoch, topics = subscribed(epoch)
    assert topics == {"rx-a", "rx-b"}
    s.delete_topic("rx-a")
    epoch, topics = subscribed(epoch)
    assert topics == {"rx-b"}


def test_a_parked_share_fetch_wakes_for_its_partition_and_group_only() -> None:
    """A ShareFetch with nothing to acquire parks on its partitions and its group's
    share state: appends elsewhere and another share group's acquisitions wake it not
    once; records on its partition do."""
    s, clock, gc = make()
    sc = SharePartitionManager(s, gc)
    for g in ("sa", "sb"):
        sc.set_group_config(g, "share.auto.offset.reset", "earliest")
        r = sc.share_group_heartbeat(g, f"{g}-m", 0, rack_id=None,
                                     subscribed_topic_names=["in"])
        assert r["error_code"] == E.NONE, r
    topic = s.topics["in"]
    p0, p1 = topic.partitions[0], topic.partitions[1]
    server = EmulatorServer(s)
    counted = CountedChecks()

    def share_fetch(group: str, p, wait: int):
        ctx = RequestContext(s, p.leader, 78, 1, 1, "c", services=Services(share=sc))
        return api_078_share_fetch.handle(ctx, {
            "group_id": group, "member_id": f"{group}-m", "share_session_epoch": 0,
            "max_wait_ms": wait, "min_bytes": 1, "max_bytes": 1 << 20, "max_records": 100,
            "batch_size": 100, "share_acquire_mode": 0, "is_renew_ack": False,
            "topics": [{"topic_id": topic.id, "partitions": [
                {"partition_index": p.index, "partition_max_bytes": 0,
                 "acknowledgement_batches": []}]}],
            "forgotten_topics_data": []}, 1)

    def parked() -> Delayed:
        d = share_fetch("sa", p0, 30_000)
        assert isinstance(d, Delayed)
        return counted.wrap(d)

    def produce(p) -> None:
        r = s.append(p.leader, "in", p.index, build_batch([(None, b"v")] * 2), -1)
        assert r.error == E.NONE
        s.tick()

    async def scenario() -> dict:
        s.take_changes()
        task = asyncio.ensure_future(server.wait_delayed(parked()))
        await asyncio.sleep(0)
        assert counted.n == 1
        produce(p1)  # another partition's records ...
        got = share_fetch("sb", p1, 0)  # ... acquired by another share group
        assert got["responses"][0]["partitions"][0]["acquired_records"]
        for _ in range(10):  # a woken request would run its check meanwhile
            await asyncio.sleep(0)
        assert counted.n == 1 and not task.done()
        produce(p0)
        return await asyncio.wait_for(task, 5)

    result = asyncio.run(scenario())
    part = result["responses"][0]["partitions"][0]
    assert part["acquired_records"] == [
        {"first_offset": 0, "last_offset": 1, "delivery_count": 1}]
    s.on_change = None
