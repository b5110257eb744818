"""Spark read throughput from the emulator: records/s for a 1 M-record topic.

Starts ``kafka-emulator`` as its own process (as a user would; pass
``--bootstrap-servers`` to measure a running one instead), fills a topic with
``--records`` records of ``--value-bytes`` random bytes through confluent-kafka, then
reads the whole topic with Spark's Kafka connector in three ways:

- ``batch``: ``spark.read.format("kafka")`` from earliest to latest, every value
  touched (sum of lengths, so no column can be pruned away);
- ``stream``: ``readStream`` with an ``availableNow`` trigger into a no-op sink, i.e.
  what a streaming job catching up on a backlog does;
- ``batch (warm)``: the batch read again, once the JVM has compiled the hot paths.

Each line is the best of ``--runs`` runs. It prints a table and asserts only that every
read saw every record. Usage::

    python -m spark_validation.bench_read [--records 1000000] [--partitions 4] [--standalone]

``--standalone`` reads with a Spark standalone cluster (master + two worker JVMs,
spark_validation/standalone.py; two one-core executors) instead of local[2].

A benchmark, not a test: CI does not run it; figures go into the notes.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from typing import Any

from spark_validation import kafka_util as ku
from spark_validation import streams

TOPIC = "spark-bench-read"


def _start_emulator(brokers: int) -> tuple[subprocess.Popen, str]:
    """``kafka-emulator --port 0`` as its own process; the bootstrap from its ready line."""
    proc = subprocess.Popen([sys.executable, "-m", "emulator", "--brokers", str(brokers),
                             "--port", "0", "--log-level", "WARNING"],
                            stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline() if proc.stdout else ""
    if "kafka-emulator ready: bootstrap servers " not in line:
        proc.kill()
        raise RuntimeError(f"kafka-emulator did not start: {line!r}")
    return proc, line.rsplit(" ", 1)[1].strip()


def _cpu_s(proc: subprocess.Popen | None) -> float:
    """CPU seconds the emulator process has used (user + system), NaN if not ours."""
    if proc is None:
        return float("nan")
    with open(f"/proc/{proc.pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _fill(bootstrap: str, records: int, partitions: int, value_bytes: int) -> float:
    ku.create_topic(bootstrap, TOPIC, partitions)
    value = os.urandom(value_bytes)
    t0 = time.perf_counter()
    ku.produce(bootstrap, TOPIC, ({"value": value, "key": str(i).encode(),
                                   "partition": i % partitions} for i in range(records)),
               **{"linger.ms": 20, "batch.size": 1 << 20, "compression.type": "none"})
    return time.perf_counter() - t0


def _batch_read(spark: Any, bootstrap: str) -> tuple[int, float]:
    t0 = time.perf_counter()
    df = streams.read_batch(spark, bootstrap, subscribe=TOPIC, startingOffsets="earliest",
                            endingOffsets="latest")
    row = df.selectExpr("count(*) AS n", "sum(length(value)) AS bytes").collect()[0]
    return row["n"], time.perf_counter() - t0


def _stream_read(spark: Any, bootstrap: str, work: str, run: int) -> tuple[int, float]:
    t0 = time.perf_counter()
    df = streams.read_stream(spark, bootstrap, subscribe=TOPIC, startingOffsets="earliest")
    q = (df.selectExpr("length(value) AS n").writeStream.format("noop")
         .option("checkpointLocation", os.path.join(work, f"ckpt-{run}"))
         .trigger(availableNow=True).start())
    q.awaitTermination()
    elapsed = time.perf_counter() - t0
    if q.exception() is not None:
        raise q.exception()
    rows = sum(p["numInputRows"] for p in q.recentProgress)
    return rows, elapsed


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--records", type=int, default=1_000_000)
    ap.add_argument("--partitions", type=int, default=4)
    ap.add_argument("--value-bytes", type=int, default=100)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--bootstrap-servers", help="a running emulator (default: start one)")
    ap.add_argument("--standalone", action="store_true",
                    help="a Spark standalone cluster (master + 2 workers) instead of local[2]")
    args = ap.parse_args()

    import contextlib
    import tempfile

    from spark_validation.session import build_session

    proc = None
    bootstrap = args.bootstrap_servers
    if bootstrap is None:
        proc, bootstrap = _start_emulator(3)
    mode = "local[2]"
    stack = contextlib.ExitStack()
    try:
        fill_s = _fill(bootstrap, args.records, args.partitions, args.value_bytes)
        t0 = time.perf_counter()
        if args.standalone:
            from spark_validation.standalone import (
                STANDALONE_CONF,
                StandaloneCluster,
                wait_for_executors,
            )

            url = stack.enter_context(StandaloneCluster(workers=2))
            spark = build_session(app_name="spark-bench-read", master=url,
                                  conf=STANDALONE_CONF)
            wait_for_executors(spark, 2)
            mode = "standalone: master + 2 workers, 2 one-core executors"
        else:
            spark = build_session(app_name="spark-bench-read")
        session_s = time.perf_counter() - t0
        results: list[tuple[str, int, float, float]] = []
        with tempfile.TemporaryDirectory(prefix="spark-bench-") as work:
            for name, fn in (("batch (first)", lambda r: _batch_read(spark, bootstrap)),
                             ("stream availableNow", lambda r: _stream_read(
                                 spark, bootstrap, work, r)),
                             ("batch (warm)", lambda r: _batch_read(spark, bootstrap))):
                runs = 1 if name == "batch (first)" else args.runs
                best: tuple[float, float] | None = None
                for r in range(runs):
                    cpu0 = _cpu_s(proc)
                    n, secs = fn(r)
                    cpu = _cpu_s(proc) - cpu0
                    if n != args.records:
                        raise AssertionError(f"{name}: read {n} of {args.records} records")
                    if best is None or secs < best[0]:
                        best = (secs, cpu)
                assert best is not None
                results.append((name, n, *best))
        spark.stop()
    finally:
        stack.close()
        if proc is not None:
            proc.terminate()
            proc.wait(30)
    mb = args.records * args.value_bytes / 1e6
    print(f"topic: {args.records:,} records x {args.value_bytes} B values, "
          f"{args.partitions} partitions, RF 3; filled in {fill_s:.1f} s "
          f"({args.records / fill_s:,.0f} rec/s); SparkSession {session_s:.1f} s; "
          f"{os.cpu_count()} cores, {mode}")
    print(f"{'read':<22}{'records':>10}{'seconds':>10}{'records/s':>14}{'MB/s':>8}"
          f"{'emulator CPU s':>16}")
    for name, n, secs, cpu in results:
        print(f"{name:<22}{n:>10,}{secs:>10.2f}{n / secs:>14,.0f}{mb / secs:>8.1f}"
              f"{cpu:>16.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
