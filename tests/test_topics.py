"""Topic operations of the domain: creation rules, placement, configs, retention, offsets."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from emulator.cluster import config_ops, controller
from emulator.cluster.state import ClusterState
from emulator.cluster.state_machines import PartitionState as PS
from wire.errors import ErrorCode as E
from wire.errors import KafkaError
from wire.records import Record, build_batch, control_batch

if TYPE_CHECKING:
    from conftest import MakeCluster


def produce(s: ClusterState, topic: str, part: int, n: int = 1, ts: int = 0) -> int:
    p = s.get_partition(topic, part)
    r = s.append(p.leader, topic, part, build_batch([(b"k", b"v")] * n, timestamp=ts), 1)
    assert r.error == 0, r
    s.tick()
    return r.base_offset


def test_create_topic_defaults_and_placement_spread(make_cluster: MakeCluster) -> None:
    s = make_cluster(**{"num.partitions": "6", "default.replication.factor": "3"}).state
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
def test_create_topic_rejections(make_cluster: MakeCluster, kwargs: dict, code: int) -> None:
    s = make_cluster().state
    with pytest.raises(KafkaError) as e:
        s.create_topic("t", **kwargs)
    assert e.value.code == code
    assert "t" not in s.topics


def test_topic_name_rules_and_duplicates(make_cluster: MakeCluster) -> None:
    s = make_cluster().state
    for bad in ("", ".", "..", "a b", "x" * 250, "ümlaut"):
        with pytest.raises(KafkaError) as e:
            s.create_topic(bad, 1, 1)
        assert e.value.code == E.INVALID_TOPIC_EXCEPTION
    s.create_topic("ok.name_-1", 1, 1)
    with pytest.raises(KafkaError) as e:
        s.create_topic("ok.name_-1", 1, 1)
    assert e.value.code == E.TOPIC_ALREADY_EXISTS


def test_validate_only_creates_nothing(make_cluster: MakeCluster) -> None:
    s = make_cluster().state
    assert s.create_topic("t", 3, 2, validate_only=True) is None
    assert "t" not in s.topics


def test_create_partitions(make_cluster: MakeCluster) -> None:
    s = make_cluster().state
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


def test_list_offsets_earliest_latest_and_by_time(make_cluster: MakeCluster) -> None:
    s = make_cluster().state
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


def test_offset_for_time_inside_a_batch(make_cluster: MakeCluster) -> None:
    s = make_cluster().state
    s.create_topic("t", 1, 1)
    p = s.get_partition("t", 0)
    recs = [Record(0, 100 + 10 * i, b"k", b"v") for i in range(5)]
    assert s.append(p.leader, "t", 0, build_batch(recs, timestamp=100), 1).error == 0
    s.tick()
    assert s.list_offset(p.leader, "t", 0, 125, 0)[:2] == (3, 130)


def test_delete_records_moves_log_start_on_every_replica(make_cluster: MakeCluster) -> None:
    s = make_cluster().state
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


def test_retention_by_time_and_bytes(make_cluster: MakeCluster) -> None:
    s = make_cluster().state
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


def test_configs_describe_alter_incremental(make_cluster: MakeCluster) -> None:
    s = make_cluster(**{"log.retention.hours": "1"}).state
    s.create_topic("t", 1, 1, configs={"cleanup.policy": "compact"})
    entries = {e.name: e for e in config_ops.describe(s, config_ops.TOPIC, "t", None, 1)}
    assert entries["cleanup.policy"].value == "compact"
    assert entries["cleanup.policy"].source == 1  # DYNAMIC_TOPIC
    assert entries["retention.ms"].value == "3600000"
    assert entries["retention.ms"].source == 4  # STATIC_BROKER
    # Kafka 4.x's controller writes a cluster-level min.insync.replicas at bootstrap
    assert entries["min.insync.replicas"].source == 3  # DYNAMIC_DEFAULT_BROKER
    assert entries["segment.ms"].source == 5  # DEFAULT
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


def test_cluster_level_min_insync_replicas_as_kafka_4_keeps_it(make_cluster: MakeCluster) -> None:
    """Under eligible leader replicas (on by default in 4.4) the cluster level always has
    min.insync.replicas: described there with the other dynamic defaults, never removed,
    never overridden per broker; topics may still set their own (a 4.4 broker's answers,
    also checked by python -m conformance.response_diff)."""
    s = make_cluster(**{"min.insync.replicas": "2"}).state
    s.create_topic("t", 1, 1)
    config_ops.incremental_alter(s, config_ops.BROKER, "", [
        ("log.retention.ms", config_ops.SET, "7200000")], False, 1)
    listed = config_ops.describe(s, config_ops.BROKER, "", None, 1)
    assert [(e.name, e.value, e.source, e.synonyms) for e in listed] == [
        ("log.retention.ms", "7200000", 3, [("log.retention.ms", "7200000", 3)]),
        ("min.insync.replicas", "2", 3, [("min.insync.replicas", "2", 3)])]
    broker = config_ops.describe(s, config_ops.BROKER, "1", ["min.insync.replicas"], 1)[0]
    assert (broker.value, broker.source) == ("2", 3)
    assert [src for _n, _v, src in broker.synonyms] == [3, 4, 5]
    for rtype, name, ops, message in [
            (config_ops.BROKER, "", [("min.insync.replicas", config_ops.DELETE, None)],
             config_ops.CLUSTER_MIN_ISR_REMOVED),
            (config_ops.BROKER, "1", [("min.insync.replicas", config_ops.SET, "1")],
             config_ops.BROKER_MIN_ISR_ALTERED),
            (config_ops.BROKER, "1", [("min.insync.replicas", config_ops.DELETE, None)],
             config_ops.BROKER_MIN_ISR_ALTERED)]:
        with pytest.raises(KafkaError) as e:
            config_ops.incremental_alter(s, rtype, name, ops, True, 1)
        assert (e.value.code, e.value.message) == (E.INVALID_CONFIG, message)
    with pytest.raises(KafkaError) as e:  # a legacy AlterConfigs replaces the whole set
        config_ops.alter(s, config_ops.BROKER, "", {"log.retention.ms": "1"}, False, 1)
    assert (e.value.code, e.value.message) == (E.INVALID_CONFIG,
                                               config_ops.CLUSTER_MIN_ISR_REMOVED)
    config_ops.incremental_alter(s, config_ops.BROKER, "", [
        ("min.insync.replicas", config_ops.SET, "1")], False, 1)
    config_ops.incremental_alter(s, config_ops.TOPIC, "t", [
        ("min.insync.replicas", config_ops.SET, "2")], False, 1)
    assert s.topic_config(s.topics["t"], "min.insync.replicas") == "2"
    assert s.broker_config("min.insync.replicas", 1) == "1"


def test_produce_follows_every_kind_of_config_change_at_once(make_cluster: MakeCluster) -> None:
    """An append reads its topic's configs resolved once per change (ConfigDict): a
    change by AlterConfigs, IncrementalAlterConfigs, a cluster-wide broker default or a
    write into the dicts by hand is seen by the very next batch."""
    s = make_cluster().state
    s.create_topic("t", 1, 3)
    p = s.get_partition("t", 0)

    def append(size: int, acks: int = 1) -> int:
        batch = build_batch([(None, b"x" * size)], timestamp=s.now())
        return s.append(p.leader, "t", 0, batch, acks).error

    assert append(2000) == 0
    config_ops.incremental_alter(s, config_ops.TOPIC, "t", [
        ("max.message.bytes", config_ops.SET, "1000")], False, 1)
    assert append(2000) == E.MESSAGE_TOO_LARGE
    config_ops.alter(s, config_ops.TOPIC, "t", {}, False, 1)  # back to the default
    assert append(2000) == 0
    config_ops.incremental_alter(s, config_ops.BROKER, "", [
        ("message.max.bytes", config_ops.SET, "1000")], False, 1)  # the broker synonym
    assert append(2000) == E.MESSAGE_TOO_LARGE
    config_ops.incremental_alter(s, config_ops.BROKER, "", [
        ("message.max.bytes", config_ops.DELETE, None)], False, 1)
    assert append(2000) == 0
    s.topics["t"].configs["min.insync.replicas"] = "3"  # by hand
    p.isr.remove(p.replicas[-1])
    assert append(10, acks=-1) == E.NOT_ENOUGH_REPLICAS
    del s.topics["t"].configs["min.insync.replicas"]
    assert append(10, acks=-1) == 0
    s.topics["t"].configs = {"message.timestamp.type": "LogAppendTime"}  # a new dict
    batch = build_batch([(None, b"v")], timestamp=1)
    assert s.append(p.leader, "t", 0, batch, 1).log_append_time == s.now()


# ---- large operations in steps (emulator/cluster/steps.py) ------------------------------
def _steps_until_end(gen) -> tuple[int, object]:  # noqa: ANN001
    n = 0
    try:
        while True:
            next(gen)
            n += 1
    except StopIteration as done:
        return n, done.value


def test_stepped_create_is_published_whole_at_the_end(make_cluster: MakeCluster) -> None:
    s = make_cluster().state
    steps = s.create_topic_steps("big", 1000, 3)
    next(steps)
    # Half-built: nobody sees the topic, its name is taken, its partitions wait.
    assert "big" not in s.topics and "big" in s.pending_topics
    with pytest.raises(KafkaError) as e:
        s.create_topic("big", 1, 1)
    assert e.value.code == E.TOPIC_ALREADY_EXISTS
    with pytest.raises(KafkaError) as e:
        s.auto_create("big")
    assert e.value.code == E.LEADER_NOT_AVAILABLE
    n, topic = _steps_until_end(steps)
    assert n >= 1000 // 32 - 2
    assert s.topics["big"] is topic and not s.pending_topics
    assert [p.index for p in topic.partitions] == list(range(1000))
    assert all(p.leader == p.replicas[0] and p.isr == p.replicas for p in topic.partitions)
    c = s.controller.machines
    assert all(c.partitions.state(p.key) is PS.OnlinePartition for p in topic.partitions)
    # Stepping gives what one call gives (same seed, same placement).
    same = make_cluster().state.create_topic("big", 1000, 3)
    assert [p.replicas for p in same.partitions] == [p.replicas for p in topic.partitions]


def test_stepped_create_starts_again_when_a_broker_dies_under_it(make_cluster: MakeCluster) -> None:
    s = make_cluster(4).state
    steps = s.create_topic_steps("big", 1000, 3)
    for _ in range(5):
        next(steps)
    controller.broker_stopped(s, 2)
    _, topic = _steps_until_end(steps)
    # Built as if it came after the failure: nothing leads on broker 2 or lists it in
    # an ISR, and the controller knows every partition (no leftover of the first try).
    assert all(p.leader != 2 and 2 not in p.replicas for p in topic.partitions)
    c = s.controller.machines
    assert sum(1 for k, _ in c.partitions if k[0] == "big") == 1000
    assert all(c.partitions.state(p.key) is PS.OnlinePartition for p in topic.partitions)


def test_abandoned_stepped_create_leaves_nothing_behind(make_cluster: MakeCluster) -> None:
    s = make_cluster().state
    steps = s.create_topic_steps("big", 1000, 3)
    for _ in range(5):
        next(steps)
    steps.close()  # the server stopped meanwhile
    assert "big" not in s.topics and not s.pending_topics
    assert not [k for k, _ in s.controller.machines.partitions if k[0] == "big"]
    assert not [k for k, _ in s.controller.machines.replicas if k[0] == "big"]
    assert len(s.create_topic("big", 5, 3).partitions) == 5


def test_stepped_create_partitions_and_a_deletion_under_it(make_cluster: MakeCluster) -> None:
    s = make_cluster().state
    s.create_topic("t", 1, 3)
    steps = s.create_partitions_steps("t", 1001, None, False)
    next(steps)
    assert len(s.topics["t"].partitions) == 1  # appended whole at the end
    _steps_until_end(steps)
    assert [p.index for p in s.topics["t"].partitions] == list(range(1001))
    steps = s.create_partitions_steps("t", 2001, None, False)
    next(steps)
    s.pending_topics.discard("t")  # (handlers wait; a deletion by hand does not)
    s.delete_topic("t")
    with pytest.raises(KafkaError) as e:
        _steps_until_end(steps)
    assert e.value.code == E.UNKNOWN_TOPIC_OR_PARTITION
    assert not [k for k, _ in s.controller.machines.partitions if k[0] == "t"]


def test_stepped_delete_unpublishes_first_and_frees_the_name_last(
        make_cluster: MakeCluster) -> None:
    s = make_cluster().state
    s.create_topic("big", 1000, 3)
    steps = s.delete_topic_steps("big")
    next(steps)
    assert "big" not in s.topics and "big" in s.pending_topics
    _steps_until_end(steps)
    assert not s.pending_topics
    assert not [k for k, _ in s.controller.machines.partitions if k[0] == "big"]
    assert len(s.create_topic("big", 2, 3).partitions) == 2


def test_a_budgeted_tick_leaves_the_rest_for_the_next(make_cluster: MakeCluster) -> None:
    s = make_cluster().state
    s.tick()
    s.create_topic("big", 1200, 3)
    visits = s.followers.visits
    s.tick(full=False, budget=500)
    assert s.followers.visits - visits == 500 and s.followers.backlog == 700
    s.tick(full=False, budget=500)
    s.tick(full=False, budget=500)
    assert s.followers.visits - visits == 1200 and s.followers.backlog == 0
    assert all(p.fetcher_epoch for p in s.topics["big"].partitions)


def _append_at(s: ClusterState, topic: str, stamps: list[int]) -> None:
    """One batch on partition 0's leader whose records carry these CreateTime stamps."""
    p = s.get_partition(topic, 0)
    recs = [Record(i, ts, None, b"v") for i, ts in enumerate(stamps)]
    assert s.append(p.leader, topic, 0, build_batch(recs, timestamp=min(stamps)), 1).error == 0


