"""emulator/history.py on hand-made histories: a clean one passes, and each kind of
bad one (a lost, a duplicated, an aborted-visible, a reordered record, a committed
transaction undone, an output from nowhere) is caught and printed with its history."""

from __future__ import annotations

import pytest

from emulator.history import (
    Attempt,
    Event,
    History,
    InputRecord,
    OutputRecord,
    check,
)


def clean() -> History:
    """Two input partitions, six records, processed by three transactions of which the
    second aborted and its records were written again by the third."""
    inputs = [InputRecord(f"{p}-{i}", p, i) for p in (0, 1) for i in range(3)]
    attempts = [
        Attempt("a1", "committed", ("0-0", "0-1", "1-0"), 0, 10),
        Attempt("a2", "aborted", ("0-2", "1-1"), 20, 30, "NOT_COORDINATOR"),
        Attempt("a3", "committed", ("0-2", "1-1", "1-2"), 40, 50),
    ]
    # both input partitions write to output partition 0, interleaved
    outputs = [OutputRecord("0-0", "a1", 0, 0), OutputRecord("1-0", "a1", 0, 1),
               OutputRecord("0-1", "a1", 0, 2), OutputRecord("0-2", "a3", 0, 6),
               OutputRecord("1-1", "a3", 0, 7), OutputRecord("1-2", "a3", 0, 8)]
    return History(inputs, attempts, outputs, [Event(25, "stop_broker 2")])


def test_a_clean_history_passes() -> None:
    report = check(clean())
    assert report.ok, report.text()
    assert report.summary() == ("6 inputs, 6 outputs, 3 attempts (2 committed, 1 aborted, "
                                "0 unknown): no violation")


def test_a_lost_record_is_caught_with_its_history() -> None:
    h = clean()
    h.outputs = [o for o in h.outputs if o.id != "1-2"]
    h.attempts[2] = Attempt("a3", "unknown", ("0-2", "1-1", "1-2"), 40, 50, "fenced")
    report = check(h)
    assert [(v.kind, v.ids) for v in report.violations] == [("lost", ("1-2",))]
    text = report.text()
    assert "record 1-2: input 1@2" in text
    assert "attempt a3 unknown (40-50 ms): fenced" in text and "no output" in text


def test_a_duplicated_record_is_caught() -> None:
    h = clean()
    h.outputs.append(OutputRecord("0-1", "a3", 0, 9))
    report = check(h)
    kinds = [(v.kind, v.ids) for v in report.violations]
    assert ("duplicated", ("0-1",)) in kinds
    assert "in the output 2 times: 0@2 by a1, 0@9 by a3" in report.text()


def test_a_record_of_an_aborted_transaction_visible_is_caught() -> None:
    h = clean()
    h.outputs.append(OutputRecord("1-1", "a2", 0, 4))  # the aborted copy shows through
    report = check(h)
    kinds = {v.kind for v in report.violations}
    assert kinds == {"aborted visible", "duplicated"}
    text = report.text()
    assert "written by attempt a2, which aborted (NOT_COORDINATOR)" in text
    assert "event at 25 ms: stop_broker 2" in text  # the fault beside it


def test_a_reordered_record_is_caught() -> None:
    h = clean()
    # 0-1 and 0-2 swap places in the output partition
    h.outputs = [OutputRecord(o.id, o.attempt, o.partition,
                              {"0-1": 6, "0-2": 2}.get(o.id, o.offset)) for o in h.outputs]
    report = check(h)
    assert [(v.kind, v.ids) for v in report.violations] == [("reordered", ("0-1", "0-2"))]
    assert "0-1 is at 6, after 0-2 at 2" in report.text()


def test_order_across_input_partitions_is_free() -> None:
    h = clean()
    # 1-0 ahead of 0-0 is fine: they come from different input partitions
    h.outputs = [OutputRecord(o.id, o.attempt, o.partition,
                              {"0-0": 1, "1-0": 0}.get(o.id, o.offset)) for o in h.outputs]
    assert check(h).ok


def test_a_committed_transaction_undone_is_caught() -> None:
    """a1 committed but its outputs vanished, and its records were processed again by
    a later attempt: nothing lost or duplicated, yet a commit was undone."""
    h = clean()
    h.attempts.append(Attempt("a4", "committed", ("0-0", "0-1", "1-0"), 60, 70))
    h.outputs = [OutputRecord(o.id, "a4" if o.attempt == "a1" else o.attempt, o.partition,
                              o.offset) for o in h.outputs]
    report = check(h)
    assert [v.kind for v in report.violations] == ["committed missing"]
    assert "attempt a1 committed, yet 3 of its 3 outputs are not visible" in report.text()


def test_outputs_from_nowhere_are_caught() -> None:
    h = clean()
    h.outputs.append(OutputRecord("9-9", "a1", 1, 0))
    h.outputs.append(OutputRecord("1-2", "zz", 1, 1))
    report = check(h)
    assert sorted(v.kind for v in report.violations) == ["duplicated", "unknown", "unknown"]


def test_a_bad_outcome_is_refused() -> None:
    h = clean()
    h.attempts.append(Attempt("a9", "maybe", ()))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="outcome 'maybe'"):
        check(h)
