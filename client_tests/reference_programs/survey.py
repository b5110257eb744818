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
table, in the same order (client_tests/surveys.py, which the wrong-program survey shares).
Eight jobs keep the machine's load under one core.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from collections.abc import Sequence
from functools import partial
from pathlib import Path

from client_tests import surveys
from client_tests.reference_programs.cases import REFS, Ref, cluster


def run(ref: Ref, seed: int) -> surveys.Result:
    """One run's broken promises, and the first of the soundness check's violations if
    it met any (an answer Kafka could not give: a bug of the emulator)."""
    unsound: list[str] = []
    try:
        with cluster("adversarial", seed) as c:
            verdict = ref(c)
            if c.adversary.violations:
                unsound = [f"{ref.name} seed {seed}: {c.adversary.violations[0]}"]
        problems = verdict.problems
        if problems:
            print(f"  {ref.name} seed {seed}:\n{verdict.text()}", file=sys.stderr, flush=True)
        else:
            # a clean run's workaround, for a survey to count: how often the program
            # met librdkafka's OffsetFetch hang (the note of librdkafka_hang.StallWatch)
            for n in verdict.log.notes:
                if "assigned and unread for" in n:
                    print(f"  {ref.name} seed {seed} clean, note: {n}", file=sys.stderr, flush=True)
        return problems, unsound
    except Exception as e:  # noqa: BLE001 - a soundness violation, a client's error
        return [f"error: {type(e).__name__}: {str(e)[:300]}"], unsound


def _task(task: Sequence[str]) -> surveys.Result:
    """The run ``--task NAME SEED`` names."""
    name, seed = task
    return run(next(r for r in REFS if r.name == name), int(seed))


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=100, help="seeds per program (default 100)")
    ap.add_argument("--first", type=int, default=0, help="the first seed (default 0)")
    ap.add_argument("--client", action="append", help="only this client (repeatable)")
    ap.add_argument("--program", action="append", help="only this program (repeatable)")
    surveys.add_options(ap, ("NAME", "SEED"))
    ap.add_argument(
        "--log",
        type=Path,
        help="each run's result appended to this file as a JSON line as it ends",
    )
    args = ap.parse_args()
    logging.disable(logging.WARNING)
    if args.task:
        surveys.print_result(_task(args.task))
        return
    runs = surveys.Runs("client_tests.reference_programs.survey", args, _task)
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

    def job(name: str, seed: int) -> surveys.Result:
        problems, unsound = runs.run(name, str(seed))
        if args.log:
            with args.log.open("a") as f:
                record = {
                    "name": name,
                    "seed": seed,
                    "problems": problems,
                    "unsound": unsound[0] if unsound else None,
                }
                f.write(json.dumps(record) + "\n")
        return problems, unsound

    # every run queued at once, so that with --jobs the workers stay busy across
    # programs; each program's row is printed once its seeds are done, in REFS order
    pending = {
        (ref.name, seed): runs.later(partial(job, ref.name, seed)) for ref in refs for seed in seeds
    }
    unsound: list[str] = []
    bad = False
    t_all = time.monotonic()
    for ref in refs:
        failed = {}
        secs: list[float] = []
        for seed in seeds:
            t1 = time.monotonic()
            problems, bad_answers = pending[(ref.name, seed)].result()
            secs.append(time.monotonic() - t1)
            unsound += bad_answers
            if problems:
                failed[seed] = problems[0][:200]
        bad |= bool(failed)
        took = (
            f"done at {time.monotonic() - t_all:.0f} s" if runs.parallel else f"{sum(secs):.0f} s"
        )
        print(
            f"| {ref.client} | {ref.program} | {len(seeds) - len(failed)}/{len(seeds)} | "
            f"{'; '.join(f'{s}: {p}' for s, p in failed.items()) or '-'} | "
            f"{took} |",
            flush=True,
        )
    runs.close()
    if runs.parallel:
        print(
            f"\n{len(refs) * len(seeds)} runs, {args.jobs} at a time: "
            f"{time.monotonic() - t_all:.0f} s"
        )
    surveys.finish(bad, unsound)


if __name__ == "__main__":
    main()