def _make_unreadable(s: ClusterState, topic: str, base: int) -> None:
    """Compression codec 7 for the leader's batch at ``base``, in place: bytes the log
    holds whose header reads and whose records do not (Produce validation never lets
    such a batch in; the time lookup then answers from the header)."""
    log = s.get_partition(topic, 0).leader_log
    data = log.batch_at(base)
    assert data is not None
    bad = bytearray(data)
    bad[22] = (bad[22] & 0xF8) | 7
    [entry] = [e for e in log.batches_from(-1, 1 << 40) if e[1] == base]
    log.replace_batches(base, entry[2] + 1, [(bytes(bad), *entry[1:])])


def test_a_time_lookup_answers_an_unreadable_batch_by_its_header(
        make_cluster: MakeCluster) -> None:
    """The batch whose records cannot be read is found as its header says: its base
    offset and max timestamp, when that timestamp reaches the target (equal counts) and
    the batch starts at or after the log start; else the search goes on."""
    s = make_cluster().state
    s.create_topic("t", 1, 1)
    _append_at(s, "t", [1000, 3000, 2000])  # offsets 0-2
    _append_at(s, "t", [4000])  # offset 3
    _make_unreadable(s, "t", 0)
    leader, epoch = s.get_partition("t", 0).leader, s.get_partition("t", 0).leader_epoch
    assert s.list_offset(leader, "t", 0, 3000, 0) == (0, 3000, epoch)
    assert s.list_offset(leader, "t", 0, 1500, 0) == (0, 3000, epoch)
    assert s.list_offset(leader, "t", 0, 3500, 0) == (3, 4000, epoch)
    # below the target by its header: skipped, though it starts after the log start
    s.create_topic("u", 1, 1)
    _append_at(s, "u", [5000, 1000])  # offsets 0-1
    _append_at(s, "u", [2000, 3000])  # offsets 2-3
    _append_at(s, "u", [4000])  # offset 4
    _make_unreadable(s, "u", 2)
    assert s.delete_records("u", 0, 1) == 1  # 5000 (offset 0) is gone; its batch stays
    leader = s.get_partition("u", 0).leader
    assert s.list_offset(leader, "u", 0, 4000, 0) == (4, 4000, epoch)
    assert s.list_offset(leader, "u", 0, 2500, 0) == (2, 3000, epoch)


