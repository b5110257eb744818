"""The exactly-once history check (client_tests/eos_history.py) over many seeds: a table.

Each seed runs its own emulator process (3 brokers, --data-dir) with the two-instance
transactional application and the seed's faults (leader kills, coordinator moves,
network cuts, SIGKILL restarts), then checks every record's history
(emulator/history.py). Prints one row per seed: its faults, inputs, attempts
(committed/aborted/unknown), application restarts, violations, seconds; then the whole
history of each seed that failed (also written to --out/SEED.txt).

Usage: python bench/eos_history.py [--seeds 50 | --seeds 100-199 | --seeds 3,17]
                                   [--faults 4] [--rate 150] [--out DIR]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from client_tests.eos_history import run  # noqa: E402
from client_tests.test_eos_history import seeds  # noqa: E402

SHORT = {"leader_kill": "kill", "group_coordinator_move": "gcoord", "txn_coordinator_move":
         "tcoord", "broker_cut": "cut", "client_cut": "ccut", "sigkill_restart": "SIGKILL"}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", default="20", help="N (1..N), A-B or A,B,C (default 20)")
    ap.add_argument("--faults", type=int, default=4, help="faults per seed (default 4)")
    ap.add_argument("--rate", type=int, default=150, help="input records/s (default 150)")
    ap.add_argument("--out", default=None, help="where failing seeds' histories go "
                    "(default: a temporary directory, printed)")
    args = ap.parse_args()
    out = Path(args.out or tempfile.mkdtemp(prefix="eos-history-"))
    out.mkdir(parents=True, exist_ok=True)
    print(f"{'seed':>5} {'faults':<32} {'inputs':>6} {'attempts c/a/u':>15} {'restarts':>8} "
          f"{'violations':<24} {'s':>5}", flush=True)
    failed: list[int] = []
    kinds: dict[str, int] = {}
    total_t = time.monotonic()
    for seed in seeds(args.seeds):
        work = Path(tempfile.mkdtemp(prefix=f"eos-{seed}-"))
        try:
            r = run(seed, work, args.faults, args.rate)
        except Exception as e:  # noqa: BLE001 - a seed that could not run is a row too
            print(f"{seed:>5} could not run: {e!r}", flush=True)
            failed.append(seed)
            (out / f"{seed}.txt").write_text(repr(e))
            continue
        h = r.report.history
        c = sum(a.outcome == "committed" for a in h.attempts)
        a = sum(a.outcome == "aborted" for a in h.attempts)
        u = len(h.attempts) - c - a
        for w in r.windows:
            kinds[w.kind] = kinds.get(w.kind, 0) + 1
        counts = {k: n for k, n in r.report.counts().items() if n}
        bad = ", ".join(f"{n} {k}" for k, n in counts.items()) or "none"
        if r.emulator_errors:
            bad += f", {r.emulator_errors} emulator errors"
        print(f"{seed:>5} {','.join(SHORT[w.kind] for w in r.windows):<32} {r.inputs:>6} "
              f"{f'{c}/{a}/{u}':>15} {r.app_sessions - 2:>8} {bad:<24} {r.seconds:5.1f}",
              flush=True)
        if not r.report.ok or r.emulator_errors:
            failed.append(seed)
            (out / f"{seed}.txt").write_text(r.text() + f"\n(its files: {work})")
        else:
            shutil.rmtree(work, ignore_errors=True)
    n = len(seeds(args.seeds))
    print(f"\n{n} seeds, {n - len(failed)} without violation, in "
          f"{time.monotonic() - total_t:.0f} s; faults run: "
          + ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())))
    for seed in failed:
        print(f"\n==== seed {seed} ({out / f'{seed}.txt'})")
        print((out / f"{seed}.txt").read_text()[:20000])


if __name__ == "__main__":
    main()
