"""Kafka's own Java perf tools over many partitions: the emulator beside Apache Kafka 4.4.

Kafka's ProducerPerformance (kafka-producer-perf-test) and ConsumerPerformance
(kafka-consumer-perf-test) with small records over a topic of many partitions (1,000 by
default), the load the Java clients put on a broker whose requests each carry a batch
for hundreds of partitions. The producer uses Kafka's RoundRobinPartitioner, so every
partition gets records (the default partitioner for keyless records is sticky: it fills
one partition's batch at a time and would hardly exercise the many-partition path).

Like for like: one emulated broker beside one Kafka broker (plus its KRaft controller),
replication factor 1 on both, the same tools, records and settings, one system at a
time. Each figure is the median of ``--runs`` runs (a fresh topic per run), with the
range. Beside records/s it prints the CPU time per record of the server's processes
(the emulator's one process; Kafka's broker and controller JVMs) and of the tool's JVM
over each phase: on a 2-core machine the tool competes with the server for the cores,
and the server's CPU per record is the figure a change to the server moves.
Prints a table; asserts only that every tool saw every record.

    python bench/java_perf.py [--partitions 1000] [--records 2000000] [--record-size 100]
        [--runs 3] [--target emulator|kafka|both] [--consume-only]

``--consume-only`` fills each run's topic once and reads it ``--runs`` times (fresh
groups), for measuring the fetch path alone.

A benchmark, not a test: CI does not run it; take figures on a quiet machine.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import statistics
import sys
import tempfile
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare  # noqa: E402  (bench/compare.py: the systems and the tool runner)
from scale import cpu_seconds  # noqa: E402


def _children_cpu() -> float:
    """CPU seconds of this process's finished children (the tools' JVMs)."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


class Phase:
    """Server and tool CPU microseconds per record over one tool's run."""

    def __init__(self, s: compare.System, records: int) -> None:
        self.s, self.records = s, records
        self.server_us = self.tool_us = float("nan")

    def __enter__(self) -> Phase:
        self.server0, self.tool0 = cpu_seconds(self.s.pids), _children_cpu()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server_us = (cpu_seconds(self.s.pids) - self.server0) / self.records * 1e6
        self.tool_us = (_children_cpu() - self.tool0) / self.records * 1e6


def produce(s: compare.System, topic: str, records: int, size: int) -> float:
    """Records/s of ProducerPerformance at full speed, round-robin over the partitions."""
    out = compare.java_tool("org.apache.kafka.tools.ProducerPerformance", [
        "--topic", topic, "--num-records", str(records), "--record-size", str(size),
        "--throughput", "-1", "--producer-props", f"bootstrap.servers={s.bootstrap}",
        "acks=1", "linger.ms=5", "batch.size=16384",
        "partitioner.class=org.apache.kafka.clients.producer.RoundRobinPartitioner"])
    m = re.findall(r"(\d+) records sent, ([\d.]+) records/sec", out)
    if not m or int(m[-1][0]) != records:
        raise RuntimeError(f"unexpected ProducerPerformance output: {out[-300:]}")
    return float(m[-1][1])


def consume(s: compare.System, topic: str, records: int) -> tuple[float, float, float]:
    """(records/s, group join ms, fetching records/s) of ConsumerPerformance reading the
    whole topic from the start: its nMsg.sec (from the tool's start, group join
    included: what a user waits for), rebalance.time.ms and fetch.nMsg.sec."""
    row = compare.consumer_perf_row(s, topic, records, timeout_ms=120000)
    return (float(row["nMsg.sec"]), float(row["rebalance.time.ms"]),
            float(row["fetch.nMsg.sec"]))


KEYS = ("produce", "consume", "produce_server_us", "consume_server_us", "produce_tool_us",
        "consume_tool_us", "join_ms", "fetch_only")


