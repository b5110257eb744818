"""The response differential's own rules (conformance/response_diff.py), without a Kafka:
what it normalizes by relation, that it drops nothing, and when a case fails."""

from __future__ import annotations

import time

from conformance.response_diff import (
    KNOWN,
    Case,
    Side,
    compare,
    explain,
    normalize,
    run_case,
)
from wire.records import build_batch


def side(ports: dict[int, int] | None = None) -> Side:
    return Side("test", ports or {1: 9001, 2: 9002, 3: 9003})


def test_a_leader_is_compared_by_its_position_among_the_replicas() -> None:
    a = normalize({"partition_index": 0, "leader_id": 2, "replica_nodes": [2, 3, 1],
                   "isr_nodes": [1, 2], "offline_replicas": []}, side())
    b = normalize({"partition_index": 0, "leader_id": 3, "replica_nodes": [3, 1, 2],
                   "isr_nodes": [2, 3], "offline_replicas": []}, side())
    assert a == b and a["leader_id"] == "replica 0"
    c = normalize({"partition_index": 0, "leader_id": 1, "replica_nodes": [3, 1, 2],
                   "isr_nodes": [2, 3], "offline_replicas": []}, side())
    assert compare(a, c)[0] == [".leader_id: Kafka 'replica 0', emulator 'replica 1'"]


def test_a_replica_outside_the_cluster_is_not_normalized_away() -> None:
    p = normalize({"leader_id": 9, "replica_nodes": [9, 1], "isr_nodes": [9]}, side())
    assert p["replica_nodes"] == [9, 1] and p["isr_nodes"] == ["replica 0"]


def test_generated_ids_by_role_and_times_by_the_window() -> None:
    s = side()
    s.alias("consumer-1-0c4e8a4e-0b1c-4d8e-9a6f-3a2b1c0d9e8f", "member A")
    now = int(time.time() * 1000)
    s.t1 = now
    out = normalize({"member_id": "consumer-1-0c4e8a4e-0b1c-4d8e-9a6f-3a2b1c0d9e8f",
                     "leader": "consumer-2-1c4e8a4e-0b1c-4d8e-9a6f-3a2b1c0d9e8f",
                     "timestamp": now, "log_append_time_ms": -1, "error_message": "x",
                     "throttle_time_ms": 0, "port": 9002, "node_id": 2}, s)
    assert out == {"member_id": "member A", "leader": "a generated classic member id",
                   "timestamp": "within the case", "log_append_time_ms": -1,
                   "error_message": "x", "throttle_time_ms": 0,
                   "port": "the listener of the broker named beside it",
                   "node_id": "a broker"}
    assert normalize({"timestamp": now - 3_600_000}, s) == {"timestamp": now - 3_600_000}


def test_records_are_decoded_not_counted() -> None:
    s = side()
    one = normalize({"records": build_batch([(b"k", b"v1")], timestamp=s.t0)}, s)
    two = normalize({"records": build_batch([(b"k", b"v2")], timestamp=s.t0)}, s)
    diffs, n = compare(one, two)
    assert diffs == [".records[0].records[0].value: Kafka '7631', emulator '7632'"]  # hex
    assert n > 15 and one["records"][0]["crc"] == "valid"


def test_a_case_fails_when_both_sides_fail_or_nothing_is_compared() -> None:
    def boom(s: Side) -> dict:
        raise ConnectionError("refused")
    out = run_case(Case("both fail", boom), side(), side())
    assert out.failed and len(out.differences) == 2
    empty = run_case(Case("nothing", lambda s: {"topics": []}), side(), side())
    assert empty.fields == 0 and empty.failed


def test_a_known_difference_that_is_gone_fails_as_stale() -> None:
    name = next(n for n in KNOWN if n.startswith("Consumer group (KIP-848)"))
    epochs = [".a.member_epoch: Kafka 2, emulator 1", ".b.group_epoch: Kafka 3, emulator 2",
              ".b.assignment_epoch: Kafka 3, emulator 2"]
    assert not explain(name, epochs, 10).failed
    assert explain(name, epochs[:2], 10).failed  # assignment_epoch no longer differs
    assert explain(name, [*epochs, ".x.other: Kafka 2, emulator 1"], 10).failed
