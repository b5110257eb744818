"""The ``kafka-emulator`` command.

``kafka-emulator [options]`` runs a cluster until SIGINT/SIGTERM and prints one
line with the bootstrap servers once every listener is open. Other tools are
subcommands (``kafka-emulator reassign ...``, ``kafka-emulator fault ...``),
each in its own module under ``emulator.tools``.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import importlib
import logging
import os
import signal
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from emulator.fidelity import FIDELITIES
from emulator.lazy_dataclasses import lazy_methods
from emulator.tools.args import (
    UsageParser,
    adversary_scale,
    broker_count,
    fidelity,
    port,
    whole,
)
from emulator.versions import DEFAULT_RELEASE, SUPPORTED_RELEASES

if TYPE_CHECKING:
    from emulator.faults import FaultSchedule
    from emulator.security.config import SecurityConfig

SUBCOMMANDS = {
    "reassign": "emulator.tools.reassign",
    "fault": "emulator.tools.fault",
    "top": "emulator.tools.top",
    "shrink": "emulator.tools.shrink",
}


# The emulator process's cyclic GC thresholds (CPython's default is (700, 10, 10)).
# A young collection every 700 allocations catches the objects of the requests in
# flight (a produce request carrying thousands of partitions holds thousands of
# dicts): promoted, they make the full collections come sooner, and a full
# collection walks every partition's objects (150 ms at 10,000 partitions). A
# larger young generation lets those objects die young (docs/scale.md; bench/scale.py,
# bench/produce_path.py --multi): the same collections, far fewer full ones.
GC_THRESHOLDS = (10_000, 10, 10)



def _env(name: str, default: str | None = None) -> str | None:
    return os.environ.get(f"KAFKA_EMULATOR_{name}", default)


def _env_list(name: str) -> list[str]:
    return [v.strip() for v in (_env(name) or "").split(",") if v.strip()]


def sasl_users(items: list[str], option: str = "--sasl-user") -> dict[str, str]:
    """NAME:PASSWORD items (``option``'s values) as a dict; ValueError names a bad one."""
    users = {}
    for item in items:
        name, sep, password = item.partition(":")
        if not sep or not name:
            raise ValueError(f"{option} expects NAME:PASSWORD, got {item!r}")
        users[name] = password
    return users


def security_config(args: argparse.Namespace, config: dict[str, str]) -> SecurityConfig:
    """The security options, with Kafka's own config names honoured from --config."""
    from emulator.security.config import SecurityConfig

    users = sasl_users(args.sasl_user)
    supers = list(args.super_user) + [
        u.strip() for u in config.get("super.users", "").split(";") if u.strip()]
    return SecurityConfig(
        listeners=args.listeners, sasl_users=users, super_users=supers,
        authorizer=args.authorizer,
        allow_everyone_if_no_acl_found=config.get(
            "allow.everyone.if.no.acl.found", "false").lower() == "true",
        tls_dir=args.tls_dir, tls_cert=args.tls_cert, tls_key=args.tls_key,
        tls_client_auth=config.get("ssl.client.auth", args.tls_client_auth),
        connections_max_reauth_ms=int(config.get("connections.max.reauth.ms", "0")),
        protocol_map=config.get("listener.security.protocol.map"))


def _users(items: list[str], option: str) -> dict[str, str]:
    try:
        return sasl_users(items, option)
    except ValueError as e:
        raise SystemExit(f"kafka-emulator: {e}") from None


def event_loop(text: str) -> str:
    """--event-loop's value (and KAFKA_EMULATOR_EVENT_LOOP's, a string default that goes
    through ``type`` too, so a bad variable is a usage error like a bad option)."""
    if text not in ("asyncio", "uvloop"):
        raise argparse.ArgumentTypeError(f"expected asyncio or uvloop, got {text!r}")
    return text


def build_parser() -> argparse.ArgumentParser:
    p = UsageParser(
        prog="kafka-emulator",
        description="Run an emulated Kafka cluster of N brokers in one process. "
        f"Subcommands: {', '.join(SUBCOMMANDS)} (kafka-emulator SUBCOMMAND --help).",
    )
    # String defaults (the environment's) go through ``type`` too: a bad variable is
    # a usage error like a bad option.
    p.add_argument("--brokers", type=broker_count, default=_env("BROKERS", "3"),
                   help="number of brokers (default 3)")
    p.add_argument("--host", default=_env("HOST", "127.0.0.1"),
                   help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=port, default=_env("PORT", "9092"),
                   help="base port: broker i listens on BASE+i-1, broker 1 on BASE (default "
                   "9092; 0 = free ports)")
    p.add_argument("--advertised-host", default=_env("ADVERTISED_HOST"),
                   help="host name given to clients in metadata (default: --host)")
    p.add_argument("--advertised-port", type=port, default=_env("ADVERTISED_PORT", "0"),
                   help="base port advertised to clients when it differs from --port "
                   "(port mapping); broker i is advertised on BASE+i-1")
    p.add_argument("--control-port", type=port, default=_env("CONTROL_PORT") or None,
                   help="port of the HTTP control plane (default: off)")
    p.add_argument("--control-host", default=_env("CONTROL_HOST", "127.0.0.1"),
                   help="address of the HTTP control plane (default 127.0.0.1, whatever "
                   "--host is: it can stop brokers; 0.0.0.0 only with --control-token)")
    p.add_argument("--control-token", default=_env("CONTROL_TOKEN"),
                   help="require 'Authorization: Bearer TOKEN' on the control plane "
                   "(env KAFKA_EMULATOR_CONTROL_TOKEN)")
    p.add_argument("--schema-registry-port", type=port,
                   default=_env("SCHEMA_REGISTRY_PORT") or None,
                   help="serve Confluent's Schema Registry REST API on this port, state in "
                   "the _schemas topic (default: off; docs/schema-registry.md)")
    p.add_argument("--schema-registry-host", default=_env("SCHEMA_REGISTRY_HOST", "127.0.0.1"),
                   help="address of the schema registry (default 127.0.0.1)")
    p.add_argument("--schema-registry-user", action="append",
                   default=_env_list("SCHEMA_REGISTRY_USERS"), metavar="NAME:PASSWORD",
                   help="require HTTP basic auth on the schema registry, as the clients' "
                   "basic.auth.user.info sends it (repeatable; "
                   "KAFKA_EMULATOR_SCHEMA_REGISTRY_USERS=a:x,b:y)")
    p.add_argument("--kafka-version", default=_env("KAFKA_VERSION", DEFAULT_RELEASE),
                   choices=SUPPORTED_RELEASES,
                   help="advertise the API versions and features of this Kafka release "
                   f"(default {DEFAULT_RELEASE})")
    p.add_argument("--fidelity", type=fidelity, default=_env("FIDELITY", "fast"),
                   metavar="{" + ",".join(FIDELITIES) + "}",
                   help="fast (default): timing made for tests - metadata known everywhere "
                        "at once, a crashed broker fenced at once, no initial rebalance "
                        "delay; kafka: every delay of Kafka's that could make a test falsely "
                        "green (docs/fidelity.md); adversarial: kafka, plus the races Kafka "
                        "permits, often, replayed by --seed (KAFKA_EMULATOR_FIDELITY)")
    p.add_argument("--config", action="append", default=[], metavar="KEY=VALUE",
                   help="broker config override, e.g. --config num.partitions=3 (repeatable)")
    p.add_argument("--data-dir", default=_env("DATA_DIR"), metavar="DIR",
                   help="keep topics, logs and coordinator state in DIR across restarts "
                        "(env KAFKA_EMULATOR_DATA_DIR; docs/storage.md); default: in memory")
    p.add_argument("--seed", type=whole, default=_env("SEED", "0"),
                   help="seed of the cluster's random choices and of --fidelity "
                   "adversarial's faults (default 0)")
    p.add_argument("--adversary-scale", type=adversary_scale,
                   default=_env("ADVERSARY_SCALE"), metavar="KIND=FACTOR,...",
                   help="--fidelity adversarial: multiply its fault rates, all of them "
                   "(all=0.5) or per kind (leader_move=2,kick=0); kinds in "
                   "docs/fidelity.md (env KAFKA_EMULATOR_ADVERSARY_SCALE)")
    p.add_argument("--fault-schedule", default=_env("FAULT_SCHEDULE"), metavar="FILE",
                   help="a fault schedule (JSON lines or {seed, faults}) to run from the "
                   "moment the cluster is ready; validated whole before anything listens")
    sec = p.add_argument_group("security (docs/security.md; none of these: PLAINTEXT, no checks)")
    sec.add_argument("--listeners", default=_env("LISTENERS"), metavar="LIST",
                     help="Kafka's listeners, e.g. PLAINTEXT://127.0.0.1:9092,"
                     "SASL_SSL://127.0.0.1:9192 (SSL, SASL_PLAINTEXT too); the port is broker "
                     "1's, broker i listens on port+i-1 of every listener; replaces --port")
    sec.add_argument("--sasl-user", action="append", default=_env_list("SASL_USERS"),
                     metavar="NAME:PASSWORD",
                     help="a user for PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512 (repeatable; "
                     "KAFKA_EMULATOR_SASL_USERS=a:x,b:y)")
    sec.add_argument("--super-user", action="append", default=_env_list("SUPER_USERS"),
                     metavar="NAME", help="Kafka's super.users as User:NAME (repeatable)")
    sec.add_argument("--authorizer", action="store_true",
                     default=_env("AUTHORIZER", "") not in ("", "0", "false"),
                     help="check ACLs as Kafka's StandardAuthorizer with "
                     "allow.everyone.if.no.acl.found=false")
    sec.add_argument("--tls-dir", default=_env("TLS_DIR"), metavar="DIR",
                     help="where the generated CA (DIR/ca.pem, DIR/truststore.p12) and "
                     "certificates go (default: a temporary directory)")
    sec.add_argument("--tls-cert", default=_env("TLS_CERT"), metavar="PEM",
                     help="use this broker certificate (chain) instead of a generated one")
    sec.add_argument("--tls-key", default=_env("TLS_KEY"), metavar="PEM",
                     help="the private key of --tls-cert")
    sec.add_argument("--tls-client-auth", default=_env("TLS_CLIENT_AUTH", "none"),
                     choices=["none", "requested", "required"],
                     help="Kafka's ssl.client.auth: required = mutual TLS, the principal is "
                     "the client certificate's subject")
    p.add_argument("--event-loop", type=event_loop, default=_env("EVENT_LOOP") or "asyncio",
                   metavar="{asyncio,uvloop}",
                   help="the event loop to run on (default asyncio, the standard library's: "
                   "~2 MB less at the same start; uvloop saves a few percent of CPU per "
                   "small request where it is installed; env KAFKA_EMULATOR_EVENT_LOOP)")
    p.add_argument("--log-level", default=_env("LOG_LEVEL", "INFO"),
                   choices=["DEBUG", "INFO", "WARNING", "ERROR"],
                   help="the emulator's log level on stderr (default INFO; env "
                   "KAFKA_EMULATOR_LOG_LEVEL)")
    return p


def check_args(p: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """What one option's type cannot check: ports past the last one, KEY=VALUE and
    NAME:PASSWORD lists (a usage error each, before anything starts)."""
    for name in ("port", "advertised_port"):
        base = getattr(args, name)
        if base and base + args.brokers - 1 > 65535:
            p.error(f"argument --{name.replace('_', '-')}: {args.brokers} brokers from port "
                    f"{base} would go past port 65535")
    try:
        parse_configs(args.config)
        sasl_users(args.sasl_user)
    except ValueError as e:
        p.error(f"argument {e}")


def parse_configs(items: list[str]) -> dict[str, str]:
    out = {}
    env = _env("CONFIG")
    for item in ([e for e in env.split(",") if e] if env else []) + items:
        if "=" not in item:
            raise ValueError(f"--config expects KEY=VALUE, got {item!r}")
        k, v = item.split("=", 1)
        out[k.strip()] = v.strip()
    return out


async def serve(args: argparse.Namespace) -> int:
    from emulator.cluster.configs import validate_broker_configs
    from emulator.runtime import Cluster, stop_serving

    startup_errors = tuple(kind for kind, _, _ in refusals())

    adv_ports = {}
    if args.advertised_port:
        adv_ports = {1 + i: args.advertised_port + i for i in range(args.brokers)}
    config = parse_configs(args.config)
    try:
        # As Kafka checks server.properties at start: a value that is not of its key's
        # type, out of its range or none of its values is refused before anything reads
        # it (the security options parse some) and before any port opens.
        validate_broker_configs(config)
    except startup_errors as e:
        return _refused(e)
    schedule = None
    if args.fault_schedule:
        # Checked before any port opens: a typo in a CI job's schedule must fail the
        # job at once, not after its tests ran without the faults they were meant to see.
        schedule = _load_schedule(args.fault_schedule, list(range(1, args.brokers + 1)))
        if schedule is None:
            return 2
    # An adversary section (a shrunk failing run) brings its own fidelity and seed.
    scripted = schedule is not None and schedule.fidelity is not None
    try:
        cluster = Cluster(
            args.brokers, host=args.host, port=args.port, advertised_host=args.advertised_host,
            advertised_ports=adv_ports, control_port=args.control_port,
            control_host=args.control_host, control_token=args.control_token,
            kafka_version=args.kafka_version, config=config,
            seed=(args.seed or None) if scripted else args.seed,
            security=security_config(args, config), data_dir=args.data_dir or None,
            fidelity=None if scripted and args.fidelity == "fast" else args.fidelity,
            schema_registry_port=args.schema_registry_port, fault_schedule=schedule,
            adversary_scale=args.adversary_scale,
            schema_registry_host=args.schema_registry_host,
            schema_registry_users=_users(args.schema_registry_user, "--schema-registry-user"),
        )
    except startup_errors as e:
        return _refused(e)
    except ValueError as e:  # the schedule's adversary section against --fidelity/--seed
        print(f"kafka-emulator: --fault-schedule: {e}", file=sys.stderr)
        return 2
    if args.schema_registry_port is not None:
        # Before any port opens, as every refusal: a missing extra is one line, not a
        # cluster started and torn down (imported only when asked for: h11, the parsers).
        from emulator.server.schema_registry import check_dependencies

        try:
            check_dependencies()
        except RuntimeError as e:
            return _refused(e)
    try:
        await cluster.start_async()
    except startup_errors as e:
        # Whatever did start (listeners, their tasks) stops before the one line: a task
        # left pending when the loop closes is reported as destroyed, on stderr.
        await stop_serving(cluster)
        return _refused(e)
    stop = asyncio.Event()
    _on_stop_signals(asyncio.get_running_loop(), stop)
    extra = (f" control http://{_url_host(args.control_host)}:{cluster.control.port}"
             if cluster.control else "")
    if cluster.schema_registry is not None:
        extra += f" schema-registry {cluster.schema_registry_url}"
    if len(cluster.listener_specs) > 1:
        extra += "".join(f" {sp.name} {cluster.bootstrap_for(sp.name)}"
                         for sp in cluster.listener_specs[1:])
    if cluster.tls is not None:
        extra += f" tls-ca {cluster.tls.trust} truststore {cluster.tls.truststore}"
    print(f"kafka-emulator ready: bootstrap servers {cluster.bootstrap_servers}{extra}",
          flush=True)
    # What start-up made lives as long as the process: out of the collector's way for
    # good (gc.freeze), then collection as main() set it (disabled while starting).
    gc.freeze()
    gc.enable()
    if schedule is not None:  # started with the cluster (Cluster(fault_schedule=...))
        _log_schedule(schedule, args.fault_schedule)
    await stop.wait()
    await stop_serving(cluster)
    logging.getLogger("kafka_emulator").info("stopped")
    return 0


def refusals() -> tuple[tuple[type[Exception], str, int], ...]:
    """What stops the emulator before it is ready: (error, what to blame, exit status),
    the first that matches; one line each, never a traceback. Imported here, not with the
    module: ``kafka-emulator --help`` and the subcommands need none of the domain."""
    from emulator.cluster.configs import ConfigError
    from emulator.security.listeners import ListenerError
    from emulator.storage.disk import StorageError

    return ((ListenerError, "--listeners: ", 2), (StorageError, "--data-dir: ", 2),
            (ConfigError, "--config: ", 2), (OSError, "cannot listen: ", 1),
            (RuntimeError, "", 2))


def _refused(e: Exception) -> int:
    what, status = next((w, s) for kind, w, s in refusals() if isinstance(e, kind))
    print(f"kafka-emulator: {what}{e}", file=sys.stderr)
    return status


STOP_GRACE_S = 10.0


def _url_host(host: str) -> str:
    """A host for a URL printed to users: a wildcard address means this machine."""
    if host in ("0.0.0.0", "::", ""):
        return "127.0.0.1"
    return f"[{host}]" if ":" in host else host


def _on_stop_signals(loop: asyncio.AbstractEventLoop, stop: asyncio.Event) -> None:
    """SIGINT/SIGTERM stop the cluster cleanly, and always stop the process.

    A Python-level handler runs between bytecodes of the main thread even while the loop
    is busy, where ``loop.add_signal_handler`` would wait for the loop to come back. The
    first signal asks the loop to stop and arms a timer that ends the process if the
    clean stop has not finished within STOP_GRACE_S; a second signal ends it at once.
    """
    received: list[int] = []

    def handler(signum: int, _frame: object) -> None:
        received.append(signum)
        if len(received) > 1:
            os._exit(128 + signum)
        logging.getLogger("kafka_emulator").info("signal %d: stopping", signum)
        timer = threading.Timer(STOP_GRACE_S, _give_up, (signum,))
        timer.daemon = True
        timer.start()
        loop.call_soon_threadsafe(stop.set)

    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, handler)


def _give_up(signum: int) -> None:
    print(f"kafka-emulator: no clean stop within {STOP_GRACE_S:.0f} s of signal {signum}; "
          "exiting", file=sys.stderr, flush=True)
    os._exit(128 + signum)


def _load_schedule(path: str, broker_ids: list[int]) -> FaultSchedule | None:
    """The parsed schedule, or None after printing why it cannot run."""
    from emulator.faults import FaultSchedule, ScheduleError

    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as e:
        print(f"kafka-emulator: --fault-schedule: {e}", file=sys.stderr)
        return None
    try:
        return FaultSchedule.parse(text, broker_ids, at_start=True)
    except ScheduleError as e:  # every problem, on the one line of a refusal
        print(f"kafka-emulator: --fault-schedule {path}: rejected: {'; '.join(e.problems)}",
              file=sys.stderr)
        return None


def _log_schedule(schedule: FaultSchedule, path: str) -> None:
    """Say what the schedule the cluster started with runs; with a control plane its
    progress is GET /faults/schedule, as for one posted there."""
    log = logging.getLogger("kafka_emulator.faults")
    if schedule.steps:
        log.info("fault schedule %s: %d steps over %.1f s (seed %d)", path,
                 len(schedule.steps), schedule.steps[-1].at_ms / 1000, schedule.seed)
    if schedule.adversary is not None:
        log.info("fault schedule %s: adversarial, seed %d, exactly these %d adversary "
                 "faults: %s", path, schedule.seed, len(schedule.adversary),
                 "; ".join(f.describe() for f in schedule.adversary) or "none")


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in SUBCOMMANDS:
        mod = importlib.import_module(SUBCOMMANDS[argv[0]])
        return int(mod.main(argv[1:]) or 0)
    parser = build_parser()
    args = parser.parse_args(argv)
    check_args(parser, args)
    logging.basicConfig(level=args.log_level,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    # No collection while the domain's modules load and the cluster starts: they
    # allocate hundreds of thousands of objects that all live as long as the process
    # (classes, dataclass methods, tables), which the collector would trace again and
    # again for nothing (a quarter of the start). serve() freezes them once ready.
    gc.disable()
    # The dataclasses imported while the command runs compile each generated method
    # when it is first used, not at import (emulator.lazy_dataclasses: a third of the
    # start went to compiling ~580 methods, of which ~25 run before the ready line).
    try:
        with lazy_methods():
            from emulator.runtime import new_event_loop

            gc.set_threshold(*GC_THRESHOLDS)
            loop = new_event_loop(args.event_loop)
            logging.getLogger("kafka_emulator").debug("event loop: %s", type(loop).__module__)
            try:
                return loop.run_until_complete(serve(args))
            finally:
                loop.close()
    finally:
        gc.enable()  # a refusal before ready returns here (main() may run in-process)


if __name__ == "__main__":
    sys.exit(main())
