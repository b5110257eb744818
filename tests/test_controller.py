"""Leader election, epochs, truncation, controlled shutdown, reassignment and
controller failover, under a manual clock."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cluster_sim import produce, settle

from emulator.cluster import controller, election, reassignment
from emulator.cluster.partition import epoch_end_offset
from emulator.log import Log
from wire.errors import ErrorCode as E
from wire.records import build_batch

if TYPE_CHECKING:
    from conftest import MakeCluster

LAG = 1000
BROKER_CONFIG = {"replica.lag.time.max.ms": str(LAG)}


def batches(log: Log) -> list[bytes]:
    return log.read(log.log_start_offset, 1 << 30, log.log_end_offset)


# ---- elections and epochs ----------------------------------------------------------------
def test_leader_crash_elects_the_first_isr_member_in_replica_order(
        make_cluster: MakeCluster) -> None:
    s, clock, f = make_cluster()
    s.create_topic("t", assignments={0: [2, 3, 1]})
    p = s.get_partition("t", 0)
    assert (p.leader, p.leader_epoch, p.partition_epoch) == (2, 0, 0)
    controller.broker_stopped(s, 2)
    assert (p.leader, p.isr, p.leader_epoch, p.partition_epoch) == (3, [3, 1], 1, 1)


def test_follower_crash_shrinks_the_isr_without_a_leader_epoch_bump(
        make_cluster: MakeCluster) -> None:
    s, clock, f = make_cluster()
    s.create_topic("t", assignments={0: [2, 3, 1]})
    p = s.get_partition("t", 0)
    controller.broker_stopped(s, 3)
    assert (p.leader, p.isr, p.leader_epoch, p.partition_epoch) == (2, [2, 1], 0, 1)


def test_restarted_broker_catches_up_and_rejoins(make_cluster: MakeCluster) -> None:
    s, clock, f = make_cluster()
    s.create_topic("t", assignments={0: [1, 2, 3]})
    p = s.get_partition("t", 0)
    produce(s, p, 3)
    settle(s, clock)
    controller.broker_stopped(s, 3)
    produce(s, p, 2)
    settle(s, clock)
    assert p.isr == [1, 2] and p.logs[3].log_end_offset == 3
    controller.broker_started(s, 3)
    settle(s, clock)
    assert p.isr == [1, 2, 3] and p.logs[3].log_end_offset == 5 == p.high_watermark
    assert batches(p.logs[3]) == batches(p.logs[1])
    assert all(a is b for a, b in zip(batches(p.logs[3]), batches(p.logs[1]), strict=True))


def test_last_isr_member_down_leaves_the_partition_offline_until_it_returns(
        make_cluster: MakeCluster) -> None:
    s, clock, f = make_cluster()
    s.create_topic("t", assignments={0: [1, 2]})
    p = s.get_partition("t", 0)
    controller.broker_stopped(s, 2)
    controller.broker_stopped(s, 1)
    assert (p.leader, p.isr) == (-1, [1])
    controller.broker_started(s, 2)  # not in the ISR: no clean election possible
    assert p.leader == -1
    controller.broker_started(s, 1)
    assert (p.leader, p.leader_epoch) == (1, 2)
    settle(s, clock)
    assert p.isr == [1, 2]


def test_divergent_follower_truncates_to_the_new_leaders_epoch_start(
        make_cluster: MakeCluster) -> None:
    s, clock, f = make_cluster()
    s.create_topic("t", assignments={0: [1, 2, 3]})
    p = s.get_partition("t", 0)
    produce(s, p, 5)  # offsets 0-4, epoch 0, replicated
    settle(s, clock)
    f.apply({"op": "pause_follower", "broker": 2})
    f.apply({"op": "pause_follower", "broker": 3})
    produce(s, p, 5)  # offsets 5-9 only on broker 1
    controller.broker_stopped(s, 1)  # 2 and 3 are still in the ISR: a clean election
    assert (p.leader, p.leader_epoch, p.log_end_offset) == (2, 1, 5)
    f.apply({"op": "clear"})
    produce(s, p, 3)  # offsets 5-7 in epoch 1
    settle(s, clock)
    controller.broker_started(s, 1)
    settle(s, clock)
    log1 = p.logs[1]
    assert log1.log_end_offset == 8 and log1.epoch_entries() == [(0, 0), (1, 5)]
    assert batches(log1) == batches(p.logs[2])
    assert p.isr == [2, 3, 1]


def test_unclean_election_loses_data_and_the_old_leader_truncates(
        make_cluster: MakeCluster) -> None:
    s, clock, f = make_cluster()
    s.create_topic("t", assignments={0: [1, 2]},
                   configs={"unclean.leader.election.enable": "true"})
    p = s.get_partition("t", 0)
    produce(s, p, 2)  # 0-1 replicated
    settle(s, clock)
    f.apply({"op": "pause_follower", "broker": 2})
    produce(s, p, 3)  # 2-4 on broker 1 only
    clock.advance(LAG + 1)
    s.maintain_isr(p, clock.now_ms(), LAG)
    assert p.isr == [1] and p.high_watermark == 5
    controller.broker_stopped(s, 1)
    # 2 is not in the ISR: only an unclean election gives a leader
    assert (p.leader, p.isr, p.leader_epoch) == (2, [2], 1)
    assert p.log_end_offset == 2 and p.high_watermark == 2  # committed data lost
    f.apply({"op": "clear"})
    produce(s, p, 1)  # offset 2 in epoch 1
    controller.broker_started(s, 1)
    settle(s, clock)
    assert p.logs[1].log_end_offset == 3 and p.logs[1].epoch_entries() == [(0, 0), (1, 2)]
    assert batches(p.logs[1]) == batches(p.logs[2])
    assert p.isr == [2, 1]


def test_clean_election_only_without_the_topic_setting(make_cluster: MakeCluster) -> None:
    s, clock, f = make_cluster()
    s.create_topic("t", assignments={0: [1, 2]})
    p = s.get_partition("t", 0)
    f.apply({"op": "pause_follower", "broker": 2})
    produce(s, p, 1)
    clock.advance(LAG + 1)
    s.maintain_isr(p, clock.now_ms(), LAG)
    controller.broker_stopped(s, 1)
    assert (p.leader, p.isr) == (-1, [1])
    # turning the setting on later: the controller's periodic unclean check elects
    s.get_topic("t").configs["unclean.leader.election.enable"] = "true"
    clock.advance(controller.DEFAULT_UNCLEAN_INTERVAL_MS)
    s.tick()
    assert (p.leader, p.isr) == (2, [2])


def test_epoch_end_offset_answers_like_the_leader_epoch_cache() -> None:
    log = Log()
    for epoch, n in ((0, 3), (2, 2), (5, 1)):
        log.append_as_leader(build_batch([(None, b"v")] * n), epoch)
    assert log.epoch_entries() == [(0, 0), (2, 3), (5, 5)]
    assert epoch_end_offset(log, 5) == (5, 6)  # latest epoch: the LEO
    assert epoch_end_offset(log, 2) == (2, 5)
    assert epoch_end_offset(log, 3) == (2, 5)  # largest epoch <= 3, next epoch's start
    assert epoch_end_offset(log, 6) == (-1, -1)  # newer than any: undefined
    assert epoch_end_offset(log, -1) == (-1, -1)
    newer = Log()
    newer.append_as_leader(build_batch([(None, b"v")]), 4)
    assert epoch_end_offset(newer, 1) == (1, 0)  # older than any: first entry's start


# ---- controlled shutdown --------------------------------------------------------------------
def test_controlled_shutdown_moves_leadership_first(make_cluster: MakeCluster) -> None:
    s, clock, f = make_cluster()
    s.create_topic("t", assignments={0: [2, 1, 3], 1: [3, 2, 1]})
    p0, p1 = s.get_partition("t", 0), s.get_partition("t", 1)
    produce(s, p0, 2)
    settle(s, clock)
    stranded = controller.controlled_shutdown(s, 2)
    assert stranded == []
    assert (p0.leader, p0.isr, p0.leader_epoch) == (1, [1, 3], 1)
    assert p1.isr == [3, 1] and p1.leader == 3
    assert s.is_alive(2) and 2 in s.shutting_down
    settle(s, clock)
    assert 2 not in p0.isr  # not eligible to rejoin while shutting down
    controller.broker_stopped(s, 2)
    assert (p0.leader, p0.leader_epoch) == (1, 1)  # nothing left to move
    controller.broker_started(s, 2)
    settle(s, clock)
    assert 2 in p0.isr and 2 not in s.shutting_down


def test_controlled_shutdown_of_the_only_isr_member_leaves_it_leaderless(
        make_cluster: MakeCluster) -> None:
    s, clock, f = make_cluster()
    s.create_topic("solo", assignments={0: [2]})
    assert controller.controlled_shutdown(s, 2) == [("solo", 0)]
    assert s.get_partition("solo", 0).leader == -1


# ---- preferred leaders ---------------------------------------------------------------------
def test_auto_leader_rebalance_returns_leadership_to_the_preferred_replica(
        make_cluster: MakeCluster) -> None:
    s, clock, f = make_cluster(**{"leader.imbalance.check.interval.seconds": "5"})
    s.create_topic("t", assignments={0: [1, 2], 1: [2, 1]})
    p0 = s.get_partition("t", 0)
    controller.broker_stopped(s, 1)
    controller.broker_started(s, 1)
    settle(s, clock)
    assert p0.leader == 2 and p0.isr == [2, 1]
    clock.advance(5000)
    s.tick()
    assert (p0.leader, p0.leader_epoch) == (1, 2)


def test_auto_rebalance_respects_the_imbalance_percentage(make_cluster: MakeCluster) -> None:
    s, clock, f = make_cluster(**{"leader.imbalance.check.interval.seconds": "5",
                          "leader.imbalance.per.broker.percentage": "50"})
    s.create_topic("t", assignments={i: [1, 2] for i in range(4)})
    settle(s, clock)
    p0 = s.get_partition("t", 0)
    controller.change_leader(s, p0, 2)  # 1 of 4 preferred partitions moved: 25% <= 50%
    clock.advance(5000)
    s.tick()
    assert p0.leader == 2
    controller.change_leader(s, s.get_partition("t", 1), 2)
    controller.change_leader(s, s.get_partition("t", 2), 2)  # 75% > 50%
    clock.advance(5000)
    s.tick()
    assert [s.get_partition("t", i).leader for i in range(4)] == [1, 1, 1, 1]


def test_elect_leaders_codes(make_cluster: MakeCluster) -> None:
    """ElectLeaders per partition (RCM.electLeader): PREFERRED (0) and UNCLEAN (1)."""
    s, clock, f = make_cluster()
    s.create_topic("t", assignments={0: [1, 2]})
    p = s.get_partition("t", 0)

    def code(election_type: int) -> int:
        return election.elect_leader(s, "t", 0, election_type)[0]

    assert code(0) == E.ELECTION_NOT_NEEDED
    assert code(1) == E.ELECTION_NOT_NEEDED
    controller.broker_stopped(s, 1)
    controller.broker_started(s, 1)
    assert code(0) == E.PREFERRED_LEADER_NOT_AVAILABLE  # not in ISR
    settle(s, clock)
    assert code(0) == E.NONE and p.leader == 1


# ---- reassignment and controller failover ----------------------------------------------------
def test_reassignment_moves_data_and_then_the_leader(make_cluster: MakeCluster) -> None:
    s, clock, f = make_cluster(4)
    s.create_topic("t", assignments={0: [1, 2, 3]})
    p = s.get_partition("t", 0)
    produce(s, p, 4)
    settle(s, clock)
    reassignment.start_reassignment(s, p, [4, 2, 3])
    assert (p.replicas, p.adding_replicas, p.removing_replicas) == ([4, 2, 3, 1], [4], [1])
    assert p.leader_epoch == 0  # every old replica is still listed: no leader epoch bump
    settle(s, clock)
    assert (p.replicas, p.adding_replicas, p.removing_replicas) == ([4, 2, 3], [], [])
    assert p.leader == 4 and 1 not in p.logs and p.logs[4].log_end_offset == 4
    assert p.high_watermark == 4 and p.leader_epoch == 1


def test_reassignment_shrink_keeping_the_leader_bumps_its_epoch(make_cluster: MakeCluster) -> None:
    s, clock, f = make_cluster()
    s.create_topic("t", assignments={0: [1, 2, 3]})
    p = s.get_partition("t", 0)
    settle(s, clock)
    reassignment.start_reassignment(s, p, [1, 2])  # completes at once: 1 and 2 are in sync
    assert (p.replicas, p.isr, p.leader, p.leader_epoch) == ([1, 2], [1, 2], 1, 1)


def test_new_controller_resumes_a_reassignment_left_mid_way(make_cluster: MakeCluster) -> None:
    s, clock, f = make_cluster(4)
    s.create_topic("t", assignments={0: [1, 2]})
    p = s.get_partition("t", 0)
    produce(s, p, 3)
    settle(s, clock)
    f.apply({"op": "pause_follower", "broker": 4})
    reassignment.start_reassignment(s, p, [2, 4])
    settle(s, clock)
    assert p.adding_replicas == [4] and s.controller_id == 1
    first_epoch = s.controller.epoch
    controller.broker_stopped(s, 1)  # the controller, and the leader being removed
    assert s.controller_id == 2 and s.controller.epoch == first_epoch + 1
    assert p.leader == 2 and p.adding_replicas == [4]  # still waiting for 4
    f.apply({"op": "resume_follower", "broker": 4})
    settle(s, clock)
    assert (p.replicas, p.isr, p.adding_replicas, p.removing_replicas) == \
        ([2, 4], [2, 4], [], [])
    assert s.controller.machines.replicas.state(("t", 0, 1)).value == "NonExistentReplica"


def test_new_controller_elects_leaders_for_partitions_left_offline(
        make_cluster: MakeCluster) -> None:
    s, clock, f = make_cluster()
    s.create_topic("t", assignments={0: [3]})
    p = s.get_partition("t", 0)
    controller.broker_stopped(s, 3)
    assert p.leader == -1
    controller.broker_stopped(s, 1)  # controller failover while the partition is offline
    assert s.controller_id == 2
    assert s.controller.machines.partitions.state(p.key).value == "OfflinePartition"
    controller.broker_started(s, 3)
    assert p.leader == 3
    assert s.controller.machines.partitions.state(p.key).value == "OnlinePartition"


def test_controller_moves_when_the_controller_shuts_down_cleanly(make_cluster: MakeCluster) -> None:
    s, clock, f = make_cluster()
    assert s.controller_id == 1
    controller.controlled_shutdown(s, 1)
    assert s.controller_id == 2
    controller.broker_stopped(s, 1)
    assert s.controller_id == 2
    controller.broker_stopped(s, 2)
    controller.broker_stopped(s, 3)
    assert s.controller_id == -1
    controller.broker_started(s, 2)
    assert s.controller_id == 2


def test_cancel_reassignment_reverts_the_replica_set(make_cluster: MakeCluster) -> None:
    s, clock, f = make_cluster(4)
    s.create_topic("t", assignments={0: [1, 2]})
    p = s.get_partition("t", 0)
    f.apply({"op": "pause_follower", "broker": 4})
    reassignment.start_reassignment(s, p, [1, 4])
    reassignment.cancel_partition_reassignment(s, p)
    assert (p.replicas, p.adding_replicas, p.removing_replicas) == ([1, 2], [], [])
    assert 4 not in p.logs


# ---- crashes fenced after a broker session timeout ---------------------------------------
def test_a_crashed_leader_stays_leader_until_its_session_times_out(
        make_cluster: MakeCluster) -> None:
    s, clock, f = make_cluster()
    s.create_topic("t", assignments={0: [2, 3, 1]})
    p = s.get_partition("t", 0)
    produce(s, p, 3, acks=-1)
    settle(s, clock)
    assert p.high_watermark == 3
    controller.broker_crashed(s, 2, 9000)
    b = s.brokers[2]
    assert (b.alive, b.crashed, s.is_running(2)) == (True, True, False)
    # Not yet noticed: the dead broker is still leader and in the ISR, and nothing moves.
    clock.advance(8990)
    s.tick()
    assert (p.leader, p.isr, p.leader_epoch, p.high_watermark) == (2, [2, 3, 1], 0, 3)
    clock.advance(10)
    s.tick()  # the session timed out: fenced, as a crash fenced at once would be
    assert (b.alive, b.crashed) == (False, False) and 2 not in s.pending_fence
    assert (p.leader, p.isr, p.leader_epoch) == (3, [3, 1], 1)


def test_a_crashed_follower_leaves_the_isr_by_lag_before_it_is_fenced(
        make_cluster: MakeCluster) -> None:
    s, clock, f = make_cluster()
    s.create_topic("t", assignments={0: [2, 3, 1]})
    p = s.get_partition("t", 0)
    controller.broker_crashed(s, 3, 60_000)
    produce(s, p, 2)
    for _ in range(30):
        clock.advance(100)
        s.tick()
    # The leader saw it stop fetching for replica.lag.time.max.ms and shrank the ISR;
    # the controller still has it registered and unfenced.
    assert p.isr == [2, 1] and s.brokers[3].alive and p.logs[3].log_end_offset == 0
    assert p.high_watermark == 2


def test_a_restart_before_the_fence_fences_the_old_incarnation_first(
        make_cluster: MakeCluster) -> None:
    s, clock, f = make_cluster()
    s.create_topic("t", assignments={0: [2, 3, 1]})
    p = s.get_partition("t", 0)
    controller.broker_crashed(s, 2, 9000)
    clock.advance(1000)
    controller.broker_started(s, 2)
    b = s.brokers[2]
    assert (b.alive, b.crashed, s.pending_fence) == (True, False, {})
    assert p.leader == 3 and p.leader_epoch == 1  # its leadership did not survive
    settle(s, clock)
    assert 2 in p.isr  # and it catches up as a follower


def test_fence_delay_comes_from_the_op_else_broker_session_timeout(
        make_cluster: MakeCluster) -> None:
    s, clock, f = make_cluster(**{"broker.session.timeout.ms": "5000"})
    assert controller.crash_fence_delay(s) == 5000
    assert controller.crash_fence_delay(s, 0) == 0
    s.create_topic("t", assignments={0: [1, 2]})
    f.apply({"op": "stop_broker", "broker": 1})
    assert s.brokers[1].crashed and s.pending_fence == {1: s.now() + 5000}
    f.apply({"op": "stop_broker", "broker": 2, "fence_after_ms": 0})
    assert not s.brokers[2].alive
    plain, _, g = make_cluster()
    g.apply({"op": "stop_broker", "broker": 1})
    assert not plain.brokers[1].alive and not plain.brokers[1].crashed


def test_a_new_partition_led_by_broker_0_is_online(make_cluster: MakeCluster) -> None:
    """onNewPartitionCreation: New, then Online with its first live replica leading,
    broker 0 like any other (the official images number brokers from 0)."""
    s, clock, f = make_cluster([0, 1])
    s.create_topic("t", assignments={0: [0, 1]})
    p = s.get_partition("t", 0)
    assert (p.leader, p.isr) == (0, [0, 1])
    assert s.controller.machines.partitions.state(p.key).value == "OnlinePartition"


def test_a_stopped_broker_is_news_once(make_cluster: MakeCluster) -> None:
    """broker_stopped tells BrokerStopped, naming the broker, once; stopping it again is
    no news."""
    from emulator.cluster.events import BrokerStopped

    s, clock, f = make_cluster()
    seen: list[BrokerStopped] = []
    s.hooks.append(lambda kind, ev: seen.append(ev) if isinstance(ev, BrokerStopped) else None)
    controller.broker_stopped(s, 3)
    controller.broker_stopped(s, 3)
    assert seen == [BrokerStopped(broker=3)]


def test_a_partition_created_with_no_live_replica_waits_leaderless(
        make_cluster: MakeCluster) -> None:
    """A new partition whose replicas are all stopped has no leader (-1, as Metadata
    says it), keeps its replicas as the ISR to remember, stays New in the controller's
    state machine, and is led by the first replica to come back."""
    s, clock, f = make_cluster()
    controller.broker_stopped(s, 3)
    s.create_topic("t", assignments={0: [3]})
    p = s.get_partition("t", 0)
    assert (p.leader, p.isr) == (-1, [3])
    assert s.controller.machines.partitions.state(p.key).value == "NewPartition"
    controller.broker_started(s, 3)
    assert (p.leader, p.isr) == (3, [3])
    assert s.controller.machines.partitions.state(p.key).value == "OnlinePartition"


def test_a_broker_stopped_during_its_controlled_shutdown_is_no_longer_shutting_down(
        make_cluster: MakeCluster) -> None:
    """A stopped broker is no longer in controlled shutdown: the set lists live brokers
    on their way out (the emulator's console and metrics show it), and a broker that
    registers again starts afresh, as Kafka's new registration does."""
    s, clock, f = make_cluster()
    s.create_topic("t", assignments={0: [3, 1]})
    controller.controlled_shutdown(s, 3)
    assert 3 in s.shutting_down
    controller.broker_stopped(s, 3)
    assert 3 not in s.shutting_down


def test_a_new_replica_never_goes_to_a_failed_log_dir(make_cluster: MakeCluster) -> None:
    """LogManager places a new replica among the live log directories only: where its
    usual directory failed, the broker's first live one takes it, and the replica is
    online (not in the partition's offline set) and can lead."""
    from emulator.cluster.log_dirs import replica_log_dir

    s, clock, f = make_cluster([1, 2], **{"log.dirs": "/d/a,/d/b"})
    # the first directory holds the metadata log: its failure would halt the broker
    assert controller.log_dir_failed(s, 1, "/d/b", "test") is False
    s.create_topic("t", assignments={0: [1, 2], 1: [1, 2]})
    assert replica_log_dir(s, 1, "t", 0) == "/d/a"
    assert replica_log_dir(s, 1, "t", 1) == "/d/a"  # index 1 goes to /d/b, failed
    assert replica_log_dir(s, 2, "t", 1) == "/d/b"
    p = s.get_partition("t", 1)
    assert (p.leader, p.offline) == (1, set())


# ---- a failed log directory (handleLogDirFailure, handleDirectoriesOffline) ---------------
TWO_DIRS = {"log.dirs": "/d/a,/d/b"}  # partition i in dir i mod 2; /d/a holds the metadata log


def _storage_news(s: object) -> list[object]:
    from emulator.cluster.events import BrokerHalted, LogDirFailed

    seen: list[object] = []
    s.hooks.append(  # type: ignore[attr-defined]
        lambda kind, ev: seen.append(ev) if isinstance(ev, LogDirFailed | BrokerHalted)
        else None)
    return seen


def test_a_failed_log_dir_moves_only_its_replicas(make_cluster: MakeCluster) -> None:
    """handleDirectoriesOffline: the broker's replicas in the failed directory go offline
    and leave their ISRs as when it is fenced (a partition it led elects the next ISR
    member, one it follows keeps its leader and epoch, one where it is the last ISR
    member stays leaderless with it recorded); its replicas elsewhere, and other brokers'
    replicas in a directory of the same name, are untouched; the broker serves on."""
    from emulator.cluster.events import LogDirFailed

    s, clock, f = make_cluster(**TWO_DIRS)
    s.create_topic("t", assignments={0: [1, 2, 3], 1: [1, 2, 3], 2: [2, 3, 1], 3: [2, 1, 3]})
    s.create_topic("u", assignments={0: [2, 3], 1: [2, 3]})
    s.create_topic("w", assignments={0: [1], 1: [1]})
    seen = _storage_news(s)
    assert controller.log_dir_failed(s, 1, "/d/b", "disk gone") is False
    assert seen == [LogDirFailed(broker=1, log_dir="/d/b", reason="disk gone")]
    assert s.offline_log_dirs == {1: {"/d/b"}} and s.is_running(1)
    part = {(t, i): s.get_partition(t, i) for t in "tuw" for i in range(4 if t == "t" else 2)}
    view = {k: (p.leader, p.isr, p.offline, p.leader_epoch, p.partition_epoch)
            for k, p in part.items()}
    assert view == {
        ("t", 0): (1, [1, 2, 3], set(), 0, 0),  # in /d/a
        ("t", 1): (2, [2, 3], {1}, 1, 1),  # led from /d/b: the next ISR member leads
        ("t", 2): (2, [2, 3, 1], set(), 0, 0),
        ("t", 3): (2, [2, 3], {1}, 0, 1),  # followed from /d/b: the ISR shrinks
        ("u", 0): (2, [2, 3], set(), 0, 0),
        ("u", 1): (2, [2, 3], set(), 0, 0),  # /d/b of brokers 2 and 3: fine
        ("w", 0): (1, [1], set(), 0, 0),
        ("w", 1): (-1, [1], {1}, 1, 1),  # the last ISR member: no leader, the ISR keeps it
    }
    states = s.controller.machines.replicas
    assert [states.state((t, i, 1)).value for t, i in (("t", 0), ("t", 1), ("t", 3),
                                                       ("w", 1))] == [
        "OnlineReplica", "OfflineReplica", "OfflineReplica", "OfflineReplica"]
    assert s.controller.machines.partitions.state(("w", 1)).value == "OfflinePartition"
    # the LogDirFailureChannel reports a directory once
    assert controller.log_dir_failed(s, 1, "/d/b", "again") is False
    assert len(seen) == 1 and part["t", 1].partition_epoch == 1


def test_a_failed_log_dir_is_news_for_the_next_tick(make_cluster: MakeCluster) -> None:
    """The leader moved by a log dir failure is visible to the server's next tick
    (``changed``), so a fetcher parked on the old leader hears of it."""
    s, clock, f = make_cluster(**TWO_DIRS)
    s.create_topic("t", assignments={0: [2, 1], 1: [2, 1]})
    s.tick()
    version = s.version
    controller.log_dir_failed(s, 2, "/d/b", "test")
    assert s.version > version


def test_a_broker_not_running_fails_no_log_dir(make_cluster: MakeCluster) -> None:
    """A stopped broker writes nothing, nor does a crashed one its controller has not
    fenced yet (its process is gone): neither has a directory to fail."""
    s, clock, f = make_cluster(**TWO_DIRS, **{"broker.session.timeout.ms": "5000"})
    s.create_topic("t", assignments={0: [1, 2], 1: [2, 1]})
    seen = _storage_news(s)
    controller.broker_crashed(s, 1)
    controller.broker_stopped(s, 2)
    assert controller.log_dir_failed(s, 1, "/d/b", "test") is False
    assert controller.log_dir_failed(s, 2, "/d/b", "test") is False
    assert (seen, s.offline_log_dirs) == ([], {})
    assert [s.get_partition("t", i).offline for i in (0, 1)] == [set(), set()]


def test_the_metadata_log_dir_failing_halts_the_broker(make_cluster: MakeCluster) -> None:
    """The directory holding the metadata log (the first log dir by default) fails: the
    broker halts (Exit.halt), which its controller sees as a crash, fenced once the
    session times out; the halt says why."""
    from emulator.cluster.events import BrokerHalted, LogDirFailed

    s, clock, f = make_cluster(**TWO_DIRS, **{"broker.session.timeout.ms": "5000"})
    s.create_topic("t", assignments={0: [1, 2], 1: [1, 2]})
    seen = _storage_news(s)
    assert controller.log_dir_failed(s, 1, "/d/a", "test") is True
    assert seen == [LogDirFailed(broker=1, log_dir="/d/a", reason="test"),
                    BrokerHalted(broker=1, reason="the metadata log dir /d/a has failed")]
    p0, p1 = s.get_partition("t", 0), s.get_partition("t", 1)
    assert s.brokers[1].crashed and s.pending_fence == {1: s.now() + 5000}
    # not fenced yet: still the leader of both, as Metadata says until the session ends
    assert [(p.leader, p.isr, p.offline) for p in (p0, p1)] == [(1, [1, 2], {1}),
                                                                (1, [1, 2], set())]


def test_the_last_live_log_dir_failing_halts_the_broker(make_cluster: MakeCluster) -> None:
    """With the metadata log elsewhere, the broker halts only when its last log dir
    fails (the halt says so), and with no session timeout it is fenced at once: its
    leaderships move."""
    from emulator.cluster.events import BrokerHalted

    s, clock, f = make_cluster(**TWO_DIRS, **{"metadata.log.dir": "/d/m"})
    s.create_topic("t", assignments={0: [1, 2], 1: [1, 2]})
    seen = _storage_news(s)
    assert controller.log_dir_failed(s, 1, "/d/a", "test") is False
    assert s.is_alive(1) and s.get_partition("t", 0).leader == 2
    assert s.get_partition("t", 1).leader == 1
    assert controller.log_dir_failed(s, 1, "/d/b", "test") is True
    assert seen[-1] == BrokerHalted(broker=1, reason="all log dirs of broker 1 have failed")
    assert not s.is_alive(1) and s.get_partition("t", 1).leader == 2


def test_a_failed_log_dir_elects_for_every_partition_it_holds_and_no_other(
        make_cluster: MakeCluster) -> None:
    """handleDirectoriesOffline runs the election of every partition with a replica in
    the failed directory (that replica excluded), whether or not the ISR holds it, and
    of no other partition: a topic given unclean.leader.election.enable after its
    partition went leaderless gets its unclean leader at once where the failed
    directory holds one of its replicas, and elsewhere at the controller's periodic
    unclean check."""
    s, clock, f = make_cluster(4, **TWO_DIRS)
    s.create_topic("t", assignments={0: [3, 1, 2], 1: [3, 1, 2]})
    p0, p1 = s.get_partition("t", 0), s.get_partition("t", 1)
    for b in (1, 2, 3):
        controller.broker_stopped(s, b)  # 3 the last ISR member: leaderless, ISR [3]
    for b in (1, 2):
        controller.broker_started(s, b)  # back, not in the ISR: no clean election
    assert [(p.leader, p.isr) for p in (p0, p1)] == [(-1, [3]), (-1, [3])]
    s.get_topic("t").configs["unclean.leader.election.enable"] = "true"
    assert controller.log_dir_failed(s, 1, "/d/b", "test") is False
    assert (p1.leader, p1.isr, p1.offline) == (2, [2], {1})  # 1's replica is offline
    assert (p0.leader, p0.isr) == (-1, [3])  # /d/a: nothing to do with the failure
    clock.advance(controller.DEFAULT_UNCLEAN_INTERVAL_MS)
    s.tick()
    assert (p0.leader, p0.isr) == (1, [1])


def test_a_replica_moved_into_the_failed_log_dir_goes_offline_with_it(
        make_cluster: MakeCluster) -> None:
    """The directory a replica is in is where AlterReplicaLogDirs put it, for that
    broker's replica only: a failure of /d/b takes broker 1's replica of partition 0
    (moved there) and leaves broker 2's (in /d/a, where partition 0 goes)."""
    from emulator.cluster.log_dirs import alter_replica_log_dir

    s, clock, f = make_cluster(**TWO_DIRS)
    s.create_topic("t", assignments={0: [2, 1]})
    s.create_topic("u", assignments={0: [2, 1]})
    assert alter_replica_log_dir(s, 1, "/d/b", "t", 0) == E.NONE
    controller.log_dir_failed(s, 1, "/d/b", "test")
    p, q = s.get_partition("t", 0), s.get_partition("u", 0)
    assert (p.isr, p.offline) == ([2], {1})
    assert (q.isr, q.offline) == ([2, 1], set())
    controller.log_dir_failed(s, 2, "/d/b", "test")
    assert (p.leader, p.offline) == (2, {1})


# ---- controlled shutdown (handleBrokerInControlledShutdown), the controller's side ---------
def _news(s: object, *kinds: type) -> list[object]:
    seen: list[object] = []
    s.hooks.append(  # type: ignore[attr-defined]
        lambda kind, ev: seen.append(ev) if isinstance(ev, kinds) else None)
    return seen


def test_a_controlled_shutdown_is_news_once_and_only_of_a_live_broker(
        make_cluster: MakeCluster) -> None:
    """A live broker's controlled shutdown is told (ControlledShutdown, naming it) and
    wakes what waits on the cluster (``changed``); a stopped broker's is nothing: no news,
    not listed as shutting down, no partition changes."""
    from emulator.cluster.events import ControlledShutdown

    s, clock, f = make_cluster()
    s.create_topic("t", assignments={0: [3, 2]})
    controller.broker_stopped(s, 3)
    seen = _news(s, ControlledShutdown)
    p = s.get_partition("t", 0)
    epoch = p.partition_epoch
    assert controller.controlled_shutdown(s, 3) == []
    assert (seen, s.shutting_down, p.partition_epoch) == ([], set(), epoch)
    s.tick()
    version = s.version
    assert controller.controlled_shutdown(s, 2) == [("t", 0)]
    assert seen == [ControlledShutdown(broker=2)] and s.version > version
    assert s.shutting_down == {2}


def test_a_controlled_shutdown_takes_every_replica_of_the_broker_offline(
        make_cluster: MakeCluster) -> None:
    """The controller's replica state machine: each replica of the shutting-down broker
    goes Offline, the ones outside the ISR too; other brokers' replicas stay Online."""
    s, clock, f = make_cluster()
    s.create_topic("t", assignments={0: [2, 1], 1: [1, 3], 2: [3, 2]})
    p2 = s.get_partition("t", 2)
    p2.isr = [3]  # 2 out of sync: not in the ISR
    controller.controlled_shutdown(s, 2)
    states = s.controller.machines.replicas
    assert [states.state(k).value for k in (("t", 0, 2), ("t", 2, 2), ("t", 0, 1),
                                            ("t", 2, 3))] == [
        "OfflineReplica", "OfflineReplica", "OnlineReplica", "OnlineReplica"]


def test_a_controller_shutting_down_hands_its_role_to_the_lowest_live_broker_staying(
        make_cluster: MakeCluster) -> None:
    """The active controller shutting down hands over first, with the next controller
    epoch, told (ControllerChanged, ControllerFailover), to the lowest live broker not
    shutting down itself; with none left it keeps the role. The new controller rebuilds
    its state machines from the metadata (onControllerFailover)."""
    from emulator.cluster.events import ControllerChanged, ControllerFailover

    s, clock, f = make_cluster()
    s.create_topic("t", assignments={0: [3, 1]})
    epoch = s.controller.epoch
    controller.controlled_shutdown(s, 2)
    seen = _news(s, ControllerChanged, ControllerFailover)
    controller.controlled_shutdown(s, 1)
    assert (s.controller_id, s.controller.epoch, s.controller_epoch) == (3, epoch + 1,
                                                                         epoch + 1)
    assert seen == [ControllerChanged(controller=3, epoch=epoch + 1),
                    ControllerFailover(controller=3, epoch=epoch + 1)]
    machines = s.controller.machines
    assert (machines.partitions.state(("t", 0)).value,
            machines.replicas.state(("t", 0, 3)).value) == ("OnlinePartition", "OnlineReplica")
    controller.controlled_shutdown(s, 3)
    assert (s.controller_id, s.controller.epoch, len(seen)) == (3, epoch + 1, 2)


def test_broker_0_handing_the_controller_role_over_moves_its_leadership_in_one_change(
        make_cluster: MakeCluster) -> None:
    """Broker 0, the controller, shutting down hands its role over before its
    leaderships move: the new controller finds broker 0 leading, alive, its partition
    Online, and elects nothing at the takeover; the shutdown's own change then moves
    the leadership and shrinks the ISR together (one partition epoch, one leader
    epoch, one LeaderChanged)."""
    from emulator.cluster.events import LeaderChanged

    s, clock, f = make_cluster([0, 1, 2])
    assert s.controller_id == 0
    s.create_topic("t", assignments={0: [0, 1, 2]})
    p = s.get_partition("t", 0)
    assert (p.leader, p.isr) == (0, [0, 1, 2])
    epochs = (p.partition_epoch, p.leader_epoch)
    seen = _news(s, LeaderChanged)
    assert controller.controlled_shutdown(s, 0) == []
    assert s.controller_id == 1
    assert (p.leader, p.isr) == (1, [1, 2])
    assert (p.partition_epoch, p.leader_epoch) == (epochs[0] + 1, epochs[1] + 1)
    assert seen == [LeaderChanged(topic="t", partition=0, old=0, new=1,
                                  epoch=epochs[1] + 1, unclean=False)]


# ---- a broker's return (handleBrokerUnfenced) ----------------------------------------------
def test_a_broker_back_before_its_fence_is_fenced_first(make_cluster: MakeCluster) -> None:
    """A crashed broker that starts again before its session timed out registers as a
    new incarnation: the controller fences the old one first (its leaderships move and
    it leaves the ISRs), then the broker is back, unfenced, with nothing pending, its
    replicas Online, to rejoin the ISRs by catching up."""
    from emulator.cluster.events import BrokerStarted, BrokerStopped

    s, clock, f = make_cluster(**{"broker.session.timeout.ms": "5000"})
    s.create_topic("t", assignments={0: [2, 1], 1: [1, 2]})
    p0, p1 = s.get_partition("t", 0), s.get_partition("t", 1)
    controller.broker_crashed(s, 2)
    seen = _news(s, BrokerStarted, BrokerStopped)
    controller.broker_started(s, 2)
    assert seen == [BrokerStopped(broker=2), BrokerStarted(broker=2)]
    assert (p0.leader, p0.isr, p0.leader_epoch, p1.isr) == (1, [1], 1, [1])
    b = s.brokers[2]
    assert (b.alive, b.crashed, s.pending_fence) == (True, False, {})
    assert s.controller.machines.replicas.state(("t", 0, 2)).value == "OnlineReplica"
    settle(s, clock)
    assert (p0.isr, p1.isr) == ([1, 2], [1, 2])


def test_starting_a_running_broker_is_nothing(make_cluster: MakeCluster) -> None:
    """broker_started of a broker that is up changes nothing and tells nothing."""
    from emulator.cluster.events import BrokerStarted

    s, clock, f = make_cluster()
    s.create_topic("t", assignments={0: [2, 1]})
    p = s.get_partition("t", 0)
    seen = _news(s, BrokerStarted)
    s.tick()
    version = s.version
    controller.broker_started(s, 2)
    assert (seen, s.version, p.leader, p.partition_epoch) == ([], version, 2, 0)


def test_a_restarted_broker_opens_its_failed_log_dirs_again(make_cluster: MakeCluster) -> None:
    """LogManager's startup: a restarted broker's failed directories are online again,
    its replicas there too (Metadata's offline replicas are stale: the topic's metadata
    changes); another broker's failure stays, and with it the partition whose last ISR
    member it holds waits leaderless (the restarted replica is not in the ISR)."""
    s, clock, f = make_cluster(**TWO_DIRS)
    s.create_topic("t", assignments={0: [1, 2], 1: [1, 2]})
    s.create_topic("u", assignments={0: [2, 1], 1: [2, 1]})
    controller.log_dir_failed(s, 1, "/d/b", "test")
    controller.log_dir_failed(s, 2, "/d/b", "test")
    p1, q1 = s.get_partition("t", 1), s.get_partition("u", 1)
    assert (p1.offline, q1.offline) == ({1, 2}, {1, 2})
    controller.broker_stopped(s, 1)
    version = s.topics["t"].metadata_version
    controller.broker_started(s, 1)
    assert s.offline_log_dirs == {2: {"/d/b"}}
    assert (p1.offline, q1.offline) == ({2}, {2})
    assert s.topics["t"].metadata_version > version
    assert (p1.leader, p1.isr) == (-1, [2])


# ---- topic deletion ----------------------------------------------------------------------
def test_a_topic_created_again_forgets_where_its_replicas_were_moved(
        make_cluster: MakeCluster) -> None:
    """AlterReplicaLogDirs moved a replica; once its topic is deleted, a topic created
    under the same name puts its replicas where a new replica goes (partition i in dir
    i mod n), and another topic's move stays."""
    from emulator.cluster.log_dirs import alter_replica_log_dir, replica_log_dir

    s, clock, f = make_cluster(**TWO_DIRS)
    s.create_topic("t", assignments={0: [1, 2]})
    s.create_topic("u", assignments={0: [1, 2]})
    assert alter_replica_log_dir(s, 1, "/d/b", "t", 0) == E.NONE  # broker 2's stays
    assert alter_replica_log_dir(s, 1, "/d/b", "u", 0) == E.NONE
    s.delete_topic("t")
    s.create_topic("t", assignments={0: [1, 2]})
    assert [replica_log_dir(s, b, "t", 0) for b in (1, 2)] == ["/d/a", "/d/a"]
    assert replica_log_dir(s, 1, "u", 0) == "/d/b"


# ---- the preferred leader imbalance check (maybeBalancePartitionLeaders) ------------------
def test_auto_rebalance_elects_the_preferred_leader_of_a_partition_being_reassigned(
        make_cluster: MakeCluster) -> None:
    """KRaft's imbalance check takes every partition whose leader is not its first
    replica, a partition being reassigned too (its first replica is the first target
    replica): the preferred election moves the leadership there while the new replica
    still catches up, and the reassignment completes later as usual."""
    s, clock, f = make_cluster(**{"leader.imbalance.check.interval.seconds": "5"})
    s.create_topic("t", assignments={0: [1, 2]})
    p = s.get_partition("t", 0)
    settle(s, clock)
    f.apply({"op": "pause_follower", "broker": 3})
    reassignment.start_reassignment(s, p, [2, 3])
    assert (p.replicas, p.leader, p.isr) == ([2, 3, 1], 1, [1, 2])
    assert controller.auto_rebalance(s) == 1
    assert (p.leader, p.adding_replicas, p.removing_replicas) == (2, [3], [1])
    f.apply({"op": "resume_follower", "broker": 3})
    settle(s, clock)
    assert (p.replicas, p.leader, p.isr) == ([2, 3], 2, [2, 3])


def test_auto_rebalance_counts_and_tells_the_leaders_it_moved(
        make_cluster: MakeCluster) -> None:
    """The imbalance check answers how many leaders went back to their preferred
    replica (a preferred election that cannot place it there moves none) and wakes
    what waits on the cluster only when one did; by default a broker's partitions are
    rebalanced above 10% of them led elsewhere (leader.imbalance.per.broker.percentage:
    1 in 10 is not enough, 2 are)."""
    s, clock, f = make_cluster()
    s.create_topic("t", assignments={i: [1, 2] for i in range(10)})
    settle(s, clock)
    parts = [s.get_partition("t", i) for i in range(10)]
    controller.change_leader(s, parts[0], 2)
    s.tick()
    version = s.version
    assert controller.auto_rebalance(s) == 0 and s.version == version
    assert parts[0].leader == 2
    controller.change_leader(s, parts[1], 2)
    assert controller.auto_rebalance(s) == 2 and s.version > version
    assert [p.leader for p in parts] == [1] * 10
    controller.broker_stopped(s, 1)
    controller.broker_started(s, 1)  # back, not in the ISRs yet: no preferred leader
    assert controller.auto_rebalance(s) == 0 and [p.leader for p in parts] == [2] * 10
    settle(s, clock)
    s.tick()
    version = s.version
    assert controller.auto_rebalance(s) == 10 and s.version > version
    assert [p.leader for p in parts] == [1] * 10


# ---- controller election -----------------------------------------------------------------
def test_the_controller_role_goes_to_the_lowest_live_broker_with_the_next_epoch(
        make_cluster: MakeCluster) -> None:
    """The active controller stays while it lives; when it dies the lowest live broker
    takes the role with the next controller epoch, told (ControllerChanged, then
    ControllerFailover once its state machines are rebuilt); with no broker left there
    is none (-1, told), and the first broker back takes it, with the next epoch again."""
    from emulator.cluster.events import ControllerChanged, ControllerFailover

    s, clock, f = make_cluster([2, 4, 6])
    s.create_topic("t", assignments={0: [6, 4]})
    first = s.controller
    epoch = first.epoch
    seen = _news(s, ControllerChanged, ControllerFailover)
    assert controller.elect_controller(s) is first and seen == []
    controller.broker_stopped(s, 2)
    assert (s.controller_id, s.controller.epoch, s.controller_epoch) == (4, epoch + 1,
                                                                         epoch + 1)
    assert seen == [ControllerChanged(controller=4, epoch=epoch + 1),
                    ControllerFailover(controller=4, epoch=epoch + 1)]
    assert s.controller.machines.partitions.state(("t", 0)).value == "OnlinePartition"
    controller.broker_stopped(s, 6)
    controller.broker_stopped(s, 4)
    assert (s.controller, s.controller_id) == (None, -1)
    assert seen[-1] == ControllerChanged(controller=-1)
    controller.broker_started(s, 6)
    assert (s.controller_id, s.controller.epoch) == (6, epoch + 2)


def test_a_broker_stop_elects_only_the_partitions_it_was_in_sync_for(
        make_cluster: MakeCluster) -> None:
    """handleBrokerFenced runs the elections of the partitions whose ISR held the broker
    and of no other: a leaderless partition of a topic given
    unclean.leader.election.enable after it lost its leader waits for the controller's
    periodic unclean check, whichever other broker stops meanwhile."""
    s, clock, f = make_cluster(4)
    s.create_topic("t", assignments={0: [3, 1]})
    p = s.get_partition("t", 0)
    controller.broker_stopped(s, 1)
    controller.broker_stopped(s, 3)  # the last ISR member: leaderless, ISR [3]
    controller.broker_started(s, 1)  # back, not in the ISR: no clean election
    s.get_topic("t").configs["unclean.leader.election.enable"] = "true"
    controller.broker_stopped(s, 4)
    assert (p.leader, p.isr) == (-1, [3])
    clock.advance(controller.DEFAULT_UNCLEAN_INTERVAL_MS)
    s.tick()
    assert (p.leader, p.isr) == (1, [1])


# ---- the controller's timers (Controller.tick) -------------------------------------------
def _leaderless_unclean(s: object, name: str, last: int, other: int) -> object:
    """``name``-0 of replicas [last, other]: ``last`` the last ISR member, stopped;
    ``other`` back, out of the ISR; the topic then allows unclean elections (its
    unclean leader waits for the controller's check)."""
    s.create_topic(name, assignments={0: [last, other]})  # type: ignore[attr-defined]
    p = s.get_partition(name, 0)  # type: ignore[attr-defined]
    controller.broker_stopped(s, other)  # type: ignore[arg-type]
    controller.broker_stopped(s, last)  # type: ignore[arg-type]
    controller.broker_started(s, other)  # type: ignore[arg-type]
    s.get_topic(name).configs["unclean.leader.election.enable"] = "true"  # type: ignore[attr-defined]
    return p


def test_the_unclean_check_runs_every_interval_from_the_last(
        make_cluster: MakeCluster) -> None:
    """unclean.leader.election.interval.ms after the controller starts, and again that
    long after each check, the controller elects unclean leaders; ``tick`` answers
    whether a leadership changed."""
    s, clock, f = make_cluster(4, **{"unclean.leader.election.interval.ms": "1000"})
    c = s.controller
    start = s.now()
    p = _leaderless_unclean(s, "t", 3, 4)
    clock.advance(999)
    assert c.tick(s.now()) is False and p.leader == -1
    clock.advance(1)
    assert c.tick(s.now()) is True and (p.leader, p.isr) == (4, [4])
    clock.advance(1)
    q = _leaderless_unclean(s, "u", 2, 3)
    assert c.tick(s.now()) is False and q.leader == -1
    clock.advance(998)
    assert c.tick(s.now()) is False and q.leader == -1
    clock.advance(1)
    assert s.now() == start + 2000 and s.controller is c
    assert c.tick(s.now()) is True and (q.leader, q.isr) == (3, [3])
    clock.advance(1000)
    assert c.tick(s.now()) is False  # a check with nothing to elect


def test_the_leader_rebalance_runs_every_interval(make_cluster: MakeCluster) -> None:
    """leader.imbalance.check.interval.seconds after the controller starts, and again
    that long after each check, the controller rebalances preferred leaders;
    ``tick`` answers whether a leadership changed."""
    s, clock, f = make_cluster(**{"leader.imbalance.check.interval.seconds": "2"})
    c = s.controller
    s.create_topic("t", assignments={0: [1, 2]})
    p = s.get_partition("t", 0)
    settle(s, clock)
    controller.change_leader(s, p, 2)
    clock.advance(2000 - 41)  # settle's 40 ms and one more
    assert c.tick(s.now()) is False and p.leader == 2
    clock.advance(1)
    assert c.tick(s.now()) is True and p.leader == 1
    controller.change_leader(s, p, 2)
    clock.advance(1999)
    assert c.tick(s.now()) is False and p.leader == 2
    clock.advance(1)
    assert c.tick(s.now()) is True and p.leader == 1


def test_no_leader_rebalance_without_auto_leader_rebalance(make_cluster: MakeCluster) -> None:
    """auto.leader.rebalance.enable false: the check's time comes and goes, the leader
    stays off its preferred replica."""
    s, clock, f = make_cluster(**{"leader.imbalance.check.interval.seconds": "2",
                                  "auto.leader.rebalance.enable": "false"})
    s.create_topic("t", assignments={0: [1, 2]})
    p = s.get_partition("t", 0)
    settle(s, clock)
    controller.change_leader(s, p, 2)
    clock.advance(2000)
    assert s.controller.tick(s.now()) is False and p.leader == 2


# ---- a crash, fenced after the session timeout ---------------------------------------------
def test_a_crash_is_fenced_once_its_first_session_timeout_ends(
        make_cluster: MakeCluster) -> None:
    """The controller hears of a crash only when the session times out: the broker stays
    registered and leads until then, the crash is told once (BrokerCrashed, with the
    delay), a second report does not push the deadline back, and a crash reported with
    no delay fences at once, as does a crash of a broker already fenced (nothing to do)."""
    from emulator.cluster.events import BrokerCrashed

    s, clock, f = make_cluster()
    s.create_topic("t", assignments={0: [2, 1]})
    p = s.get_partition("t", 0)
    seen = _news(s, BrokerCrashed)
    s.tick()
    version = s.version
    controller.broker_crashed(s, 2, 1000)
    assert s.version > version and seen == [BrokerCrashed(broker=2, fence_after_ms=1000)]
    deadline = s.now() + 1000
    clock.advance(500)
    controller.broker_crashed(s, 2, 1000)
    assert (s.pending_fence, len(seen), p.leader) == ({2: deadline}, 1, 2)
    clock.advance(500)
    s.tick()
    assert (p.leader, s.brokers[2].alive, s.pending_fence) == (1, False, {})
    controller.broker_crashed(s, 2, 1000)
    assert (s.brokers[2].crashed, s.pending_fence, len(seen)) == (False, {}, 1)
    controller.broker_crashed(s, 1, 1000)
    controller.broker_crashed(s, 1, 0)  # the fence is due now
    assert (p.leader, s.brokers[1].alive, s.pending_fence) == (-1, False, {})


def test_unregistering_fences_only_a_running_broker(make_cluster: MakeCluster) -> None:
    """UnregisterBroker's fencing of a running broker (Kafka's timing): it leaves the ISRs
    and its leaderships, and is marked unregistered until it restarts; a stopped broker,
    or a crashed one awaiting its fence, is left as it is."""
    s, clock, f = make_cluster(4)
    s.create_topic("t", assignments={0: [3, 1]})
    p = s.get_partition("t", 0)
    controller.broker_unregistered(s, 3)
    assert (s.brokers[3].alive, s.brokers[3].unregistered) == (False, True)
    assert (p.leader, p.isr, p.replicas) == (1, [1], [3, 1])
    controller.broker_stopped(s, 2)
    controller.broker_unregistered(s, 2)
    assert s.brokers[2].unregistered is False
    controller.broker_crashed(s, 4, 1000)
    controller.broker_unregistered(s, 4)
    b = s.brokers[4]
    assert (b.alive, b.crashed, b.unregistered, s.pending_fence) == (
        True, True, False, {4: s.now() + 1000})


def test_a_new_controller_rebuilds_never_led_partitions_as_new(
        make_cluster: MakeCluster) -> None:
    """onControllerFailover's initial states: a partition never led (created with no live
    replica: no leader, leader epoch 0) is New, one that lost its leader Offline, one led
    by a live broker Online; the live replicas then go Online again (the replica state
    machine's startup, told per replica), and the dead ones stay Offline."""
    from emulator.cluster.events import ReplicaStateChanged

    s, clock, f = make_cluster(4)
    controller.broker_stopped(s, 3)
    s.create_topic("never", assignments={0: [3]})
    s.create_topic("lost", assignments={0: [2]})
    s.create_topic("led", assignments={0: [4]})
    controller.broker_stopped(s, 2)
    seen = _news(s, ReplicaStateChanged)
    controller.broker_stopped(s, 1)  # the controller: 4 takes the role
    machines = s.controller.machines
    assert s.controller_id == 4
    assert [machines.partitions.state((t, 0)).value for t in ("never", "lost", "led")] == [
        "NewPartition", "OfflinePartition", "OnlinePartition"]
    assert seen == [ReplicaStateChanged(key=("led", 0, 4), old="OnlineReplica",
                                        new="OnlineReplica")]
    assert machines.replicas.state(("never", 0, 3)).value == "OfflineReplica"


def test_the_controller_reads_as_its_broker_and_epoch(make_cluster: MakeCluster) -> None:
    """What a failing assertion or a debugger shows of the active controller."""
    s, clock, f = make_cluster([2, 3])
    controller.broker_stopped(s, 2)
    assert repr(s.controller) == "Controller(broker=3, epoch=2)"


def test_a_controller_elected_during_a_deletion_has_nothing_to_walk(
        make_cluster: MakeCluster) -> None:
    """A stepped deletion unpublishes the topic first; a controller elected before its
    partitions have left never saw them (NonExistent in its state machines), so the
    deletion's later steps walk nothing there and end without a fault."""
    from emulator.cluster import topics as topic_ops

    s, clock, f = make_cluster()
    s.create_topic("big", 2 * topic_ops.STEP_PARTITIONS, 3)
    steps = s.delete_topic_steps("big")
    next(steps)
    controller.broker_stopped(s, 1)  # the controller
    assert s.controller_id == 2
    for _ in steps:
        pass
    assert not [k for k, _ in s.controller.machines.partitions if k[0] == "big"]
    assert not [k for k, _ in s.controller.machines.replicas if k[0] == "big"]


def test_a_reassignment_waits_for_an_alter_partition_after_an_unclean_leader(
        make_cluster: MakeCluster) -> None:
    """A broker's return elects an unclean leader for a leaderless partition being
    reassigned to it: PartitionChangeBuilder checks the reassignment's completion on
    the ISR before the election (the old one, of the replica being removed), so the
    reassignment is still in progress after it, although the new ISR holds every
    target; it completes with the next AlterPartition (the removed replica back in
    the ISR)."""
    s, clock, f = make_cluster()
    s.create_topic("t", assignments={0: [1]},
                   configs={"unclean.leader.election.enable": "true"})
    p = s.get_partition("t", 0)
    produce(s, p, 2)
    controller.broker_stopped(s, 2)
    reassignment.start_reassignment(s, p, [2])  # 2 is down: it waits
    controller.broker_stopped(s, 1)
    assert (p.leader, p.isr, p.replicas) == (-1, [1], [2, 1])
    controller.broker_started(s, 2)
    assert (p.leader, p.isr, p.replicas, p.adding_replicas, p.removing_replicas) == (
        2, [2], [2, 1], [2], [1])
    controller.broker_started(s, 1)
    settle(s, clock)
    assert (p.leader, p.isr, p.replicas, p.adding_replicas, p.removing_replicas) == (
        2, [2], [2], [], [])


def test_a_controlled_shutdown_elects_only_where_the_broker_was_in_sync(
        make_cluster: MakeCluster) -> None:
    """handleBrokerInControlledShutdown looks at the partitions whose ISR holds the
    broker, and no other: a leaderless partition of a topic given
    unclean.leader.election.enable after it lost its leader waits for the periodic
    unclean check; no replica state is made up for a partition the broker has no
    replica of; a partition it led that broker 0 now leads is not stranded."""
    s, clock, f = make_cluster([0, 1, 2, 3])
    s.create_topic("led", assignments={0: [1, 0]})
    p = _leaderless_unclean(s, "t", 3, 2)
    assert controller.controlled_shutdown(s, 1) == []
    assert (p.leader, p.isr) == (-1, [3])
    assert s.get_partition("led", 0).leader == 0
    assert s.controller.machines.replicas.state(("t", 0, 1)).value == "NonExistentReplica"


def test_a_controlled_shutdown_elects_an_unclean_leader_where_the_topic_allows(
        make_cluster: MakeCluster) -> None:
    """The shutting-down leader was the last ISR member and the topic allows unclean
    elections: generateLeaderAndIsrUpdates elects UNCLEAN there, the first other live
    replica leads with an ISR of itself, and the partition is not stranded."""
    s, clock, f = make_cluster()
    s.create_topic("t", assignments={0: [2, 1]},
                   configs={"unclean.leader.election.enable": "true"})
    p = s.get_partition("t", 0)
    controller.broker_stopped(s, 1)
    controller.broker_started(s, 1)  # back, not in the ISR yet
    assert p.isr == [2]
    assert controller.controlled_shutdown(s, 2) == []
    assert (p.leader, p.isr) == (1, [1])


def test_a_returning_broker_takes_each_of_its_replicas_online(
        make_cluster: MakeCluster) -> None:
    """broker_started goes through every partition: its replicas go Online whatever
    partitions without one come first."""
    s, clock, f = make_cluster()
    s.create_topic("a", assignments={0: [1, 2]})
    s.create_topic("b", assignments={0: [2, 3], 1: [3, 2]})
    controller.broker_stopped(s, 3)
    controller.broker_started(s, 3)
    states = s.controller.machines.replicas
    assert [states.state(("b", i, 3)).value for i in (0, 1)] == ["OnlineReplica"] * 2


def test_auto_rebalance_goes_through_every_preferred_broker(
        make_cluster: MakeCluster) -> None:
    """Each preferred broker is judged on its own: one that cannot lead (stopped), or
    whose partitions are balanced, does not keep a later imbalanced one from its
    preferred leaderships."""
    s, clock, f = make_cluster(4)
    s.create_topic("t", assignments={0: [1, 4], 1: [2, 4], 2: [3, 4]})
    settle(s, clock)
    controller.broker_stopped(s, 1)  # t-0 to 4; 1 cannot lead
    controller.change_leader(s, s.get_partition("t", 2), 4)  # 3: imbalanced
    assert controller.auto_rebalance(s) == 1
    assert [s.get_partition("t", i).leader for i in range(3)] == [4, 2, 3]


def test_a_returning_follower_holds_no_high_watermark_before_it_fetches(
        make_cluster: MakeCluster) -> None:
    """A follower back from a stop has not fetched yet: the leader's last view of it is
    from before the stop, too old to count it caught up, so it does not hold the high
    watermark of the next append (a caught-up replica outside the ISR would); its
    fetcher starts afresh (it checks for divergence first) and it rejoins by fetching."""
    s, clock, f = make_cluster()
    s.create_topic("t", assignments={0: [1, 2]})
    p = s.get_partition("t", 0)
    produce(s, p, 1)
    settle(s, clock)
    controller.broker_stopped(s, 2)
    clock.advance(LAG + 1)
    s.tick()
    controller.broker_started(s, 2)
    produce(s, p, 1)
    assert (p.isr, p.high_watermark, p.log_end_offset) == ([1], 2, 2)
    settle(s, clock)
    assert (p.isr, p.high_watermark) == ([1, 2], 2)


def test_a_crash_reported_with_a_delay_of_1_ms_waits_for_it(make_cluster: MakeCluster) -> None:
    """Any positive delay is a session to wait for, 1 ms too."""
    s, clock, f = make_cluster()
    controller.broker_crashed(s, 2, 1)
    assert (s.brokers[2].alive, s.brokers[2].crashed, s.pending_fence) == (
        True, True, {2: s.now() + 1})


def test_a_new_replica_goes_to_the_first_live_log_dir_of_its_own_broker(
        make_cluster: MakeCluster) -> None:
    """Where a new replica's usual dir failed, its broker's first live dir takes it:
    with the metadata log elsewhere, a failed first dir sends partition 0 to the second."""
    from emulator.cluster.log_dirs import replica_log_dir

    s, clock, f = make_cluster(**TWO_DIRS, **{"metadata.log.dir": "/d/m"})
    assert controller.log_dir_failed(s, 1, "/d/a", "test") is False
    s.create_topic("t", assignments={0: [1, 2]})
    assert [replica_log_dir(s, b, "t", 0) for b in (1, 2)] == ["/d/b", "/d/a"]
    assert s.get_partition("t", 0).offline == set()


def test_one_controller_tick_answers_every_check_it_ran(make_cluster: MakeCluster) -> None:
    """The unclean check and the leader rebalance due at the same tick: the tick answers
    that a leadership changed if either changed one (an unclean check electing one
    partition and finding another without a live replica; a rebalance with nothing to
    move), and no change when neither did; a leaderless partition of a topic without
    unclean elections is left to wait."""
    s, clock, f = make_cluster(4, **{"unclean.leader.election.interval.ms": "1000",
                                     "leader.imbalance.check.interval.seconds": "1"})
    c = s.controller
    for name, replicas in (("a", [3, 4]), ("b", [3, 4]), ("c", [3, 2])):
        s.create_topic(name, assignments={0: replicas})
    clean, p, q = (s.get_partition(name, 0) for name in "abc")
    for b in (4, 2, 3):
        controller.broker_stopped(s, b)  # 3 the last ISR member of all three
    controller.broker_started(s, 4)  # back, out of the ISRs
    for name in "bc":
        s.get_topic(name).configs["unclean.leader.election.enable"] = "true"
    clock.advance(1000)
    assert c.tick(s.now()) is True
    assert [(x.leader, x.isr) for x in (clean, p, q)] == [(-1, [3]), (4, [4]), (-1, [3])]
    clock.advance(1000)
    assert c.tick(s.now()) is False
