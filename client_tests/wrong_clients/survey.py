"""Run every wrong program and its fix under ``--fidelity adversarial`` and print the
table of docs/fidelity-wrong-clients.md.

    python -m client_tests.wrong_clients.survey [--rounds 3] [--fail-seeds 20]
                                                [--fix-seeds 10] [--case NAME]

Per case: in each round, the seeds tried in order 0, 1, ... until the wrong program
failed (as test_wrong_clients.py does), and the seed it failed under with its bug's
symptom; then the fixed program under each of seeds 0..fix-seeds-1. The faults are a
function of the seed and each client's request sequence, but the clients' timing is
not, so the first failing seed can differ between rounds: that spread is the figure.
"""

from __future__ import annotations

import argparse
import logging
import time

from client_tests.wrong_clients.cases import CASES, Case, cluster


def first_failure(case: Case, fail_seeds: int) -> tuple[int | None, list[str]]:
    """The first seed under which the wrong program fails, and how."""
    for seed in range(fail_seeds):
        with cluster("adversarial", seed) as c:
            problems = case.run(c, False)
        if problems:
            return seed, problems
    return None, []


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3, help="searches for a failing seed "
                    "per wrong program (default 3)")
    ap.add_argument("--fail-seeds", type=int, default=20, help="seeds a search may try "
                    "(default 20, as the test)")
    ap.add_argument("--fix-seeds", type=int, default=10, help="the fixed programs run "
                    "under seeds 0..N-1 (default 10, as the test)")
    ap.add_argument("--case", action="append", help="only this case (repeatable)")
    args = ap.parse_args()
    logging.disable(logging.WARNING)  # the clients' reconnects; the table is the output
    print("| program | promise | wrong: first failing seed, per round | "
          f"fixed: seeds passed of 0..{args.fix_seeds - 1} | time |")
    print("|---|---|---|---|---|")
    for case in CASES:
        if args.case and case.name not in args.case:
            continue
        t0 = time.monotonic()
        firsts = []
        for _ in range(args.rounds):
            seed, problems = first_failure(case, args.fail_seeds)
            if seed is None:
                firsts.append("none")
            elif any(case.symptom in p for p in problems):
                firsts.append(str(seed))
            else:
                firsts.append(f"{seed} (not its symptom: {problems})")
        broke = {}
        for seed in range(args.fix_seeds):
            with cluster("adversarial", seed) as c:
                problems = case.run(c, True)
            if problems:
                broke[seed] = problems
        passed = args.fix_seeds - len(broke)
        print(f"| {case.name} | {case.promise} | {', '.join(firsts)} | "
              f"{passed}/{args.fix_seeds}{f' (failed: {broke})' if broke else ''} | "
              f"{time.monotonic() - t0:.0f} s |", flush=True)


if __name__ == "__main__":
    main()
