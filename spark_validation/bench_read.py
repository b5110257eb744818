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

Each line is the median of ``--runs`` runs, with their range. The same job runs against the emulator and
then against Apache Kafka 4.4 (client_tests/kafka_cluster.py, the project's real-Kafka
launcher: a KRaft controller JVM and broker JVMs, jars from Maven Central) on this
machine, one cluster at a time, each a single node by default, with one SparkSession:
the first target's ``batch (first)`` also pays the JVM's warm-up, so compare the
``stream`` and ``batch (warm)`` lines (or run ``--target`` one at a time). It prints a
table and asserts only that every read saw every record. Usage::

    python -m spark_validation.bench_read [--records 1000000] [--partitions 4]
        [--target emulator|kafka|both] [--brokers 1] [--standalone]

``--standalone`` reads with a Spark standalone cluster (master + two worker JVMs,
spark_validation/standalone.py; two one-core executors) instead of local[2].

A benchmark, not a test: CI does not run it; figures go into the notes.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from typing import Any

from spark_validation import kafka_util as ku
from spark_validation import streams, versions

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


def _cpu_s(pid: int | None) -> float:
    """CPU seconds a server process has used (user + system), NaN if not ours."""
    if pid is None:
        return float("nan")
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _rss_mb(pid: int | None) -> float:
    """Resident memory of a server process in MB (NaN if not ours)."""
    if pid is None:
        return float("nan")
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def _fill(bootstrap: str, records: int, partitions: int, value_bytes: int,
          replication_factor: int) -> float:
    ku.create_topic(bootstrap, TOPIC, partitions, replication_factor=replication_factor)
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


@contextlib.contextmanager
def _target(name: str, brokers: int, kafka_version: str) -> Iterator[tuple[str, int | None]]:
    """(bootstrap, pid whose CPU time is counted) of a fresh cluster: the emulator as its
    own process, or Apache Kafka through client_tests/kafka_cluster.py (KRaft, one
    controller JVM + ``brokers`` broker JVMs, jars from Maven Central)."""
    if name == "emulator":
        proc, bootstrap = _start_emulator(brokers)
        try:
            yield bootstrap, proc.pid
        finally:
            proc.terminate()
            proc.wait(30)
        return
    from client_tests.kafka_cluster import KafkaCluster

    # Kafka's defaults except what a small cluster needs (small_cluster_config); the
    # launcher's test JVM options (small heaps) as for every other comparison here.
    with KafkaCluster(brokers=brokers, version=kafka_version) as kafka:
        yield kafka.bootstrap_servers, kafka.broker_pid(kafka.broker_ids[0])


def _reads(spark: Any, bootstrap: str, pid: int | None, records: int,
           runs: int) -> list[tuple[str, int, list[float], float]]:
    """Per read kind: (name, records, seconds of each run, median server CPU seconds).
    Every run is kept, so the table can give the median and the spread, not a best case."""
    results: list[tuple[str, int, list[float], float]] = []
    with tempfile.TemporaryDirectory(prefix="spark-bench-") as work:
        for name, fn in (("batch (first)", lambda r: _batch_read(spark, bootstrap)),
                         ("stream availableNow", lambda r: _stream_read(
                             spark, bootstrap, work, r)),
                         ("batch (warm)", lambda r: _batch_read(spark, bootstrap))):
            secs_runs: list[float] = []
            cpus: list[float] = []
            for r in range(1 if name == "batch (first)" else runs):
                cpu0 = _cpu_s(pid)
                n, secs = fn(r)
                cpus.append(_cpu_s(pid) - cpu0)
                if n != records:
                    raise AssertionError(f"{name}: read {n} of {records} records")
                secs_runs.append(secs)
            results.append((name, records, secs_runs, statistics.median(cpus)))
    return results


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--records", type=int, default=1_000_000)
    ap.add_argument("--partitions", type=int, default=4)
    ap.add_argument("--value-bytes", type=int, default=100)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--bootstrap-servers", help="a running cluster (default: start them)")
    ap.add_argument("--target", choices=("emulator", "kafka", "both"), default="both",
                    help="what to read from: the emulator, Apache Kafka, or each in turn")
    ap.add_argument("--brokers", type=int, default=1,
                    help="brokers of each cluster started (1: a single node, as the "
                         "real-Kafka comparison runs; the topic's RF is min(3, brokers))")
    ap.add_argument("--kafka-version", default=None,
                    help="Apache Kafka release (default: client_tests/kafka_cluster.py's)")
    ap.add_argument("--standalone", action="store_true",
                    help="a Spark standalone cluster (master + 2 workers) instead of local[2]")
    args = ap.parse_args()

    from client_tests.kafka_cluster import DEFAULT_VERSION
    from spark_validation.session import build_session

    kafka_version = args.kafka_version or DEFAULT_VERSION
    targets = ["emulator", "kafka"] if args.target == "both" else [args.target]
    mode = "local[2]"
    stack = contextlib.ExitStack()
    rows: list[tuple[str, float, list[tuple[str, int, list[float], float]]]] = []
    try:
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
        for target in targets:
            label = (f"Apache Kafka {kafka_version}" if target == "kafka"
                     else "kafka-emulator") + f", {args.brokers} broker(s)"
            with contextlib.ExitStack() as backend:
                if args.bootstrap_servers:
                    bootstrap, pid = args.bootstrap_servers, None
                    label = f"{target} at {bootstrap}"
                else:
                    bootstrap, pid = backend.enter_context(
                        _target(target, args.brokers, kafka_version))
                print(f"{label}: filling {args.records:,} records", flush=True)
                fill_s = _fill(bootstrap, args.records, args.partitions, args.value_bytes,
                               min(3, args.brokers))
                rss = _rss_mb(pid)
                print(f"{label}: filled in {fill_s:.1f} s, server RSS {rss:,.0f} MB",
                      flush=True)
                reads = _reads(spark, bootstrap, pid, args.records, args.runs)
                rows.append((label + f", RSS {rss:,.0f}/{_rss_mb(pid):,.0f} MB", fill_s,
                             reads))
        spark.stop()
    finally:
        stack.close()
    mb = args.records * args.value_bytes / 1e6
    print(f"topic: {args.records:,} records x {args.value_bytes} B values, "
          f"{args.partitions} partitions, RF {min(3, args.brokers)}; SparkSession "
          f"{session_s:.1f} s; {os.cpu_count()} cores, PySpark {versions.SPARK_VERSION}, {mode}")
    print("server CPU: the server process's (Kafka: the broker JVM's) user + system seconds "
          "over the read, median of the runs; RSS: after the fill / after the reads")
    print(f"{'target':<56}{'read':<22}{'records':>10}{'seconds':>10}{'records/s':>14}"
          f"{'MB/s':>8}{'server CPU s':>14}{'us/rec':>8}  records/s range")
    for label, fill_s, results in rows:
        print(f"{label:<56}{'fill (confluent-kafka)':<22}{args.records:>10,}{fill_s:>10.2f}"
              f"{args.records / fill_s:>14,.0f}{mb / fill_s:>8.1f}{'':>14}")
        for name, n, runs, cpu in results:
            secs = statistics.median(runs)
            spread = f"{n / max(runs):,.0f}-{n / min(runs):,.0f}" if len(runs) > 1 else ""
            print(f"{'':<56}{name:<22}{n:>10,}{secs:>10.2f}{n / secs:>14,.0f}"
                  f"{mb / secs:>8.1f}{cpu:>14.2f}{cpu / n * 1e6:>8.2f}  {spread}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
