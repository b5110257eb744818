"""ElectLeaders PREFERRED and UNCLEAN with the KRaft controller's codes and messages
(ReplicationControlManagerTest: testElectPreferredLeaders,
testElectUncleanLeaders_WithoutElr, testPreferredElectionDoesNotTriggerUncleanElection)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from cluster_sim import produce, settle

from emulator.cluster import controller, leadership
from emulator.cluster.election import PREFERRED, UNCLEAN, elect_leaders
from emulator.cluster.events import LeaderChanged, PartitionStateChanged
from emulator.cluster.leadership import Election
from emulator.cluster.state_machines import PartitionState as PS
from wire.errors import ErrorCode as E
from wire.errors import KafkaError

if TYPE_CHECKING:
    from conftest import MakeCluster

NOT_NEEDED = (E.ELECTION_NOT_NEEDED, "Leader election not needed for topic partition.")
PREFERRED_NA = (E.PREFERRED_LEADER_NOT_AVAILABLE, "The preferred leader was not available.")
ELIGIBLE_NA = (E.ELIGIBLE_LEADERS_NOT_AVAILABLE,
               "Eligible topic partition leaders are not available.")
OK = (E.NONE, None)
BROKER_CONFIG = {"replica.lag.time.max.ms": "1000"}


def results(out: list) -> dict:
    return {(t, i): (code, msg) for t, parts in out for i, code, msg in parts}


def test_elect_preferred_leaders(make_cluster: MakeCluster) -> None:
    s, clock, f = make_cluster([0, 1, 2, 3, 4])
    s.brokers[0].alive = False  # registered, fenced
    s.shutting_down.add(1)  # in controlled shutdown
    s.create_topic("foo", assignments={0: [1, 2, 3], 1: [2, 3, 4], 2: [0, 2, 1]})
    request = [("foo", [0, 1, 2]), ("bar", [0, 1])]
    assert results(elect_leaders(s, PREFERRED, request)) == {
        ("foo", 0): PREFERRED_NA, ("foo", 1): NOT_NEEDED, ("foo", 2): PREFERRED_NA,
        ("bar", 0): (E.UNKNOWN_TOPIC_OR_PARTITION, "No such topic as bar"),
        ("bar", 1): (E.UNKNOWN_TOPIC_OR_PARTITION, "No such topic as bar")}
    s.shutting_down.discard(1)
    controller.broker_started(s, 0)
    settle(s, clock)  # 0 and 1 catch up and join the ISRs
    foo0, foo2 = s.get_partition("foo", 0), s.get_partition("foo", 2)
    assert set(foo0.isr) == {1, 2, 3} and set(foo2.isr) == {0, 1, 2}
    epochs = (foo0.leader_epoch, foo2.leader_epoch)
    assert results(elect_leaders(s, PREFERRED, request)) == {
        ("foo", 0): OK, ("foo", 1): NOT_NEEDED, ("foo", 2): OK,
        ("bar", 0): (E.UNKNOWN_TOPIC_OR_PARTITION, "No such topic as bar"),
        ("bar", 1): (E.UNKNOWN_TOPIC_OR_PARTITION, "No such topic as bar")}
    assert (foo0.leader, foo2.leader) == (1, 0)
    assert (foo0.leader_epoch, foo2.leader_epoch) == (epochs[0] + 1, epochs[1] + 1)


@pytest.mark.parametrize("all_partitions", [True, False])
def test_elect_unclean_leaders_without_elr(make_cluster: MakeCluster, all_partitions: bool) -> None:
    s, clock, f = make_cluster([0, 1, 2, 3, 4])
    s.create_topic("foo", assignments={0: [1, 2, 3], 1: [2, 3, 4], 2: [0, 2, 1]})
    p0, p1, p2 = (s.get_partition("foo", i) for i in range(3))
    for b in (2, 3):
        controller.broker_stopped(s, b)
    controller.broker_stopped(s, 1)
    assert (p0.leader, p0.isr) == (-1, [1])
    assert (p1.leader, p1.isr) == (4, [4])
    assert (p2.leader, p2.isr) == (0, [0])
    request = None if all_partitions else [("foo", [0, 1, 2])]

    def expect(first: tuple) -> dict:
        if all_partitions:  # ELECTION_NOT_NEEDED results are left out
            return {("foo", 0): first}
        return {("foo", 0): first, ("foo", 1): NOT_NEEDED, ("foo", 2): NOT_NEEDED}

    assert results(elect_leaders(s, UNCLEAN, request)) == expect(ELIGIBLE_NA)
    f.apply({"op": "pause_follower", "broker": 2, "topic": "foo", "partition": 0})
    controller.broker_started(s, 2)
    settle(s, clock)
    assert (p1.leader, set(p1.isr)) == (4, {2, 4})  # 2 back in partition 1's ISR
    assert results(elect_leaders(s, UNCLEAN, request)) == expect(OK)
    assert (p0.leader, p0.isr) == (2, [2])  # unclean: the ISR is reset to the new leader
    assert (p1.leader, p2.leader) == (4, 0)  # no preferred election happened


def test_null_topic_partitions_gives_every_topic_an_entry(make_cluster: MakeCluster) -> None:
    s, clock, f = make_cluster([1, 2])
    s.create_topic("a", assignments={0: [1, 2]})
    s.create_topic("b", assignments={0: [2, 1]})
    assert elect_leaders(s, PREFERRED, None) == [("a", []), ("b", [])]


def test_preferred_election_does_not_trigger_unclean_election(make_cluster: MakeCluster) -> None:
    s, clock, f = make_cluster([1, 2, 3, 4])
    s.create_topic("foo", assignments={0: [1, 2, 3]})
    p = s.get_partition("foo", 0)
    for b in (2, 3):
        controller.broker_stopped(s, b)
    controller.broker_stopped(s, 1)
    controller.broker_started(s, 2)
    assert (p.leader, p.isr) == (-1, [1])
    s.topics["foo"].configs["unclean.leader.election.enable"] = "true"
    assert results(elect_leaders(s, PREFERRED, [("foo", [0])])) == {("foo", 0): PREFERRED_NA}
    assert p.leader == -1


def test_unknown_partition_and_election_type(make_cluster: MakeCluster) -> None:
    s, clock, f = make_cluster([1, 2])
    s.create_topic("t", assignments={0: [1, 2]})
    assert results(elect_leaders(s, UNCLEAN, [("t", [3, -1, 1])])) == {
        ("t", 3): (E.UNKNOWN_TOPIC_OR_PARTITION, "No such partition as t-3"),
        ("t", -1): (E.UNKNOWN_TOPIC_OR_PARTITION, "No such partition as t--1"),
        ("t", 1): (E.UNKNOWN_TOPIC_OR_PARTITION, "No such partition as t-1")}  # one past
    with pytest.raises(KafkaError) as e:
        elect_leaders(s, 7, [("t", [0])])
    assert (e.value.code, e.value.message) == (E.INVALID_REQUEST, "Unknown election type 7")


def test_preferred_election_moves_the_leader_back(make_cluster: MakeCluster) -> None:
    s, clock, f = make_cluster([1, 2, 3])
    s.create_topic("t", assignments={0: [1, 2, 3]})
    p = s.get_partition("t", 0)
    controller.broker_stopped(s, 1)
    assert p.leader == 2
    controller.broker_started(s, 1)
    assert results(elect_leaders(s, PREFERRED, [("t", [0])])) == {("t", 0): PREFERRED_NA}
    settle(s, clock)
    seen: list[LeaderChanged] = []
    s.hooks.append(lambda kind, ev: seen.append(ev) if isinstance(ev, LeaderChanged) else None)
    assert results(elect_leaders(s, PREFERRED, [("t", [0])])) == {("t", 0): OK}
    assert p.leader == 1 and set(p.isr) == {1, 2, 3}  # a clean election keeps the ISR
    assert [(e.old, e.new, e.unclean) for e in seen] == [(2, 1, False)]


def test_an_unclean_election_resets_the_isr_and_says_so(make_cluster: MakeCluster) -> None:
    """UNCLEAN elects the first acceptable replica, resets the ISR to it, and the news
    carries unclean=True (what Kafka counts in UncleanLeaderElectionsPerSec)."""
    s, clock, f = make_cluster([1, 2, 3])
    s.create_topic("t", assignments={0: [1, 2, 3]})
    p = s.get_partition("t", 0)
    for b in (2, 3, 1):
        controller.broker_stopped(s, b)
    controller.broker_started(s, 3)
    assert (p.leader, p.isr) == (-1, [1])
    seen: list[LeaderChanged] = []
    s.hooks.append(lambda kind, ev: seen.append(ev) if isinstance(ev, LeaderChanged) else None)
    assert results(elect_leaders(s, UNCLEAN, [("t", [0])])) == {("t", 0): OK}
    assert (p.leader, p.isr) == (3, [3])
    assert [(e.old, e.new, e.unclean) for e in seen] == [(-1, 3, True)]


def test_null_topic_partitions_runs_the_requested_election_everywhere(
        make_cluster: MakeCluster) -> None:
    """With null TopicPartitions each partition gets the request's election: PREFERRED
    moves a's leader back to broker 1 (an unclean election would leave it, a leader
    being there) and reports only that partition."""
    s, clock, f = make_cluster([1, 2])
    s.create_topic("a", assignments={0: [1, 2]})
    s.create_topic("b", assignments={0: [2, 1]})
    controller.broker_stopped(s, 1)
    controller.broker_started(s, 1)
    settle(s, clock)
    a, b = s.get_partition("a", 0), s.get_partition("b", 0)
    assert (a.leader, b.leader, set(a.isr)) == (2, 2, {1, 2})
    assert elect_leaders(s, PREFERRED, None) == [("a", [(0, E.NONE, None)]), ("b", [])]
    assert (a.leader, b.leader) == (1, 2)


# PartitionChangeBuilder.electLeader case by case (ELR off): (election, current leader,
# target ISR, target replicas, excluded broker) -> (new leader, unclean). Brokers 0-4 are
# registered and alive; 4 is fenced.
SELECT_CASES = [
    # PREFERRED: replicas[0] when valid; else keep a valid leader; else the next valid one
    (Election.PREFERRED, 1, [0, 1, 2], [0, 1, 2], None, (0, False)),
    (Election.PREFERRED, 1, [2, 3], [0, 1, 2, 3], None, (2, False)),  # leader not in ISR
    (Election.PREFERRED, 0, [0, 2], [1, 2, 0], None, (0, False)),  # keeps broker 0
    (Election.PREFERRED, -1, [1, 2], [0, 1, 2], None, (1, False)),  # the next: replicas[1]
    (Election.PREFERRED, -1, [4], [0, 4], None, (-1, False)),  # never unclean
    # ONLINE (OFFLINE here): keep a valid leader, else the first valid replica, in order
    (Election.OFFLINE, -1, [0, 1], [0, 1], None, (0, False)),  # broker 0 is a leader too
    (Election.OFFLINE, 1, [1, 2], [1, 2], 1, (2, False)),  # the excluded one cannot stay
    (Election.OFFLINE, -1, [4], [4, 3], None, (-1, False)),
    # UNCLEAN: a clean pick first, else the first acceptable replica, not the excluded one
    (Election.UNCLEAN, -1, [4], [1, 2], 1, (2, True)),
    (Election.UNCLEAN, -1, [3, 4], [4, 3], None, (3, False)),
    (Election.UNCLEAN, -1, [4], [0, 1], None, (0, True)),  # broker 0 is acceptable too
]


@pytest.mark.parametrize(("election", "leader", "isr", "replicas", "exclude", "expected"),
                         SELECT_CASES)
def test_select_leader_is_pcbs_elect_leader(
        make_cluster: MakeCluster, election: Election, leader: int, isr: list[int],
        replicas: list[int], exclude: int | None, expected: tuple[int, bool]) -> None:
    s, clock, f = make_cluster([0, 1, 2, 3, 4])
    s.create_topic("t", assignments={0: [0, 1, 2, 3]})
    s.brokers[4].alive = False  # registered, fenced
    p = s.get_partition("t", 0)
    p.leader = leader
    assert leadership.select_leader(s, p, election, isr, replicas, exclude) == expected


def test_change_leader_forces_a_leader_and_resets_the_isr_only_when_unclean(
        make_cluster: MakeCluster) -> None:
    """leadership.change_leader, the fault injector's move_leader: a clean move keeps the
    ISR (a new leader outside it joins it, broker 0 like any other), an unclean one
    resets the ISR to the new leader and says so; moving to the current leader is no
    change."""
    s, clock, f = make_cluster([0, 1, 2])
    s.create_topic("t", assignments={0: [1, 2, 0]})
    p = s.get_partition("t", 0)
    seen: list[LeaderChanged] = []
    s.hooks.append(lambda kind, ev: seen.append(ev) if isinstance(ev, LeaderChanged) else None)
    assert leadership.change_leader(s, p, 1) is False and seen == []
    assert leadership.change_leader(s, p, 2) is True
    assert (p.leader, p.isr) == (2, [1, 2, 0])
    p.isr = [1, 2]
    assert leadership.change_leader(s, p, 0) is True
    assert (p.leader, p.isr) == (0, [1, 2, 0])  # joined the ISR
    assert leadership.change_leader(s, p, -1) is True
    assert (p.leader, p.isr) == (-1, [1, 2, 0])
    assert leadership.change_leader(s, p, 1, unclean=True) is True
    assert (p.leader, p.isr) == (1, [1])
    assert [(e.new, e.unclean) for e in seen] == [(2, False), (0, False), (-1, False), (1, True)]


def test_a_deposed_leader_keeps_its_high_watermark_as_a_follower(
        make_cluster: MakeCluster) -> None:
    """A leader that loses the leadership keeps the high watermark it had as the one it
    knows as a follower (what it truncates to on restart, and serves as a follower):
    broker 0 as any other."""
    s, clock, f = make_cluster([0, 1])
    s.create_topic("t", assignments={0: [0, 1]})
    p = s.get_partition("t", 0)
    produce(s, p, 5)
    settle(s, clock)
    assert (p.leader, p.high_watermark) == (0, 5)
    p.follower_hw.pop(0, None)
    assert leadership.change_leader(s, p, 1) is True
    assert p.follower_hw[0] == 5


def test_broker_0_becomes_leader_like_any_other(make_cluster: MakeCluster) -> None:
    """A move to broker 0: it takes the leadership (its epoch starts at its log end),
    the partition is Online in the controller's state machine, and the news carries the
    change whole."""
    s, clock, f = make_cluster([0, 1])
    s.create_topic("t", assignments={0: [1, 0]})
    p = s.get_partition("t", 0)
    produce(s, p, 3)
    settle(s, clock)
    seen: list[LeaderChanged] = []
    s.hooks.append(lambda kind, ev: seen.append(ev) if isinstance(ev, LeaderChanged) else None)
    assert leadership.change_leader(s, p, 0) is True
    assert (p.leader, p.leader_epoch) == (0, 1)
    assert p.logs[0].latest_epoch == 1 and p.logs[0].epoch_entries()[-1] == (1, 3)
    assert s.controller.machines.partitions.state(p.key) is PS.OnlinePartition
    assert seen == [LeaderChanged(topic="t", partition=0, old=1, new=0, epoch=1, unclean=False)]


def test_an_isr_shrink_advances_broker_0s_high_watermark_at_once(
        make_cluster: MakeCluster) -> None:
    """The change that drops a lagging follower from the ISR moves the leader's high
    watermark in the same step (broker 0 leading, as any other), once the follower is
    past replica.lag.time.max.ms (until then it holds the HW as one about to join)."""
    s, clock, f = make_cluster([0, 1])
    s.create_topic("t", assignments={0: [0, 1]})
    p = s.get_partition("t", 0)
    f.apply({"op": "pause_follower", "broker": 1})
    produce(s, p, 3)
    assert (p.leader, p.high_watermark, p.isr) == (0, 0, [0, 1])
    clock.advance(2000)  # past replica.lag.time.max.ms: 1 no longer counts as caught up
    assert leadership.partition_change(s, p, Election.OFFLINE, target_isr=[0]) is True
    assert (p.leader, p.isr, p.high_watermark) == (0, [0], 3)


def test_the_controllers_state_machine_follows_each_leader_change(
        make_cluster: MakeCluster) -> None:
    """apply_change moves the partition state machine: an election is Online -> Online
    (told, as every transition is); a partition left without a leader, or given one
    whose broker is stopped (change_leader, a tool's forced move), goes Offline; a
    live leader again brings it back Online."""
    s, clock, f = make_cluster([1, 2, 3])
    s.create_topic("t", assignments={0: [1, 2, 3]})
    p = s.get_partition("t", 0)
    m = s.controller.machines
    seen: list[tuple[str, str]] = []
    s.hooks.append(lambda kind, ev: seen.append((ev.old, ev.new))
                   if isinstance(ev, PartitionStateChanged) and ev.key == p.key else None)
    assert leadership.change_leader(s, p, 2) is True
    assert m.partitions.state(p.key) is PS.OnlinePartition
    assert seen == [("OnlinePartition", "OnlinePartition")]
    assert leadership.change_leader(s, p, -1) is True
    assert m.partitions.state(p.key) is PS.OfflinePartition
    assert leadership.change_leader(s, p, 1) is True
    assert m.partitions.state(p.key) is PS.OnlinePartition
    s.brokers[3].alive = False  # fenced, its partitions not yet moved by the controller
    assert leadership.change_leader(s, p, 3) is True
    assert p.leader == 3 and m.partitions.state(p.key) is PS.OfflinePartition
    assert seen[1:] == [("OnlinePartition", "OfflinePartition"),
                        ("OfflinePartition", "OnlinePartition"),
                        ("OnlinePartition", "OfflinePartition")]


def test_every_leader_change_is_remembered_for_the_parked_answers(
        make_cluster: MakeCluster) -> None:
    """apply_change notes each leader change (epoch, leader) once: 20 moves fit in the
    history a parked acks=all answer reads (Partition.deposed), so the leader that
    took over from epoch 1's is still known after them; an epoch bump that keeps the
    leader is an entry of its own and deposes nobody."""
    s, clock, f = make_cluster([1, 2, 3])
    s.create_topic("t", assignments={0: [1, 2, 3]})
    p = s.get_partition("t", 0)
    order = [2, 3, 1]
    for i in range(20):
        assert leadership.change_leader(s, p, order[i % 3]) is True
    assert p.leader_epoch == 20
    assert p.epoch_leaders == [(0, 1)] + [(e, order[(e - 1) % 3]) for e in range(1, 21)]
    assert p.deposed(1) == (3, 2)
    assert p.deposed(0) == (2, 1)
    leadership.apply_change(s, p, p.leader, list(p.isr), unclean=False, force_epoch_bump=True)
    assert p.epoch_leaders[-2:] == [(20, 3), (21, 3)] and p.deposed(20) is None


def test_a_new_leader_of_an_idle_partition_is_fetched_from_at_the_next_tick(
        make_cluster: MakeCluster) -> None:
    """A leader change touches the partition: the next tick visits it even when nothing
    is produced, and the followers start fetching from the new leader (its epoch), as
    Kafka's followers do on the LeaderAndIsr change."""
    s, clock, f = make_cluster([1, 2, 3])
    s.create_topic("t", assignments={0: [1, 2, 3]})
    p = s.get_partition("t", 0)
    produce(s, p, 2)
    settle(s, clock)
    assert all(p.fetcher_epoch.get(b) == 0 for b in (2, 3))
    settle(s, clock)  # idle: nothing left to visit
    clock.advance(10)
    s.tick(full=False)  # the server's tick: only what was touched, unfinished or due
    assert leadership.change_leader(s, p, 2) is True
    clock.advance(10)
    s.tick(full=False)
    assert {b: p.fetcher_epoch.get(b) for b in (1, 3)} == {1: 1, 3: 1}


def test_a_restored_follower_knows_the_high_watermark_and_keeps_it_as_leader(
        make_cluster: MakeCluster, tmp_path) -> None:
    """After a restart from the data directory every replica knows the high watermark
    it had (Kafka's replication-offset-checkpoint): a follower serves up to it, and a
    leader move before any follower has fetched keeps it."""
    from emulator.storage import DataDir

    s, clock, f = make_cluster([1, 2, 3])
    store = DataDir(str(tmp_path / "data"))
    s.hooks.append(lambda kind, ev: store.on_event(s, ev))
    s.create_topic("t", assignments={0: [1, 2, 3]})
    produce(s, s.get_partition("t", 0), 3, acks=-1)
    settle(s, clock)
    store.sync(s)
    store.close()
    s2, _, _ = make_cluster([1, 2, 3])
    DataDir(str(tmp_path / "data")).load(s2)
    p = s2.get_partition("t", 0)
    assert (p.leader, p.high_watermark) == (1, 3)
    assert [p.replica_view(b)[1] for b in (2, 3)] == [3, 3]
    assert leadership.change_leader(s2, p, 2) is True
    assert p.high_watermark == 3
