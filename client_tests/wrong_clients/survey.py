"""Run every wrong program and its fix under ``--fidelity adversarial`` and print the
table of docs/fidelity-wrong-clients.md.

    python -m client_tests.wrong_clients.survey [--rounds 3] [--fail-seeds 20]
                                                [--fix-seeds 10] [--case NAME]
                                                [--jobs 1]

Per case: in each round, the seeds tried in order 0, 1, ... until the wrong program
failed with its bug's symptom, and the seed it failed under; then the fixed program
under each of seeds 0..fix-seeds-1. The faults are a function of the seed and each
client's request sequence, but the clients' timing is not, so the first failing seed
can differ between rounds: that spread is the figure. Exits 1 when a wrong program
showed its symptom under no seed of a round, or a fixed program failed (the nightly
job, .ci/adversary-nightly, runs it so).

A run mostly waits (its clients' retries, the checker's read-back waiting for the high
watermarks to stand still): ``--jobs N`` runs N searches and twins' runs at once (a
search is one round of one case, its seeds in order as with ``--jobs 1``), each run in a
process of its own with its own cluster, killed after ``--timeout`` s. The runs are the
same runs; the table is the same table (client_tests/surveys.py, which the reference
programs' survey shares).
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from collections.abc import Sequence
from functools import partial

from client_tests import surveys
from client_tests.wrong_clients.cases import CASES, Case, cluster


def run(case: Case, seed: int, fixed: bool) -> surveys.Result:
    """One run's broken promises; an exception (a client error) is one too, named as
    such. The adversary's soundness violations (answers Kafka could not give) are
    returned beside them and printed: a run with one proves nothing either way (a wrong
    program's run with one is not counted as its failure)."""
    try:
        with cluster("adversarial", seed) as c:
            problems = case.run(c, fixed)
            violations = list(c.adversary.violations)
    except Exception as e:  # noqa: BLE001 - reported in the table
        return [f"error: {type(e).__name__}: {str(e)[:300]}"], []
    if not violations:
        return problems, []
    unsound = [f"{case.name} {'fixed' if fixed else 'wrong'} seed {seed}: {violations[0]}"]
    if not fixed:  # no evidence against the wrong program: the search goes on
        return [f"unsound: {violations[0]}"], unsound
    return problems, unsound


def _task(task: Sequence[str]) -> surveys.Result:
    """The run ``--task wrong|fixed NAME SEED`` names."""
    kind, name, seed = task
    return run(next(c for c in CASES if c.name == name), int(seed), kind == "fixed")


def first_failure(runs: surveys.Runs, case: Case, fail_seeds: int) -> tuple[int | None, list[str]]:
    """The first seed under which the wrong program fails with its bug's symptom
    (failures without it are printed and the search goes on), and the soundness check's
    violations the search's runs met."""
    unsound: list[str] = []
    for seed in range(fail_seeds):
        problems, bad = runs.run("wrong", case.name, str(seed))
        unsound += bad
        if (
            problems
            and any(case.symptom in p for p in problems)
            and not problems[0].startswith("unsound: ")
        ):
            return seed, unsound
        if problems:
            print(
                f"  {case.name}: seed {seed} failed without {case.symptom!r}: {problems}",
                file=sys.stderr,
                flush=True,
            )
    return None, unsound


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument(
        "--rounds",
        type=int,
        default=3,
        help="searches for a failing seed per wrong program (default 3)",
    )
    ap.add_argument(
        "--fail-seeds", type=int, default=20, help="seeds a search may try (default 20)"
    )
    ap.add_argument(
        "--fix-seeds",
        type=int,
        default=10,
        help="the fixed programs run under seeds 0..N-1 (default 10)",
    )
    ap.add_argument("--case", action="append", help="only this case (repeatable)")
    surveys.add_options(ap, ("KIND", "NAME", "SEED"))
    args = ap.parse_args()
    logging.disable(logging.WARNING)  # the clients' reconnects; the table is the output
    if args.task:
        surveys.print_result(_task(args.task))
        return
    runs = surveys.Runs("client_tests.wrong_clients.survey", args, _task)
    print(
        "| program | promise | wrong: seeds to first failure (first failing seed + 1), "
        f"per round | fixed: seeds clean of 0..{args.fix_seeds - 1} | time |"
    )
    print("|---|---|---|---|---|")
    cases = [case for case in CASES if not args.case or case.name in args.case]
    # everything queued at once (a search is one round of one case, its seeds in order);
    # rows printed in CASES order
    searches: dict[tuple[str, int], surveys.Pending[tuple[int | None, list[str]]]] = {}
    fixes: dict[tuple[str, int], surveys.Pending[surveys.Result]] = {}
    for case in cases:
        for r in range(args.rounds):
            searches[(case.name, r)] = runs.later(
                partial(first_failure, runs, case, args.fail_seeds)
            )
        for seed in range(args.fix_seeds):
            fixes[(case.name, seed)] = runs.later(partial(runs.run, "fixed", case.name, str(seed)))
    unsound: list[str] = []
    bad = False
    for case in cases:
        t0 = time.monotonic()
        firsts = []
        for r in range(args.rounds):
            first, bad_answers = searches[(case.name, r)].result()
            unsound += bad_answers
            firsts.append(
                f"none of {args.fail_seeds}" if first is None else f"{first + 1} (seed {first})"
            )
            bad |= first is None
        broke = {}
        for seed in range(args.fix_seeds):
            problems, bad_answers = fixes[(case.name, seed)].result()
            unsound += bad_answers
            if problems:
                broke[seed] = problems
        bad |= bool(broke)
        passed = args.fix_seeds - len(broke)
        print(
            f"| {case.name} | {case.promise} | {', '.join(firsts)} | "
            f"{passed}/{args.fix_seeds}{f' (failed: {broke})' if broke else ''} | "
            f"{time.monotonic() - t0:.0f} s |",
            flush=True,
        )
    runs.close()
    surveys.finish(bad, unsound)


if __name__ == "__main__":
    main()
