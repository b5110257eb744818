"""bench/runs.py: the summaries bench/compare.py and bench/scale.py print over
interleaved runs, where a ratio is taken within each run before its median."""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "bench"))

import runs  # noqa: E402


def emu(r: runs.Row) -> bool:
    return str(r["system"]).startswith("emulator")


def kafka(r: runs.Row) -> bool:
    return str(r["system"]).startswith("Kafka")


def test_median_range() -> None:
    assert runs.median_range([], "{:.1f}") == "-"
    assert runs.median_range([2.0], "{:.1f}") == "2.0"
    assert runs.median_range([3.0, 1.0, 2.0], "{:.1f}") == "2.0 (1.0-3.0)"


def test_numbers_leave_out_failures() -> None:
    rows = [{"x": 1.0}, {"x": "failed: timeout"}, {"x": 3}, {}, {"x": True}]
    assert runs.numbers(rows, "x") == [1.0, 3.0]


def test_ratios_are_taken_within_each_run() -> None:
    # Kafka's run 2 is slow (the machine was busy then) and so is the emulator's: the
    # per-run ratio stays 2, where the ratio of the medians would not be.
    rows = [
        {"run": 1, "system": "emulator", "mb": 200.0}, {"run": 1, "system": "Kafka", "mb": 100.0},
        {"run": 2, "system": "emulator", "mb": 20.0}, {"run": 2, "system": "Kafka", "mb": 10.0},
        {"run": 3, "system": "emulator", "mb": 180.0}, {"run": 3, "system": "Kafka", "mb": 90.0},
    ]
    assert runs.per_run_ratios(rows, "mb", emu, kafka) == [2.0, 2.0, 2.0]


def test_a_run_with_a_failure_or_a_zero_gives_no_ratio() -> None:
    rows = [
        {"run": 1, "system": "emulator", "mb": 2.0}, {"run": 1, "system": "Kafka", "mb": "failed"},
        {"run": 2, "system": "emulator", "mb": 2.0}, {"run": 2, "system": "Kafka", "mb": 0.0},
        {"run": 3, "system": "emulator", "mb": 3.0}, {"run": 3, "system": "Kafka", "mb": 1.0},
        {"system": "emulator", "mb": 5.0},  # no run: run 1
    ]
    assert runs.per_run_ratios(rows, "mb", emu, kafka) == [3.0]