def test_a_manual_assignment_naming_an_unregistered_broker_is_refused(
        make_cluster: MakeCluster) -> None:
    """CreateTopics' and CreatePartitions' manual assignments name registered brokers
    (Kafka's validateManualPartitionAssignment): one an UnregisterBroker took out while it
    runs (--fidelity kafka) is not; a fenced one is."""
    s, clock, f = make_cluster([1, 2, 3, 4], fidelity="kafka")
    controller.broker_unregistered(s, 3)
    controller.broker_stopped(s, 4)
    with pytest.raises(KafkaError) as e:
        s.create_topic("t", assignments={0: [1, 3]})
    assert (e.value.code, e.value.message) == (
        E.INVALID_REPLICA_ASSIGNMENT,
        "The manual partition assignment includes broker 3, but no such broker is registered.")
    s.create_topic("u", assignments={0: [1, 4]})
    with pytest.raises(KafkaError) as e:
        s.create_partitions("u", 2, [[3, 1]], False)
    assert e.value.code == E.INVALID_REPLICA_ASSIGNMENT


def test_placement_takes_fenced_brokers_after_the_unfenced(make_cluster: MakeCluster) -> None:
    """Kafka's StripedReplicaPlacer places over every registered broker not shutting down,
    fenced ones too, the unfenced first: a replication factor above the unfenced count is
    filled with fenced brokers (their replicas start outside the ISR), the leader is
    unfenced; an UnregisterBroker'd broker counts as none; with no unfenced broker,
    "All brokers are currently fenced."; more than the registered, refused."""
    s, clock, f = make_cluster([1, 2, 3, 4], fidelity="kafka")
    controller.broker_unregistered(s, 4)
    controller.broker_stopped(s, 3)
    t = s.create_topic("t", num_partitions=4, replication_factor=3)
    for p in t.partitions:
        assert sorted(p.replicas) == [1, 2, 3] and p.replicas[-1] == 3, p.replicas
        assert sorted(p.isr) == [1, 2] and p.leader in (1, 2)
    with pytest.raises(KafkaError) as e:
        s.create_topic("u", num_partitions=1, replication_factor=4)
    assert (e.value.code, e.value.message) == (
        E.INVALID_REPLICATION_FACTOR,
        "Unable to replicate the partition 4 time(s): The target replication factor of 4 "
        "cannot be reached because only 3 broker(s) are registered or some brokers have all "
        "their log directories cordoned.")
    s.create_partitions("t", 6, None, False)
    assert all(sorted(p.replicas) == [1, 2, 3] for p in t.partitions)
    controller.broker_stopped(s, 1)
    controller.broker_stopped(s, 2)
    with pytest.raises(KafkaError) as e:
        s.create_topic("v", num_partitions=1, replication_factor=1)
    assert (e.value.code, e.value.message) == (
        E.INVALID_REPLICATION_FACTOR,
        "Unable to replicate the partition 1 time(s): All brokers are currently fenced.")


