"""ISR, high watermark and acks=all under a manual clock (Kafka's Partition and
Replica rules)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from cluster_sim import produce, settle

from emulator.cluster import controller, leadership
from emulator.cluster.clock import ManualClock
from emulator.cluster.events import IsrExpanded, IsrShrunk
from emulator.cluster.followers import truncate_follower
from emulator.cluster.log_dirs import describe_log_dirs
from emulator.cluster.partition import Partition, check_current_leader_epoch, epoch_end_offset
from emulator.cluster.reassignment import alter_partition_reassignments
from emulator.cluster.state import Broker, ClusterState
from emulator.control.metrics import cluster_view
from emulator.log import FollowerState, Log
from wire.errors import ErrorCode as E
from wire.errors import KafkaError
from wire.records import Record, build_batch

if TYPE_CHECKING:
    from conftest import MakeCluster

LAG = 1000
BROKER_CONFIG = {"replica.lag.time.max.ms": str(LAG)}


def test_high_watermark_is_the_minimum_leo_over_the_isr(make_cluster: MakeCluster) -> None:
    s, clock, f = make_cluster()
    s.create_topic("t", assignments={0: [1, 2, 3]})
    p = s.get_partition("t", 0)
    f.apply({"op": "pause_follower", "broker": 3})
    produce(s, p, 5, acks=-1)
    assert p.high_watermark == 0  # nobody has fetched yet
    s.tick()
    assert p.logs[2].log_end_offset == 5 and p.logs[3].log_end_offset == 0
    assert p.high_watermark == 0  # 3 is in the ISR and has nothing
    f.apply({"op": "resume_follower", "broker": 3})
    s.tick()
    assert p.high_watermark == 5
    assert p.follower_hw == {2: 5, 3: 5}


def test_acks_all_waits_for_the_isr(make_cluster: MakeCluster) -> None:
    s, clock, f = make_cluster()
    s.create_topic("t", assignments={0: [1, 2, 3]})
    p = s.get_partition("t", 0)
    f.apply({"op": "pause_follower", "broker": 3})
    r = produce(s, p, 2, acks=-1)
    s.tick()
    assert s.acks_all_done("t", 0, r.last_offset, r.leader_epoch) == (False, 0)
    f.apply({"op": "resume_follower", "broker": 3})
    s.tick()
    assert s.acks_all_done("t", 0, r.last_offset, r.leader_epoch) == (True, 0)


def test_isr_shrink_at_the_exact_lag_boundary(make_cluster: MakeCluster) -> None:
    s, clock, f = make_cluster()
    s.create_topic("t", assignments={0: [1, 2, 3]})
    p = s.get_partition("t", 0)
    s.tick()  # both followers fetch, caught up at t0
    t0 = clock.now_ms()
    assert p.followers[3].last_caught_up_ms == t0
    f.apply({"op": "pause_follower", "broker": 3})
    produce(s, p, 1, acks=-1)  # now 3 is behind the leader's LEO
    s.tick()
    clock.advance(LAG)
    assert p.out_of_sync(clock.now_ms(), LAG) == []  # exactly lag ms: still caught up
    assert not s.maintain_isr(p, clock.now_ms(), LAG) or 3 in p.isr
    assert 3 in p.isr
    clock.advance(1)
    assert p.out_of_sync(clock.now_ms(), LAG) == [3]
    shrinks = s.isr_shrinks
    epoch = p.partition_epoch
    s.maintain_isr(p, clock.now_ms(), LAG)
    assert p.isr == [1, 2]
    assert (s.isr_shrinks, p.partition_epoch) == (shrinks + 1, epoch + 1)
    assert s.isr_shrinks_by_broker[1] == 1
    assert p.leader_epoch == 0  # KRaft: an ISR shrink does not bump the leader epoch
    assert p.high_watermark == 1  # the shrink let the HW reach the leader's LEO


def test_idle_partition_does_not_shrink_a_silent_follower(make_cluster: MakeCluster) -> None:
    s, clock, f = make_cluster()
    s.create_topic("t", assignments={0: [1, 2, 3]})
    p = s.get_partition("t", 0)
    produce(s, p, 1, acks=-1)
    s.tick()
    f.apply({"op": "pause_follower", "broker": 3})
    clock.advance(10 * LAG)
    s.maintain_isr(p, clock.now_ms(), LAG)
    assert p.isr == [1, 2, 3]  # its LEO equals the leader's: isCaughtUp


def test_isr_expiration_runs_every_half_lag(make_cluster: MakeCluster) -> None:
    s, clock, f = make_cluster()
    s.create_topic("t", assignments={0: [1, 2, 3]})
    p = s.get_partition("t", 0)
    s.tick()  # the first expiration check runs now; the next at +LAG/2
    f.apply({"op": "pause_follower", "broker": 3})
    produce(s, p, 1, acks=-1)
    s.tick()
    last = p.followers[3].last_caught_up_ms
    for step in (LAG // 2, LAG // 2):  # checks at +500 and +1000: not yet out of sync
        clock.advance(step)
        s.tick()
        assert 3 in p.isr
    clock.advance(LAG // 2 - 1)  # no check before +1500
    s.tick()
    assert 3 in p.isr and clock.now_ms() - last > LAG
    clock.advance(1)
    s.tick()
    assert p.isr == [1, 2]


def test_isr_expansion_needs_the_hw_and_the_epoch_start(make_cluster: MakeCluster) -> None:
    s, clock, f = make_cluster()
    s.create_topic("t", assignments={0: [1, 2, 3]})
    p = s.get_partition("t", 0)
    f.apply({"op": "pause_follower", "broker": 3})
    for _ in range(4):
        produce(s, p, 1, acks=-1)  # four batches
    s.tick()
    clock.advance(LAG + 1)
    s.maintain_isr(p, clock.now_ms(), LAG)
    assert p.isr == [1, 2] and p.high_watermark == 4
    f.apply({"op": "resume_follower", "broker": 3})
    f.apply({"op": "slow_follower", "broker": 3, "delay_ms": 0, "max_bytes": 1})
    # one batch per fetch: LEO 1 < HW 4: not yet
    s.replicate_partition(p, clock.now_ms())
    assert p.followers[3].log_end_offset == 1 and 3 not in p.isr
    expands = s.isr_expands
    for _ in range(5):
        s.replicate_partition(p, clock.now_ms())
    assert p.logs[3].log_end_offset == 4 and 3 in p.isr
    assert s.isr_expands == expands + 1


def test_isr_expansion_waits_for_the_leader_epoch_start(make_cluster: MakeCluster) -> None:
    s, clock, f = make_cluster()
    s.create_topic("t", assignments={0: [1, 2, 3]})
    p = s.get_partition("t", 0)
    p.high_watermark = 0
    p.isr = [1, 2]
    p.logs[1].assign_epoch(5, 3)  # pretend the leader's current epoch started at 3
    p.leader_epoch = 5
    p.update_follower(3, 0, clock.now_ms())
    assert p.followers[3].log_end_offset == 0 >= p.high_watermark
    assert not p.can_join_isr(3)  # LEO 0 < the epoch's start offset 3


def test_not_enough_replicas_before_append_and_after(make_cluster: MakeCluster) -> None:
    s, clock, f = make_cluster()
    s.create_topic("t", assignments={0: [1, 2, 3]}, configs={"min.insync.replicas": "2"})
    p = s.get_partition("t", 0)
    r = produce(s, p, 1, acks=-1)
    f.apply({"op": "pause_follower", "broker": 2})
    f.apply({"op": "pause_follower", "broker": 3})
    clock.advance(LAG + 1)
    s.maintain_isr(p, clock.now_ms(), LAG)
    assert p.isr == [1]
    # below min.insync.replicas: refused before the append, nothing written
    leo = p.log_end_offset
    bad = s.append(1, "t", 0, build_batch([(None, b"x")]), -1)
    assert bad.error == E.NOT_ENOUGH_REPLICAS and p.log_end_offset == leo
    # acks=1 is still written, but the HW does not move under min ISR (KAFKA-15583)
    ok = s.append(1, "t", 0, build_batch([(None, b"y")]), 1)
    assert ok.error == 0 and p.high_watermark == 0
    # an acks=all append made while the ISR was big enough, answered after it shrank
    s2, clock2, f2 = make_cluster()
    s2.create_topic("u", assignments={0: [1, 2, 3]}, configs={"min.insync.replicas": "3"})
    q = s2.get_partition("u", 0)
    r = produce(s2, q, 1, acks=-1)
    s2.tick()
    assert s2.acks_all_done("u", 0, r.last_offset, r.leader_epoch) == (True, 0)
    f2.apply({"op": "pause_follower", "broker": 3})
    produce(s2, q, 1, acks=-1)
    s2.tick()
    q.isr = [1, 2]  # the shrink lands after the HW passed the append
    assert s2.acks_all_done("u", 0, r.last_offset, r.leader_epoch) == \
        (True, E.NOT_ENOUGH_REPLICAS_AFTER_APPEND)


def test_acks_all_after_a_leader_change_is_not_leader(make_cluster: MakeCluster) -> None:
    s, clock, f = make_cluster()
    s.create_topic("t", assignments={0: [1, 2, 3]})
    p = s.get_partition("t", 0)
    f.apply({"op": "pause_follower", "broker": 2})
    f.apply({"op": "pause_follower", "broker": 3})
    r = produce(s, p, 3, acks=-1)
    controller.broker_stopped(s, 1)
    assert s.acks_all_done("t", 0, r.last_offset, r.leader_epoch) == \
        (True, E.NOT_LEADER_OR_FOLLOWER)
    # the new leader never had those records; a retry is appended, not a "duplicate"
    assert p.log_end_offset == 0


def test_new_leader_starts_from_its_own_high_watermark(make_cluster: MakeCluster) -> None:
    s, clock, f = make_cluster()
    s.create_topic("t", assignments={0: [1, 2, 3]})
    p = s.get_partition("t", 0)
    produce(s, p, 3, acks=-1)
    s.tick()
    assert p.high_watermark == 3 and p.follower_hw[2] == 3
    f.apply({"op": "pause_follower", "broker": 2})
    f.apply({"op": "pause_follower", "broker": 3})
    produce(s, p, 2, acks=-1)  # not replicated
    controller.broker_stopped(s, 1)
    assert (p.leader, p.high_watermark, p.log_end_offset) == (2, 3, 3)
    # followers' states are unknown to the new leader: HW waits for the ISR to fetch
    assert p.followers[3].log_end_offset == -1
    f.apply({"op": "resume_follower", "broker": 3})
    produce(s, p, 1, acks=-1)
    assert p.high_watermark == 3
    s.tick()
    assert p.high_watermark == 4


def test_list_offsets_latest_waits_for_a_new_leaders_high_watermark(
        make_cluster: MakeCluster) -> None:
    """KIP-207: a lagging new leader answers OFFSET_NOT_AVAILABLE, never an older end."""
    s, clock, f = make_cluster()
    s.create_topic("t", assignments={0: [1, 2, 3]})
    p = s.get_partition("t", 0)
    produce(s, p, 3, acks=-1)
    s.tick()
    f.apply({"op": "pause_follower", "broker": 3})
    produce(s, p, 2, acks=-1)
    s.tick()  # 2 has all five records, but 3 holds the HW at 3
    assert (p.high_watermark, p.logs[2].log_end_offset) == (3, 5)
    controller.broker_stopped(s, 1)
    assert (p.leader, p.high_watermark, p.leader_epoch_start()) == (2, 3, 5)
    for ts in (-1, 10**13):  # LATEST, and a timestamp past every record
        try:
            s.list_offset(2, "t", 0, ts, 0)
        except KafkaError as e:
            assert e.code == E.OFFSET_NOT_AVAILABLE
        else:
            raise AssertionError(f"timestamp {ts} answered while the HW lags")
    assert s.list_offset(2, "t", 0, -2, 0)[0] == 0  # EARLIEST is always known
    assert s.list_offset(2, "t", 0, 0, 0)[0] == 0  # a record below the HW is found
    assert s.list_offset(2, "t", 0, -1, 0, client=False)[0] == 5  # replicas read to LEO
    f.apply({"op": "resume_follower", "broker": 3})
    s.tick()
    assert p.high_watermark == 5
    assert s.list_offset(2, "t", 0, -1, 0)[0] == 5


def test_caught_up_replica_outside_the_isr_holds_the_hw(make_cluster: MakeCluster) -> None:
    s, clock, f = make_cluster()
    s.create_topic("t", assignments={0: [1, 2, 3]})
    p = s.get_partition("t", 0)
    produce(s, p, 2, acks=-1)
    s.tick()
    p.isr = [1, 2]  # 3 left the ISR but has just caught up (within the lag)
    p.update_follower(3, 1, clock.now_ms())
    p.high_watermark = 1
    p.followers[2].log_end_offset = 2
    clock.advance(LAG)  # replica.lag.time.max.ms since it last caught up: still caught up
    s.advance_hw(p)
    assert p.high_watermark == 1  # shouldWaitForReplicaToJoinIsr
    clock.advance(1)
    s.advance_hw(p)
    assert p.high_watermark == 2


def test_a_caught_up_replica_holds_the_hw_beside_one_in_a_failed_log_dir(
        make_cluster: MakeCluster) -> None:
    """Another replica's failed log dir takes only that replica out of the question: the
    caught-up replica outside the ISR still holds the high watermark."""
    s, clock, f = make_cluster(brokers=4)
    s.create_topic("t", assignments={0: [1, 2, 3, 4]})
    p = s.get_partition("t", 0)
    produce(s, p, 2, acks=-1)
    s.tick()
    p.isr = [1, 2]
    p.offline = {4}
    p.high_watermark = 1
    p.followers[3] = FollowerState(log_end_offset=1, last_caught_up_ms=clock.now_ms())
    s.advance_hw(p)
    assert p.high_watermark == 1
    p.followers[3].log_end_offset = 2
    s.advance_hw(p)
    assert p.high_watermark == 2


def _append_at(s: ClusterState, p: Partition, stamps: list[int], acks: int = -1) -> None:
    recs = [Record(i, ts, None, b"v") for i, ts in enumerate(stamps)]
    r = s.append(p.leader, p.topic, p.index, build_batch(recs, timestamp=min(stamps)), acks)
    assert r.error == 0, r


def test_max_timestamp_on_a_lagging_new_leader(make_cluster: MakeCluster) -> None:
    """KIP-207 refuses what lies at or above a lagging new leader's high watermark, not
    below it: MAX_TIMESTAMP's record below the HW is answered (its timestamp is not an
    offset), one above it is OFFSET_NOT_AVAILABLE; records with no timestamp (-1) below
    the HW answer the first of them, as Kafka 4.4 does on a healthy leader."""
    s, clock, f = make_cluster()
    for topic in "tuv":
        s.create_topic(topic, assignments={0: [1, 2, 3]})
    parts = {t: s.get_partition(t, 0) for t in "tuv"}
    for topic, first in (("t", [9000, 1000, 2000]), ("u", [1000, 2000, 3000]),
                         ("v", [-1, -1, -1])):
        _append_at(s, parts[topic], first)
    s.tick()
    f.apply({"op": "pause_follower", "broker": 3})
    for topic, rest in (("t", [3000, 4000]), ("u", [9000, 4000]), ("v", [-1, -1])):
        _append_at(s, parts[topic], rest)
    s.tick()  # 2 has all five records, but 3 holds the HW at 3
    controller.broker_stopped(s, 1)
    for p in parts.values():
        assert (p.leader, p.high_watermark, p.leader_epoch_start()) == (2, 3, 5)
    assert s.list_offset(2, "t", 0, -3, 0) == (0, 9000, 0)
    with pytest.raises(KafkaError) as e:
        s.list_offset(2, "u", 0, -3, 0)
    assert e.value.code == E.OFFSET_NOT_AVAILABLE
    assert s.list_offset(2, "v", 0, -3, 0) == (0, -1, 0)


def test_max_timestamp_above_the_high_watermark_is_nothing_yet(
        make_cluster: MakeCluster) -> None:
    """Without a leader change, a MAX_TIMESTAMP record the high watermark has not
    reached is not answered: (-1, -1, -1), as Kafka's ReplicaManager answers a lookup
    that found an offset at or above the last fetchable one; found once it is reached."""
    s, clock, f = make_cluster()
    s.create_topic("t", assignments={0: [1, 2, 3]})
    p = s.get_partition("t", 0)
    _append_at(s, p, [1000])
    s.tick()
    f.apply({"op": "pause_follower", "broker": 3})
    _append_at(s, p, [5000, 2000], acks=1)
    s.tick()
    assert (p.high_watermark, p.log_end_offset) == (1, 3)
    assert s.list_offset(1, "t", 0, -3, 0) == (-1, -1, -1)
    assert s.list_offset(1, "t", 0, -3, 0, client=False) == (1, 5000, 0)  # a replica's
    f.apply({"op": "resume_follower", "broker": 3})
    s.tick()
    assert s.list_offset(1, "t", 0, -3, 0) == (1, 5000, 0)


def test_a_new_partition_starts_at_partition_epoch_0(make_cluster: MakeCluster) -> None:
    """Kafka's controller registers a new partition (CreateTopics or CreatePartitions)
    with leader epoch 0 and partition epoch 0 (ReplicationControlManager's
    buildPartitionRegistration), and every change after adds one to the partition
    epoch. The control plane's GET /cluster shows both to whoever compares them with
    Kafka's metadata (kafka-metadata-shell's PartitionRecord)."""
    s, clock, f = make_cluster()
    s.create_topic("t", assignments={0: [1, 2, 3]})
    s.create_partitions("t", 2, [[2, 3, 1]], validate_only=False)

    def epochs() -> list[tuple[int, int]]:
        return [(v["leader_epoch"], v["partition_epoch"])
                for v in cluster_view(s)["topics"]["t"]["partitions"]]

    assert epochs() == [(0, 0), (0, 0)]
    s.tick()
    f.apply({"op": "pause_follower", "broker": 3})
    produce(s, s.get_partition("t", 0), 1, acks=-1)
    s.tick()
    clock.advance(LAG + 1)
    s.maintain_isr(s.get_partition("t", 0), clock.now_ms(), LAG)
    assert epochs() == [(0, 1), (0, 0)]  # the shrink: one partition epoch, no leader epoch


def test_each_isr_change_is_counted_once_and_bumps_the_partition_epoch_once(
        make_cluster: MakeCluster) -> None:
    """Every AlterPartition the leader makes (a shrink, an expansion) is one partition
    epoch, one count of IsrShrinksPerSec / IsrExpandsPerSec for the leader's broker, and
    one event naming the partition and the follower(s); twice over, so that a counter or
    epoch set instead of incremented shows."""
    s, clock, f = make_cluster()
    s.create_topic("t", assignments={0: [1, 2, 3]})
    p = s.get_partition("t", 0)
    events: list[object] = []
    s.hooks.append(lambda kind, event: events.append(event))
    s.tick()
    epoch = p.partition_epoch
    counts = (s.isr_shrinks, s.isr_expands, dict(s.isr_shrinks_by_broker),
              dict(s.isr_expands_by_broker))
    for round_ in (1, 2):
        f.apply({"op": "pause_follower", "broker": 3})
        produce(s, p, 1, acks=-1)
        s.tick()
        clock.advance(LAG + 1)
        s.maintain_isr(p, clock.now_ms(), LAG)
        assert p.isr == [1, 2]
        assert p.partition_epoch == epoch + 2 * round_ - 1
        f.apply({"op": "resume_follower", "broker": 3})
        s.tick()
        assert p.isr == [1, 2, 3]
        assert p.partition_epoch == epoch + 2 * round_
    assert (s.isr_shrinks, s.isr_expands) == (counts[0] + 2, counts[1] + 2)
    assert s.isr_shrinks_by_broker == {**counts[2], 1: counts[2][1] + 2}
    assert s.isr_expands_by_broker == {**counts[3], 1: counts[3][1] + 2}
    isr_events = [e for e in events if isinstance(e, (IsrShrunk, IsrExpanded))]
    assert isr_events == [IsrShrunk(topic="t", partition=0, brokers=[3]),
                          IsrExpanded(topic="t", partition=0, broker=3)] * 2


def test_a_follower_that_does_not_fetch_stays_out_of_the_isr(make_cluster: MakeCluster) -> None:
    """Kafka adds a follower to the ISR only on its fetch (maybeExpandIsr runs from
    updateFollowerFetchState; the isr-expiration task only shrinks). Two paused followers
    whose last LEO is the high watermark that min.insync.replicas now holds still are out
    after one shrink and stay out, whatever the checks that follow; they rejoin when
    they fetch again."""
    s, clock, f = make_cluster()
    s.create_topic("t", assignments={0: [1, 2, 3]}, configs={"min.insync.replicas": "2"})
    p = s.get_partition("t", 0)
    produce(s, p, 1, acks=-1)
    s.tick()
    f.apply({"op": "pause_follower", "broker": 2})
    f.apply({"op": "pause_follower", "broker": 3})
    produce(s, p, 1, acks=1)
    s.tick()
    events: list[object] = []
    s.hooks.append(lambda kind, event: events.append(event))
    epoch, expands = p.partition_epoch, s.isr_expands
    for _ in range(6):  # three lag times, six expiration checks
        clock.advance(LAG // 2 + 1)
        s.tick()
    assert (p.isr, p.high_watermark, p.log_end_offset) == ([1], 1, 2)
    assert (p.partition_epoch, s.isr_expands) == (epoch + 1, expands)
    assert [e for e in events if isinstance(e, (IsrShrunk, IsrExpanded))] == [
        IsrShrunk(topic="t", partition=0, brokers=[2, 3])]
    f.apply({"op": "resume_follower", "broker": 2})
    s.tick()
    assert (p.isr, p.high_watermark) == ([1, 2], 2)


def test_maintain_isr_says_whether_it_changed_something(make_cluster: MakeCluster) -> None:
    """The isr-expiration check answers True when it shrank the ISR or moved the high
    watermark (news for the requests parked on the partition), False when it did
    neither."""
    s, clock, f = make_cluster()
    s.create_topic("t", assignments={0: [1, 2, 3]}, configs={"min.insync.replicas": "3"})
    p = s.get_partition("t", 0)
    s.tick()
    assert s.maintain_isr(p, clock.now_ms(), LAG) is False  # nothing to do
    f.apply({"op": "pause_follower", "broker": 3})
    produce(s, p, 1, acks=1)
    s.tick()
    clock.advance(LAG + 1)
    assert p.high_watermark == 0
    assert s.maintain_isr(p, clock.now_ms(), LAG) is True  # a shrink; the HW held (min ISR)
    assert (p.isr, p.high_watermark) == ([1, 2], 0)
    assert s.maintain_isr(p, clock.now_ms(), LAG) is False


def test_the_isr_rules_judge_at_the_time_they_are_given(make_cluster: MakeCluster) -> None:
    """A fetch and an expiration check decide at their own time (Kafka passes the fetch's
    followerFetchTimeMs and the task's currentTimeMs to maybeIncrementLeaderHW), not
    the cluster clock's: a replica outside the ISR that caught up within
    replica.lag.time.max.ms of it holds the high watermark, one that did longer ago
    does not."""
    s, clock, f = make_cluster(brokers=4)
    s.create_topic("t", assignments={0: [1, 2, 3, 4]})
    p = s.get_partition("t", 0)
    produce(s, p, 2, acks=-1)
    s.tick()
    for b in (2, 3, 4):
        f.apply({"op": "pause_follower", "broker": b})
    late = clock.now_ms() + LAG + 1
    # 4 left the ISR and caught up to 1 just now; 2 is in the ISR at the log end; 3 is
    # in the ISR at 1 and fetches up to 2 (by hand: its fetcher is paused)
    p.isr = [1, 2, 3]
    p.high_watermark = 1
    p.followers[4] = FollowerState(log_end_offset=1, last_caught_up_ms=clock.now_ms())
    p.followers[3].log_end_offset = 1
    assert s.follower_fetch(p, 3, 1, clock.now_ms()) is False  # at the HW: nothing moves
    assert s.follower_fetch(p, 3, 2, clock.now_ms()) is False
    assert p.high_watermark == 1  # 4 is about to join: the HW waits for it
    p.followers[3].log_end_offset = 1
    assert s.follower_fetch(p, 3, 2, late) is True
    assert p.high_watermark == 2  # at that time 4 has lagged too long
    # the same through a follower outside the ISR and through the expiration check
    for check in ("fetch", "expiration"):
        p.isr, p.high_watermark = [1, 2], 1
        p.followers[3] = FollowerState(log_end_offset=0, last_caught_up_ms=0)
        p.followers[4] = FollowerState(log_end_offset=1, last_caught_up_ms=clock.now_ms())
        if check == "fetch":
            assert s.follower_fetch(p, 3, 0, clock.now_ms()) is False
            assert p.high_watermark == 1
            assert s.follower_fetch(p, 3, 0, late) is True
        else:
            s.maintain_isr(p, clock.now_ms(), LAG)
            assert p.high_watermark == 1
            assert s.maintain_isr(p, late, LAG) is True
        assert (p.isr, p.high_watermark) == ([1, 2], 2), check
    # a follower joining the ISR is news even when the high watermark stays
    assert s.follower_fetch(p, 4, 2, late) is True
    assert (p.isr, p.high_watermark) == ([1, 2, 4], 2)


def test_an_epoch_bump_that_keeps_the_leader_keeps_what_it_knows_of_its_followers(
        make_cluster: MakeCluster) -> None:
    """Kafka's resetReplicaState when the leader stays (isNewLeader false): each
    follower's LEO is kept, so a silent follower at the log end is still caught up and
    an idle partition does not shrink it, however long it is silent."""
    s, clock, f = make_cluster()
    s.create_topic("t", assignments={0: [1, 2, 3]})
    p = s.get_partition("t", 0)
    produce(s, p, 2, acks=-1)
    s.tick()
    f.apply({"op": "pause_follower", "broker": 3})
    epoch = p.leader_epoch
    assert leadership.partition_change(s, p, force_epoch_bump=True)
    assert (p.leader, p.leader_epoch) == (1, epoch + 1)
    assert p.followers[3].log_end_offset == 2
    clock.advance(10 * LAG)
    s.maintain_isr(p, clock.now_ms(), LAG)
    assert p.isr == [1, 2, 3]


def test_a_new_leader_is_not_held_back_by_a_follower_out_of_the_isr(
        make_cluster: MakeCluster) -> None:
    """A new leader counts a follower outside the ISR as not caught up (Kafka's
    resetReplicaState: lastCaughtUpTimeMs 0 unless in the ISR), so its high watermark
    moves with the ISR at once, without waiting replica.lag.time.max.ms for it."""
    s, clock, f = make_cluster()
    s.create_topic("t", assignments={0: [1, 2, 3]})
    p = s.get_partition("t", 0)
    f.apply({"op": "pause_follower", "broker": 3})
    produce(s, p, 1, acks=-1)
    s.tick()
    clock.advance(LAG + 1)
    s.maintain_isr(p, clock.now_ms(), LAG)
    assert p.isr == [1, 2]
    controller.broker_stopped(s, 1)
    assert (p.leader, p.isr) == (2, [2])
    produce(s, p, 1, acks=1)
    assert (p.high_watermark, p.log_end_offset) == (2, 2)


def test_an_epoch_bump_that_keeps_the_leader_restarts_the_lag_of_the_isr_only(
        make_cluster: MakeCluster) -> None:
    """resetReplicaState with the leader staying: a follower in the ISR counts as caught
    up at the bump (it leaves replica.lag.time.max.ms after it, not after its last
    catch-up); one outside the ISR does not (it holds no high watermark back)."""
    s, clock, f = make_cluster(brokers=4)
    s.create_topic("t", assignments={0: [1, 2, 3, 4]})
    p = s.get_partition("t", 0)
    f.apply({"op": "pause_follower", "broker": 4})
    produce(s, p, 2, acks=-1)
    s.tick()
    clock.advance(LAG + 1)
    s.maintain_isr(p, clock.now_ms(), LAG)
    assert p.isr == [1, 2, 3]  # 4 never fetched
    s.tick()  # 3 fetches at the log end: caught up now
    f.apply({"op": "pause_follower", "broker": 3})
    produce(s, p, 1, acks=1)
    s.tick()
    assert (p.high_watermark, p.logs[3].log_end_offset) == (2, 2)
    clock.advance(LAG // 2)
    leadership.partition_change(s, p, force_epoch_bump=True)
    assert p.leader == 1
    bump = clock.now_ms()
    assert p.is_caught_up(p.followers[3], bump + LAG, LAG)  # the bump is its catch-up
    assert not p.is_caught_up(p.followers[4], bump, LAG)
    clock.advance(LAG // 2 + 1)  # LAG + 1 after 3 last caught up, LAG // 2 + 1 after the bump
    s.maintain_isr(p, clock.now_ms(), LAG)
    assert p.isr == [1, 2, 3] and p.high_watermark == 2
    clock.advance(LAG // 2)  # LAG + 1 after the bump
    s.maintain_isr(p, clock.now_ms(), LAG)
    assert p.isr == [1, 2] and p.high_watermark == 3  # 4, outside, does not hold it


def test_a_follower_that_never_fetches_a_new_empty_partition_leaves_the_isr(
        make_cluster: MakeCluster) -> None:
    """A new partition's leader knows no follower's LEO (Kafka's ReplicaState.EMPTY and
    resetReplicaState for a new leader: -1, not 0), so a follower that never fetches is
    not "at the leader's log end" of the empty log: it leaves the ISR
    replica.lag.time.max.ms after the creation, like any follower that stopped
    fetching; the one that fetched at 0 stays, however long the partition is idle."""
    s, clock, f = make_cluster()
    f.apply({"op": "pause_follower", "broker": 3})
    s.create_topic("t", assignments={0: [1, 2, 3]})
    p = s.get_partition("t", 0)
    s.tick()
    assert (p.followers[2].log_end_offset, p.followers[3].log_end_offset) == (0, -1)
    clock.advance(LAG)
    s.maintain_isr(p, clock.now_ms(), LAG)
    assert p.isr == [1, 2, 3]
    clock.advance(1)
    s.maintain_isr(p, clock.now_ms(), LAG)
    assert (p.isr, p.log_end_offset) == ([1, 2], 0)


def test_an_epoch_bump_gives_a_follower_outside_the_isr_no_catch_up_at_its_next_fetch() -> None:
    """resetReplicaState with the leader staying sets lastFetchTimeMs to 0 for a
    follower outside the ISR, not to the bump's time. Its first fetch after the bump,
    at the leader's log end of the bump (10: it appended what its fetch before it
    brought) but short of the leader's now (15), takes lastCaughtUpTimeMs from that
    last fetch (updateFetchState's second rule): 0, not caught up, so it does not hold
    the high watermark while it is about to join."""
    now = 1_700_000_000_000
    p = Partition("t", bytes(16), 0, [1, 2, 3])
    p.logs[1] = _epoch_log((0, 10))
    p.isr, p.high_watermark = [1, 2], 10
    p.followers[2] = FollowerState(log_end_offset=10, last_caught_up_ms=now,
                                   last_fetch_leader_leo=10, last_fetch_ms=now)
    # 3 last fetched at 5 when the leader had 10, long after it left the ISR
    p.followers[3] = FollowerState(log_end_offset=5, last_caught_up_ms=now - 10 * LAG,
                                   last_fetch_leader_leo=10, last_fetch_ms=now - 1)
    p.leader_epoch = 1
    p.leader_log.assign_epoch(1, 10)
    p.reset_follower_states(now, new_leader=False)
    for _ in range(5):
        p.leader_log.append_as_leader(build_batch([(None, b"v")]), 1)
    later = now + LAG // 2
    p.update_follower(2, 15, later)
    p.update_follower(3, 10, later)
    assert not p.is_caught_up(p.followers[3], later, LAG)
    assert p.maybe_advance_hw(1, later, LAG, eligible=[3])
    assert p.high_watermark == 15


def test_a_partition_led_by_broker_0_moves_its_high_watermark(make_cluster: MakeCluster) -> None:
    """Broker ids start at 0 on the official images (KAFKA_NODE_ID=0): only -1 means no
    leader."""
    s, clock, f = make_cluster(brokers=[0, 1, 2])
    s.create_topic("t", assignments={0: [0, 1, 2]})
    p = s.get_partition("t", 0)
    produce(s, p, 2, acks=-1)
    s.tick()
    assert (p.leader, p.high_watermark) == (0, 2)
    f.apply({"op": "pause_follower", "broker": 2})
    produce(s, p, 1, acks=-1)
    s.tick()
    clock.advance(LAG + 1)
    s.maintain_isr(p, clock.now_ms(), LAG)
    assert (p.isr, p.high_watermark) == ([0, 1], 3)


def test_a_replica_moved_away_leaves_no_log_on_its_broker(make_cluster: MakeCluster) -> None:
    """A reassignment that drops a replica deletes its log there (StopReplica with
    deletion): the broker's DescribeLogDirs no longer lists the partition, and its
    fetch and high-watermark state is gone with it."""
    s, clock, _ = make_cluster(4)
    s.create_topic("t", assignments={0: [1, 2, 3]})
    p = s.get_partition("t", 0)
    produce(s, p, 3)
    alter_partition_reassignments(s, [("t", [(0, [1, 2, 4])])])
    for _ in range(20):
        s.tick()
        if p.replicas == [1, 2, 4]:
            break
    assert p.replicas == [1, 2, 4] and 4 in p.isr
    assert set(p.logs) == {1, 2, 4}
    assert 3 not in p.followers and 3 not in p.follower_hw and 3 not in p.fetcher_epoch
    assert all(not d.topics for d in describe_log_dirs(s, 3, None))
    assert [n for d in describe_log_dirs(s, 4, None) for n, _ in d.topics] == ["t"]


def test_epoch_end_offset_of_a_latest_epoch_that_starts_elsewhere() -> None:
    """LeaderEpochFileCache.endOffsetFor matches the requested epoch against the epochs
    of the cache, never their start offsets: the latest epoch (7, starting at 5) ends
    at the log end offset; epoch 5, which no entry has, ends where the next one starts."""
    log = Log()
    for epoch, n in ((0, 3), (2, 2), (7, 1)):
        log.append_as_leader(build_batch([(None, b"v")] * n), epoch)
    assert log.epoch_entries() == [(0, 0), (2, 3), (7, 5)]
    assert epoch_end_offset(log, 7) == (7, 6)
    assert epoch_end_offset(log, 5) == (2, 5)
    assert epoch_end_offset(log, 3) == (2, 5)
    assert epoch_end_offset(log, 0) == (0, 3)
    assert epoch_end_offset(log, 8) == (-1, -1)  # newer than any
    assert epoch_end_offset(log, -1) == (-1, -1)  # undefined
    assert epoch_end_offset(Log(), 0) == (-1, -1)  # no epoch yet
    later = Log()
    later.append_as_leader(build_batch([(None, b"v")] * 2), 3)
    assert later.epoch_entries() == [(3, 0)]
    assert epoch_end_offset(later, 3) == (3, 2)
    assert epoch_end_offset(later, 1) == (1, 0)  # older than any: the first start


def test_check_current_leader_epoch_passes_the_current_and_an_unsaid_epoch() -> None:
    """Partition.localLogWithEpochOrThrow: the client's current leader epoch equal to
    the broker's passes, as does -1 (not said); older is FENCED_LEADER_EPOCH, newer
    UNKNOWN_LEADER_EPOCH. (check_replica asks only when they differ; a lagging
    broker's metadata view asks always.)"""
    check_current_leader_epoch(5, 5)
    check_current_leader_epoch(-1, 5)
    for client, code in ((4, E.FENCED_LEADER_EPOCH), (6, E.UNKNOWN_LEADER_EPOCH)):
        with pytest.raises(KafkaError) as err:
            check_current_leader_epoch(client, 5)
        assert err.value.code == code


def test_a_follower_serves_no_further_than_the_high_watermark_it_learnt(
        make_cluster: MakeCluster) -> None:
    """What a follower serves a consumer (a KIP-392 read from a follower) stops at the
    high watermark its fetches brought back, never past the partition's: before its
    first fetch, and after fetching records while another ISR member holds the high
    watermark at 0."""
    s, clock, f = make_cluster()
    s.create_topic("t", 1, 3)
    p = s.get_partition("t", 0)
    first, second = [b for b in p.replicas if b != p.leader]
    assert p.replica_view(first)[1:] == (0, 0)  # nothing fetched yet
    f.apply({"op": "pause_follower", "broker": second, "topic": "t", "partition": 0})
    produce(s, p, 2)
    for _ in range(5):
        s.tick()
    log, hw, lso = p.replica_view(first)
    assert log.log_end_offset == 2 and p.high_watermark == 0
    assert (hw, lso) == (0, 0)


# ---- a follower's truncation (AbstractFetcherThread: DivergingEpoch, OffsetsForLeaderEpoch)
def _epoch_log(*runs: tuple[int, int]) -> Log:
    """A log of (leader epoch, record count) runs, one record a batch (a truncation
    keeps a batch it would cut)."""
    log = Log()
    for epoch, n in runs:
        for _ in range(n):
            log.append_as_leader(build_batch([(None, b"v")]), epoch)
    return log


def _truncated(leader: Log, follower: Log, follower_hw: int = 0) -> Log:
    """``follower`` after truncate_follower against ``leader`` (broker 1 leads, 2 follows)."""
    p = Partition("t", bytes(16), 0, [1, 2])
    p.logs = {1: leader, 2: follower}
    p.follower_hw[2] = follower_hw
    truncate_follower(p, 2)
    return follower


@pytest.mark.parametrize(("leader", "follower", "end", "epochs"), [
    # the old leader's unreplicated records of epoch 0: cut where the new leader's
    # epoch 1 starts
    (((0, 3), (1, 2)), ((0, 5),), 3, [(0, 0)]),
    (((0, 3), (1, 2)), ((0, 3),), 3, [(0, 0)]),  # nothing beyond: nothing to cut
    (((0, 5),), ((0, 3),), 3, [(0, 0)]),  # behind in the same epoch: nothing to cut
    # epoch 2 unknown to the leader, which answers its 1: back to the end of the
    # follower's epoch 0 (3), asked again for 0, whose end on the leader (4) is
    # above it: 3
    (((0, 4), (1, 1), (3, 1)), ((0, 3), (2, 2)), 3, [(0, 0)]),
    # the follower led epoch 2 from 3; the leader's epoch 0 runs to 4: the follower's
    # end of epoch 0 (3) is the smaller
    (((0, 4), (3, 2)), ((0, 3), (2, 2)), 3, [(0, 0)]),
    # two rounds, the leader's end the smaller: epoch 3 -> the leader's 1, which the
    # follower lacks (cut to its epoch 3's start, 5); then 0, which ends at 2 there
    (((0, 2), (1, 4), (4, 1)), ((0, 5), (3, 1)), 2, [(0, 0)]),
    # the epoch asked is older than every epoch of the leader, whose log starts with
    # epoch 2 at 0 (an unclean election of an empty replica): everything goes
    (((2, 4),), ((1, 3),), 0, None),
])
def test_a_follower_truncates_where_its_epochs_leave_the_leaders(
        leader: tuple[tuple[int, int], ...], follower: tuple[tuple[int, int], ...],
        end: int, epochs: list[tuple[int, int]] | None) -> None:
    """getOffsetTruncationState, asked again while the leader answers an epoch the
    follower does not have: truncate to min(the follower's end of the leader's epoch,
    the leader's end of it, the log end)."""
    log = _truncated(_epoch_log(*leader), _epoch_log(*follower))
    assert log.log_end_offset == end
    if epochs is not None:
        assert log.epoch_entries() == epochs


def test_a_follower_truncates_past_an_epoch_it_led_without_appending() -> None:
    """A replica elected leader at its log end (5) that appended nothing holds an epoch
    entry (2, 5) and, before it, records of epoch 0 the next leader never had. Kafka's
    truncateTo(5) drops that entry though no record goes, so the next question names
    epoch 0, which ends at 3 on the leader: the records at 3 and 4 go."""
    follower = _epoch_log((0, 5))
    follower.assign_epoch(2, 5)
    log = _truncated(_epoch_log((0, 3), (1, 2), (3, 1)), follower)
    assert log.log_end_offset == 3 and log.epoch_entries() == [(0, 0)]


def test_a_follower_whose_epoch_the_leader_cannot_place_is_not_truncated_yet() -> None:
    """The leader knows no epoch up to the follower's latest: Kafka's fetch answers
    OFFSET_OUT_OF_RANGE, and the follower goes to the leader's log end or start from
    where it is (fetchOffsetAndTruncate), never to its own high watermark."""
    log = _truncated(Log(), _epoch_log((0, 3)), follower_hw=1)
    assert log.log_end_offset == 3
    log = _truncated(_epoch_log((0, 2)), _epoch_log((0, 2), (4, 2)), follower_hw=1)
    assert log.log_end_offset == 4  # epoch 4, newer than the leader's: the fetch cuts it


def test_an_old_leader_that_led_again_without_appending_follows_without_diverging(
        make_cluster: MakeCluster) -> None:
    """Broker 1 leads epoch 0 and has offsets 3-4 that broker 2 never fetched; 2 leads
    next and writes its own 3-5; 1 is elected (uncleanly) while 2 is down and leads
    without appending, then 2 leads again. When 1 follows, it must lose its 3-4 (epoch
    0) and fetch 2's: it stopped at its empty epoch's entry instead, kept the diverging
    records and failed to append 2's batch at 3 on its log end 5, every tick."""
    s, clock, f = make_cluster()
    s.create_topic("t", assignments={0: [1, 2]},
                   configs={"unclean.leader.election.enable": "true"})
    p = s.get_partition("t", 0)
    produce(s, p, 3, value=b"a")
    settle(s, clock)
    f.apply({"op": "pause_follower", "broker": 2})
    produce(s, p, 2, value=b"b")  # 3-4 on broker 1 only
    controller.broker_stopped(s, 1)
    f.apply({"op": "clear"})
    assert p.leader == 2
    produce(s, p, 3, value=b"c")  # 3-5 on broker 2
    controller.broker_stopped(s, 2)
    controller.broker_started(s, 1)
    assert p.leader == 1 and p.logs[1].log_end_offset == 5
    controller.broker_stopped(s, 1)
    controller.broker_started(s, 2)
    assert p.leader == 2
    controller.broker_started(s, 1)
    settle(s, clock)
    assert p.logs[1].log_end_offset == 6 and p.isr == [2, 1]
    assert p.logs[1].read(0, 1 << 30, 6) == p.logs[2].read(0, 1 << 30, 6)


# ---- what a replication round reports (news: parked requests, fetch sessions, KIP-392)
def test_a_round_where_nothing_moves_is_no_news(make_cluster: MakeCluster) -> None:
    """replicate_partition answers whether anything a reader sees moved; a settled
    partition, and the round after a leader moved between replicas in sync (each
    follower checks for divergence, finds none and has nothing to fetch), move
    nothing."""
    s, clock, f = make_cluster()
    s.create_topic("t", assignments={0: [1, 2, 3]})
    p = s.get_partition("t", 0)
    produce(s, p, 3)
    settle(s, clock)
    assert (p.isr, p.high_watermark, p.follower_hw) == ([1, 2, 3], 3, {2: 3, 3: 3})
    assert s.replicate_partition(p, clock.now_ms()) is False
    assert s.followers.run_tick(clock.now_ms(), True, True) == set()
    f.apply({"op": "move_leader", "topic": "t", "partition": 0, "broker": 2})
    assert p.leader == 2 and p.fetcher_epoch != {1: p.leader_epoch, 3: p.leader_epoch}
    assert s.replicate_partition(p, clock.now_ms()) is False
    assert p.fetcher_epoch == {1: p.leader_epoch, 3: p.leader_epoch}
    assert [p.logs[b].log_end_offset for b in (1, 2, 3)] == [3, 3, 3]


def test_the_first_round_of_a_new_empty_partition_is_no_news(make_cluster: MakeCluster) -> None:
    """A follower's first fetch of an empty partition learns the high watermark 0, the
    one Partition.replica_view assumed for it before it had any: nothing a reader sees
    moved, so parked requests are not woken for it."""
    s, clock, _ = make_cluster()
    s.create_topic("t", assignments={0: [1, 2, 3]})
    p = s.get_partition("t", 0)
    assert p.follower_hw == {}
    assert s.replicate_partition(p, clock.now_ms()) is False
    assert p.follower_hw == {2: 0, 3: 0}


def test_each_kind_of_move_in_a_round_is_news(make_cluster: MakeCluster) -> None:
    """Records fetched; only a follower's high watermark learnt (the leader's moved
    when the ISR shrank); only a log start followed (the leader's moved)."""
    s, clock, f = make_cluster()
    s.create_topic("t", assignments={0: [1, 2, 3]})
    p = s.get_partition("t", 0)
    settle(s, clock)
    produce(s, p, 2)
    assert s.replicate_partition(p, clock.now_ms()) is True  # records
    assert [p.logs[b].log_end_offset for b in (2, 3)] == [2, 2]
    assert s.replicate_partition(p, clock.now_ms()) is False
    # only the high watermark: 3 stops, 2 fetches, the shrink moves the leader's HW
    f.apply({"op": "pause_follower", "broker": 3})
    produce(s, p, 2)
    assert s.replicate_partition(p, clock.now_ms()) is True
    assert (p.high_watermark, p.follower_hw[2]) == (2, 2)
    clock.advance(LAG + 1)
    p.followers[2].last_caught_up_ms = clock.now_ms()
    s.maintain_isr(p, clock.now_ms(), LAG)
    assert (p.isr, p.high_watermark) == ([1, 2], 4)
    assert s.replicate_partition(p, clock.now_ms()) is True
    assert p.follower_hw[2] == 4 and p.logs[2].log_end_offset == 4
    assert s.replicate_partition(p, clock.now_ms()) is False
    # only a log start: the leader's moved alone (DeleteRecords and retention move the
    # followers' too at once; Kafka's followers learn it from their next fetch)
    p.leader_log.delete_before(3)
    assert p.logs[2].log_start_offset == 0
    assert s.replicate_partition(p, clock.now_ms()) is True
    assert p.logs[2].log_start_offset == 3
    assert s.replicate_partition(p, clock.now_ms()) is False


def test_a_round_that_only_truncates_a_follower_is_news(make_cluster: MakeCluster) -> None:
    """The leader moves to a replica that lacks the old leader's last two records (not
    yet fetched, acks=1); the old leader, now a follower, truncates them and has
    nothing to fetch: the truncation alone is the news (a KIP-392 reader of its log
    sees it shrink), whatever the next follower finds."""
    s, clock, f = make_cluster()
    s.create_topic("t", assignments={0: [1, 2, 3]})
    p = s.get_partition("t", 0)
    produce(s, p, 3)
    settle(s, clock)
    for b in (2, 3):
        f.apply({"op": "pause_follower", "broker": b})
    produce(s, p, 2)
    f.apply({"op": "clear"})
    f.apply({"op": "move_leader", "topic": "t", "partition": 0, "broker": 2})
    assert (p.leader, p.isr, p.logs[1].log_end_offset) == (2, [1, 2, 3], 5)
    assert s.replicate_partition(p, clock.now_ms()) is True
    assert [p.logs[b].log_end_offset for b in (1, 2, 3)] == [3, 3, 3]
    assert s.replicate_partition(p, clock.now_ms()) is False


# ---- who fetches in a round --------------------------------------------------------------
def test_a_cluster_no_fault_touched_replicates(make_cluster: MakeCluster) -> None:
    """A server's cluster has no fault model until a fault, rule or schedule is first
    used (``state.faults`` None): replication asks it nothing then."""
    clock = ManualClock()
    s = ClusterState([Broker(i, "h", 9000 + i) for i in (1, 2, 3)], clock=clock,
                     broker_config=dict(BROKER_CONFIG))
    assert s.faults is None
    s.create_topic("t", assignments={0: [1, 2, 3]})
    p = s.get_partition("t", 0)
    produce(s, p, 2)
    settle(s, clock)
    assert [p.logs[b].log_end_offset for b in (2, 3)] == [2, 2] and p.high_watermark == 2


def test_a_stopped_follower_fetches_nothing_until_it_starts(make_cluster: MakeCluster) -> None:
    """A stopped broker's replica (first in the replica order here) gets nothing, and the
    follower after it still does; started again, it catches up."""
    s, clock, f = make_cluster()
    s.create_topic("t", assignments={0: [1, 2, 3]})
    p = s.get_partition("t", 0)
    controller.broker_stopped(s, 2)
    produce(s, p, 2)
    settle(s, clock)
    assert [p.logs[b].log_end_offset for b in (2, 3)] == [0, 2] and 2 not in p.isr
    controller.broker_started(s, 2)
    settle(s, clock)
    assert p.logs[2].log_end_offset == 2 and 2 in p.isr


def test_a_replica_in_a_failed_log_dir_fetches_nothing_and_the_others_do(
        make_cluster: MakeCluster) -> None:
    """Kafka's HostedPartition.Offline: the fetcher of a replica whose log dir failed is
    removed; the partition's other followers fetch as before."""
    s, clock, f = make_cluster()
    s.create_topic("t", assignments={0: [1, 2, 3]})
    p = s.get_partition("t", 0)
    p.offline = {2}
    produce(s, p, 2)
    settle(s, clock)
    assert [p.logs[b].log_end_offset for b in (2, 3)] == [0, 2]


def test_a_reassignment_completed_mid_round_ends_the_round_as_news(
        make_cluster: MakeCluster) -> None:
    """[1, 2] -> [2, 3]: the round in which 3 joins the ISR completes the move, which
    takes the leadership from 1 to 2; the followers fetched before are not asked again
    in that round, and the round is news."""
    s, clock, f = make_cluster()
    s.create_topic("t", assignments={0: [1, 2]})
    p = s.get_partition("t", 0)
    produce(s, p, 3)
    settle(s, clock)
    alter_partition_reassignments(s, [("t", [(0, [2, 3])])])
    assert (p.replicas, p.leader) == ([2, 3, 1], 1)
    answers = []
    for _ in range(5):
        answers.append(s.replicate_partition(p, clock.now_ms()))
        if p.replicas == [2, 3]:
            break
    assert (p.replicas, p.leader) == ([2, 3], 2)
    assert answers[-1] is True
    assert p.logs[3].log_end_offset == 3


def test_a_follower_behind_the_leaders_log_start_starts_over_at_it(
        make_cluster: MakeCluster) -> None:
    """Kafka's fetchOffsetAndTruncate: a fetch below the leader's log start is out of
    range, and a follower whose log ends there starts again, empty, at the leader's
    log start (truncateFullyAndStartAt), then fetches from it. Broker 3 stopped with
    nothing; the leader deleted records up to 3 meanwhile."""
    s, clock, f = make_cluster()
    s.create_topic("t", assignments={0: [1, 2, 3]})
    p = s.get_partition("t", 0)
    controller.broker_stopped(s, 3)
    produce(s, p, 5)
    settle(s, clock)
    s.delete_records("t", 0, 3)
    assert (p.logs[3].log_start_offset, p.logs[3].log_end_offset) == (0, 0)
    controller.broker_started(s, 3)
    assert s.replicate_partition(p, clock.now_ms()) is True
    log = p.logs[3]
    assert (log.log_start_offset, log.log_end_offset) == (3, 5)
    assert log.read(3, 1 << 30, 5) == p.leader_log.read(3, 1 << 30, 5)


def test_a_follower_past_the_leaders_log_end_truncates_to_it() -> None:
    """The leader knows no epoch up to the follower's latest (4): its fetch is out of
    range, and the leader's log end (2) below the follower's (4) is where the follower
    truncates (fetchOffsetAndTruncate). The truncation is the round's only news."""
    clock = ManualClock()
    s = ClusterState([Broker(i, "h", 9000 + i) for i in (1, 2)], clock=clock,
                     broker_config=dict(BROKER_CONFIG))
    s.create_topic("t", assignments={0: [1, 2]})
    p = s.get_partition("t", 0)
    p.logs = {1: _epoch_log((0, 2)), 2: _epoch_log((0, 2), (4, 2))}
    p.high_watermark, p.follower_hw = 2, {2: 2}
    p.followers[2] = FollowerState(log_end_offset=2, last_caught_up_ms=clock.now_ms())
    p.fetcher_epoch.pop(2, None)
    assert s.replicate_partition(p, clock.now_ms()) is True
    assert p.logs[2].log_end_offset == 2 and p.fetcher_epoch[2] == p.leader_epoch
    assert s.replicate_partition(p, clock.now_ms()) is False


def test_a_replica_added_after_delete_records_inside_a_batch_catches_up(
        make_cluster: MakeCluster) -> None:
    """DeleteRecords at 3 leaves the leader's batch 0-4 in place, its log start inside
    it. A replica added afterwards (here by a reassignment) starts at 3, is given that
    batch, restarts its empty log at the batch's base and keeps the leader's log start:
    it catches up and the move completes."""
    s, clock, f = make_cluster()
    s.create_topic("t", assignments={0: [1, 2]})
    p = s.get_partition("t", 0)
    produce(s, p, 5)
    settle(s, clock)
    s.delete_records("t", 0, 3)
    alter_partition_reassignments(s, [("t", [(0, [1, 2, 3])])])
    settle(s, clock)
    assert p.replicas == [1, 2, 3] and p.isr == [1, 2, 3]
    log = p.logs[3]
    assert (log.log_start_offset, log.log_end_offset) == (3, 5)
    assert log.read(3, 1 << 30, 5) == p.leader_log.read(3, 1 << 30, 5)


def test_followers_roll_their_segments_where_the_leader_did(make_cluster: MakeCluster) -> None:
    """A follower starts a new segment at each batch the leader started one with, and
    nowhere else: the replicas' segments (what retention deletes whole) are the same,
    whether the follower fetched as the leader wrote or caught up later."""
    s, clock, f = make_cluster()
    s.create_topic("t", assignments={0: [1, 2, 3]}, configs={"internal.segment.bytes": "150"})
    p = s.get_partition("t", 0)
    f.apply({"op": "pause_follower", "broker": 3})
    for _ in range(7):
        produce(s, p, 1, value=b"x" * 60)
        settle(s, clock, 1)
    bases = p.leader_log.segments.bases
    assert len(bases) >= 3
    assert p.logs[2].segments.bases == bases
    f.apply({"op": "clear"})
    settle(s, clock)
    assert p.logs[3].log_end_offset == 7 and p.logs[3].segments.bases == bases


def test_a_slow_follower_fault_on_one_topic_limits_its_fetches(
        make_cluster: MakeCluster) -> None:
    """slow_follower with max_bytes, named for one topic: that topic's partition comes
    one batch per fetch to broker 3; another topic's, all at once."""
    s, clock, f = make_cluster()
    for name in ("t", "u"):
        s.create_topic(name, assignments={0: [1, 2, 3]})
    f.apply({"op": "slow_follower", "broker": 3, "topic": "t", "delay_ms": 0, "max_bytes": 1})
    for name in ("t", "u"):
        p = s.get_partition(name, 0)
        for _ in range(3):
            produce(s, p, 1)
        s.replicate_partition(p, clock.now_ms())
    assert s.get_partition("t", 0).logs[3].log_end_offset == 1
    assert s.get_partition("u", 0).logs[3].log_end_offset == 3
