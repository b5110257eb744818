"""Profile the running emulator under load with py-spy and print where the time goes.

Starts the emulator as compare.py does, attaches ``py-spy record`` (pip install
py-spy), runs one load, and prints the functions with the most samples, by self
time and inclusive time (native code such as the Cython log core is charged to the
Python function that calls it).

    python bench/profile_emulator.py throughput [--records 100000]
    python bench/profile_emulator.py latency [--extra-partitions 50]
    python bench/profile_emulator.py scale [--partitions 10000] [--seconds 15]
    python bench/profile_emulator.py java-consume [--partitions 1000] [--records 1000000]

``scale`` profiles bench/scale.py's librdkafka produce phase only (topics of 100
partitions, replication factor 3, one record to every partition per round): py-spy
attaches once the topics exist and the leaders are known.

``java-consume`` profiles one emulated broker while Kafka's ConsumerPerformance reads
a topic that ProducerPerformance filled (bench/java_perf.py's consume phase): py-spy
attaches once the topic is full.

``--extra-partitions`` adds an idle topic, as __consumer_offsets is after any group
consumer has run: it shows what every tick costs per partition.
"""

from __future__ import annotations

import argparse
import collections
import os
import shutil
import signal
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import compare  # noqa: E402


def summarize(path: str, top: int) -> None:
    own: collections.Counter[str] = collections.Counter()
    incl: collections.Counter[str] = collections.Counter()
    total = 0
    with open(path) as f:
        for line in f:
            line = line.rstrip()
            if not line:
                continue
            stack, n_text = line.rsplit(" ", 1)
            n = int(n_text)
            total += n
            names = []
            for frame in stack.split(";"):
                fn, _, loc = frame.strip().partition(" (")
                file = loc.rsplit(":", 1)[0].split("site-packages/")[-1]
                names.append(f"{fn} [{os.path.relpath(file, compare.ROOT) if file.startswith('/') else file}]")
            own[names[-1]] += n
            for name in set(names):
                incl[name] += n
    print(f"{total} samples")
    for title, counter in (("self", own), ("inclusive", incl)):
        print(f"--- {title}")
        for name, n in counter.most_common(top):
            print(f"{100 * n / total:5.1f}%  {name}")


def java_consume(args: argparse.Namespace) -> None:
    """py-spy on one emulated broker during ConsumerPerformance (bench/java_perf.py)."""
    import uuid

    import java_perf

    compare.ensure_jars()
    work = tempfile.mkdtemp(prefix="emu-profile-")
    compare.TOOL_LOG4J = os.path.join(work, "tools-log4j2.properties")
    with open(compare.TOOL_LOG4J, "w") as f:
        f.write(compare.LOG4J2.replace("WARN", "ERROR"))
    out = os.path.join(work, "stacks.txt")
    s = compare.start_emulator(1)
    spy = None
    try:
        topic = f"perf-{uuid.uuid4().hex[:6]}"
        compare.create_topics(s, [(topic, args.partitions)])
        java_perf.produce(s, topic, args.records, 100)
        spy = subprocess.Popen(["py-spy", "record", "-p", str(s.pids[0]), "-r",
                                str(args.rate), "-f", "raw", "-o", out, "--nonblocking"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        with java_perf.Phase(s, args.records) as ph:
            rate, _, _ = java_perf.consume(s, topic, args.records)
        print(f"consume {rate:,.0f} records/s, server {ph.server_us:.2f} / tool "
              f"{ph.tool_us:.2f} CPU us/record (py-spy attached)")
    finally:
        if spy is not None:
            spy.send_signal(signal.SIGINT)
            spy.wait(60)
        s.stop()
    summarize(out, args.top)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("load", choices=["throughput", "latency", "scale", "java-consume"])
    ap.add_argument("--partitions", type=int, default=10_000,
                    help="scale, java-consume: partitions")
    ap.add_argument("--seconds", type=float, default=15.0, help="scale: produce this long")
    ap.add_argument("--records", type=int, default=100_000)
    ap.add_argument("--extra-partitions", type=int, default=0)
    ap.add_argument("--rate", type=int, default=200, help="py-spy samples per second")
    ap.add_argument("--top", type=int, default=25)
    args = ap.parse_args()
    if shutil.which("py-spy") is None:
        sys.exit("py-spy is not installed: pip install py-spy")
    if args.load == "java-consume":
        java_consume(args)
        return
    s = compare.start_emulator(3)
    out = os.path.join(tempfile.mkdtemp(prefix="emu-profile-"), "stacks.txt")

    def attach() -> subprocess.Popen:
        return subprocess.Popen(["py-spy", "record", "-p", str(s.pids[0]), "-r",
                                 str(args.rate), "-f", "raw", "-o", out, "--nonblocking"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    if args.load == "scale":
        import scale

        spy = None
        try:
            plan = scale.topic_plan(args.partitions)
            scale.create(s, plan)
            scale.wait_leaders(s, plan)
            spy = attach()
            rate, rounds, _, server, client = scale.produce(s, plan, args.seconds,
                                                            args.seconds * 2)
            print(f"{args.partitions:,} partitions: {rate:,.0f} records/s, {rounds} rounds, "
                  f"server {server:.0f} / client {client:.0f} CPU us/record (py-spy attached)")
        finally:
            if spy is not None:
                spy.send_signal(signal.SIGINT)
                spy.wait(60)
            s.stop()
        summarize(out, args.top)
        return
    spy = attach()
    try:
        topics = [("bench", compare.PARTITIONS), ("lat", 1)]
        if args.extra_partitions:
            topics.append(("idle", args.extra_partitions))
        compare.create_topics(s, topics)
        mb = args.records * 1024 / 1e6
        if args.load == "throughput":
            print(f"produce {mb / compare.confluent_produce(s, 'bench', args.records):.1f} MB/s")
            print(f"consume {mb / compare.confluent_consume(s, 'bench', args.records):.1f} MB/s")
        else:
            p50, p99 = compare.latency(s, "lat", 1500, 500)
            print(f"latency at 500 records/s: p50 {p50:.2f} ms, p99 {p99:.2f} ms")
    finally:
        spy.send_signal(signal.SIGINT)
        spy.wait(60)
        s.stop()
    summarize(out, args.top)


if __name__ == "__main__":
    main()