def measure(s: compare.System, args: argparse.Namespace) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {k: [] for k in KEYS}
    topic = ""
    for run in range(args.runs):
        if not (args.consume_only and run):
            topic = f"perf-{run}-{uuid.uuid4().hex[:6]}"
            compare.create_topics(s, [(topic, args.partitions)])
            with Phase(s, args.records) as ph:
                p = produce(s, topic, args.records, args.record_size)
            out["produce"].append(p)
            out["produce_server_us"].append(ph.server_us)
            out["produce_tool_us"].append(ph.tool_us)
        with Phase(s, args.records) as ph:
            c, join_ms, fetch_only = consume(s, topic, args.records)
        out["consume"].append(c)
        out["join_ms"].append(join_ms)
        out["fetch_only"].append(fetch_only)
        out["consume_server_us"].append(ph.server_us)
        out["consume_tool_us"].append(ph.tool_us)
        print(f"  {s.name} run {run + 1}: produce {out['produce'][-1]:,.0f} rec/s "
              f"(server {out['produce_server_us'][-1]:.2f} us/rec), consume {c:,.0f} rec/s "
              f"(server {ph.server_us:.2f} us/rec, tool {ph.tool_us:.2f}; group join "
              f"{join_ms:,.0f} ms, fetching alone {fetch_only:,.0f} rec/s)", flush=True)
    return out


def summary(xs: list[float], fmt: str = "{:,.0f}") -> str:
    mid = fmt.format(statistics.median(xs))
    return f"{mid:>12} ({fmt.format(min(xs))}-{fmt.format(max(xs))})"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--partitions", type=int, default=1000)
    ap.add_argument("--records", type=int, default=2_000_000)
    ap.add_argument("--record-size", type=int, default=100)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--target", choices=("emulator", "kafka", "both"), default="both")
    ap.add_argument("--kafka-version", default=compare.DEFAULT_VERSION)
    ap.add_argument("--consume-only", action="store_true",
                    help="produce once, then consume the same topic --runs times")
    args = ap.parse_args()
    compare.KAFKA_VERSION = args.kafka_version
    compare.ensure_jars()
    workdir = tempfile.mkdtemp(prefix="kafka-java-perf-")
    compare.TOOL_LOG4J = os.path.join(workdir, "tools-log4j2.properties")
    with open(compare.TOOL_LOG4J, "w") as f:
        f.write(compare.LOG4J2.replace("WARN", "ERROR"))
    results: list[tuple[str, dict[str, list[float]]]] = []
    try:
        for kind in (["emulator", "kafka"] if args.target == "both" else [args.target]):
            print(f"starting {kind} ...", flush=True)
            if kind == "emulator":
                s = compare.start_emulator(1)
            else:
                d = os.path.join(workdir, "kafka")
                os.makedirs(d)
                s = compare.start_kafka(1, d)
            try:
                results.append((s.name, measure(s, args)))
            finally:
                s.stop()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    print(f"\n{args.records:,} records of {args.record_size} B over {args.partitions:,} "
          f"partitions, RF 1, acks=1, RoundRobinPartitioner; median (range) of "
          f"{args.runs} runs; {compare.platform_line()}")
    print(f"{'system':<44}{'produce rec/s':>30}{'consume rec/s':>30}")
    for name, r in results:
        print(f"{name:<44}{summary(r['produce']):>30}{summary(r['consume']):>30}")
    print(f"{'server CPU us/record (tool JVM us/record)':<44}")
    for name, r in results:
        cells = [f"{summary(r[k + '_server_us'], '{:.2f}')} / {statistics.median(r[k + '_tool_us']):.2f}"
                 for k in ("produce", "consume")]
        print(f"{name:<44}{cells[0]:>30}{cells[1]:>30}")
    print(f"{'consume: group join ms / fetching alone rec/s':<44}")
    for name, r in results:
        print(f"{name:<44}{summary(r['join_ms']):>30}{summary(r['fetch_only']):>30}")
    if len(results) == 2:
        (_, e), (_, k) = results
        print(f"{'emulator / Kafka (medians)':<44}"
              f"{statistics.median(e['produce']) / statistics.median(k['produce']):>29.2f}x"
              f"{statistics.median(e['consume']) / statistics.median(k['consume']):>29.2f}x")


if __name__ == "__main__":
    main()
