"""Slow writes on one broker, seen from another: what a ``slow_writes`` storage fault costs
the brokers that do not have it (docs/faults.md, "Storage faults").

Three emulated brokers in one process; topic ``slow`` led by broker 1, topic ``fast`` by
broker 2. A background producer keeps broker 1 busy (acks=1, one request in flight at a
time), while this script times single-record acks=1 produces to broker 2, first with no
fault, then with ``slow_writes`` of ``--delay-ms`` on broker 1. Each write on broker 1
takes the delay, yet the event loop goes on serving broker 2: its latency should not
move. Prints p50/p99 per phase, and broker 1's own latency with the fault.

    python bench/storage_faults.py [--delay-ms 50] [--requests 2000]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from emulator.blocking_client import BlockingConnection  # noqa: E402
from emulator.runtime import Cluster  # noqa: E402
from wire.records import build_batch  # noqa: E402


def produce_body(topic: str) -> dict:
    return {"transactional_id": None, "acks": 1, "timeout_ms": 30000, "topic_data": [
        {"name": topic, "partition_data": [
            {"index": 0, "records": build_batch([(None, b"v" * 100)])}]}]}


def timed(conn: BlockingConnection, topic: str, n: int) -> list[float]:
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        r = conn.call(0, 9, produce_body(topic))
        out.append((time.perf_counter() - t0) * 1000)
        assert r["responses"][0]["partition_responses"][0]["error_code"] == 0
    return out


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def line(name: str, xs: list[float]) -> str:
    return (f"{name:<44} p50 {statistics.median(xs):7.2f} ms   p99 {pct(xs, 0.99):7.2f} ms"
            f"   ({len(xs)} requests)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--delay-ms", type=int, default=50, help="slow_writes on broker 1")
    ap.add_argument("--requests", type=int, default=2000, help="timed produces per phase")
    args = ap.parse_args()
    with Cluster(brokers=3, port=0) as c:
        c.call(lambda: c.state.create_topic("slow", assignments={0: [1]}))
        c.call(lambda: c.state.create_topic("fast", assignments={0: [2]}))
        b1, b2 = c.state.brokers[1], c.state.brokers[2]
        stop = threading.Event()
        slow_lat: list[float] = []

        def keep_broker_1_busy() -> None:
            with BlockingConnection.connect("127.0.0.1", b1.port) as conn:
                while not stop.is_set():
                    slow_lat.extend(timed(conn, "slow", 1))

        with BlockingConnection.connect("127.0.0.1", b2.port) as conn:
            timed(conn, "fast", 200)  # warm up
            busy = threading.Thread(target=keep_broker_1_busy)
            busy.start()
            base = timed(conn, "fast", args.requests)
            c.slow_writes(1, args.delay_ms)
            slow_lat.clear()
            faulted = timed(conn, "fast", args.requests)
            stop.set()
            busy.join(30)
    print(f"slow_writes {args.delay_ms} ms on broker 1, one producer keeping it busy:")
    print(line("broker 2, no storage fault", base))
    print(line("broker 2, broker 1 writing slowly", faulted))
    if slow_lat:
        print(line("broker 1 itself (each write waits)", slow_lat))


if __name__ == "__main__":
    main()
