"""``emulator.Cluster``: a running emulated cluster, in-process: what it is made of,
its addresses, starting and stopping it (its control-facing half, the operations, is
emulator/runtime/control.py).

Usable as a context manager from plain code (the event loop runs in a background
thread) and from asyncio code (it runs in the caller's loop)::

    with Cluster(brokers=3) as c:
        producer = Producer({"bootstrap.servers": c.bootstrap_servers})

    async with Cluster() as c:
        ...

Control calls (``stop_broker``, ``start_broker``, ``call``) are safe from any
thread: they run on the cluster's own loop.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import os
import threading
from typing import TYPE_CHECKING, Any

from emulator.cluster import configs
from emulator.cluster.events import BrokerHalted, LogDirFailed, observes
from emulator.cluster.state import Broker, ClusterState
from emulator.fidelity import Fidelity, default_mode
from emulator.runtime.control import ClusterControl, wire_faults
from emulator.security.config import Security, SecurityConfig
from emulator.versions import DEFAULT_RELEASE

if TYPE_CHECKING:
    # Imported where used: TLS (cryptography's x509) only for SSL listeners, the
    # adversary only under --fidelity adversarial (docs/scale.md, start-up).
    from emulator.faults.adversary import Adversary
    from emulator.faults.schedule import FaultSchedule
    from emulator.server.tls import TlsFiles
    from emulator.server.watch import Watch

# emulator.faults.adversary.SCALE_ENV (tests/test_start_imports.py holds them equal)
ADVERSARY_SCALE_ENV = "KAFKA_EMULATOR_ADVERSARY_SCALE"
log = logging.getLogger("kafka_emulator")


# Which event loop a cluster runs on: "asyncio" (the standard library's) or "uvloop".
EVENT_LOOP_ENV = "KAFKA_EMULATOR_EVENT_LOOP"
EVENT_LOOPS = ("asyncio", "uvloop")


def event_loop_kind(default: str = "uvloop") -> str:
    """KAFKA_EMULATOR_EVENT_LOOP when set, else ``default``; ValueError names a bad value."""
    kind = os.environ.get(EVENT_LOOP_ENV) or default
    if kind not in EVENT_LOOPS:
        raise ValueError(f"{EVENT_LOOP_ENV}={kind!r}: expected one of {', '.join(EVENT_LOOPS)}")
    return kind


def new_event_loop(kind: str | None = None) -> asyncio.AbstractEventLoop:
    """A new loop of ``kind`` (None: :func:`event_loop_kind`, uvloop unless the environment
    says otherwise). uvloop where it is built (a default dependency: docs/architecture.md,
    performance), else the standard loop. The ``kafka-emulator`` command asks for the
    standard loop unless told otherwise (``--event-loop``): a process of its own is
    measured by its start and idle memory, and uvloop's extension costs ~2 MB there for
    no throughput a batch workload shows (docs/architecture.md). An in-process Cluster
    shares its host's memory anyway and keeps uvloop's few percent per small request."""
    if (kind or event_loop_kind()) == "uvloop":
        try:
            import uvloop

            return uvloop.new_event_loop()
        except ImportError:
            pass
    return asyncio.new_event_loop()


class Cluster(ClusterControl):
    """An emulated Kafka cluster of ``brokers`` virtual brokers; its operations
    (``stop_broker``, ``fault``, ``operation``...) are emulator/runtime/control.py's,
    its fault methods (``pause_follower``, ``inject_error``...) emulator.control.handle's."""

    def __init__(
        self,
        brokers: int = 3,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        advertised_host: str | None = None,
        advertised_ports: dict[int, int] | None = None,
        advertised_listeners: dict[str, tuple[str, int]] | None = None,
        control_port: int | None = None,
        control_host: str = "127.0.0.1",
        control_token: str | None = None,
        kafka_version: str = DEFAULT_RELEASE,
        config: dict[str, str] | None = None,
        seed: int | None = None,
        clock: Any = None,
        first_broker_id: int = 1,
        security: SecurityConfig | dict | None = None,
        data_dir: str | None = None,
        fidelity: str | None = None,
        schema_registry_port: int | None = None,
        schema_registry_host: str = "127.0.0.1",
        schema_registry_users: dict[str, str] | None = None,
        adversary_scale: str | dict[str, float] | None = None,
        fault_schedule: str | bytes | FaultSchedule | None = None,
    ) -> None:
        """``fidelity`` is ``fast``, ``kafka`` or ``adversarial`` (emulator/fidelity/modes.py;
        None: ``$KAFKA_EMULATOR_FIDELITY``, else ``fast``). ``kafka`` and ``adversarial`` take
        Kafka's own timing defaults where the emulator's are fast ones for tests
        (emulator/cluster/configs.py FIDELITY_KAFKA); ``config`` still overrides them;
        ``seed`` also seeds adversarial's faults, ``adversary_scale`` (``"all=0.5,kick=2"``
        or a dict; None: ``$KAFKA_EMULATOR_ADVERSARY_SCALE``) scales their rates per kind
        (emulator/faults/adversary.py). ``fault_schedule`` (a schedule's text or a parsed
        ``FaultSchedule``; docs/faults.md) runs from the start: its timed steps, and its
        adversary section, which makes the cluster adversarial under the schedule's seed
        injecting exactly those faults (a shrunk failing run replayed; ValueError if
        ``fidelity`` or ``seed`` say otherwise). ``advertised_listeners`` (listener name -> (host, port), Kafka's
        advertised.listeners; broker i is advertised on port+i-1) names what Metadata
        answers on each listener where it differs from where it listens."""
        if brokers < 1:
            raise ValueError("a cluster needs at least one broker")
        # Listeners, SASL users, super users, the authorizer, TLS (docs/security.md);
        # the default is one PLAINTEXT listener and no checks.
        self.security_config = SecurityConfig.coerce(security)
        self.listener_specs = self.security_config.listener_specs(port)
        if self.security_config.listeners:
            port = self.listener_specs[0].port
            host = self.listener_specs[0].host or host
        self.security = Security.from_config(self.security_config)
        self.tls: TlsFiles | None = None
        self._tls_made = False
        self.host = host
        self.base_port = port
        self.advertised_host = advertised_host or host
        self.advertised_ports = advertised_ports or {}
        self.advertised_listeners = dict(advertised_listeners or {})
        self.control_port = control_port
        # The HTTP control plane can stop brokers: loopback unless asked, and an optional
        # bearer token (emulator/server/control.py, RequestGuard).
        self.control_host = control_host
        self.control_token = control_token
        self.kafka_version = kafka_version
        # The built-in schema registry (docs/schema-registry.md): off unless a port is
        # given (0: a free one); loopback unless asked; basic auth with these users.
        self.schema_registry_port = schema_registry_port
        self.schema_registry_host = schema_registry_host
        self.schema_registry_users = schema_registry_users
        self.schema_registry: Any = None
        ids = list(range(first_broker_id, first_broker_id + brokers))
        # Validated whole (ScheduleError, a ValueError, lists every problem) before
        # anything starts; an adversary section decides the fidelity and the seed.
        self.fault_schedule = _schedule(fault_schedule, ids)
        if self.fault_schedule is not None and self.fault_schedule.fidelity:
            fidelity, seed = _scripted(self.fault_schedule, fidelity, seed)
        seed = 0 if seed is None else seed
        self.fidelity = fidelity or default_mode()
        fid = Fidelity(self.fidelity, seed)  # ValueError names the modes
        # ValueError names the kinds; read in every mode so a typo is never silent
        scale = adversary_scale if adversary_scale is not None else os.environ.get(
            ADVERSARY_SCALE_ENV)
        self.adversary_scale: dict[str, float] = {}
        if scale is not None:
            from emulator.faults.adversary import parse_scale

            self.adversary_scale = parse_scale(scale)
        cfg = {**(configs.FIDELITY_KAFKA if fid.kafka_timing else {}), **(config or {})}
        cfg.setdefault("offsets.topic.replication.factor", str(min(3, brokers)))
        cfg.setdefault("transaction.state.log.replication.factor", str(min(3, brokers)))
        self.state = ClusterState(
            [Broker(i, self.advertised_host, port + n if port else 0) for n, i in enumerate(ids)],
            clock=clock, seed=seed, broker_config=cfg, fidelity=fid,
        )
        self.server = None
        self.control: Any = None
        # --data-dir: topics and logs loaded now, kept in step from then on
        # (emulator/storage; docs/storage.md). None: everything stays in memory.
        self.store: Any = None
        if data_dir:
            from emulator.storage import DataDir

            self.store = DataDir(data_dir)
            self.store.load(self.state)
            self.store.attach_security(self.security)
            store, state = self.store, self.state
            state.hooks.append(lambda kind, event: store.on_event(state, event))
        # The fault injector and model: made at the first ``faults`` (ClusterControl).
        self._faults = None
        # The request journal, barriers and waits (emulator/server/watch.py), made on
        # first use: until then a request costs one attribute test for them.
        self.watch: Watch | None = None
        # --fidelity adversarial's seeded faults (emulator/faults/adversary.py), made at
        # start; its ``record`` says every fault it injected. None in the other modes.
        self.adversary: Adversary | None = None
        # The fault schedule's timed steps, running from start (None: none given).
        self.schedule_runner: Any = None
        self._schedule_task: asyncio.Task | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._owns_loop = False

    # ---- addresses ----------------------------------------------------------------
    @property
    def bootstrap_servers(self) -> str:
        return ",".join(f"{b.host}:{b.port}" for b in sorted(self.state.brokers.values(),
                                                             key=lambda b: b.id))

    @property
    def schema_registry_url(self) -> str:
        """``http://127.0.0.1:PORT`` of the built-in schema registry (started with
        ``schema_registry_port``)."""
        if self.schema_registry is None:
            raise RuntimeError("no schema registry: start the cluster with "
                               "schema_registry_port=0 (or a port)")
        host = self.schema_registry_host
        host = "127.0.0.1" if host in ("0.0.0.0", "::", "") else host
        return f"http://{f'[{host}]' if ':' in host else host}:{self.schema_registry.port}"

    def bootstrap_for(self, listener: str) -> str:
        """Bootstrap servers of one listener, e.g. ``bootstrap_for("SASL_SSL")``."""
        name = listener.upper()
        if name == self.listener_specs[0].name:
            return self.bootstrap_servers
        brokers = sorted(self.state.brokers.values(), key=lambda b: b.id)
        if any(name not in b.endpoints for b in brokers):
            raise KeyError(f"no listener {listener}; listeners are "
                           f"{[s.name for s in self.listener_specs]} (is the cluster started?)")
        return ",".join(f"{b.host}:{b.endpoints[name]}" for b in brokers)

    def client_config(self, client: str = "confluent", listener: str | None = None,
                      user: str | None = None, mechanism: str | None = None,
                      password: str | None = None, mtls: bool = False) -> Any:
        """Settings that reach ``listener`` (default: the first SASL one, else the first)
        as ``user``: a dict for ``client="confluent"``, kwargs for ``"kafka-python"`` and
        ``"aiokafka"``, Java properties text for ``"java"`` (``write_client_properties``
        puts it in a file). ``mtls`` adds the generated client certificate."""
        from emulator.security.clients import ClientSecurity, settings

        spec = self._listener_spec(listener)
        if user is None and self.security_config.sasl_users:
            user = next(iter(self.security_config.sasl_users))
        if password is None and user is not None:
            password = self.security_config.sasl_users.get(user)
        tls = self.tls
        mtls = mtls or self.security_config.tls_client_auth == "required"
        c = ClientSecurity(
            self.bootstrap_for(spec.name), spec.protocol, mechanism or "SCRAM-SHA-512",
            user, password, tls.trust if tls else None, tls.truststore if tls else None,
            tls.client_cert if tls and mtls else None, tls.client_key if tls and mtls else None,
            tls.client_keystore if tls and mtls else None)
        return settings(client, c)

    def write_client_properties(self, path: str, **kw: Any) -> str:
        """Java client properties (``client_config("java", ...)``) written to ``path``."""
        from pathlib import Path

        Path(path).write_text(self.client_config("java", **kw), encoding="utf-8")
        return path

    def _listener_spec(self, listener: str | None) -> Any:
        if listener is None:
            sasl = [sp for sp in self.listener_specs if sp.uses_sasl]
            return sasl[0] if sasl else self.listener_specs[0]
        for sp in self.listener_specs:
            if sp.name == listener.upper():
                return sp
        raise KeyError(f"no listener {listener}; listeners are "
                       f"{[sp.name for sp in self.listener_specs]}")

    @property
    def broker_ids(self) -> list[int]:
        return sorted(self.state.brokers)

    # ---- asyncio lifecycle ----------------------------------------------------------
    async def start_async(self) -> Cluster:
        from emulator.server.app import EmulatorServer
        from emulator.services import build_services

        self._loop = asyncio.get_running_loop()
        services = build_services(self.state)
        if self.store is not None:
            self.store.restore_services(self.state, services)
        services.security = self.security
        ssl_context = None
        if any(sp.uses_tls for sp in self.listener_specs):
            from emulator.server import tls

            cfg = self.security_config
            hosts = [self.advertised_host, self.host] + [
                h for h, _ in self.advertised_listeners.values()]
            self.tls = tls.prepare(cfg.tls_dir, list(dict.fromkeys(hosts)),
                                   cfg.tls_cert, cfg.tls_key)
            # A directory made for this cluster (no tls_dir given) goes when it stops.
            self._tls_made = cfg.tls_dir is None
            ssl_context = tls.server_context(self.tls, cfg.tls_client_auth, cfg.tls_client_ca)
        self.server = EmulatorServer(self.state, self.host, self.kafka_version, services,
                                     self.listener_specs, ssl_context)
        if self._faults is not None:  # else wired when first made
            wire_faults(self.server, self._faults)
        self.server.faults.watch = self.watch
        if self.state.fidelity.adversarial:
            from emulator.faults.adversary import Adversary

            _ = self.faults  # made now: the adversary's follower lags go into its model

            script = self.fault_schedule.script if self.fault_schedule is not None else None
            self.adversary = Adversary(self.state.fidelity.seed, self.state, services,
                                       scale=dict(self.adversary_scale),
                                       script=script)
            self.adversary.start()
            self.server.faults.adversary = self.adversary
        if self.store is not None:
            store, state = self.store, self.state
            self.server.tick_hooks.append(lambda: store.sync(state))
        if self._on_storage_event not in self.state.hooks:  # once, if started again
            self.state.hooks.append(self._on_storage_event)
        await self.server.start()
        # Advertise the bound ports (free ports) or the mapped ones (containers).
        for b in self.state.brokers.values():
            b.port = self.advertised_ports.get(b.id, b.port)
        primary = self.listener_specs[0].name
        for n, b in enumerate(sorted(self.state.brokers.values(), key=lambda b: b.id)):
            for name, (host, port) in self.advertised_listeners.items():
                if name == primary:
                    b.host, b.port = host, port + n
                else:
                    b.endpoint_hosts[name] = host
                    b.endpoints[name] = port + n
        if self.control_port is not None:
            from emulator.server.control import ControlPlane

            self.control = ControlPlane(self, self.control_host, self.control_port,
                                        self.control_token, [self.advertised_host, self.host])
            await self.control.start()
        if self.schema_registry_port is not None:
            from emulator.server.schema_registry import start_registry

            self.schema_registry = await start_registry(
                self.state, self.schema_registry_host, self.schema_registry_port,
                self.schema_registry_users)
        if self.fault_schedule is not None and self.fault_schedule.steps \
                and self.schedule_runner is None:
            from emulator.server.schedule import start_schedule

            self.schedule_runner, self._schedule_task = start_schedule(self,
                                                                       self.fault_schedule)
            if self.control is not None:  # its progress is GET /faults/schedule
                self.control.schedule = self.schedule_runner
                self.control.schedule_task = self._schedule_task
        return self

    async def stop_async(self) -> None:
        if self._schedule_task is not None and not self._schedule_task.done():
            self._schedule_task.cancel()
        if self.schema_registry is not None:
            await self.schema_registry.stop()
            self.schema_registry = None
        if self.control is not None:
            await self.control.stop()
            self.control = None
        if self.watch is not None:
            self.watch.close()  # held requests go on, to find their connections closing
        if self.server is not None:
            await self.server.stop()
            self.server = None
        if self.store is not None:
            self.store.sync(self.state)
            self.store.close()
        self._remove_tls_dir()

    def _remove_tls_dir(self) -> None:
        """The generated CA, certificates and stores go with the cluster when it made
        their directory (no tls_dir given): nothing is left behind in /tmp."""
        if self.tls is not None and self._tls_made:
            import shutil

            shutil.rmtree(self.tls.dir, ignore_errors=True)
            self._tls_made = False

    async def __aenter__(self) -> Cluster:
        return await self.start_async()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop_async()

    # ---- threaded lifecycle -----------------------------------------------------------
    def start(self) -> Cluster:
        """Run the cluster on a background thread's event loop; returns when listening."""
        if self._thread is not None:
            return self
        ready: concurrent.futures.Future = concurrent.futures.Future()
        loop = new_event_loop()
        self._loop = loop
        self._owns_loop = True

        def run() -> None:
            asyncio.set_event_loop(loop)
            loop.set_exception_handler(_log_loop_exception)
            try:
                loop.run_until_complete(self.start_async())
            except BaseException as e:  # noqa: BLE001 - reported to the starter
                ready.set_exception(e)
                return
            ready.set_result(None)
            loop.run_forever()
            loop.run_until_complete(self.stop_async())
            _cancel_leftover_tasks(loop)
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()

        self._thread = threading.Thread(target=run, name="kafka-emulator", daemon=True)
        self._thread.start()
        ready.result(timeout=30)
        return self

    def stop(self) -> None:
        if self._thread is None or self._loop is None:
            return
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=30)
        self._thread = None

    def __enter__(self) -> Cluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ---- news of the domain ----------------------------------------------------------
    @observes(LogDirFailed, BrokerHalted)
    def _on_storage_event(self, kind: str, event: Any) -> None:
        """A log dir failed (a storage fault): say so as Kafka's broker does; a broker
        that halted loses its listeners, as a crashed one (the domain already treated
        it as a crash)."""
        if isinstance(event, LogDirFailed):
            log.warning("[ReplicaManager broker=%d] Stopping serving replicas in dir %s "
                         "because the log directory has failed: %s", event.broker,
                         event.log_dir, event.reason)
        elif isinstance(event, BrokerHalted):
            log.warning("broker %d: halting: %s (Kafka's Exit.halt(1))", event.broker,
                       event.reason)
            if self.server is not None and self._loop is not None:
                self._loop.create_task(self.server.close_listener(event.broker))

    # ---- views (GET /cluster, GET /metrics) -------------------------------------------
    def cluster_info(self) -> dict:
        """What GET /cluster returns."""
        from emulator.control.metrics import cluster_view

        return self.call(lambda: {**cluster_view(self.state), **self.security_view()})

    def security_view(self) -> dict:
        """Listeners (name, protocol, bootstrap) and TLS file paths, for GET /cluster."""
        out: dict[str, Any] = {"listeners": [
            {"name": sp.name, "security_protocol": sp.protocol,
             "bootstrap_servers": self.bootstrap_for(sp.name) if self.server else None}
            for sp in self.listener_specs]}
        if self.tls is not None:
            out["tls"] = self.tls.as_dict()
        return out

    def metrics(self) -> str:
        """What GET /metrics returns (Prometheus text)."""
        from emulator.control.metrics import prometheus

        return self.call(lambda: prometheus(self.state))

    # ---- fault schedules (the whole cluster is their ControlTarget) --------------------
    async def run_fault_schedule_async(self, schedule: str | bytes) -> dict:
        """Validate a whole schedule (ScheduleError if anything is wrong), run it, and
        return each step's result with the replication state right after it."""
        from emulator.faults import FaultSchedule
        from emulator.server.schedule import start_schedule

        runner, task = start_schedule(self, FaultSchedule.parse(schedule, self.state.brokers))
        await task
        return runner.status()

    def run_fault_schedule(self, schedule: str | bytes) -> dict:
        """``run_fault_schedule(Path("faults.jsonl").read_text())``: blocks until done."""
        return self.run_async(lambda: self.run_fault_schedule_async(schedule))


