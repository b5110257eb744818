"""Storage figures: RSS while producing, produce/consume MB/s with and without a data
directory and against Apache Kafka, and the stall the log cleaner causes.

    python bench/storage.py [--gb 5] [--no-kafka] [--stall-records 200000]

1. The emulator (``python -m emulator``, 3 virtual brokers) in memory, with
   retention.bytes bounding each partition, then with ``--data-dir``: produce
   ``--gb`` GB of 1 KiB records (confluent-kafka, acks=1, 3 partitions, RF 3) while
   sampling the process's RSS (anonymous and file-backed separately, from
   /proc/PID/status), then consume everything from the start. Prints peak RSS, the
   final RSS, and MB/s both ways.
2. The same load on Apache Kafka (client_tests/kafka_cluster.py, 3 brokers, RF 3).
3. The cleaner stall: a compacted topic gets ``--stall-records`` records over 1,000
   keys while a second producer measures acks=1 produce latency on another topic;
   prints produce latency p50/p99/max with the cleaner idle and while it cleans, and
   the cleaner's own pass times.

Prints figures; asserts nothing (the machine is shared).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from client_tests.kafka_cluster import KafkaCluster  # noqa: E402

PARTITIONS = 3
RECORD = 1024
MB = 1 << 20


def rss(pid: int) -> tuple[int, int]:
    """(anonymous, file-backed) resident MB of ``pid``."""
    anon = file = 0
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("RssAnon:"):
                anon = int(line.split()[1]) // 1024
            elif line.startswith("RssFile:"):
                file = int(line.split()[1]) // 1024
    return anon, file


class Sampler(threading.Thread):
    def __init__(self, pids: list[int]) -> None:
        super().__init__(daemon=True)
        self.pids = pids
        self.peak_anon = self.peak_file = 0
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            try:
                a = f = 0
                for pid in self.pids:
                    x, y = rss(pid)
                    a, f = a + x, f + y
                self.peak_anon, self.peak_file = max(self.peak_anon, a), max(self.peak_file, f)
            except OSError:
                pass
            time.sleep(0.25)


def start_emulator(data_dir: str | None) -> tuple[subprocess.Popen, str]:
    cmd = [sys.executable, "-m", "emulator", "--port", "0", "--log-level", "WARNING"]
    if data_dir:
        cmd += ["--data-dir", data_dir]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    line = proc.stdout.readline()
    if "ready" not in line:
        raise SystemExit(f"emulator did not start: {line!r}")
    return proc, line.split("bootstrap servers ")[1].split()[0]


def create(bootstrap: str, topic: str, configs: dict[str, str]) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, PARTITIONS, 3, config=configs)])[topic].result(60)


def produce(bootstrap: str, topic: str, total_bytes: int) -> float:
    p = Producer({"bootstrap.servers": bootstrap, "acks": "1", "linger.ms": 5,
                  "batch.size": 1_000_000, "queue.buffering.max.kbytes": 512 * 1024,
                  "compression.type": "none"})
    value = os.urandom(RECORD)
    n = total_bytes // RECORD
    started = time.monotonic()
    for i in range(n):
        while True:
            try:
                p.produce(topic, value=value, partition=i % PARTITIONS)
                break
            except BufferError:
                p.poll(0.01)
        if i % 10_000 == 0:
            p.poll(0)
    p.flush(600)
    return n * RECORD / MB / (time.monotonic() - started)


def consume(bootstrap: str, topic: str, expect_bytes: int) -> float:
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "bench",
                  "enable.auto.commit": False, "auto.offset.reset": "earliest",
                  "fetch.max.bytes": 50 * MB, "max.partition.fetch.bytes": 10 * MB,
                  "enable.partition.eof": True})
    c.assign([TopicPartition(topic, i, 0) for i in range(PARTITIONS)])
    got = 0
    eof = 0
    started = time.monotonic()
    while eof < PARTITIONS and time.monotonic() - started < 900:
        for m in c.consume(1000, 1.0):
            if m.error() is None:
                got += len(m.value())
            elif m.error().code() == -191:  # _PARTITION_EOF
                eof += 1
    took = time.monotonic() - started
    c.close()
    return got / MB / took, got / max(1, expect_bytes)


def run_emulator(gb: float, data_dir: str | None, retention: int) -> dict:
    proc, bootstrap = start_emulator(data_dir)
    try:
        sampler = Sampler([proc.pid])
        sampler.start()
        configs = {"segment.bytes": str(64 * MB)}
        if retention > 0:
            configs["retention.bytes"] = str(retention)
        create(bootstrap, "load", configs)
        total = int(gb * (1 << 30))
        p_mbs = produce(bootstrap, "load", total)
        time.sleep(1.5)
        after_produce = rss(proc.pid)
        c_mbs, frac = consume(bootstrap, "load", total)
        sampler.stop.set()
        return {"produce MB/s": p_mbs, "consume MB/s": c_mbs, "consumed share": frac,
                "peak RSS anon MB": sampler.peak_anon, "peak RSS file MB": sampler.peak_file,
                "RSS anon after produce MB": after_produce[0]}
    finally:
        proc.terminate()
        proc.wait(60)


def run_kafka(gb: float) -> dict:
    with KafkaCluster(brokers=3) as kafka:
        pids = [kafka.broker_pid(b) for b in kafka.broker_ids]
        sampler = Sampler([p for p in pids if p])
        sampler.start()
        create(kafka.bootstrap_servers, "load", {"segment.bytes": str(64 * MB)})
        total = int(gb * (1 << 30))
        p_mbs = produce(kafka.bootstrap_servers, "load", total)
        c_mbs, frac = consume(kafka.bootstrap_servers, "load", total)
        sampler.stop.set()
        return {"produce MB/s": p_mbs, "consume MB/s": c_mbs, "consumed share": frac,
                "peak RSS anon MB": sampler.peak_anon, "peak RSS file MB": sampler.peak_file}


def stall(records: int) -> dict:
    """Produce latency on one topic while the cleaner works through another."""
    from emulator import Cluster

    with Cluster(port=0, config={"log.cleaner.backoff.ms": "100"}) as c:
        c.create_topic("compacted", 1, 3, config={
            "cleanup.policy": "compact", "segment.bytes": str(4 * MB),
            "min.cleanable.dirty.ratio": "0.01"})
        c.create_topic("probe", 1, 3)
        lat: list[tuple[float, float]] = []
        stop = threading.Event()

        def probe() -> None:
            p = Producer({"bootstrap.servers": c.bootstrap_servers, "acks": "1",
                          "linger.ms": 0})
            while not stop.is_set():
                t0 = time.monotonic()
                done = threading.Event()
                p.produce("probe", value=b"x", on_delivery=lambda e, m, d=done: d.set())
                while not done.is_set():
                    p.poll(0.001)
                lat.append((t0, (time.monotonic() - t0) * 1000))
                time.sleep(0.002)

        # fill first with the cleaner held back, then let it run and watch latency
        c.call(lambda: c.state.topics["compacted"].configs.update(
            {"min.cleanable.dirty.ratio": "1.0"}))
        p = Producer({"bootstrap.servers": c.bootstrap_servers, "acks": "1", "linger.ms": 5})
        for i in range(records):
            while True:
                try:
                    p.produce("compacted", key=b"k%d" % (i % 1000), value=os.urandom(200))
                    break
                except BufferError:
                    p.poll(0.01)
        p.flush(120)
        t = threading.Thread(target=probe, daemon=True)
        t.start()
        time.sleep(3)
        idle_until = time.monotonic()
        passes_before = c.call(lambda: c.state.cleaner.stats.passes)
        c.call(lambda: c.state.topics["compacted"].configs.update(
            {"min.cleanable.dirty.ratio": "0.01"}))
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            st = c.call(lambda: (c.state.cleaner.stats.passes,
                                 c.state.cleaner.candidates(c.state.now())))
            if st[0] > passes_before and not st[1]:
                break
            time.sleep(0.2)
        cleaning_until = time.monotonic()
        time.sleep(0.5)
        stop.set()
        t.join(5)
        stats = c.call(lambda: c.state.cleaner.stats)
        idle = sorted(ms for t0, ms in lat if t0 < idle_until)
        busy = sorted(ms for t0, ms in lat if idle_until <= t0 <= cleaning_until)

        def pct(xs: list[float], q: float) -> float:
            return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else float("nan")
        return {"passes": stats.passes - passes_before,
                "cleaning took s": round(cleaning_until - idle_until, 2),
                "max pass ms": stats.max_clean_time_ms,
                "bytes read MB": round(stats.bytes_read / MB, 1),
                "records removed": stats.records_removed,
                "idle p50/p99/max ms": (round(statistics.median(idle), 2), round(pct(idle, .99), 2),
                                        round(max(idle), 2)) if idle else None,
                "cleaning p50/p99/max ms": (round(statistics.median(busy), 2),
                                            round(pct(busy, .99), 2),
                                            round(max(busy), 2)) if busy else None}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gb", type=float, default=5.0)
    ap.add_argument("--no-kafka", action="store_true")
    ap.add_argument("--stall-records", type=int, default=200_000)
    ap.add_argument("--only", choices=["memory", "data-dir", "kafka", "stall"])
    args = ap.parse_args()
    results: dict[str, dict] = {}
    if args.only in (None, "memory"):
        results["emulator, memory (retention.bytes 256 MB/partition)"] = run_emulator(
            args.gb, None, 256 * MB)
        print(results, flush=True)
    if args.only in (None, "data-dir"):
        d = tempfile.mkdtemp(prefix="bench-storage-")
        try:
            results["emulator, --data-dir"] = run_emulator(args.gb, d, -1)
        finally:
            shutil.rmtree(d, ignore_errors=True)
        print(results, flush=True)
    if args.only in (None, "kafka") and not args.no_kafka:
        results["Apache Kafka, 3 brokers"] = run_kafka(args.gb)
    if args.only in (None, "stall"):
        results["cleaner stall"] = stall(args.stall_records)
    print(f"\n{args.gb} GB of {RECORD}-byte records, {PARTITIONS} partitions, RF 3")
    for name, r in results.items():
        print(f"\n{name}")
        for k, v in r.items():
            print(f"  {k:28} {round(v, 1) if isinstance(v, float) else v}")


if __name__ == "__main__":
    main()
