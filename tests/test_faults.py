"""The fault model and seeded schedules, sans I/O, under a manual clock."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from emulator.control.metrics import prometheus, replication_view
from emulator.faults import (
    FaultError,
    FaultSchedule,
    ScheduleError,
    ScheduleRunner,
    run_due,
    split_request,
    validate_op,
)
from emulator.faults.rules import RuleInjection
from wire.errors import ErrorCode as E
from wire.errors import KafkaError
from wire.records import build_batch

if TYPE_CHECKING:
    from conftest import MakeCluster

IDS = [1, 2, 3]
BROKER_CONFIG = {"replica.lag.time.max.ms": "1000"}


# ---- validation ---------------------------------------------------------------------------
@pytest.mark.parametrize(("op", "message", "status"), [
    ({"op": "stop_broker", "broker": 9}, "unknown broker 9; brokers are [1, 2, 3]", 404),
    ({"op": "explode"}, "unknown fault 'explode'", 404),
    ({"broker": 1}, 'missing "op"', 400),
    ({"op": "stop_broker"}, "missing field 'broker'", 400),
    ({"op": "stop_broker", "broker": 1, "when": 3}, "unknown field 'when'", 400),
    ({"op": "inject_error", "api": "Nope", "error": 6}, "unknown API 'Nope'", 400),
    ({"op": "inject_error", "api": 0, "error": "NOT_AN_ERROR"}, "unknown error", 400),
    ({"op": "cut_brokers", "brokers": [2, 2]}, "two different brokers", 400),
    ({"op": "slow_follower", "broker": 1, "delay_ms": -5}, "non-negative", 400),
    ({"op": "pause_follower", "broker": 1, "partition": 0}, "partition needs a topic", 400),
    ({"op": "stop_broker", "broker": "random"}, "broker must be a broker id", 400),
])
def test_bad_operations_are_refused_with_a_clear_message(op: dict, message: str,
                                                          status: int) -> None:
    with pytest.raises(FaultError) as e:
        validate_op(op, IDS)
    assert message in str(e.value) and e.value.status == status


def test_names_and_codes_are_normalized() -> None:
    op = validate_op({"op": "inject-error", "api": "list_offsets", "error": "not_leader_or_follower"},
                     IDS)
    assert op == {"op": "inject_error", "api": 2, "error": E.NOT_LEADER_OR_FOLLOWER, "count": 1}
    assert validate_op({"op": "add_latency", "api": "Fetch", "ms": 5}, IDS)["api"] == 1


def test_direct_operations_need_existing_topics(make_cluster: MakeCluster) -> None:
    s, clock, f = make_cluster()
    with pytest.raises(FaultError) as e:
        f.apply({"op": "pause_follower", "broker": 1, "topic": "missing"})
    assert e.value.status == 404
    s.create_topic("t", 2, 3)
    with pytest.raises(FaultError) as e:
        f.apply({"op": "pause_follower", "broker": 1, "topic": "t", "partition": 5})
    assert "unknown partition t-5" in str(e.value)


# ---- request faults -------------------------------------------------------------------------
def test_error_injection_counts_only_matching_requests(make_cluster: MakeCluster) -> None:
    s, clock, f = make_cluster()
    s.create_topic("a", 2, 3)
    m = f.model
    f.apply({"op": "inject_error", "api": "Produce", "error": "NOT_LEADER_OR_FOLLOWER",
             "count": 2, "topic": "a", "partition": 1})
    req = {"topic_data": [{"name": "a", "partition_data": [{"index": 0}]}]}
    assert m.inject_error(1, 0, req) is None  # another partition
    assert m.inject_error(1, 1, req) is None  # another API
    hit = {"topic_data": [{"name": "a", "partition_data": [{"index": 1}]}]}
    leader = s.topics["a"].partitions[1].leader
    other = next(b for b in s.brokers if b != leader)
    assert m.inject_error(other, 0, hit) is None  # fires on the partition's leader only
    assert m.inject_error(leader, 0, hit) == RuleInjection(E.NOT_LEADER_OR_FOLLOWER, "a", 1, "r1")
    assert m.inject_error(leader, 0, hit) == RuleInjection(E.NOT_LEADER_OR_FOLLOWER, "a", 1, "r1")
    assert m.inject_error(leader, 0, hit) is None  # the next N requests, then gone
    # topic ids (Fetch v13+) resolve to names
    f.apply({"op": "inject_error", "api": 1, "error": 6, "topic": "a"})
    tid = s.topics["a"].id
    assert m.inject_error(1, 1, {"topics": [{"topic_id": tid, "partitions": []}]}).error == 6


def test_error_injection_per_client_id(make_cluster: MakeCluster) -> None:
    s, clock, f = make_cluster()
    f.apply({"op": "inject_error", "api": "Metadata", "error": "LEADER_NOT_AVAILABLE",
             "client_id": "app-1", "count": 2})
    m = f.model
    assert m.inject_error(1, 3, {"topics": None}, "app-2") is None
    assert m.inject_error(1, 3, {"topics": None}, None) is None
    assert m.inject_error(1, 3, {"topics": None}, "app-1") == RuleInjection(5, rule="r1")
    f.apply({"op": "drop_response", "api": "Fetch", "client_id": "app-1"})
    assert not m.drop_response(1, 1, "app-2")
    assert m.drop_response(1, 1, "app-1")
    assert not m.drop_response(1, 1, "app-1")  # count 1: used up


def test_split_request_keeps_the_other_partitions_and_topics(make_cluster: MakeCluster) -> None:
    s, clock, f = make_cluster()
    s.create_topic("a", 4, 3)
    req = {"acks": 1, "topic_data": [
        {"name": "a", "partition_data": [{"index": 1}, {"index": 3}]},
        {"name": "b", "partition_data": [{"index": 3}]}]}
    hit, rest, more = split_request(s, req, "a", 3)
    assert hit == {"acks": 1, "topic_data": [{"name": "a", "partition_data": [{"index": 3}]}]}
    assert rest == {"acks": 1, "topic_data": [{"name": "a", "partition_data": [{"index": 1}]},
                                              {"name": "b", "partition_data": [{"index": 3}]}]}
    assert more
    hit, rest, more = split_request(s, req, "b", None)
    assert hit["topic_data"] == [req["topic_data"][1]] and more
    only = {"topic_data": [{"name": "a", "partition_data": [{"index": 3}]}]}
    assert split_request(s, only, "a", 3)[1:] == ({"topic_data": []}, False)
    # nested (OffsetFetch v8+: groups[].topics[]) and partitions as plain ints
    nested = {"groups": [{"group_id": "g", "topics": [
        {"name": "a", "partition_indexes": [0, 3]}, {"name": "c", "partition_indexes": [1]}]}]}
    hit, rest, more = split_request(s, nested, "a", 3)
    assert hit == {"groups": [{"group_id": "g", "topics": [
        {"name": "a", "partition_indexes": [3]}]}]}
    assert rest["groups"][0]["topics"] == [{"name": "a", "partition_indexes": [0]},
                                           {"name": "c", "partition_indexes": [1]}] and more
    assert split_request(s, nested, "z", None)[0] is None


def test_latency_drop_and_client_cuts(make_cluster: MakeCluster) -> None:
    s, clock, f = make_cluster()
    m = f.model
    f.apply({"op": "add_latency", "api": "Metadata", "ms": 250})
    f.apply({"op": "add_latency", "api": "Metadata", "ms": 400, "broker": 2})
    assert (m.latency_s(1, 3), m.latency_s(2, 3), m.latency_s(1, 0)) == (0.25, 0.4, 0)
    f.apply({"op": "drop_response", "api": "Produce", "count": 1, "broker": 3})
    assert not m.drop_response(1, 0)
    assert m.drop_response(3, 0) and not m.drop_response(3, 0)
    f.apply({"op": "cut_clients", "broker": 2})
    assert not m.client_allowed(2, "127.0.0.1") and m.client_allowed(1, "127.0.0.1")
    f.apply({"op": "heal_clients", "broker": 2})
    assert m.client_allowed(2, "127.0.0.1")
    f.apply({"op": "clear"})
    assert m.latency_s(2, 3) == 0 and m.describe()["latency"] == []


# ---- replication faults ---------------------------------------------------------------------
def test_network_cut_between_brokers_stops_replication_between_them(
        make_cluster: MakeCluster) -> None:
    s, clock, f = make_cluster()
    s.create_topic("t", assignments={0: [1, 2, 3]})
    p = s.get_partition("t", 0)
    f.apply({"op": "cut_brokers", "brokers": [1, 3]})
    s.append(1, "t", 0, build_batch([(None, b"v")] * 3), 1)
    s.tick()
    assert (p.logs[2].log_end_offset, p.logs[3].log_end_offset) == (3, 0)
    clock.advance(1600)
    s.tick()
    assert p.isr == [1, 2]
    f.apply({"op": "heal_brokers", "brokers": [3, 1]})
    s.tick()
    assert p.logs[3].log_end_offset == 3 and p.isr == [1, 2, 3]


def test_slowed_follower_fetches_once_per_delay(make_cluster: MakeCluster) -> None:
    s, clock, f = make_cluster()
    s.create_topic("t", assignments={0: [1, 2]})
    p = s.get_partition("t", 0)
    f.apply({"op": "slow_follower", "broker": 2, "delay_ms": 100, "topic": "t"})
    s.tick()  # fetches now; the next fetch not before +100
    s.append(1, "t", 0, build_batch([(None, b"v")]), 1)
    clock.advance(99)
    s.tick()
    assert p.logs[2].log_end_offset == 0
    clock.advance(1)
    s.tick()
    assert p.logs[2].log_end_offset == 1


def test_metrics_name_kafkas_gauges(make_cluster: MakeCluster) -> None:
    s, clock, f = make_cluster()
    s.create_topic("t", assignments={0: [1, 2, 3]}, configs={"min.insync.replicas": "3"})
    f.apply({"op": "stop_broker", "broker": 3})
    text = prometheus(s)
    assert 'kafka_server_ReplicaManager_UnderReplicatedPartitions{broker="1"} 1' in text
    assert 'kafka_server_ReplicaManager_UnderMinIsrPartitionCount{broker="1"} 1' in text
    assert 'kafka_controller_KafkaController_ActiveControllerCount{broker="1"} 1' in text
    assert 'kafka_controller_KafkaController_OfflinePartitionsCount{broker="1"} 0' in text
    assert "IsrShrinksPerSec" in text and "IsrExpandsPerSec" in text
    assert 'broker="3"' not in text  # a dead broker reports nothing


# ---- schedules ----------------------------------------------------------------------------
SCHEDULE = """
{"seed": 42}
# crash a random broker, bring it back, then the controller
{"at_ms": 0, "op": "pause_follower", "broker": 3}
{"at_ms": 100, "op": "stop_broker", "broker": "random", "jitter_ms": 50}
{"at_ms": 400, "op": "start_broker", "broker": 1}
{"at_ms": 400, "op": "start_broker", "broker": 2}
{"at_ms": 400, "op": "start_broker", "broker": 3}
{"at_ms": 600, "op": "stop_broker", "broker": "controller"}
{"at_ms": 800, "op": "stop_broker", "broker": "leader:t:0"}
{"at_ms": 900, "op": "resume_follower", "broker": 3}
"""


def test_schedule_parses_with_seeded_choices_drawn_once() -> None:
    a = FaultSchedule.parse(SCHEDULE, IDS)
    b = FaultSchedule.parse(SCHEDULE, IDS)
    assert a == b and a.seed == 42 and len(a.steps) == 8
    assert isinstance(a.steps[1].op["broker"], int) and 100 <= a.steps[1].at_ms <= 150
    assert [s.line for s in a.steps][:2] == [4, 5]
    doc = json.dumps({"seed": 42, "faults": [{"at_ms": 5, "op": "clear"}]})
    assert FaultSchedule.parse(doc, IDS).steps[0].op == {"op": "clear"}


def test_a_schedule_with_an_error_is_rejected_whole() -> None:
    bad = SCHEDULE + '{"at_ms": 5, "op": "stop_broker", "broker": 7}\n{"at_ms": -1, "op": "clear"}\nnot json\n'
    with pytest.raises(ScheduleError) as e:
        FaultSchedule.parse(bad, IDS)
    assert len(e.value.problems) == 3
    assert e.value.problems[0].startswith("line 12: unknown broker 7")
    assert "line 13: at_ms" in e.value.problems[1] and "line 14: not JSON" in e.value.problems[2]
    with pytest.raises(ScheduleError):
        FaultSchedule.parse("", IDS)


def replay(make_cluster: MakeCluster, schedule: str) -> list[dict]:
    s, clock, f = make_cluster()
    s.create_topic("t", assignments={0: [1, 2, 3], 1: [2, 3, 1]})
    runner = ScheduleRunner(FaultSchedule.parse(schedule, IDS), clock.now_ms())
    out = []
    while not runner.done:
        clock.advance(10)
        s.append(s.get_partition("t", 0).leader, "t", 0, build_batch([(None, b"x")]), 1) \
            if s.get_partition("t", 0).leader >= 0 else None
        s.tick()
        out += run_due(f, runner, clock.now_ms(), replication_view)
    return out


def test_the_same_schedule_replays_the_same_sequence_of_cluster_states(
        make_cluster: MakeCluster) -> None:
    first, second = replay(make_cluster, SCHEDULE), replay(make_cluster, SCHEDULE)
    assert first == second
    assert len(first) == 8 and all("cluster" in step for step in first)
    stop_controller = first[5]
    assert stop_controller["op"]["op"] == "stop_broker"
    assert stop_controller["cluster"]["controller"] != stop_controller["op"]["broker"]


# ---- storage faults (docs/faults.md, "Storage faults") --------------------------------------
TWO_DIRS = {"log.dirs": "/a,/b", "replica.high.watermark.checkpoint.interval.ms": "5000"}


def test_a_failing_fsync_fails_an_idle_dir_at_its_checkpoint(make_cluster: MakeCluster) -> None:
    s, clock, f = make_cluster(**TWO_DIRS)
    s.create_topic("t", assignments={0: [1, 2], 1: [1, 2]})  # 0 in /a, 1 in /b
    f.apply({"op": "fail_fsyncs", "broker": 1, "log_dir": "/b"})
    assert s.append(1, "t", 1, build_batch([(None, b"v")]), 1).error == 0  # writes work
    s.tick()  # the checkpoint is due in 5000 ms
    clock.advance(4999)
    s.tick()
    assert s.offline_log_dirs.get(1, set()) == set()
    clock.advance(1)
    s.tick()
    assert s.offline_log_dirs[1] == {"/b"}
    p0, p1 = s.get_partition("t", 0), s.get_partition("t", 1)
    assert (p1.leader, p1.isr, p1.offline) == (2, [2], {1})
    assert (p0.leader, p0.isr, p0.offline) == (1, [1, 2], set())
    assert s.append(1, "t", 1, build_batch([(None, b"v")]), 1).error == E.KAFKA_STORAGE_ERROR
    assert s.append(1, "t", 0, build_batch([(None, b"v")]), 1).error == 0
    assert s.is_alive(1)  # its metadata dir /a is fine: it serves on
    text = prometheus(s)
    assert 'kafka_log_LogManager_OfflineLogDirectoryCount{broker="1"} 1' in text
    assert 'kafka_server_ReplicaManager_OfflineReplicaCount{broker="1"} 1' in text
    assert 'kafka_log_LogManager_OfflineLogDirectoryCount{broker="2"} 0' in text


def test_a_replica_in_a_failed_dir_refuses_in_kafkas_words(make_cluster: MakeCluster) -> None:
    """A read of a replica in a failed log dir, by any replica's rules (a follower's
    KIP-392 read) or the leader's, is KAFKA_STORAGE_ERROR with the text of Kafka's
    ReplicaManager.getPartitionOrException, "Partition t-1 is in an offline log
    directory": the emulator sends it as ShareFetch's and ShareAcknowledge's
    per-partition error_message."""
    s, _, f = make_cluster(**TWO_DIRS)
    s.create_topic("t", assignments={0: [1, 2], 1: [1, 2]})  # 0 in /a, 1 in /b
    f.apply({"op": "fail_writes", "broker": 1, "log_dir": "/b"})
    assert s.append(1, "t", 1, build_batch([(None, b"v")]), 1).error == E.KAFKA_STORAGE_ERROR
    p = s.get_partition("t", 1)
    assert p.offline == {1}
    for check in (p.check_replica, p.check_leader):
        with pytest.raises(KafkaError) as e:
            check(1)
        assert (e.value.code, e.value.message) == (
            E.KAFKA_STORAGE_ERROR, "Partition t-1 is in an offline log directory")


def test_a_failed_write_on_the_metadata_dir_halts_the_broker(make_cluster: MakeCluster) -> None:
    s, clock, f = make_cluster(**TWO_DIRS)
    s.create_topic("t", assignments={0: [1, 2]})
    f.apply({"op": "fail_writes", "broker": 1, "log_dir": "/a"})
    r = s.append(1, "t", 0, build_batch([(None, b"v")]), 1)
    assert r.error == E.KAFKA_STORAGE_ERROR
    assert not s.is_alive(1)  # Exit.halt: fenced at once by default
    assert s.get_partition("t", 0).leader == 2
    f.apply({"op": "heal_storage", "broker": 1})
    f.apply({"op": "start_broker", "broker": 1})
    assert s.offline_log_dirs.get(1) is None and s.get_partition("t", 0).offline == set()


def test_slow_writes_give_each_write_its_time_one_after_another(
        make_cluster: MakeCluster) -> None:
    s, clock, f = make_cluster(**TWO_DIRS)
    s.create_topic("t", assignments={0: [1, 2]})
    f.apply({"op": "slow_writes", "broker": 1, "delay_ms": 100})
    now = s.now()
    first = s.append(1, "t", 0, build_batch([(None, b"v")]), 1)
    second = s.append(1, "t", 0, build_batch([(None, b"v")]), 1)
    assert (first.written_at_ms, second.written_at_ms) == (now + 100, now + 200)
    f.apply({"op": "slow_writes", "broker": 1, "delay_ms": 0})
    assert s.append(1, "t", 0, build_batch([(None, b"v")]), 1).written_at_ms == 0


def test_a_log_dir_must_be_the_brokers(make_cluster: MakeCluster) -> None:
    s, clock, f = make_cluster(**TWO_DIRS)
    with pytest.raises(FaultError) as e:
        f.apply({"op": "disk_full", "broker": 1, "log_dir": "/c"})
    assert e.value.status == 404 and "its log.dirs are /a, /b" in str(e.value)


def test_a_new_partition_goes_to_a_live_dir(make_cluster: MakeCluster) -> None:
    s, clock, f = make_cluster(**TWO_DIRS)
    s.create_topic("t", assignments={0: [1, 2], 1: [1, 2]})
    f.apply({"op": "fail_writes", "broker": 1, "log_dir": "/b"})
    s.append(1, "t", 1, build_batch([(None, b"v")]), 1)  # /b fails
    s.create_topic("u", assignments={0: [1, 2], 1: [1, 2]})
    u1 = s.get_partition("u", 1)  # would be in /b: it is in /a, and online
    assert (u1.leader, u1.offline) == (1, set())
    assert s.append(1, "u", 1, build_batch([(None, b"v")]), 1).error == 0
