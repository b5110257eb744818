"""Summaries of repeated runs whose systems ran interleaved (bench/scale.py and
bench/compare.py ``--runs``): each figure as its median with the range, and a ratio
between two systems taken run by run and then summarized the same way. A run's systems
ran back to back, so their ratio within the run shares the machine's state of the
moment; on a shared machine that drifts, the median of those ratios is steadier than the
ratio of the two medians."""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable, Mapping, Sequence

Row = Mapping[str, object]


def median_range(values: Sequence[float], fmt: str) -> str:
    """``median (min-max)``, the median alone for one value, ``-`` for none."""
    if not values:
        return "-"
    lo, mid, hi = min(values), statistics.median(values), max(values)
    return fmt.format(mid) + (f" ({fmt.format(lo)}-{fmt.format(hi)})" if len(values) > 1
                              else "")


def number(row: Row, key: str) -> float | None:
    """The row's figure, or None where it is missing or a failure's text."""
    v = row.get(key)
    return float(v) if isinstance(v, float | int) and not isinstance(v, bool) else None


def numbers(rows: Iterable[Row], key: str) -> list[float]:
    """Every row's figure for ``key`` that is a number (failures left out)."""
    return [v for r in rows if (v := number(r, key)) is not None]


def per_run_ratios(rows: Sequence[Row], key: str, num: Callable[[Row], bool],
                   den: Callable[[Row], bool]) -> list[float]:
    """For every run (a row's ``run``, 1 where it has none) holding a row that ``num``
    picks and one that ``den`` picks, both with a number for ``key`` (the denominator
    not 0): the first such numerator's figure over the first such denominator's."""
    ratios = []
    for run in sorted({int(str(r.get("run", 1))) for r in rows}):
        mine = [r for r in rows if int(str(r.get("run", 1))) == run]
        top = [v for r in mine if num(r) and (v := number(r, key)) is not None]
        bottom = [v for r in mine if den(r) and (v := number(r, key)) is not None]
        if top and bottom and bottom[0]:
            ratios.append(top[0] / bottom[0])
    return ratios