def test_manual_assignment_validation_order_and_messages(make_cluster: MakeCluster) -> None:
    """CreateTopics' manual assignment, checked as Kafka's validateManualPartitionAssignment
    checks it: an empty list, then each broker in id order (unregistered, then repeated),
    then the size against the partitions before it; each with Kafka's message."""
    s, clock, f = make_cluster([1, 2, 3])
    msg = "The manual partition assignment includes "
    for assignments, message in [
            ({0: []}, "an empty replica list."),
            ({0: [2, 2, 9]}, "the broker 2 more than once."),  # 2 sorts before 9
            ({0: [1, 2], 1: [3]}, "a partition with 1 replica(s), but this is not "
                                  "consistent with previous partitions, which have 2 "
                                  "replica(s).")]:
        with pytest.raises(KafkaError) as e:
            s.create_topic("t", assignments=assignments)
        assert (e.value.code, e.value.message) == (E.INVALID_REPLICA_ASSIGNMENT,
                                                   msg + message)
    assert "t" not in s.topics


def test_an_append_to_a_follower_or_without_records_is_refused(
        make_cluster: MakeCluster) -> None:
    """The leader's append checks who it is first: a follower (or a broker without a
    replica) answers NOT_LEADER_OR_FOLLOWER and writes nothing; the leader refuses a
    partition sent with no records (null or empty) or two batches as INVALID_RECORD, and
    bytes too short to be a batch as CORRUPT_MESSAGE."""
    s, clock, f = make_cluster()
    s.create_topic("t", assignments={0: [1, 2], 1: [2, 3]})
    p = s.get_partition("t", 0)
    batch = build_batch([(b"k", b"v")])
    for broker in (2, 3):
        assert s.append(broker, "t", 0, batch, 1).error == E.NOT_LEADER_OR_FOLLOWER
    assert (p.log_end_offset, p.logs[2].log_end_offset) == (0, 0)
    for records in (None, b""):
        assert s.append(1, "t", 0, records, 1).error == E.INVALID_RECORD
    # fewer bytes than a batch's length field ends at; two batches where v3+ takes one
    assert s.append(1, "t", 0, batch[:5], 1).error == E.CORRUPT_MESSAGE
    assert s.append(1, "t", 0, batch + batch, 1).error == E.INVALID_RECORD
    assert p.log_end_offset == 0


