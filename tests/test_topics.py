"""Topic operations of the domain: creation rules, placement, configs, retention, offsets."""

from __future__ import annotations

import pytest

from emulator.cluster import config_ops
from emulator.cluster.clock import ManualClock
from emulator.cluster.partition import KafkaError
from emulator.cluster.state import Broker, ClusterState
from wire.errors import ErrorCode as E
from wire.records import Record, build_batch


def cluster(n: int = 3, **config: str) -> ClusterState:
    return ClusterState([Broker(i, "h", 9000 + i) for i in range(1, n + 1)],
                        clock=ManualClock(), broker_config=config)


def produce(s: ClusterState, topic: str, part: int, n: int = 1, ts: int = 0) -> int:
    p = s.get_partition(topic, part)
    r = s.append(p.leader, topic, part, build_batch([(b"k", b"v")] * n, timestamp=ts), 1)
    assert r.error == 0, r
    s.tick()
    return r.base_offset


def test_create_topic_defaults_and_placement_spread() -> None:
    s = cluster(**{"num.partitions": "6", "default.replication.factor": "3"})
    t = s.create_topic("t")
    assert len(t.partitions) == 6
    leaders = [p.leader for p in t.partitions]
    assert sorted(set(leaders)) == [1, 2, 3]
    assert all(leaders.count(b) == 2 for b in (1, 2, 3))
    for p in t.partitions:
        assert len(set(p.replicas)) == 3 and p.isr == p.replicas and p.leader == p.replicas[0]
    assert t.id != bytes(16)


@pytest.mark.parametrize(("kwargs", "code"), [
    ({"num_partitions": 0, "replication_factor": 1}, E.INVALID_PARTITIONS),
    ({"num_partitions": 1, "replication_factor": 4}, E.INVALID_REPLICATION_FACTOR),
    ({"num_partitions": 1, "replication_factor": 0}, E.INVALID_REPLICATION_FACTOR),
    ({"assignments": {0: [1, 1]}}, E.INVALID_REPLICA_ASSIGNMENT),
    ({"assignments": {0: [9]}}, E.INVALID_REPLICA_ASSIGNMENT),
    ({"assignments": {1: [1]}}, E.INVALID_REPLICA_ASSIGNMENT),
    ({"num_partitions": 1, "replication_factor": 1, "assignments": {0: [1]}}, E.INVALID_REQUEST),
    ({"num_partitions": 1, "replication_factor": 1, "configs": {"bogus": "1"}},
     E.INVALID_CONFIG),
    ({"num_partitions": 1, "replication_factor": 1, "configs": {"retention.ms": "x"}},
     E.INVALID_CONFIG),
])
def test_create_topic_rejections(kwargs: dict, code: int) -> None:
    s = cluster()
    with pytest.raises(KafkaError) as e:
        s.create_topic("t", **kwargs)
    assert e.value.code == code
    assert "t" not in s.topics


def test_topic_name_rules_and_duplicates() -> None:
    s = cluster()
    for bad in ("", ".", "..", "a b", "x" * 250, "ümlaut"):
        with pytest.raises(KafkaError) as e:
            s.create_topic(bad, 1, 1)
        assert e.value.code == E.INVALID_TOPIC_EXCEPTION
    s.create_topic("ok.name_-1", 1, 1)
    with pytest.raises(KafkaError) as e:
        s.create_topic("ok.name_-1", 1, 1)
    assert e.value.code == E.TOPIC_ALREADY_EXISTS


def test_validate_only_creates_nothing() -> None:
    s = cluster()
    assert s.create_topic("t", 3, 2, validate_only=True) is None
    assert "t" not in s.topics


def test_create_partitions() -> None:
    s = cluster()
    s.create_topic("t", 2, 2)
    s.create_partitions("t", 4, None, False)
    t = s.topics["t"]
    assert [p.index for p in t.partitions] == [0, 1, 2, 3]
    assert all(len(p.replicas) == 2 for p in t.partitions)
    assert t.partitions[3].log_end_offset == 0
    with pytest.raises(KafkaError) as e:
        s.create_partitions("t", 3, None, False)
    assert e.value.code == E.INVALID_PARTITIONS
    with pytest.raises(KafkaError) as e:
        s.create_partitions("t", 5, [[1]], False)
    assert e.value.code == E.INVALID_REPLICA_ASSIGNMENT


