"""Replication throttles as Kafka's ReplicationQuotaManager enforces them, on a manual
clock (ReplicationQuotaManagerTest, ReplicationQuotasTest; docs/reassignment.md, Throttles)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from emulator.cluster import config_ops
from emulator.cluster.clock import ManualClock
from emulator.cluster.partition import Partition
from emulator.cluster.reassignment import alter_partition_reassignments
from emulator.cluster.state import ClusterState
from emulator.cluster.throttle import ALL, SimpleRate, parse_throttled
from wire.records import build_batch

if TYPE_CHECKING:
    from conftest import MakeCluster

BATCH = 10_000  # value bytes per batch
BROKER_CONFIG = {"replica.lag.time.max.ms": "10000"}


def fill(s: ClusterState, p: Partition, batches: int) -> int:
    for _ in range(batches):
        assert s.append(p.leader, p.topic, p.index, build_batch([(None, b"x" * BATCH)]), 1).error == 0
    return p.leader_log.size_bytes


def run_until(s: ClusterState, clock: ManualClock, done, step_ms: int = 50,
              limit_ms: int = 600_000) -> int:
    start = clock.now_ms()
    while not done():
        clock.advance(step_ms)
        s.tick()
        assert clock.now_ms() - start < limit_ms, "never finished"
    return clock.now_ms() - start


def set_configs(s: ClusterState, rtype: int, name: str, **kv: str) -> None:
    ops = [(k.replace("_", "."), config_ops.SET, v) for k, v in kv.items()]
    # a broker's own configs are altered on that broker, as clients send them
    to = int(name) if rtype == config_ops.BROKER and name else 1
    config_ops.incremental_alter(s, rtype, name, ops, False, to)


# ---- the rate ---------------------------------------------------------------------------
def test_simple_rate_divides_by_at_least_one_window() -> None:
    r = SimpleRate(samples=11, window_ms=1000)
    assert r.measure(0) == 0
    r.record(1000, 0)
    assert r.measure(0) == 1000 and r.measure(500) == 1000
    assert r.measure(2000) == 500
    r.record(1000, 2000)  # a new sample: the first one ran a full window
    assert r.measure(4000) == 500


def test_simple_rate_forgets_samples_older_than_the_whole_window() -> None:
    r = SimpleRate(samples=11, window_ms=1000)
    r.record(11_000, 0)
    assert r.measure(10_000) == 1100
    assert r.measure(11_000) == 0  # every sample expired (samples x window)


def test_throttled_replica_lists() -> None:
    assert parse_throttled("", 1) is None and parse_throttled(None, 1) is None
    assert parse_throttled("*", 1) is ALL
    assert parse_throttled("0:1, 1:2,2:1", 1) == {0, 2}
    assert parse_throttled("0:1", 3) == frozenset()


# ---- throttled moves --------------------------------------------------------------------
def test_a_throttled_move_runs_at_the_follower_rate(make_cluster: MakeCluster) -> None:
    s, clock, _ = make_cluster(4)
    s.create_topic("t", assignments={0: [1, 2]})
    p = s.get_partition("t", 0)
    size = fill(s, p, 100)  # about 1 MB
    rate = 100_000
    set_configs(s, config_ops.BROKER, "3", follower_replication_throttled_rate=str(rate))
    set_configs(s, config_ops.TOPIC, "t", follower_replication_throttled_replicas="0:3")
    alter_partition_reassignments(s, [("t", [(0, [1, 2, 3])])])
    took = run_until(s, clock, lambda: not p.adding_replicas)
    expected = size * 1000 // rate
    assert abs(took - expected) <= expected // 10, (took, expected)
    assert p.logs[3].size_bytes == size


def test_a_leader_throttle_limits_what_the_leader_sends(make_cluster: MakeCluster) -> None:
    s, clock, _ = make_cluster(4)
    s.create_topic("t", assignments={0: [1, 2]})
    p = s.get_partition("t", 0)
    size = fill(s, p, 50)
    set_configs(s, config_ops.BROKER, "1", leader_replication_throttled_rate="50000")
    set_configs(s, config_ops.TOPIC, "t", leader_replication_throttled_replicas="0:1")
    alter_partition_reassignments(s, [("t", [(0, [1, 2, 3])])])
    took = run_until(s, clock, lambda: not p.adding_replicas)
    expected = size * 1000 // 50_000
    assert abs(took - expected) <= expected // 10, (took, expected)


def test_a_throttle_on_another_broker_or_partition_does_nothing(make_cluster: MakeCluster) -> None:
    s, clock, _ = make_cluster(4)
    s.create_topic("t", assignments={0: [1, 2], 1: [1, 2]})
    p0 = s.get_partition("t", 0)
    fill(s, p0, 50)
    set_configs(s, config_ops.BROKER, "3", follower_replication_throttled_rate="1")
    set_configs(s, config_ops.TOPIC, "t", follower_replication_throttled_replicas="1:3,0:4")
    alter_partition_reassignments(s, [("t", [(0, [1, 2, 3])])])
    assert run_until(s, clock, lambda: not p0.adding_replicas) <= 200


def test_in_sync_replicas_are_never_throttled_but_count(make_cluster: MakeCluster) -> None:
    s, clock, _ = make_cluster(4)
    s.create_topic("t", assignments={0: [1, 2]})
    p = s.get_partition("t", 0)
    set_configs(s, config_ops.BROKER, "2", follower_replication_throttled_rate="1")
    set_configs(s, config_ops.TOPIC, "t", follower_replication_throttled_replicas="*")
    fill(s, p, 20)
    clock.advance(10)
    s.tick()
    assert p.logs[2].log_end_offset == 20 and p.high_watermark == 20  # 2 is in the ISR
    assert s.replication_quotas.rates(2)["follower"] > 1


def test_the_first_fetch_is_never_refused_then_the_quota_holds_the_replica_out(
        make_cluster: MakeCluster) -> None:
    """The quota is checked before a fetch: a fresh replica gets one fetch, and the
    leader, never seeing it fetch again while the quota is exceeded, keeps it out of
    the ISR (why Kafka's cancellation tests throttle at 1 B/s)."""
    s, clock, _ = make_cluster(4)
    s.create_topic("t", assignments={0: [1, 2]})
    p = s.get_partition("t", 0)
    fill(s, p, 5)
    s.broker_overrides[3]["follower.replication.throttled.rate"] = "1"
    s.topics["t"].configs["follower.replication.throttled.replicas"] = "0:3"
    alter_partition_reassignments(s, [("t", [(0, [1, 2, 3])])])
    for _ in range(100):
        clock.advance(50)
        s.tick()
    assert p.logs[3].log_end_offset == 5 and 3 not in p.isr and p.adding_replicas == [3]
    del s.topics["t"].configs["follower.replication.throttled.replicas"]  # --verify clears it
    clock.advance(50)
    s.tick()
    assert p.adding_replicas == [] and p.replicas == [1, 2, 3]


def test_raising_the_rate_speeds_a_running_move(make_cluster: MakeCluster) -> None:
    """testAlterReassignmentThrottle: --additional --throttle raises the rate mid-move."""
    s, clock, _ = make_cluster(4)
    s.create_topic("t", assignments={0: [1, 2]})
    p = s.get_partition("t", 0)
    fill(s, p, 100)
    set_configs(s, config_ops.BROKER, "3", follower_replication_throttled_rate="10000")
    set_configs(s, config_ops.TOPIC, "t", follower_replication_throttled_replicas="0:3")
    alter_partition_reassignments(s, [("t", [(0, [1, 2, 3])])])
    for _ in range(40):
        clock.advance(50)
        s.tick()
    assert p.adding_replicas == [3]
    set_configs(s, config_ops.BROKER, "3", follower_replication_throttled_rate="300000")
    assert run_until(s, clock, lambda: not p.adding_replicas) < 10_000


def test_a_follower_held_out_by_its_quota_does_not_hold_back_the_next(
        make_cluster: MakeCluster) -> None:
    """[1, 2] -> [1, 3, 4] with only 3 throttled (1 B/s): once its quota holds 3 out of
    its fetcher's requests, 4 (after it in the replica order, and slowed to a batch a
    fetch) still fetches, catches up and joins the ISR."""
    s, clock, f = make_cluster(4)
    f.apply({"op": "slow_follower", "broker": 4, "delay_ms": 0, "max_bytes": 1})
    s.create_topic("t", assignments={0: [1, 2]})
    p = s.get_partition("t", 0)
    fill(s, p, 5)
    for _ in range(3):
        clock.advance(50)
        s.tick()  # 2 catches up: the high watermark is 5
    s.broker_overrides[3]["follower.replication.throttled.rate"] = "1"
    s.topics["t"].configs["follower.replication.throttled.replicas"] = "0:3"
    alter_partition_reassignments(s, [("t", [(0, [1, 3, 4])])])
    assert p.replicas == [1, 3, 4, 2]
    for _ in range(20):
        clock.advance(50)
        s.tick()
    assert p.logs[4].log_end_offset == 5 and 4 in p.isr
    assert 3 not in p.isr and p.adding_replicas == [3, 4]


def test_a_throttled_partition_is_fetched_one_fetch_at_a_time(
        make_cluster: MakeCluster) -> None:
    """A partition in the follower's throttled list, its quota not exceeded: each round
    the follower gets one fetch's worth (replica.fetch.max.bytes, at least one batch),
    not the 64 fetches an unthrottled one gets."""
    s, clock, _ = make_cluster(4, **{"replica.fetch.max.bytes": str(BATCH)})
    s.create_topic("t", assignments={0: [1, 2]})
    p = s.get_partition("t", 0)
    fill(s, p, 5)
    s.broker_overrides[3]["follower.replication.throttled.rate"] = str(10 * BATCH)
    s.topics["t"].configs["follower.replication.throttled.replicas"] = "0:3"
    alter_partition_reassignments(s, [("t", [(0, [1, 2, 3])])])
    s.replicate_partition(p, clock.now_ms())
    assert p.logs[2].log_end_offset == 5 and p.logs[3].log_end_offset == 1
