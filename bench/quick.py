"""Emulator-only benchmark: start time, idle RSS, throughput, latency.

Runs the ``kafka-emulator`` command as a separate process, as a user would, and
measures with confluent-kafka:

- start: from launching the command to the first acknowledged produce;
- idle RSS of the emulator process after start;
- produce MB/s and records/s (1 KiB records, acks=all, RF 3);
- consume MB/s and records/s of the same records;
- p50/p99 produce latency at a moderate fixed rate (acks=all).

Prints a table; asserts nothing. Usage: python bench/quick.py [--records N]
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import time

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic


def free_base_port(n: int) -> int:
    for base in range(20000, 60000, 97):
        ok = True
        for i in range(n):
            with socket.socket() as s:
                try:
                    s.bind(("127.0.0.1", base + i))
                except OSError:
                    ok = False
                    break
        if ok:
            return base
    raise RuntimeError("no free ports")


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def start_emulator(base: int) -> tuple[subprocess.Popen, float]:
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "emulator", "--port", str(base), "--log-level", "WARNING"],
        stdout=subprocess.PIPE, text=True)
    bootstrap = f"127.0.0.1:{base}"
    p = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 0,
                  "socket.connection.setup.timeout.ms": 1000, "reconnect.backoff.ms": 5,
                  "reconnect.backoff.max.ms": 20, "topic.metadata.refresh.interval.ms": 10})
    acked: list[float] = []
    while not acked:
        p.produce("bench-start", b"x", on_delivery=lambda e, m: e is None and acked.append(1))
        p.flush(0.05)
        if time.perf_counter() - t0 > 30:
            raise RuntimeError("emulator did not start within 30 s")
    return proc, time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=200_000)
    ap.add_argument("--latency-records", type=int, default=2000)
    args = ap.parse_args()
    base = free_base_port(3)
    proc, start_s = start_emulator(base)
    bootstrap = ",".join(f"127.0.0.1:{base + i}" for i in range(3))
    try:
        time.sleep(1.0)
        idle = rss_mb(proc.pid)
        admin = AdminClient({"bootstrap.servers": bootstrap})
        fs = admin.create_topics([NewTopic("bench", 3, 3), NewTopic("lat", 1, 3)])
        for f in fs.values():
            f.result(20)
        value = os.urandom(1024)
        p = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 5,
                      "batch.size": 1 << 20, "queue.buffering.max.messages": 1_000_000})
        t0 = time.perf_counter()
        for i in range(args.records):
            while True:
                try:
                    p.produce("bench", value, partition=i % 3)
                    break
                except BufferError:
                    p.poll(0.01)
            if i % 10000 == 0:
                p.poll(0)
        p.flush(120)
        prod_s = time.perf_counter() - t0
        load_rss = rss_mb(proc.pid)

        c = Consumer({"bootstrap.servers": bootstrap, "group.id": "bench",
                      "enable.auto.commit": False, "fetch.max.bytes": 50 << 20})
        c.assign([TopicPartition("bench", i, 0) for i in range(3)])
        n = 0
        t0 = time.perf_counter()
        while n < args.records and time.perf_counter() - t0 < 120:
            for m in c.consume(10000, 1.0):
                if m.error() is None:
                    n += 1
        cons_s = time.perf_counter() - t0
        c.close()

        lp = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 0})
        lats: list[float] = []
        for _ in range(args.latency_records):
            sent = time.perf_counter()
            lp.produce("lat", value, on_delivery=lambda e, m, s=sent: lats.append(
                time.perf_counter() - s))
            lp.flush(10)
            time.sleep(0.002)  # about 400 records/s: moderate, not saturating
        lats.sort()
        mb = args.records * 1024 / 1e6
        print(f"{'metric':<44}{'value':>14}")
        print(f"{'start (command to first acked produce)':<44}{start_s:>12.3f} s")
        print(f"{'idle RSS':<44}{idle:>11.1f} MB")
        print(f"{'RSS after produce load':<44}{load_rss:>11.1f} MB")
        print(f"{'produce (1 KiB, acks=all, RF 3)':<44}{mb / prod_s:>9.1f} MB/s "
              f"{args.records / prod_s:>9.0f} rec/s")
        print(f"{'consume':<44}{mb / cons_s:>9.1f} MB/s {n / cons_s:>9.0f} rec/s")
        print(f"{'produce latency p50 (acks=all)':<44}{statistics.median(lats) * 1000:>11.2f} ms")
        print(f"{'produce latency p99 (acks=all)':<44}"
              f"{lats[int(len(lats) * 0.99)] * 1000:>11.2f} ms")
    finally:
        proc.terminate()
        proc.wait(10)


if __name__ == "__main__":
    main()
