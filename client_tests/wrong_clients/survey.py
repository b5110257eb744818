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
same runs; the table is the same table.
"""

from __future__ import annotations

import argparse
import json
import logging
import subprocess
import sys
import time
from concurrent.futures import Future, ThreadPoolExecutor

from client_tests.wrong_clients.cases import CASES, Case, cluster

UNSOUND: list[str] = []  # the soundness check's violations met by the runs, per run


def run(case: Case, seed: int, fixed: bool) -> list[str]:
    """One run's broken promises; an exception (a client error) is one too, named as
    such. The adversary's soundness violations (answers Kafka could not give) are kept
    in UNSOUND and printed: a run with one proves nothing either way (a wrong program's
    run with one is not counted as its failure)."""
    try:
        with cluster("adversarial", seed) as c:
            problems = case.run(c, fixed)
            unsound = list(c.adversary.violations)
    except Exception as e:  # noqa: BLE001 - reported in the table
        return [f"error: {type(e).__name__}: {str(e)[:300]}"]
    if unsound:
        UNSOUND.append(f"{case.name} {'fixed' if fixed else 'wrong'} seed {seed}: {unsound[0]}")
        if not fixed:  # no evidence against the wrong program: the search goes on
            return [f"unsound: {unsound[0]}"]
    return problems


def first_failure(case: Case, fail_seeds: int) -> tuple[int | None, list[str]]:
    """The first seed under which the wrong program fails with its bug's symptom, and
    how (failures without it are printed and the search goes on)."""
    for seed in range(fail_seeds):
        problems = run(case, seed, False)
        if (
            problems
            and any(case.symptom in p for p in problems)
            and not problems[0].startswith("unsound: ")
        ):
            return seed, problems
        if problems:
            print(
                f"  {case.name}: seed {seed} failed without {case.symptom!r}: {problems}",
                file=sys.stderr,
                flush=True,
            )
    return None, []


def _task(kind: str, name: str, seed: int) -> None:
    """``--task wrong|fixed NAME SEED``: one run in this process, printed as a JSON line
    (what ``--jobs`` starts, one process per run)."""
    problems = run(next(c for c in CASES if c.name == name), seed, kind == "fixed")
    print(json.dumps({"problems": problems, "unsound": UNSOUND}), flush=True)


def _in_process(kind: str, name: str, seed: int, timeout: float) -> tuple[list[str], list[str]]:
    """One run in a process of its own, killed after ``timeout`` s: a client can hang for
    good (confluent-kafka's Consumer.close() waiting in its rebalance callback with the
    GIL held freezes the in-process cluster too), and only a process boundary gets the
    other runs past it. Returns its broken promises and soundness violations."""
    cmd = [
        sys.executable,
        "-m",
        "client_tests.wrong_clients.survey",
        "--task",
        kind,
        name,
        str(seed),
    ]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return [f"error: hung, killed after {timeout:.0f} s"], []
    for line in reversed(out.stdout.splitlines()):
        if line.startswith("{"):
            got = json.loads(line)
            return got["problems"], got["unsound"]
    return [
        f"error: the run's process exited {out.returncode} without a result: {out.stderr[-300:]}"
    ], []


def _search(name: str, fail_seeds: int, timeout: float) -> tuple[int | None, list[str], list[str]]:
    """first_failure(), each seed's run in a process of its own; with the soundness
    check's violations the runs met."""
    case = next(c for c in CASES if c.name == name)
    unsound: list[str] = []
    for seed in range(fail_seeds):
        problems, bad = _in_process("wrong", name, seed, timeout)
        unsound += bad
        if (
            problems
            and any(case.symptom in p for p in problems)
            and not problems[0].startswith("unsound: ")
        ):
            return seed, problems, unsound
        if problems:
            print(
                f"  {name}: seed {seed} failed without {case.symptom!r}: {problems}",
                file=sys.stderr,
                flush=True,
            )
    return None, [], unsound


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
    ap.add_argument(
        "--jobs",
        type=int,
        default=1,
        help="runs at once, each in its own process (default 1: all in this one)",
    )
    ap.add_argument(
        "--timeout",
        type=float,
        default=600.0,
        help="with --jobs: a run still going after this many s is killed and counts as failed",
    )
    ap.add_argument("--task", nargs=3, metavar=("KIND", "NAME", "SEED"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    logging.disable(logging.WARNING)  # the clients' reconnects; the table is the output
    if args.task:
        _task(args.task[0], args.task[1], int(args.task[2]))
        return
    print(
        "| program | promise | wrong: seeds to first failure (first failing seed + 1), "
        f"per round | fixed: seeds clean of 0..{args.fix_seeds - 1} | time |"
    )
    print("|---|---|---|---|---|")
    bad = False
    cases = [case for case in CASES if not args.case or case.name in args.case]
    pool = None
    searches: dict[tuple[str, int], Future[tuple[int | None, list[str], list[str]]]] = {}
    fixes: dict[tuple[str, int], Future[tuple[list[str], list[str]]]] = {}
    if args.jobs > 1:
        pool = ThreadPoolExecutor(args.jobs)
        for case in cases:  # everything queued at once; rows printed in CASES order
            for r in range(args.rounds):
                searches[(case.name, r)] = pool.submit(
                    _search, case.name, args.fail_seeds, args.timeout
                )
            for seed in range(args.fix_seeds):
                fixes[(case.name, seed)] = pool.submit(
                    _in_process, "fixed", case.name, seed, args.timeout
                )
    for case in cases:
        t0 = time.monotonic()
        firsts = []
        for r in range(args.rounds):
            if pool is None:
                seed, _problems = first_failure(case, args.fail_seeds)
            else:
                seed, _problems, unsound = searches[(case.name, r)].result()
                UNSOUND.extend(unsound)
            firsts.append(
                f"none of {args.fail_seeds}" if seed is None else f"{seed + 1} (seed {seed})"
            )
            bad |= seed is None
        broke = {}
        for seed in range(args.fix_seeds):
            if pool is None:
                problems = run(case, seed, True)
            else:
                problems, unsound = fixes[(case.name, seed)].result()
                UNSOUND.extend(unsound)
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
    if pool is not None:
        pool.shutdown()
    if UNSOUND:
        print(f"\n{len(UNSOUND)} run(s) met the adversary's soundness check:")
        for line in UNSOUND:
            print(f"- {line}")
    sys.exit(1 if bad or UNSOUND else 0)


if __name__ == "__main__":
    main()