def test_a_client_control_batch_is_refused_and_a_retry_answers_the_first_append(
        make_cluster: MakeCluster) -> None:
    """A client may not write a control batch (INVALID_RECORD, nothing written); an
    idempotent batch sent again answers where the first landed: its base and last
    offset, and the log start offset (UnifiedLog's duplicate: setFirstOffset,
    setLastOffset, setLogStartOffset)."""
    s, clock, f = make_cluster()
    s.create_topic("t", assignments={0: [1, 2]})
    p = s.get_partition("t", 0)
    marker = control_batch(True, 7, 0, s.now())
    # as the coordinator writes it (no sequence), and with a sequence, past that check
    sequenced = build_batch([(b"\0\0\0\1", b"\0\0\0\0\0\0")], producer_id=7,
                            producer_epoch=0, base_sequence=0, transactional=True,
                            control=True)
    for data in (marker, sequenced):
        assert s.append(1, "t", 0, data, 1).error == E.INVALID_RECORD
    assert p.log_end_offset == 0
    batch = build_batch([(b"k", b"v")] * 3, producer_id=7, producer_epoch=0,
                        base_sequence=0)
    first = s.append(1, "t", 0, batch, 1)
    again = s.append(1, "t", 0, batch, 1)
    assert (first.error, first.base_offset, first.last_offset) == (E.NONE, 0, 2)
    assert (again.error, again.base_offset, again.last_offset, again.log_start_offset) \
        == (E.NONE, 0, 2, 0)
    assert p.log_end_offset == 3
