"""``kafka-emulator fault``: drive a running emulator's faults over its HTTP control plane.

    kafka-emulator fault --control http://127.0.0.1:8080 stop-broker 2
    kafka-emulator fault --control ... inject-error Produce NOT_LEADER_OR_FOLLOWER --count 3
    kafka-emulator fault --control ... schedule faults.jsonl

The control URL may also come from KAFKA_EMULATOR_CONTROL. Output is the control
plane's JSON; a refused request prints its message on stderr and exits 1.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import urllib.error
import urllib.request
from typing import Any

from emulator.tools.args import UsageParser, non_negative


def _int_or_name(text: str) -> int | str:
    return int(text) if text.lstrip("-").isdigit() else text


def build_parser() -> argparse.ArgumentParser:
    p = UsageParser(prog="kafka-emulator fault",
                                description="Inject faults into a running kafka-emulator "
                                "through its HTTP control plane (--control-port).")
    p.add_argument("--control", default=os.environ.get("KAFKA_EMULATOR_CONTROL"),
                   help="control plane URL, e.g. http://127.0.0.1:8080 "
                   "(default: $KAFKA_EMULATOR_CONTROL)")
    p.add_argument("--token", default=os.environ.get("KAFKA_EMULATOR_CONTROL_TOKEN"),
                   help="the control plane's bearer token, if it has one (default: "
                   "$KAFKA_EMULATOR_CONTROL_TOKEN)")
    p.add_argument("--timeout", type=float, default=30.0, help="seconds (default 30)")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND",
                         help="what to do (kafka-emulator fault COMMAND --help)")

    def broker_cmd(name: str, help_: str) -> argparse.ArgumentParser:
        sp = sub.add_parser(name, help=help_)
        sp.add_argument("broker", type=int, help="the broker's id")
        return sp

    sub.add_parser("cluster", help="print the cluster state")
    sub.add_parser("metrics", help="print the Prometheus metrics")
    sub.add_parser("list", help="print the faults in force")
    sub.add_parser("clear", help="clear every fault")
    stop = broker_cmd("stop-broker", "crash a broker")
    stop.add_argument("--controlled", action="store_true", help="controlled shutdown first")
    stop.add_argument("--fence-after-ms", type=int, metavar="MS",
                      help="the controller fences the crashed broker only after MS "
                      "(Kafka's broker session timeout); default: the emulator's "
                      "broker.session.timeout.ms config, else at once")
    broker_cmd("start-broker", "start a stopped broker")
    broker_cmd("controlled-shutdown", "move leadership off a broker, then stop it")
    for name, help_ in (("pause-follower", "stop a broker's replica fetchers"),
                        ("resume-follower", "undo pause-follower and slow-follower"),
                        ("slow-follower", "let a broker's fetchers fetch only every "
                                          "--delay-ms")):
        sp = broker_cmd(name, help_)
        sp.add_argument("--topic", help="only this topic's partitions (default: all)")
        sp.add_argument("--partition", type=int, help="only this partition of --topic")
        if name == "slow-follower":
            sp.add_argument("--delay-ms", type=int, required=True,
                            help="the fetchers fetch at most once per this many ms")
            sp.add_argument("--max-bytes", type=int, help="bytes per fetch")
    for name, help_ in (("cut-brokers", "cut the network between two brokers"),
                        ("heal-brokers", "restore it")):
        sp = sub.add_parser(name, help=help_)
        sp.add_argument("a", type=int, help="one broker's id")
        sp.add_argument("b", type=int, help="the other broker's id")
    broker_cmd("cut-clients", "cut clients off a broker").add_argument(
        "--host", help="only the clients connecting from this address (default: all)")
    broker_cmd("heal-clients", "let clients reach a broker again")
    sp = sub.add_parser("inject-error", help="answer the next requests of an API with an "
                        "error code")
    sp.add_argument("api", type=_int_or_name, help="API name or key, e.g. Produce or 0")
    sp.add_argument("error", type=_int_or_name, help="error name or code")
    sp.add_argument("--count", type=non_negative, default=1, help="how many requests (default 1)")
    sp.add_argument("--broker", type=int, help="only requests to this broker")
    sp.add_argument("--topic", help="only requests naming this topic; only its items "
                    "get the error")
    sp.add_argument("--partition", type=int, help="only this partition of --topic")
    sp = sub.add_parser("add-latency", help="delay every request of an API (0 removes)")
    sp.add_argument("api", type=_int_or_name, help="API name or key, e.g. Fetch or 1")
    sp.add_argument("ms", type=int, help="the delay in ms")
    sp.add_argument("--broker", type=int, help="only requests to this broker")
    sp = sub.add_parser("drop-response", help="apply requests of an API but drop responses")
    sp.add_argument("api", type=_int_or_name, help="API name or key, e.g. Produce or 0")
    sp.add_argument("--count", type=non_negative, default=1, help="how many responses (default 1)")
    sp.add_argument("--broker", type=int, help="only requests to this broker")
    sp = sub.add_parser("schedule", help="run a fault schedule file (JSON lines)")
    sp.add_argument("file", help="the schedule, or - for standard input")
    sub.add_parser("schedule-status", help="progress of the last schedule")
    return p


def request(base: str, method: str, path: str, body: Any = None, raw: bytes | None = None,
            timeout: float = 30.0, token: str | None = None) -> tuple[int, Any]:
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    req = urllib.request.Request(base.rstrip("/") + path, data=data, method=method,
                                 headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            status, payload, ctype = resp.status, resp.read(), resp.headers.get("Content-Type")
    except urllib.error.HTTPError as e:
        status, payload, ctype = e.code, e.read(), e.headers.get("Content-Type")
    if ctype and ctype.startswith("application/json"):
        return status, json.loads(payload)
    return status, payload.decode()


def _fault(args: argparse.Namespace) -> dict:
    op: dict[str, Any] = {"op": args.command.replace("-", "_")}
    for key in ("broker", "topic", "partition", "delay_ms", "max_bytes", "host", "api",
                "error", "count", "ms"):
        v = getattr(args, key, None)
        if v is not None:
            op[key] = v
    if args.command in ("cut-brokers", "heal-brokers"):
        op["brokers"] = [args.a, args.b]
    return op


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if not args.control:
        print("kafka-emulator fault: --control URL is required (or set "
              "KAFKA_EMULATOR_CONTROL)", file=sys.stderr)
        return 2
    cmd = args.command
    routes: dict[str, tuple[str, str]] = {
        "cluster": ("GET", "/cluster"), "metrics": ("GET", "/metrics"),
        "list": ("GET", "/faults"), "clear": ("DELETE", "/faults"),
        "schedule-status": ("GET", "/faults/schedule"),
    }
    body: Any = None
    raw: bytes | None = None
    if cmd in routes:
        method, path = routes[cmd]
    elif cmd == "stop-broker":
        method, path = "POST", f"/brokers/{args.broker}/stop"
        body = {"controlled": args.controlled}
        if args.fence_after_ms is not None:
            body["fence_after_ms"] = args.fence_after_ms
    elif cmd == "start-broker":
        method, path = "POST", f"/brokers/{args.broker}/start"
    elif cmd == "controlled-shutdown":
        method, path = "POST", f"/brokers/{args.broker}/controlled-shutdown"
    elif cmd == "schedule":
        method, path = "POST", "/faults/schedule"
        try:
            raw = sys.stdin.buffer.read() if args.file == "-" else open(args.file, "rb").read()
        except OSError as e:
            print(f"kafka-emulator fault: cannot read {args.file}: {e}", file=sys.stderr)
            return 1
    else:
        method, path, body = "POST", "/faults", _fault(args)
    try:
        status, payload = request(args.control, method, path, body, raw, args.timeout,
                                  args.token)
    except (urllib.error.URLError, OSError) as e:
        reason = getattr(e, "reason", e)
        print(f"kafka-emulator fault: cannot reach the control plane at {args.control}: "
              f"{reason}", file=sys.stderr)
        return 1
    if status >= 400:
        msg = payload.get("error", payload) if isinstance(payload, dict) else payload
        print(f"kafka-emulator fault: {msg}", file=sys.stderr)
        for problem in payload.get("problems", []) if isinstance(payload, dict) else []:
            print(f"  {problem}", file=sys.stderr)
        return 1
    print(payload if isinstance(payload, str) else json.dumps(payload, indent=1),
          end="" if isinstance(payload, str) else "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
