"""Run the reference programs under ``--fidelity adversarial``, seed after seed, and print
per client and program the seeds clean (docs/fidelity-wrong-clients.md's table).

    python -m client_tests.reference_programs.survey [--seeds 100] [--first 0]
                                                     [--client NAME] [--program NAME]
                                                     [--jobs 1]

A seed is clean when the history checker finds no violation (no loss, duplicate or
reorder of what the program promises; checking.py) and the cluster's soundness check
raised nothing. Failing seeds are printed with their first problems. Exits 1 when any
seed failed (the nightly job, .ci/adversary-nightly, runs 100 seeds each).

A run spends almost all its time waiting, not computing: one seed of a program costs
7-23 s of wall time but about 1 s of CPU (the emulator, the client and the checker
together; the Java client's JVM adds about 1 s of CPU in its own process). The wall
time goes to the program's own pace (its live input spread over 3 s, its flushes and
commits answered by a cluster whose faults make it retry), and to the checker's
read-back, which waits until the high watermarks stood still for SETTLE_S (longer than
the adversary's longest follower lag; a shorter wait would miss a record lost to a
lagging follower). ``--jobs N`` therefore runs N runs at once, each in a process of its
own with its own cluster (killed after ``--timeout`` s: a client can hang for good), its
result appended to ``--log`` as it ends: every run is the same run as with ``--jobs 1``
(same seed, same program, same checks, same fault rates), and the table is the same
table, in the same order. Eight jobs keep the machine's load under one core.
"""

from __future__ import annotations

import argparse
import json
import logging
import subprocess
import sys
import time
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from client_tests.reference_programs.cases import REFS, Ref, cluster


def run(ref: Ref, seed: int) -> tuple[list[str], str | None]:
    """One run's broken promises, and the first answer of the soundness check's
    violations if it met any (an answer Kafka could not give: a bug of the emulator)."""
    unsound: str | None = None
    try:
        with cluster("adversarial", seed) as c:
            verdict = ref(c)
            if c.adversary.violations:
                unsound = f"{ref.name} seed {seed}: {c.adversary.violations[0]}"
        problems = verdict.problems
        if problems:
            print(f"  {ref.name} seed {seed}:\n{verdict.text()}", file=sys.stderr, flush=True)
        return problems, unsound
    except Exception as e:  # noqa: BLE001 - a soundness violation, a client's error
        return [f"error: {type(e).__name__}: {str(e)[:300]}"], unsound


def _one(name: str, seed: int) -> None:
    """``--one NAME SEED``: one run in this process, its result as a JSON line on stdout
    (what ``--jobs`` starts, one process per run)."""
    problems, unsound = run(next(r for r in REFS if r.name == name), seed)
    print(
        json.dumps({"name": name, "seed": seed, "problems": problems, "unsound": unsound}),
        flush=True,
    )


def _in_process(name: str, seed: int, timeout: float) -> tuple[list[str], str | None]:
    """One run in a process of its own, killed after ``timeout`` s. A run can hang for
    good: confluent-kafka's Consumer.close() can wait inside its rebalance callback
    while holding the GIL, which freezes the in-process cluster too (seen once in 300
    librdkafka pipeline runs), and only a process boundary gets the other runs past it."""
    cmd = [sys.executable, "-m", "client_tests.reference_programs.survey", "--one", name, str(seed)]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return [f"error: hung, killed after {timeout:.0f} s"], None
    if out.stderr.strip():
        print(out.stderr, file=sys.stderr, end="", flush=True)
    for line in reversed(out.stdout.splitlines()):
        if line.startswith("{"):
            got = json.loads(line)
            return got["problems"], got["unsound"]
    return [f"error: the run's process exited {out.returncode} without a result"], None


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=100, help="seeds per program (default 100)")
    ap.add_argument("--first", type=int, default=0, help="the first seed (default 0)")
    ap.add_argument("--client", action="append", help="only this client (repeatable)")
    ap.add_argument("--program", action="append", help="only this program (repeatable)")
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
    ap.add_argument(
        "--log",
        type=Path,
        help="with --jobs: each run's result appended to this file as a JSON line as it ends",
    )
    ap.add_argument("--one", nargs=2, metavar=("NAME", "SEED"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    logging.disable(logging.WARNING)
    if args.one:
        _one(args.one[0], int(args.one[1]))
        return
    seeds = range(args.first, args.first + args.seeds)
    refs = [
        ref
        for ref in REFS
        if not (args.client and ref.client not in args.client)
        and not (args.program and ref.program not in args.program)
    ]
    print(
        f"| client | program | seeds clean of {seeds.start}..{seeds.stop - 1} | "
        "failed (seed: first problem) | time |"
    )
    print("|---|---|---|---|---|")
    unsound: list[str] = []
    bad = False
    pool = None
    if args.jobs > 1:
        pool = ThreadPoolExecutor(args.jobs)

        def job(name: str, seed: int) -> tuple[list[str], str | None]:
            problems, unsound = _in_process(name, seed, args.timeout)
            if args.log:
                with args.log.open("a") as f:
                    f.write(
                        json.dumps(
                            {"name": name, "seed": seed, "problems": problems, "unsound": unsound}
                        )
                        + "\n"
                    )
            return problems, unsound

        # every run queued at once, so the workers stay busy across programs; each
        # program's row is printed once its seeds are done, in REFS order
        futures = {
            (ref.name, seed): pool.submit(job, ref.name, seed) for ref in refs for seed in seeds
        }
    t_all = time.monotonic()
    for ref in refs:
        failed = {}
        secs: list[float] = []
        for seed in seeds:
            if pool is None:
                t1 = time.monotonic()
                problems, bad_answer = run(ref, seed)
                secs.append(time.monotonic() - t1)
            else:
                f: Future[tuple[list[str], str | None]] = futures[(ref.name, seed)]
                problems, bad_answer = f.result()
            if bad_answer:
                unsound.append(bad_answer)
            if problems:
                failed[seed] = problems[0][:200]
        bad |= bool(failed)
        took = f"{sum(secs):.0f} s" if pool is None else f"done at {time.monotonic() - t_all:.0f} s"
        print(
            f"| {ref.client} | {ref.program} | {len(seeds) - len(failed)}/{len(seeds)} | "
            f"{'; '.join(f'{s}: {p}' for s, p in failed.items()) or '-'} | "
            f"{took} |",
            flush=True,
        )
    if pool is not None:
        pool.shutdown()
        print(
            f"\n{len(refs) * len(seeds)} runs, {args.jobs} at a time: "
            f"{time.monotonic() - t_all:.0f} s"
        )
    if unsound:
        print(f"\n{len(unsound)} run(s) met the adversary's soundness check:")
        for line in unsound:
            print(f"- {line}")
    sys.exit(1 if bad or unsound else 0)


if __name__ == "__main__":
    main()