def test_list_offsets_earliest_latest_and_by_time() -> None:
    s = cluster()
    s.create_topic("t", 1, 3)
    for i in range(5):
        produce(s, "t", 0, n=2, ts=1000 * (i + 1))
    leader = s.get_partition("t", 0).leader
    assert s.list_offset(leader, "t", 0, -2, 0)[0] == 0
    assert s.list_offset(leader, "t", 0, -1, 0)[0] == 10
    assert s.list_offset(leader, "t", 0, 2500, 0)[:2] == (4, 3000)
    assert s.list_offset(leader, "t", 0, 99999, 0)[0] == -1
    off, ts, _ = s.list_offset(leader, "t", 0, -3, 0)
    assert (off, ts) == (8, 5000)


def test_offset_for_time_inside_a_batch() -> None:
    s = cluster()
    s.create_topic("t", 1, 1)
    p = s.get_partition("t", 0)
    recs = [Record(0, 100 + 10 * i, b"k", b"v") for i in range(5)]
    assert s.append(p.leader, "t", 0, build_batch(recs, timestamp=100), 1).error == 0
    s.tick()
    assert s.list_offset(p.leader, "t", 0, 125, 0)[:2] == (3, 130)


def test_delete_records_moves_log_start_on_every_replica() -> None:
    s = cluster()
    s.create_topic("t", 1, 3)
    for _ in range(4):
        produce(s, "t", 0, n=3)
    assert s.delete_records("t", 0, 6) == 6
    p = s.get_partition("t", 0)
    assert all(log.log_start_offset == 6 for log in p.logs.values())
    with pytest.raises(KafkaError) as e:
        s.delete_records("t", 0, 100)
    assert e.value.code == E.OFFSET_OUT_OF_RANGE
    assert s.delete_records("t", 0, -1) == 12


def test_retention_by_time_and_bytes() -> None:
    s = cluster()
    s.create_topic("t", 1, 1, configs={"retention.ms": "1000"})
    now = s.now()
    produce(s, "t", 0, ts=now - 5000)
    produce(s, "t", 0, ts=now - 4000)
    produce(s, "t", 0, ts=now)
    s.apply_retention()
    assert s.get_partition("t", 0).log_start_offset == 2
    s.create_topic("b", 1, 1, configs={"retention.bytes": "1"})
    for _ in range(4):
        produce(s, "b", 0, ts=now)
    s.apply_retention()
    assert s.get_partition("b", 0).log_start_offset == 3  # the newest batch stays


def test_configs_describe_alter_incremental() -> None:
    s = cluster(**{"log.retention.hours": "1"})
    s.create_topic("t", 1, 1, configs={"cleanup.policy": "compact"})
    entries = {e.name: e for e in config_ops.describe(s, config_ops.TOPIC, "t", None, 1)}
    assert entries["cleanup.policy"].value == "compact"
    assert entries["cleanup.policy"].source == 1  # DYNAMIC_TOPIC
    assert entries["retention.ms"].value == "3600000"
    assert entries["retention.ms"].source == 4  # STATIC_BROKER
    assert entries["min.insync.replicas"].source == 5  # DEFAULT
    config_ops.incremental_alter(s, config_ops.TOPIC, "t", [
        ("leader.replication.throttled.replicas", config_ops.APPEND, "0:1,0:2"),
        ("cleanup.policy", config_ops.DELETE, None)], False, 1)
    config_ops.incremental_alter(s, config_ops.TOPIC, "t", [
        ("leader.replication.throttled.replicas", config_ops.SUBTRACT, "0:1")], False, 1)
    t = s.topics["t"]
    assert t.configs == {"leader.replication.throttled.replicas": "0:2"}
    config_ops.incremental_alter(s, config_ops.BROKER, "2", [
        ("follower.replication.throttled.rate", config_ops.SET, "1000")], False, 2)
    assert s.config_int("follower.replication.throttled.rate", 2) == 1000
    assert s.config_int("follower.replication.throttled.rate", 1) > 1000
    with pytest.raises(KafkaError) as e:
        config_ops.incremental_alter(s, config_ops.BROKER, "2", [
            ("broker.id", config_ops.SET, "7")], False, 2)
    assert e.value.code == E.INVALID_REQUEST
    config_ops.alter(s, config_ops.TOPIC, "t", {"retention.ms": "5"}, False, 1)
    assert t.configs == {"retention.ms": "5"}
    with pytest.raises(KafkaError) as e:
        config_ops.describe(s, config_ops.TOPIC, "missing", None, 1)
    assert e.value.code == E.UNKNOWN_TOPIC_OR_PARTITION
