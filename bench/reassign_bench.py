"""Moving a 100 MiB partition: unthrottled, and throttled at 10 MiB/s (docs/reassignment.md).

A running emulator (``emulator.Cluster``, real listeners, wall clock) holds one
partition of 100 MiB on broker 1. The move to broker 2 is started over the
protocol with ``kafka-emulator reassign --execute`` (with ``--throttle`` for the
throttled run, which sets Kafka's leader/follower throttled rates and replica
lists) and timed until ListPartitionReassignments shows nothing in flight. The
same throttled move is also run on a manual clock (the domain alone) to show the
quota model without timer noise. Prints the figures; asserts nothing.

    python bench/reassign_bench.py [--mib 100] [--rate-mib 10]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from emulator import Cluster  # noqa: E402
from emulator.cluster.clock import ManualClock  # noqa: E402
from emulator.cluster.reassignment import alter_partition_reassignments  # noqa: E402
from emulator.cluster.state import Broker, ClusterState  # noqa: E402
from emulator.tools.kafka_admin import KafkaAdmin  # noqa: E402
from emulator.tools.reassign import main as reassign  # noqa: E402
from wire.records import build_batch  # noqa: E402

MIB = 1 << 20
RECORD = 64 * 1024  # one 64 KiB record per batch


def fill(state: ClusterState, topic: str, mib: int) -> int:
    batch = build_batch([(None, bytes(RECORD))], timestamp=state.now())  # retention keeps it
    p = state.get_partition(topic, 0)
    while p.leader_log.size_bytes < mib * MIB:
        r = state.append(p.leader, topic, 0, batch, 1)
        assert r.error == 0, r
    return p.leader_log.size_bytes


def timed_move(c: Cluster, topic: str, throttle: int | None) -> float:
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump({"version": 1, "partitions": [{"topic": topic, "partition": 0,
                                                 "replicas": [2]}]}, f)
    args = ["--bootstrap-server", c.bootstrap_servers, "--execute",
            "--reassignment-json-file", f.name]
    if throttle is not None:
        args += ["--throttle", str(throttle)]
    admin = KafkaAdmin(c.bootstrap_servers)
    start = time.monotonic()
    rc = reassign(args, out=io.StringIO())
    assert rc == 0
    while admin.list_partition_reassignments([(topic, 0)]):
        time.sleep(0.01)
    took = time.monotonic() - start
    admin.close()
    os.unlink(f.name)
    return took


def manual_clock_move(mib: int, rate: int) -> float:
    clock = ManualClock()
    s = ClusterState([Broker(1, "h", 1), Broker(2, "h", 2)], clock=clock)
    s.create_topic("t", assignments={0: [1]})
    size = fill(s, "t", mib)
    s.broker_overrides[2]["follower.replication.throttled.rate"] = str(rate)
    s.topics["t"].configs["follower.replication.throttled.replicas"] = "0:2"
    alter_partition_reassignments(s, [("t", [(0, [2])])])
    start = clock.now_ms()
    p = s.get_partition("t", 0)
    while p.adding_replicas or p.removing_replicas:
        clock.advance(50)  # the server's tick interval
        s.tick()
    assert p.logs[2].size_bytes == size
    return (clock.now_ms() - start) / 1000


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mib", type=int, default=100, help="partition size in MiB (100)")
    ap.add_argument("--rate-mib", type=int, default=10, help="throttle in MiB/s (10)")
    a = ap.parse_args()
    rate = a.rate_mib * MIB
    rows = []
    with Cluster(brokers=2, port=0) as c:
        for name, throttle in (("unthrottled", None), ("throttled", rate)):
            topic = f"move-{name}"
            c.call(lambda t=topic: c.state.create_topic(t, assignments={0: [1]}))
            size = c.call(lambda t=topic: fill(c.state, t, a.mib))
            took = timed_move(c, topic, throttle)
            rows.append((name, size, took))
    expected = a.mib * MIB / rate
    print(f"moving a {a.mib} MiB partition from broker 1 to broker 2 "
          f"(kafka-emulator reassign over TCP, wall clock)")
    for name, size, took in rows:
        line = f"  {name:<12} {size / MIB:7.1f} MiB in {took:7.2f} s  ({size / MIB / took:8.1f} MiB/s)"
        if name == "throttled":
            line += (f"  size/rate = {expected:.2f} s, off by "
                     f"{100 * (took - expected) / expected:+.1f}%")
        print(line)
    sim = manual_clock_move(a.mib, rate)
    print(f"  manual clock, throttled at {a.rate_mib} MiB/s: {sim:.2f} s "
          f"(off by {100 * (sim - expected) / expected:+.1f}%)")


if __name__ == "__main__":
    main()
