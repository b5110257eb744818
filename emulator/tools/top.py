"""``kafka-emulator top``: the web console's live view in a terminal.

    kafka-emulator top --control http://127.0.0.1:8080            refresh every second
    kafka-emulator top --control ... --once                        one frame, then exit
    kafka-emulator top --control ... --interval 0.5 --topics 50

It reads ``GET /ui/snapshot`` (the same snapshot the page gets over /events) and prints
brokers, throughput (records/s between two frames), reassignments with a progress bar
per moving replica, throttles, groups with lag, faults and the fault schedule, and the
topics (the first ``--topics`` of them, worst first). Plain ANSI: the screen is cleared
between frames only when standard output is a terminal. The control URL and token may
come from KAFKA_EMULATOR_CONTROL / KAFKA_EMULATOR_CONTROL_TOKEN, as for ``fault``.
"""

from __future__ import annotations

import os
import sys
import time
import urllib.error
from typing import Any, TextIO

from emulator.tools.args import UsageParser, non_negative, seconds
from emulator.tools.fault import request

CLEAR = "\x1b[H\x1b[2J"


def progress_bar(fraction: float, width: int = 24) -> str:
    """``[#########---------------]  37.5%``: how people expect long work to look."""
    fraction = min(max(fraction, 0.0), 1.0)
    filled = round(fraction * width)
    return f"[{'#' * filled}{'-' * (width - filled)}] {100 * fraction:5.1f}%"


def _rates(snap: dict, prev: dict | None) -> dict[int, tuple[float, float]]:
    if prev is None:
        return {}
    dt = max((snap["time_ms"] - prev["time_ms"]) / 1000, 1e-3)
    before = {b["id"]: b for b in prev["brokers"]}
    out = {}
    for b in snap["brokers"]:
        p = before.get(b["id"])
        if p is not None:
            out[b["id"]] = (max(b["produced"] - p["produced"], 0) / dt,
                            max(b["consumed"] - p["consumed"], 0) / dt)
    return out


def render(snap: dict, prev: dict | None = None, max_topics: int = 20) -> str:
    """One frame of the view, as text (pure: tests call it on a snapshot)."""
    lines = [f"kafka-emulator  cluster {snap['cluster_id']}  controller {snap['controller']} "
             f"(epoch {snap['controller_epoch']})  {len(snap['topics'])} topics  "
             f"{snap['partition_count']} partitions  snapshot {snap.get('build_ms', '?')} ms",
             "", "BROKERS  id  state     leaders replicas  in rec/s  out rec/s  throttle B/s"]
    rates = _rates(snap, prev)
    for b in snap["brokers"]:
        state = ("alive" if b["alive"] and not b["crashed"] else
                 "crashed" if b["crashed"] else "fenced")
        th = b["throttle"]
        limit = "/".join("-" if v is None else str(v)
                         for v in (th["leader_rate"], th["follower_rate"]))
        rin, rout = rates.get(b["id"], (0.0, 0.0))
        lines.append(f"{'*' if b['controller'] else ' ':>8} {b['id']:>3}  {state:<9} "
                     f"{b['leaders']:>7} {b['replicas']:>8} {rin:>9.0f} {rout:>10.0f}  {limit}")
    lines += ["", f"REASSIGNMENTS ({len(snap['reassignments'])} in flight)"]
    for r in snap["reassignments"]:
        lines.append(f"  {r['topic']}-{r['partition']}: replicas {r['replicas']} adding "
                     f"{r['adding']} removing {r['removing']}")
        for p in r["progress"]:
            lines.append(f"    replica {p['broker']}: {progress_bar(p['fraction'])} "
                         f"{p['bytes']} of {p['target_bytes']} bytes")
    for t in snap["throttled_topics"]:
        lines.append(f"  throttled {t['topic']}: leader {t['leader_replicas'] or '-'} "
                     f"follower {t['follower_replicas'] or '-'}")
    lines += ["", f"GROUPS ({len(snap['groups'])})"]
    for g in snap["groups"]:
        lines.append(f"  {g['group_id']} {g['type']} {g['state']} members "
                     f"{len(g['members'])} lag {g['total_lag']}")
    faults = {k: v for k, v in (snap.get("faults") or {}).items() if v}
    lines += ["", "FAULTS " + (", ".join(f"{k}={v}" for k, v in faults.items()) or "none")]
    sched = snap.get("schedule")
    if sched:
        done = len(sched["applied"])
        lines.append(f"  schedule seed {sched['seed']}: "
                     f"{progress_bar(done / sched['steps'] if sched['steps'] else 1.0)} "
                     f"{done}/{sched['steps']} steps{' done' if sched['done'] else ''}")
    topics = sorted(snap["topics"], key=lambda t: (-t["offline"], -t["under_replicated"],
                                                   t["internal"], t["name"]))
    lines += ["", f"TOPICS (worst first; {min(max_topics, len(topics))} of {len(topics)})"]
    for t in topics[:max_topics]:
        hw = sum(p[4] for p in t["partitions"])
        lines.append(f"  {t['name']:<40} {len(t['partitions']):>5} partitions  "
                     f"{t['offline']:>3} offline  {t['under_replicated']:>3} under-replicated  "
                     f"{hw:>10} records")
    return "\n".join(lines) + "\n"


def fetch(base: str, token: str | None) -> dict:
    status, payload = request(base, "GET", "/ui/snapshot", token=token, timeout=10)
    if status != 200:
        raise RuntimeError(payload.get("error") if isinstance(payload, dict) else payload)
    return payload


def build_parser() -> UsageParser:
    p = UsageParser(prog="kafka-emulator top",
                                description="The web console's live view in a terminal.")
    p.add_argument("--control", default=os.environ.get("KAFKA_EMULATOR_CONTROL"),
                   help="control plane URL, e.g. http://127.0.0.1:8080")
    p.add_argument("--token", default=os.environ.get("KAFKA_EMULATOR_CONTROL_TOKEN"),
                   help="the control plane's bearer token, if it has one (default: "
                   "$KAFKA_EMULATOR_CONTROL_TOKEN)")
    p.add_argument("--once", action="store_true", help="print one frame and exit")
    p.add_argument("--interval", type=seconds, default=1.0, help="seconds between frames")
    p.add_argument("--topics", type=non_negative, default=20, help="topics to list (worst first)")
    return p


def main(argv: list[str] | None = None, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    args = build_parser().parse_args(argv)
    if not args.control:
        print("kafka-emulator top: --control URL is required (or set "
              "KAFKA_EMULATOR_CONTROL)", file=sys.stderr)
        return 2
    prev: Any = None
    try:
        while True:
            snap = fetch(args.control, args.token)
            frame = render(snap, prev, args.topics)
            out.write((CLEAR if out.isatty() and not args.once else "") + frame)
            out.flush()
            if args.once:
                return 0
            prev = snap
            time.sleep(max(args.interval, 0.1))
    except (OSError, urllib.error.URLError, RuntimeError) as e:
        print(f"kafka-emulator top: {args.control}: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 0


if __name__ == "__main__":
    sys.exit(main())
