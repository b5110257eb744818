"""The ``kafka-emulator`` command.

``kafka-emulator [options]`` runs a cluster until SIGINT/SIGTERM and prints one
line with the bootstrap servers once every listener is open. Other tools are
subcommands (``kafka-emulator reassign ...``, ``kafka-emulator fault ...``),
each in its own module under ``emulator.tools``.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import logging
import os
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from emulator.versions import SUPPORTED_RELEASES

if TYPE_CHECKING:
    from emulator.faults import FaultSchedule
    from emulator.runtime import Cluster

SUBCOMMANDS = {
    "reassign": "emulator.tools.reassign",
    "fault": "emulator.tools.fault",
}


def _env(name: str, default: str | None = None) -> str | None:
    return os.environ.get(f"KAFKA_EMULATOR_{name}", default)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="kafka-emulator",
        description="Run an emulated Kafka cluster of N brokers in one process. "
        f"Subcommands: {', '.join(SUBCOMMANDS)} (kafka-emulator SUBCOMMAND --help).",
    )
    p.add_argument("--brokers", type=int, default=int(_env("BROKERS", "3")),
                   help="number of brokers (default 3)")
    p.add_argument("--host", default=_env("HOST", "127.0.0.1"),
                   help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=int(_env("PORT", "9092")),
                   help="base port: broker i listens on BASE+i (default 9092; 0 = free ports)")
    p.add_argument("--advertised-host", default=_env("ADVERTISED_HOST"),
                   help="host name given to clients in metadata (default: --host)")
    p.add_argument("--advertised-port", type=int, default=int(_env("ADVERTISED_PORT", "0")),
                   help="base port advertised to clients when it differs from --port "
                   "(port mapping); broker i is advertised on BASE+i")
    p.add_argument("--control-port", type=int,
                   default=int(_env("CONTROL_PORT")) if _env("CONTROL_PORT") else None,
                   help="port of the HTTP control plane (default: off)")
    p.add_argument("--kafka-version", default=_env("KAFKA_VERSION", "4.1"),
                   choices=SUPPORTED_RELEASES,
                   help="advertise the API version ranges of this Kafka release (default 4.1)")
    p.add_argument("--config", action="append", default=[], metavar="KEY=VALUE",
                   help="broker config override, e.g. --config num.partitions=3 (repeatable)")
    p.add_argument("--seed", type=int, default=int(_env("SEED", "0")),
                   help="seed of the cluster's random choices (default 0)")
    p.add_argument("--fault-schedule", default=_env("FAULT_SCHEDULE"), metavar="FILE",
                   help="a fault schedule (JSON lines or {seed, faults}) to run from the "
                   "moment the cluster is ready; validated whole before anything listens")
    p.add_argument("--log-level", default=_env("LOG_LEVEL", "INFO"),
                   choices=["DEBUG", "INFO", "WARNING", "ERROR"])
    return p


def parse_configs(items: list[str]) -> dict[str, str]:
    out = {}
    env = _env("CONFIG")
    for item in ([e for e in env.split(",") if e] if env else []) + items:
        if "=" not in item:
            raise SystemExit(f"kafka-emulator: --config expects KEY=VALUE, got {item!r}")
        k, v = item.split("=", 1)
        out[k.strip()] = v.strip()
    return out


async def serve(args: argparse.Namespace) -> int:
    from emulator.runtime import Cluster

    adv_ports = {}
    if args.advertised_port:
        adv_ports = {1 + i: args.advertised_port + i for i in range(args.brokers)}
    cluster = Cluster(
        args.brokers, host=args.host, port=args.port, advertised_host=args.advertised_host,
        advertised_ports=adv_ports, control_port=args.control_port,
        kafka_version=args.kafka_version, config=parse_configs(args.config), seed=args.seed,
    )
    schedule = None
    if args.fault_schedule:
        # Checked before any port opens: a typo in a CI job's schedule must fail the
        # job at once, not after its tests ran without the faults they were meant to see.
        schedule = _load_schedule(args.fault_schedule, cluster.broker_ids)
        if schedule is None:
            return 2
    try:
        await cluster.start_async()
    except OSError as e:
        print(f"kafka-emulator: cannot listen: {e}", file=sys.stderr)
        return 1
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    extra = f" control http://{args.host}:{cluster.control.port}" if cluster.control else ""
    print(f"kafka-emulator ready: bootstrap servers {cluster.bootstrap_servers}{extra}",
          flush=True)
    if schedule is not None:
        _start_schedule(cluster, schedule, args.fault_schedule)
    await stop.wait()
    await cluster.stop_async()
    # Connections accepted while the listeners were closing: end them before the loop.
    pending = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
    for t in pending:
        t.cancel()
    await asyncio.gather(*pending, return_exceptions=True)
    logging.getLogger("kafka_emulator").info("stopped")
    return 0


def _load_schedule(path: str, broker_ids: list[int]) -> FaultSchedule | None:
    """The parsed schedule, or None after printing why it cannot run."""
    from emulator.faults import FaultSchedule, ScheduleError

    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as e:
        print(f"kafka-emulator: --fault-schedule: {e}", file=sys.stderr)
        return None
    try:
        return FaultSchedule.parse(text, broker_ids)
    except ScheduleError as e:
        print(f"kafka-emulator: --fault-schedule {path}: {e}", file=sys.stderr)
        return None


def _start_schedule(cluster: Cluster, schedule: FaultSchedule, path: str) -> None:
    """Run the schedule from now; with a control plane its progress is
    GET /faults/schedule, as for one posted there."""
    from emulator.server.control import start_schedule

    logging.getLogger("kafka_emulator.faults").info(
        "fault schedule %s: %d steps over %.1f s (seed %d)", path, len(schedule.steps),
        schedule.steps[-1].at_ms / 1000, schedule.seed)
    runner, task = start_schedule(cluster, schedule)
    if cluster.control is not None:
        cluster.control.schedule, cluster.control.schedule_task = runner, task


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in SUBCOMMANDS:
        mod = importlib.import_module(SUBCOMMANDS[argv[0]])
        return int(mod.main(argv[1:]) or 0)
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=args.log_level,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    from emulator.runtime import new_event_loop

    loop = new_event_loop()
    try:
        return loop.run_until_complete(serve(args))
    finally:
        loop.close()


if __name__ == "__main__":
    sys.exit(main())
