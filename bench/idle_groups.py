"""What idle consumer groups cost the emulator (cost follows what changed: docs/architecture.md).

An in-process cluster (3 brokers) gets ``--groups`` consumer groups with members, half
classic (two members each, joined and synced: Stable) and half KIP-848 (one member
each), with session timeouts far beyond the measuring window so nothing is due. Then
nobody speaks for ``--seconds``: the server only ticks (every 50 ms) and the process's
CPU time over that window is what the idle groups cost. Also times one direct
``GroupCoordinator.tick()`` (what every JoinGroup, Heartbeat, ... handler pays after
its operation) and a KIP-848 heartbeat as its handler runs it (the operation, then the
tick), among all those groups. Prints; asserts nothing (the machine is shared: read
``uptime``).

    python bench/idle_groups.py [--groups 10000] [--seconds 10]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from emulator import Cluster  # noqa: E402

SESSION_MS = 1_800_000  # group.max.session.timeout.ms: nothing expires while measuring


def fill(gc, groups: int) -> None:
    """Half classic groups of two Stable members, half KIP-848 groups of one member."""
    for i in range(groups // 2):
        gid = f"classic-{i:06d}"
        protocols = [("range", b"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00")]
        members = []
        for _ in range(2):
            fut = gc.join_group(gid, "", None, "consumer", protocols, SESSION_MS, 60_000,
                                client_id="bench", version=3)
            members.append(fut)
        gc.tick()
        ids = [f.result["member_id"] for f in members if f.done]
        for f in members:
            r = f.result
            if r is not None and r["leader"] == r["member_id"]:
                gc.sync_group(gid, r["member_id"], r["generation_id"],
                              assignments=[(m, b"") for m in ids])
        for f in members:
            r = f.result
            if r is not None and r["leader"] != r["member_id"]:
                gc.sync_group(gid, r["member_id"], r["generation_id"])
    for i in range(groups - groups // 2):
        gc.consumer_group_heartbeat(f"consumer-{i:06d}", f"member-{i:06d}", 0,
                                    rebalance_timeout_ms=60_000,
                                    subscribed_topic_names=["bench-topic"],
                                    topic_partitions=[])
    gc.tick()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--groups", type=int, default=10_000)
    ap.add_argument("--seconds", type=float, default=10.0)
    args = ap.parse_args()
    cluster = Cluster(3, config={"group.consumer.session.timeout.ms": str(SESSION_MS),
                                 "group.initial.rebalance.delay.ms": "0"}).start()
    try:
        gc = cluster.server.services.groups
        t0 = time.perf_counter()
        cluster.call(lambda: fill(gc, args.groups))
        states: dict[str, int] = {}
        for g in list(gc.groups.values()):
            states[g.state] = states.get(g.state, 0) + 1
        print(f"groups: {len(gc.groups)} {states} (filled in "
              f"{time.perf_counter() - t0:.1f} s)")
        time.sleep(1.0)  # let the fill's changes settle
        cpu0, wall0 = time.process_time(), time.perf_counter()
        time.sleep(args.seconds)
        cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
        print(f"idle: {cpu / wall * 1000:.1f} ms CPU per second over {wall:.1f} s")

        def one_tick() -> float:
            t = time.perf_counter()
            for _ in range(20):
                gc.tick()
            return (time.perf_counter() - t) / 20

        print(f"GroupCoordinator.tick(): {cluster.call(one_tick) * 1e6:.0f} us")

        def heartbeats() -> float:
            n = min(200, args.groups - args.groups // 2)
            t = time.perf_counter()
            for i in range(n):
                r = gc.consumer_group_heartbeat(f"consumer-{i:06d}", f"member-{i:06d}", 1)
                assert r["error_code"] == 0, r
                gc.tick()
            return (time.perf_counter() - t) / n

        print(f"ConsumerGroupHeartbeat (operation + tick): "
              f"{cluster.call(heartbeats) * 1e6:.0f} us")
        print(f"load average: {os.getloadavg()}")
    finally:
        cluster.stop()


if __name__ == "__main__":
    main()
