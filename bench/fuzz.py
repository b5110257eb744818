"""The long fuzz run (docs/hostile-input.md): schema-driven cases against a ``kafka-emulator`` process.

Starts the emulator as a user would (its own process, free ports), creates a few
topics, then sends CASES fuzz cases (wire/fuzz.py: valid, field-mutated and random
frames over every served API key and version, hostile record batches) through
emulator/fuzzing.py, printing every PROGRESS cases: cases/s, answered/closed/unanswered,
tracebacks in the emulator's log, hangs (the canary failed), the emulator's RSS, and the
canary's Metadata latency (an ordinary client on its own connection; target < 100 ms).
Asserts nothing; prints the figures. Usage:

    python bench/fuzz.py [--cases 1000000] [--seed 18] [--parallel 8] [--check]

``--check`` (the daily scheduled run, .ci/fuzz-nightly) exits 1 when the target is missed.

A case that shows a problem replays: the same seed gives the same cases.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from emulator_process import emulator_process  # noqa: E402

from emulator.blocking_client import BlockingConnection  # noqa: E402
from emulator.fuzzing import FuzzStats, drive  # noqa: E402
from emulator.handlers import HANDLERS  # noqa: E402
from wire.fuzz import Fuzzer  # noqa: E402


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def create_topics(address: tuple[str, int]) -> None:
    body = {"topics": [
        {"name": n, "num_partitions": 3, "replication_factor": 3, "assignments": [],
         "configs": [{"name": "cleanup.policy", "value": "compact"}] if n == "fuzz-c" else []}
        for n in ("fuzz-0", "fuzz-1", "fuzz-c")], "timeout_ms": 10000, "validate_only": False}
    with BlockingConnection.connect(*address, client_id="fuzz-setup", timeout=10) as c:
        c.call(19, 7, body)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", type=int, default=1_000_000)
    ap.add_argument("--seed", type=int, default=18)
    ap.add_argument("--parallel", type=int, default=8)
    ap.add_argument("--progress", type=int, default=50_000)
    ap.add_argument("--check", action="store_true",
                    help="exit 1 on a traceback, a hang, a dead emulator or a canary wait "
                         "over --max-canary-ms (the scheduled run, .ci/fuzz-nightly)")
    ap.add_argument("--max-canary-ms", type=float, default=100.0)
    args = ap.parse_args()
    failed = False

    log = tempfile.NamedTemporaryFile(prefix="fuzz-emulator-", suffix=".log", delete=False)
    with emulator_process(stderr=log) as (proc, addresses):
        create_topics(addresses[0])
        served = {k: h.versions for k, h in HANDLERS.items()}
        fuzzer = Fuzzer(served, seed=args.seed, topics=("fuzz-0", "fuzz-1", "fuzz-c"))
        t0 = time.perf_counter()
        rss0 = rss_mb(proc.pid)
        print(f"fuzzing {len(served)} API keys, {args.cases} cases, seed {args.seed}; "
              f"emulator pid {proc.pid}, log {log.name}, RSS {rss0:.0f} MB", flush=True)
        print(f"{'cases':>9} {'cases/s':>8} {'answered':>9} {'closed':>8} {'no ans.':>8} "
              f"{'tracebk':>7} {'hangs':>5} {'RSS MB':>7} {'canary p99':>10} {'max ms':>7} "
              f"{'no conn.':>8}",
              flush=True)

        def tracebacks() -> int:
            return Path(log.name).read_text(errors="replace").count("Traceback")

        def report(st: FuzzStats) -> None:
            rate = st.cases / (time.perf_counter() - t0)
            print(f"{st.cases:>9} {rate:>8.0f} {st.answered:>9} {st.closed:>8} "
                  f"{st.unanswered:>8} {tracebacks():>7} {st.canary_failures:>5} "
                  f"{rss_mb(proc.pid):>7.0f} {st.canary_p99_ms():>10.1f} "
                  f"{st.canary_max_ms:>7.1f} {st.connect_failures:>8}", flush=True)

        stats = drive(addresses, fuzzer.cases(args.cases), parallel=args.parallel,
                      answer_timeout=3.0, canary_every=100, progress=report,
                      progress_every=args.progress)
        report(stats)
        alive = proc.poll() is None
        print(f"done: {stats.cases} cases in {time.perf_counter() - t0:.0f} s; emulator "
              f"{'alive' if alive else 'DEAD'}; tracebacks {tracebacks()}; hangs "
              f"{stats.canary_failures}; RSS {rss0:.0f} -> {rss_mb(proc.pid):.0f} MB; canary "
              f"p99 {stats.canary_p99_ms():.1f} ms, max {stats.canary_max_ms:.1f} ms",
              flush=True)
        for e in stats.canary_errors:
            print("canary failed", e)
        print(f"new connections not accepted within 5 s: {stats.connect_failures}")
        for e in stats.connect_errors:
            print("  ", e)
        failed = (not alive or tracebacks() > 0 or stats.canary_failures > 0
                  or stats.connect_failures > 0 or stats.canary_max_ms > args.max_canary_ms)
        if stats.slow_cases:
            print("unanswered within 3 s (acks=0 produce and long polls are expected):")
            for c in stats.slow_cases[:10]:
                print("  ", c)
    if args.check and failed:
        print(f"fuzz check failed (target: 0 tracebacks, 0 hangs, canary under "
              f"{args.max_canary_ms:.0f} ms); the emulator's log: {log.name}")
        raise SystemExit(1)


if __name__ == "__main__":
    main()
