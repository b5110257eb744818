"""The web console with 1,000 partitions: what a refresh costs (docs/console.md).

A running emulator (3 brokers) gets ``--topics`` topics of ``--partitions`` partitions
each (default 10 x 100 = 1,000, replication factor 3) with a few records in every
partition and a consumer group's committed offsets on one topic. Printed:

- what one refresh costs on the cluster's loop (it holds the brokers' work up while it
  runs): the snapshot's build (emulator.control.console) plus the encoding of one
  /events event, the first (whole) one and then idle and with one partition written
  per refresh (the per-topic cache rebuilds and sends only changed topics), median and
  max over ``--runs``; and the bytes of each event;
- with ``--browser`` (Debian's Chromium, scripts/setup.d/60-chromium.sh): the page's
  own render time of one snapshot (window.consoleRenderMs) with every topic collapsed
  and with one 100-partition topic open.

Prints figures; asserts nothing.

    python bench/console.py [--topics 10] [--partitions 100] [--runs 50] [--browser]
    python bench/console.py --topics 100 --partitions 100     # 10,000 partitions
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from emulator import Cluster  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--topics", type=int, default=10)
    ap.add_argument("--partitions", type=int, default=100)
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--browser", action="store_true")
    args = ap.parse_args()
    from kafka import KafkaConsumer, KafkaProducer

    with Cluster(brokers=3, port=0, control_port=0) as c:
        names = [f"bench-console-{i}" for i in range(args.topics)]
        for n in names:
            c.create_topic(n, partitions=args.partitions, replication_factor=3)
        producer = KafkaProducer(bootstrap_servers=c.bootstrap_servers, linger_ms=5)
        for n in names:
            for p in range(args.partitions):
                producer.send(n, value=b"v" * 100, partition=p)
        producer.flush()
        producer.close()
        consumer = KafkaConsumer(names[0], bootstrap_servers=c.bootstrap_servers,
                                 group_id="bench-console", auto_offset_reset="earliest",
                                 enable_auto_commit=False)
        got, deadline = 0, time.monotonic() + 60
        while got < args.partitions and time.monotonic() < deadline:
            got += sum(len(v) for v in consumer.poll(timeout_ms=1000).values())
        consumer.commit()
        consumer.close()

        refresh_figures(c, names, args.runs)
        if args.browser:
            browser_figures(c, names[0])


def refresh_figures(c: Cluster, names: list[str], runs: int) -> None:
    """What one refresh costs on the cluster's loop: building the snapshot and encoding
    the event one /events stream sends, with the cluster idle and with one partition
    written between refreshes (a producer on one topic); and the bytes sent per event.
    A control plane without the per-topic cache (before the incremental
    snapshot) builds and encodes everything every time: its figures are the first
    event's."""
    from kafka import KafkaProducer

    cp = c.control

    def event(sent: dict | None) -> tuple[float, float, int, dict | None]:
        def run() -> tuple[float, float, int, dict | None]:
            t0 = time.perf_counter()
            if hasattr(cp, "snapshot_event"):
                cp._snapshot = None  # a refresh: no reuse of a younger snapshot
                data, revs = cp.snapshot_event(sent)
            else:
                cp._snapshot = None
                data = json.dumps(cp.snapshot(), separators=(",", ":")).encode()
                revs = None
            total = (time.perf_counter() - t0) * 1000
            return total, cp._snapshot[1]["build_ms"], len(data), revs

        return c.call(run)

    first, _, first_size, revs = event(None)
    print(f"partitions: {cp._snapshot[1]['partition_count']} in "
          f"{len(cp._snapshot[1]['topics'])} topics")
    print(f"first event (whole snapshot): {first:.1f} ms to build and encode, "
          f"{first_size / 1024:.0f} KiB")
    producer = KafkaProducer(bootstrap_servers=c.bootstrap_servers, linger_ms=0)
    for label, write in (("idle", False), ("one partition written per refresh", True)):
        totals, builds, sizes = [], [], []
        for i in range(runs):
            if write:
                producer.send(names[i % len(names)], value=b"w", partition=0).get(timeout=30)
            total, build, size, new_revs = event(revs)
            revs = new_revs if new_revs is not None else revs
            totals.append(total)
            builds.append(build)
            sizes.append(size)
        print(f"refresh, {label}: build+encode median {statistics.median(totals):.2f} ms "
              f"(build {statistics.median(builds):.2f} ms), max {max(totals):.1f} ms; "
              f"event median {statistics.median(sizes) / 1024:.1f} KiB over {runs} runs")
    producer.close()


def browser_figures(c: Cluster, open_topic: str) -> None:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.support.ui import WebDriverWait

    opts = webdriver.ChromeOptions()
    opts.binary_location = shutil.which("chromium") or "chromium"
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage"):
        opts.add_argument(arg)
    d = webdriver.Chrome(options=opts, service=Service(shutil.which("chromedriver")))
    try:
        d.get(f"http://127.0.0.1:{c.control.port}/ui")
        wait = WebDriverWait(d, 30)
        wait.until(lambda d: d.execute_script("return window.consoleRenderMs !== undefined"))

        def renders(n: int = 5) -> list[float]:
            out = []
            for _ in range(n):
                seen = d.execute_script("return window.consoleRenders")
                wait.until(lambda d, seen=seen: d.execute_script(
                    "return window.consoleRenders") > seen)
                out.append(d.execute_script("return window.consoleRenderMs"))
            return out

        collapsed = renders()
        d.execute_script("document.querySelector(arguments[0]).open = true",
                         f'details[data-topic="{open_topic}"]')
        opened = renders()
        print(f"page render of one snapshot, topics collapsed: median "
              f"{statistics.median(collapsed):.1f} ms; one topic open: median "
              f"{statistics.median(opened):.1f} ms")
    finally:
        d.quit()


if __name__ == "__main__":
    main()
