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


KIP848 = "Consumer group (KIP-848): two members reconcile, describe, commit, leave"

def _kip848(overrides: dict[str, tuple[int, int]] | None = None,
            drop: str | None = None) -> list[str]:
    """The case's known differences as compare() finds them (each a Diff), with some
    values replaced or one left out."""
    _, entries = KNOWN[KIP848]
    out = []
    for k in entries:
        if k.path == drop:
            continue
        kafka, emu = (overrides or {}).get(k.path, (k.kafka, k.emulator))
        out += compare(kafka, emu, k.path)[0]
    return out


def test_a_known_difference_that_is_gone_fails_as_stale() -> None:
    assert not explain(KIP848, _kip848(), 300).failed
    gone = explain(KIP848, _kip848(drop=".described.groups[0].assignment_epoch"), 300)
    assert gone.failed and gone.stale == [
        ".described.groups[0].assignment_epoch: Kafka 3, emulator 2"]
    other = explain(KIP848, [*_kip848(), *compare(2, 1, ".x.member_epoch")[0]], 300)
    assert other.failed and other.unexplained == [".x.member_epoch: Kafka 2, emulator 1"]


def test_a_wrong_value_under_a_known_path_is_not_known() -> None:
    """A known difference is its path and the values on both sides: an invented value at
    that path (the emulator answering 7 where the known difference is 2) fails the case,
    and so does a Kafka value other than the known one."""
    wrong = explain(KIP848, _kip848({".A joins.member_epoch": (2, 7)}), 300)
    assert wrong.failed and wrong.unexplained == [".A joins.member_epoch: Kafka 2, emulator 7"]
    moved = explain(KIP848, _kip848({".both reconciled.A.member_epoch": (4, 2)}), 300)
    assert moved.failed and len(moved.unexplained) == 1
    # a value of another type that compares equal is not the known value either
    as_bool = explain(KIP848, _kip848({".A joins.member_epoch": (2, True)}), 300)
    assert as_bool.failed


def test_a_relation_holds_only_for_what_it_says() -> None:
    name = "DescribeConfigs: with documentation"
    _, entries = KNOWN[name]
    path = entries[0].path
    prose = "The number of hours to keep a log file before deleting it (in hours)"
    others = [d for k in entries[1:] for d in compare(prose, None, k.path)[0]]
    assert not explain(name, [*compare(prose, None, path)[0], *others], 30).failed
    # the emulator sending some text of its own is not the known difference (null)
    assert explain(name, [*compare(prose, "made up", path)[0], *others], 30).failed
    assert explain(name, [*compare("", None, path)[0], *others], 30).failed


def test_every_known_entry_is_exact() -> None:
    """No pattern: each known difference names one field path (no regex syntax) and both
    values, and cites the fidelity table's entry it is (its key first in the reason)."""
    from emulator.fidelity import difference
    for name, (why, entries) in KNOWN.items():
        key = why.split(":", 1)[0]
        assert difference(key), name
        assert entries, name
        for k in entries:
            assert k.path.startswith(".") and not any(c in k.path for c in "^$*+?()|\\"), k


def test_a_case_comparing_too_few_fields_must_say_why() -> None:
    tiny = {"throttle_time_ms": 0, "error_code": 25}
    bare = run_case(Case("tiny", lambda s: tiny), side(), side())
    assert bare.fields == 2 and bare.failed
    said = run_case(Case("tiny", lambda s: tiny, few_fields="the whole answer"), side(),
                    side())
    assert not said.failed
    from conformance.response_cases import cases
    reasons = {c.name: c.few_fields for c in cases()}
    assert reasons["OffsetCommit: unknown member of an empty group"] == ""  # 4 fields now
