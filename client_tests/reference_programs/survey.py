"""Run the reference programs under ``--fidelity adversarial``, seed after seed, and print
per client and program the seeds clean (docs/fidelity-wrong-clients.md's table).

    python -m client_tests.reference_programs.survey [--seeds 100] [--first 0]
                                                     [--client NAME] [--program NAME]

A seed is clean when the history checker finds no violation (no loss, duplicate or
reorder of what the program promises; checking.py) and the cluster's soundness check
raised nothing. Failing seeds are printed with their first problems. Exits 1 when any
seed failed (the nightly job, .ci/adversary-nightly, runs 100 seeds each).
"""

from __future__ import annotations

import argparse
import logging
import sys
import time

from client_tests.reference_programs.cases import REFS, Ref, cluster

UNSOUND: list[str] = []  # the soundness check's violations met by the runs


def run(ref: Ref, seed: int) -> list[str]:
    try:
        with cluster("adversarial", seed) as c:
            verdict = ref(c)
            unsound = list(c.adversary.violations)
        if unsound:
            UNSOUND.append(f"{ref.name} seed {seed}: {unsound[0]}")
        problems = verdict.problems
        if problems:
            print(f"  {ref.name} seed {seed}:\n{verdict.text()}", file=sys.stderr, flush=True)
        return problems
    except Exception as e:  # noqa: BLE001 - a soundness violation, a client's error
        return [f"error: {type(e).__name__}: {str(e)[:300]}"]


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=100, help="seeds per program (default 100)")
    ap.add_argument("--first", type=int, default=0, help="the first seed (default 0)")
    ap.add_argument("--client", action="append", help="only this client (repeatable)")
    ap.add_argument("--program", action="append", help="only this program (repeatable)")
    args = ap.parse_args()
    logging.disable(logging.WARNING)
    seeds = range(args.first, args.first + args.seeds)
    print(f"| client | program | seeds clean of {seeds.start}..{seeds.stop - 1} | "
          "failed (seed: first problem) | time |")
    print("|---|---|---|---|---|")
    bad = False
    for ref in REFS:
        if (args.client and ref.client not in args.client) or \
                (args.program and ref.program not in args.program):
            continue
        t0 = time.monotonic()
        failed = {}
        for seed in seeds:
            problems = run(ref, seed)
            if problems:
                failed[seed] = problems[0][:200]
        bad |= bool(failed)
        print(f"| {ref.client} | {ref.program} | {len(seeds) - len(failed)}/{len(seeds)} | "
              f"{'; '.join(f'{s}: {p}' for s, p in failed.items()) or '-'} | "
              f"{time.monotonic() - t0:.0f} s |", flush=True)
    if UNSOUND:
        print(f"\n{len(UNSOUND)} run(s) met the adversary's soundness check:")
        for line in UNSOUND:
            print(f"- {line}")
    sys.exit(1 if bad or UNSOUND else 0)


if __name__ == "__main__":
    main()
