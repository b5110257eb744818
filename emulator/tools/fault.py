"""``kafka-emulator fault``: drive a running emulator's faults over its HTTP control plane.

    kafka-emulator fault --control http://127.0.0.1:8080 stop-broker 2
    kafka-emulator fault --control ... inject-error Produce NOT_LEADER_OR_FOLLOWER --count 3
    kafka-emulator fault --control ... schedule faults.jsonl

The control URL may also come from KAFKA_EMULATOR_CONTROL. Output is the control
plane's JSON; a refused request prints its message on stderr and exits 1. The commands,
their arguments and help are the operations table's (emulator.control.operations).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

from emulator.control.operations import OPERATIONS, Operation, http_request
from emulator.faults.ops import API, BOOL, BROKER, BROKERS, ERROR, INT, MATCH, STR, Field
from emulator.tools.args import UsageParser, non_negative


def _int_or_name(text: str) -> int | str:
    return int(text) if text.lstrip("-").isdigit() else text


# How a field of each kind is given on the command line (emulator.faults.ops' kinds).
_TYPES: dict[str, Callable[[str], Any]] = {
    BROKER: int, BROKERS: int, INT: non_negative, API: _int_or_name, ERROR: _int_or_name,
    STR: str, MATCH: str}


def _add_field(sp: argparse.ArgumentParser, name: str, f: Field) -> None:
    if f.kind == BOOL:
        sp.add_argument(f"--{name.replace('_', '-')}", action="store_true", default=None,
                        help=f.help)
    elif f.kind == BROKERS:
        sp.add_argument(name, type=int, nargs=2, metavar=("A", "B"), help=f.help)
    elif f.required and not f.option:
        sp.add_argument(name, type=_TYPES[f.kind], help=f.help)
    else:
        meta = "MS" if name.endswith("_ms") else None
        sp.add_argument(f"--{name.replace('_', '-')}", type=_TYPES[f.kind], metavar=meta,
                        required=f.required, help=f.help)


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
    for op in OPERATIONS:
        if op.cli is not None:
            sp = sub.add_parser(op.cli, help=op.summary, description=op.summary)
            sp.set_defaults(operation=op)
            for name, f in op.fields.items():
                _add_field(sp, name, f)
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


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if not args.control:
        print("kafka-emulator fault: --control URL is required (or set "
              "KAFKA_EMULATOR_CONTROL)", file=sys.stderr)
        return 2
    op: Operation = args.operation
    fields = {name: getattr(args, name) for name in op.fields}
    raw: bytes | None = None
    if op.name == "run_schedule":
        try:
            raw = (sys.stdin.buffer.read() if args.file == "-"
                   else Path(args.file).read_bytes())
        except OSError as e:
            print(f"kafka-emulator fault: cannot read {args.file}: {e}", file=sys.stderr)
            return 1
        fields = {}
    method, path, body = http_request(op.name, fields)
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