def _schedule(given: str | bytes | FaultSchedule | None,
              broker_ids: list[int]) -> FaultSchedule | None:
    """``Cluster(fault_schedule=...)`` parsed as a schedule from the cluster's start."""
    if given is None or not isinstance(given, (str, bytes)):
        return given
    from emulator.faults.schedule import FaultSchedule  # only with a schedule to parse

    return FaultSchedule.parse(given, broker_ids, at_start=True)


def _scripted(schedule: FaultSchedule, fidelity: str | None,
              seed: int | None) -> tuple[str, int]:
    """The fidelity and seed of a cluster whose schedule has an adversary section: the
    schedule's, which an explicit other ``fidelity`` or ``seed`` contradicts."""
    if fidelity not in (None, "adversarial"):
        raise ValueError(f"the fault schedule's adversary section needs fidelity "
                         f"'adversarial', not {fidelity!r}")
    if seed is not None and seed != schedule.seed:
        raise ValueError(f"the fault schedule's adversary section replays seed "
                         f"{schedule.seed}, not {seed}")
    return "adversarial", schedule.seed


def _log_loop_exception(loop: asyncio.AbstractEventLoop, context: dict) -> None:
    """A task of ours died with an exception nobody awaited: our bug, logged on our
    logger (so emulator.testing's watch fails the test) rather than asyncio's. The task
    or future is named, so the line says which."""
    exc = context.get("exception")
    what = context.get("task") or context.get("future")
    log.error("event loop: %s%s", context.get("message", "unhandled exception"),
              f" ({what!r})" if what is not None else "",
              exc_info=(type(exc), exc, exc.__traceback__) if exc is not None else None)


async def stop_serving(cluster: Cluster) -> None:
    """A command's end (``kafka-emulator``, the official images' entry point): stop the
    cluster, then end the connections accepted while its listeners were closing, before
    the loop closes."""
    await cluster.stop_async()
    pending = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
    for t in pending:
        t.cancel()
    await asyncio.gather(*pending, return_exceptions=True)


def _cancel_leftover_tasks(loop: asyncio.AbstractEventLoop) -> None:
    """After the cluster stopped, cancel and await whatever task is still pending (as
    asyncio.run does before it closes its loop): a task left pending when the loop
    closes is destroyed pending later, at some garbage collection, and asyncio reports
    that as an error in whatever test is running then (a client connection's task, say,
    whose protocol dropped it when the transport was aborted)."""
    leftover = [t for t in asyncio.all_tasks(loop) if not t.done()]
    if not leftover:
        return
    log.debug("stopping: cancelling %d task(s) still pending: %s", len(leftover),
              ", ".join(repr(t.get_coro()) for t in leftover[:5]))
    for t in leftover:
        t.cancel()
    loop.run_until_complete(asyncio.gather(*leftover, return_exceptions=True))

