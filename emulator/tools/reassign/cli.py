"""``kafka-emulator reassign``'s command line: Kafka's options, their checks
(validateAndParseArgs) and exit codes."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TextIO

from emulator.tools.kafka_admin import AdminError, KafkaAdmin
from emulator.tools.reassign.command import Tool
from emulator.tools.reassign.json_format import (
    ACTIONS,
    TerseError,
    ToolError,
    UsageError,
    parse_execute_data,
    parse_reassignment_data,
    parse_topics_data,
)

# ---- arguments ------------------------------------------------------------------------------
# option -> (its argument's name, None for a flag; help): Kafka's options and words
OPTIONS: dict[str, tuple[str | None, str]] = {
    "generate": (None, "generate a candidate reassignment of the topics in "
                 "--topics-to-move-json-file to the brokers of --broker-list (only printed, "
                 "not executed)"),
    "execute": (None, "start the reassignment in --reassignment-json-file"),
    "verify": (None, "check whether the reassignment in --reassignment-json-file is done; "
               "once it is, remove its throttles"),
    "cancel": (None, "cancel the active reassignments of --reassignment-json-file"),
    "list": (None, "list every active partition reassignment"),
    "bootstrap-server": ("Server(s) to use for bootstrapping",
                         "the brokers to connect to, host:port[,host:port...]"),
    "bootstrap-controller": ("bootstrap controller to connect to",
                             "the controllers to connect to (with --cancel and --list)"),
    "command-config": ("Admin client property file",
                       "a properties file of admin client configs (client.id...)"),
    "reassignment-json-file": ("manual assignment json file path",
                               "the reassignment, as --generate prints it: "
                               '{"version":1,"partitions":[{"topic":...,"partition":...,'
                               '"replicas":[...]}]}'),
    "topics-to-move-json-file": ("topics to reassign json file path",
                                 'the topics for --generate: {"version":1,"topics":'
                                 '[{"topic":"foo"}]}'),
    "broker-list": ("brokerlist", 'the brokers --generate may place replicas on, "1,2,3"'),
    "disable-rack-aware": (None, "with --generate: ignore the brokers' racks"),
    "throttle": ("throttle", "with --execute: the replication throttle while data moves, "
                 "in bytes/s (default: none)"),
    "replica-alter-log-dirs-throttle": ("replicaAlterLogDirsThrottle",
                                        "with --execute: the throttle of moves between "
                                        "log directories of one broker, in bytes/s"),
    "timeout": ("timeout", "with --execute and --cancel: how long to wait for log "
                "directory moves to start, in ms (default 10000)"),
    "additional": (None, "with --execute: add to the reassignments in progress (or change "
                   "their throttle) instead of refusing"),
    "preserve-throttles": (None, "with --verify and --cancel: leave the throttles in place"),
    "disallow-replication-factor-change": (None, "with --execute: refuse a reassignment "
                                           "that changes a partition's replica count"),
    "progress": (None, "with --execute, --verify or --list: redraw the reassignments' "
                 "progress bars every second until they are done"),
}
REQUIRED = {"verify": ["reassignment-json-file"],
            "generate": ["topics-to-move-json-file", "broker-list"],
            "execute": ["reassignment-json-file"], "cancel": ["reassignment-json-file"],
            "list": []}
PERMITTED = {
    "verify": ["bootstrap-server", "command-config", "preserve-throttles", "progress"],
    "generate": ["bootstrap-server", "broker-list", "command-config", "disable-rack-aware"],
    "execute": ["additional", "bootstrap-server", "command-config", "throttle",
                "replica-alter-log-dirs-throttle", "timeout",
                "disallow-replication-factor-change", "progress"],
    "cancel": ["command-config", "preserve-throttles", "timeout"],
    "list": ["command-config", "progress"],
}
LONG_OPTIONS = {"throttle": -1, "replica-alter-log-dirs-throttle": -1, "timeout": 10000}


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(message)


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="kafka-emulator reassign", allow_abbrev=False, add_help=True,
        description="This tool helps to move topic partitions between replicas "
        "(kafka-reassign-partitions, over the Kafka protocol).")
    for name, (meta, help_) in OPTIONS.items():
        if meta is None:
            p.add_argument(f"--{name}", action="store_true", help=help_)
        else:
            p.add_argument(f"--{name}", metavar=meta, help=help_)
    return p


@dataclass
class Options:
    action: str
    values: dict[str, Any]

    def get(self, name: str) -> Any:
        return self.values.get(name)


def parse_args(argv: Sequence[str]) -> Options:
    """validateAndParseArgs: one action, one bootstrap kind, required and permitted options."""
    ns = build_parser().parse_args(list(argv))
    given = {k.replace("_", "-"): v for k, v in vars(ns).items() if v not in (None, False)}
    actions = [a for a in ACTIONS if a in given]
    if len(actions) != 1:
        raise UsageError("Command must include exactly one action: "
                         + ", ".join(f"--{a}" for a in ACTIONS))
    action = actions[0]
    if "bootstrap-server" in given and "bootstrap-controller" in given:
        raise UsageError("Please don't specify both --bootstrap-server and "
                         "--bootstrap-controller")
    if "bootstrap-server" not in given and "bootstrap-controller" not in given:
        raise UsageError("Please specify either --bootstrap-server or --bootstrap-controller")
    bootstrap_kind = "bootstrap-server" if "bootstrap-server" in given else "bootstrap-controller"
    for req in REQUIRED[action]:
        if req not in given:
            raise UsageError(f'Missing required argument "[{req}]"')
    permitted = set(PERMITTED[action]) | set(REQUIRED[action]) | {action}
    if action in ("cancel", "list"):
        permitted.add(bootstrap_kind)
    for opt in given:
        if opt not in permitted:
            raise UsageError(f'Option "[{opt}]" can\'t be used with action "[{action}]"')
    values = dict(given)
    for name, default in LONG_OPTIONS.items():
        raw = given.get(name)
        if raw is None:
            values[name] = default
            continue
        try:
            values[name] = int(raw)
        except ValueError:
            raise UsageError(f"Cannot parse argument '{raw}' of option {name}") from None
    return Options(action, values)


def read_file(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError as e:
        raise ToolError(f"{path} ({e.strerror})") from None


def load_properties(path: str | None) -> dict[str, str]:
    props: dict[str, str] = {}
    if path is None:
        return props
    for line in read_file(path).splitlines():
        line = line.strip()
        if not line or line[0] in "#!":
            continue
        sep = min((i for i in (line.find("="), line.find(":")) if i >= 0), default=-1)
        if sep > 0:
            props[line[:sep].strip()] = line[sep + 1:].strip()
    return props


def run(opts: Options, out: TextIO) -> None:
    """handleAction: files are read and parsed before anything is sent."""
    a = opts.action
    inputs: dict[str, str] = {}
    if a in ("verify", "execute", "cancel"):
        inputs["json"] = read_file(opts.get("reassignment-json-file"))
    if a == "generate":
        inputs["json"] = read_file(opts.get("topics-to-move-json-file"))
    props = load_properties(opts.get("command-config"))
    if a == "execute":
        parse_execute_data(inputs["json"])
    elif a in ("verify", "cancel"):
        parse_reassignment_data(inputs["json"])
    elif a == "generate":
        parse_topics_data(inputs["json"])
    bootstrap = opts.get("bootstrap-server") or opts.get("bootstrap-controller")
    admin = KafkaAdmin(bootstrap, client_id=props.get("client.id", "reassign-partitions-tool"))
    try:
        tool = Tool(admin, out)
        if opts.get("progress"):
            parts = (None if a == "list" else list(dict.fromkeys(
                p for p, _ in parse_reassignment_data(inputs["json"]).parts)))
            if a == "execute":
                tool.execute(inputs["json"], bool(opts.get("additional")), opts.get("throttle"),
                             opts.get("replica-alter-log-dirs-throttle"), opts.get("timeout"),
                             bool(opts.get("disallow-replication-factor-change")))
            tool.watch(parts)
            if a == "verify":
                tool.verify(inputs["json"], bool(opts.get("preserve-throttles")))
        elif a == "verify":
            tool.verify(inputs["json"], bool(opts.get("preserve-throttles")))
        elif a == "generate":
            tool.generate(inputs["json"], opts.get("broker-list"),
                          not opts.get("disable-rack-aware"))
        elif a == "execute":
            tool.execute(inputs["json"], bool(opts.get("additional")), opts.get("throttle"),
                         opts.get("replica-alter-log-dirs-throttle"), opts.get("timeout"),
                         bool(opts.get("disallow-replication-factor-change")))
        elif a == "cancel":
            tool.cancel(inputs["json"], bool(opts.get("preserve-throttles")),
                        opts.get("timeout"))
        else:
            tool.list()
    finally:
        admin.close()


def main(argv: Sequence[str] | None = None, out: TextIO | None = None,
         err: TextIO | None = None) -> int:
    out = out or sys.stdout
    err = err or sys.stderr
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv:
        err.write("This tool helps to move topic partitions between replicas.\n")
        build_parser().print_usage(err)
        return 1
    try:
        opts = parse_args(argv)
    except UsageError as e:
        err.write(f"{e}\n")
        build_parser().print_usage(err)
        return 1
    try:
        run(opts, out)
        return 0
    except TerseError as e:
        out.write(f"{e}\n")
    except (ToolError, AdminError) as e:
        out.write(f"Error: {e}\n")
    except OSError as e:
        out.write(f"Error: {e}\n")
    out.flush()
    return 1


if __name__ == "__main__":
    sys.exit(main())
