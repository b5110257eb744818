"""The web console with 1,000 partitions: what a refresh costs (issue 17).

A running emulator (3 brokers) gets ``--topics`` topics of ``--partitions`` partitions
each (default 10 x 100 = 1,000, replication factor 3) with a few records in every
partition and a consumer group's committed offsets on one topic. Printed:

- the snapshot's build time (emulator.cluster.console, on the cluster's loop: it holds
  the brokers' work up while it runs), median and max over ``--runs``;
- the size of one snapshot as the /events stream sends it;
- with ``--browser`` (Debian's Chromium, scripts/setup.d/60-chromium.sh): the page's
  own render time of one snapshot (window.consoleRenderMs) with every topic collapsed
  and with one 100-partition topic open.

Prints figures; asserts nothing.

    python bench/console.py [--topics 10] [--partitions 100] [--runs 50] [--browser]
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

        times = []
        for _ in range(args.runs):
            snap = c.call(c.control.snapshot)
            times.append(snap["build_ms"])
        size = len(json.dumps(snap, separators=(",", ":")))
        print(f"partitions: {snap['partition_count']} in {len(snap['topics'])} topics, "
              f"{len(snap['groups'])} group(s)")
        print(f"snapshot build: median {statistics.median(times):.2f} ms, "
              f"max {max(times):.2f} ms over {args.runs} runs")
        print(f"snapshot size on /events: {size / 1024:.0f} KiB per event")
        if args.browser:
            browser_figures(c, names[0])


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
