"""Run every wrong program and its fix over a range of seeds under
``--fidelity adversarial``, and print the table of docs/fidelity-wrong-clients.md.

    python -m client_tests.wrong_clients.survey --seeds 20 [--case NAME] [--rounds 3]

Per case: the seeds under which the wrong program failed (with its bug's symptom or
not), and the seeds under which the fixed program passed. The faults are seeded but
the clients' timing is not, so a seed that fails in one round may pass in another:
``--rounds`` repeats the whole range and the table shows each round's first failing
seed.
"""

from __future__ import annotations

import argparse
import logging
import time

from client_tests.wrong_clients.cases import CASES, Case, cluster


def survey(case: Case, seeds: range, fixed: bool) -> dict[int, list[str]]:
    out = {}
    for seed in seeds:
        with cluster("adversarial", seed) as c:
            out[seed] = case.run(c, fixed)
    return out


def _fmt(seeds: list[int]) -> str:
    return ", ".join(map(str, seeds)) if seeds else "none"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=20, help="seeds 0..N-1 (default 20)")
    ap.add_argument("--rounds", type=int, default=1, help="repeat the wrong programs' "
                    "range this many times (default 1)")
    ap.add_argument("--case", action="append", help="only this case (repeatable)")
    args = ap.parse_args()
    logging.disable(logging.WARNING)
    seeds = range(args.seeds)
    print("| program | promise | wrong: first failing seed per round | wrong: seeds "
          "failed (round 1) | fixed: seeds passed |")
    print("|---|---|---|---|---|")
    for case in CASES:
        if args.case and case.name not in args.case:
            continue
        t0 = time.monotonic()
        firsts, failed = [], []
        for r in range(args.rounds):
            res = survey(case, seeds, fixed=False)
            bad = [s for s, p in res.items() if any(case.symptom in x for x in p)]
            firsts.append(str(bad[0]) if bad else "none")
            if r == 0:
                failed = bad
        fixed = survey(case, seeds, fixed=True)
        passed = [s for s, p in fixed.items() if not p]
        broke = {s: p for s, p in fixed.items() if p}
        print(f"| {case.name} | {case.promise} | {', '.join(firsts)} | "
              f"{len(failed)}/{len(seeds)}: {_fmt(failed)} | "
              f"{len(passed)}/{len(seeds)}{'' if not broke else f' (failed: {broke})'} |",
              flush=True)
        print(f"<!-- {case.name}: {time.monotonic() - t0:.0f} s -->", flush=True)


if __name__ == "__main__":
    main()
