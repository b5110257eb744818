"""Shrinking a failing adversarial run to its cause: delta debugging over its faults.

A run under ``--fidelity adversarial`` that fails a client's check left a record of every
fault the adversary injected (``Adversary.record``: a few to a few hundred). Most did
nothing to the failure. ``shrink`` finds a small subset that still fails: it replays
candidate subsets (a cluster whose ``Adversary.script`` holds exactly those faults, a
fault schedule's adversary section) and keeps removing faults while the check still
fails, as Zeller and Hildebrandt's ddmin does ("Simplifying and Isolating
Failure-Inducing Input", 2002). The answer is 1-minimal: removing any one of its faults
makes the check pass (as far as the verdicts can tell, below).

Real clients are not deterministic: the faults are keyed by each client's request
sequence, and a client's timing (its batching, its retries' backoff, which broker it asks
first) differs between runs, so one replay of a candidate can miss the race another hits.
A candidate is therefore judged by up to ``runs`` replays and counts as failing as soon
as one of them fails (a passing verdict costs ``runs`` replays, a failing one as few as
one). That bias is the useful one: a fault that only sometimes matters is kept out only
if ``runs`` replays never needed it. The result is then replayed ``confirm`` more times
and the report says how many of those failed: the replay rate the user gets.

Pure logic, no I/O: ``run`` (one replay of a candidate, True when the check failed) is
the caller's (emulator/tools/shrink.py runs a client program against a Cluster; the unit
tests pass a fake predicate).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

T = TypeVar("T")


def ddmin(items: Sequence[T], fails: Callable[[tuple[T, ...]], bool],
          on_test: Callable[[tuple[T, ...], bool], None] | None = None,
          trail: list[tuple[T, ...]] | None = None) -> tuple[T, ...]:
    """A 1-minimal subsequence of ``items`` (which must fail) that still fails.

    ``fails`` is asked about subsequences (the order of ``items`` is kept), each at most
    once; ``on_test`` hears every answer. Splits the current set into n chunks, tries each
    chunk, then (n > 2) each chunk's complement; a failing one becomes the current set,
    else n doubles, until n is the set's size and every one-fault removal passed.
    ``trail`` (when given) receives every set that became the current one, the largest
    first: the way back when the result turns out not to replay."""
    current = list(range(len(items)))
    verdicts: dict[tuple[int, ...], bool] = {}

    def test(indices: list[int]) -> bool:
        key = tuple(indices)
        if key not in verdicts:
            candidate = tuple(items[i] for i in indices)
            verdicts[key] = fails(candidate)
            if on_test is not None:
                on_test(candidate, verdicts[key])
        return verdicts[key]

    n = 2
    while len(current) >= 2:
        chunks = _split(current, n)
        reduced = next((c for c in chunks if test(c)), None)
        if reduced is not None:
            current, n = reduced, 2
            if trail is not None:
                trail.append(tuple(items[i] for i in current))
            continue
        if n > 2:  # with two chunks each complement is the other chunk, tried already
            complement = next((rest for i in range(len(chunks)) if test(
                rest := [x for j, c in enumerate(chunks) if j != i for x in c])), None)
            if complement is not None:
                current, n = complement, max(n - 1, 2)
                if trail is not None:
                    trail.append(tuple(items[i] for i in current))
                continue
        if n >= len(current):
            break
        n = min(2 * n, len(current))
    return tuple(items[i] for i in current)


def _split(indices: list[int], n: int) -> list[list[int]]:
    """``indices`` in ``n`` contiguous chunks of (nearly) equal size."""
    size, extra = divmod(len(indices), n)
    out, start = [], 0
    for i in range(n):
        end = start + size + (1 if i < extra else 0)
        out.append(indices[start:end])
        start = end
    return [c for c in out if c]


def judge(run: Callable[[], bool], runs: int) -> tuple[bool, int]:
    """Whether a candidate fails: up to ``runs`` replays, stopping at the first failure.
    Returns (failed, replays used)."""
    if runs < 1:
        raise ValueError("a candidate needs at least one run")
    for used in range(1, runs + 1):
        if run():
            return True, used
    return False, runs


@dataclass
class ShrinkResult(Generic[T]):
    """What ``shrink`` found, and what it cost."""

    original: tuple[T, ...]
    faults: tuple[T, ...]  # the shrunk set, in the original's order
    # Verdicts on the way (candidate size, failed), in the order they were judged.
    tests: list[tuple[int, bool]] = field(default_factory=list)
    replays: int = 0  # client runs, all together
    empty_fails: bool = False  # the check fails with no fault at all: not their doing
    full_fails: bool = True  # the whole record, replayed, still fails
    confirmed: list[bool] = field(default_factory=list)  # the result's replays, failed?
    # sizes of smaller sets that failed in ddmin but never in their confirming replays
    stepped_back: list[int] = field(default_factory=list)

    @property
    def cause_found(self) -> bool:
        return not self.empty_fails and self.full_fails

    def summary(self) -> str:
        if self.empty_fails:
            return ("the check fails with no adversary fault at all: the failure is not "
                    "the faults' doing (nothing to shrink)")
        if not self.full_fails:
            return (f"the {len(self.original)} faults of the record, replayed, never failed "
                    f"the check: the run does not replay (nothing to shrink)")
        back = "".join(f" (a set of {n} failed once, then in none of its confirming "
                       "replays: a larger one kept)" for n in self.stepped_back)
        return (f"{len(self.original)} faults shrunk to {len(self.faults)} in "
                f"{len(self.tests)} candidates ({self.replays} runs){back}; the shrunk set "
                f"failed {sum(self.confirmed)} of {len(self.confirmed)} replays")


def shrink(faults: Sequence[T], run: Callable[[tuple[T, ...]], bool], *, runs: int = 3,
           confirm: int = 3, check_full: bool = True,
           on_test: Callable[[tuple[T, ...], bool, int], None] | None = None
           ) -> ShrinkResult[T]:
    """Shrink a failing run's ``faults`` to a 1-minimal set that still fails.

    ``run(candidate)`` replays once with exactly those faults and says whether the check
    failed. First the empty set (it must pass: else the faults are not the cause), then
    (``check_full``) the whole record (it must fail again: else the run does not replay),
    then ddmin, each candidate judged by up to ``runs`` replays; the result is replayed
    ``confirm`` times more (when none of those fails, the next larger set ddmin kept on
    its way is confirmed instead, up to the whole record).
    ``on_test(candidate, failed, replays)`` hears each verdict."""
    result: ShrinkResult[T] = ShrinkResult(tuple(faults), tuple(faults))

    def fails(candidate: tuple[T, ...]) -> bool:
        failed, used = judge(lambda: run(candidate), runs)
        result.replays += used
        result.tests.append((len(candidate), failed))
        if on_test is not None:
            on_test(candidate, failed, used)
        return failed

    if fails(()):
        result.empty_fails, result.faults = True, ()
        return result
    if check_full and faults and not fails(tuple(faults)):
        result.full_fails = False
        return result
    trail: list[tuple[T, ...]] = []
    if faults:
        result.faults = ddmin(tuple(faults), fails, trail=trail)
    # A set that failed once in ddmin may have hit a rare interleaving: when none of its
    # confirming replays fails, the next larger set that failed on the way is confirmed
    # instead (then the next), so that what the user gets replays, smallest first.
    larger = [c for c in reversed(trail) if len(c) > len(result.faults)]
    if check_full and faults:
        larger.append(tuple(faults))
    while True:
        confirmed = []
        for _ in range(confirm):
            confirmed.append(run(result.faults))
            result.replays += 1
        if confirm == 0 or any(confirmed) or not larger:
            break
        result.stepped_back.append(len(result.faults))
        result.faults = larger.pop(0)
    result.confirmed = confirmed
    return result
