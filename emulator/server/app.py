"""The asyncio nucleus: one listener per virtual broker, and the parts that serve them.

This is the only layer that awaits. EmulatorServer opens and closes the brokers'
listeners and composes the roles, each in its module:

    connections.py  one client connection: admission, framing, corking, request budget
    dispatch.py     one request: header and body (wire.connection), handler, faults
    purgatory.py     parked requests (Delayed), the cluster's ticks, the log cleaner,
                    large operations in slices (Sliced)
    listeners.py    a listener's record, the TLS accept loop
    limits.py       connection quotas, idle and stalled connections

A connection's responses leave in request order, as a Kafka broker's do (it reads the
next request only after answering the previous one).
"""

from __future__ import annotations

import asyncio
import socket
import ssl

from emulator.cluster.state import Broker, ClusterState
from emulator.handlers import HANDLERS
from emulator.security.config import Security
from emulator.security.listeners import ListenerSpec
from emulator.server.connections import ClientConnections
from emulator.server.dispatch import Dispatcher, FaultHooks
from emulator.server.limits import ConnectionLimits
from emulator.server.listeners import BrokerListener, TlsServer
from emulator.server.offload import BatchChecker
from emulator.server.purgatory import Purgatory
from emulator.services import Services
from emulator.versions import DEFAULT_RELEASE, advertised, features


class EmulatorServer:
    """Runs a ClusterState behind N Kafka listeners in the current event loop."""

    def __init__(
        self,
        state: ClusterState,
        bind_host: str = "127.0.0.1",
        kafka_version: str = DEFAULT_RELEASE,
        services: Services | None = None,
        listener_specs: list[ListenerSpec] | None = None,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        self.state = state
        self.bind_host = bind_host
        implemented = {k: h.versions for k, h in HANDLERS.items()}
        self.advertised = advertised(implemented, kafka_version)
        self.services = services if services is not None else Services()
        self.services.advertised = self.advertised
        self.services.features = features(self.advertised, kafka_version)
        self.security: Security | None = self.services.security
        self.ssl_context = ssl_context
        self._specs = listener_specs or [ListenerSpec("PLAINTEXT", "PLAINTEXT", "", 0)]
        # The primary (first) listener of each broker; ``endpoints`` holds every listener.
        self.listeners: dict[int, BrokerListener] = {}
        self.endpoints: dict[int, list[BrokerListener]] = {}
        for b in sorted(state.brokers.values(), key=lambda b: b.id):
            self._add_listeners(b)
        self.faults = FaultHooks()
        self.max_request_bytes = int(state.config["socket.request.max.bytes"])
        self.limits = ConnectionLimits(state.config, ip_rate=self._ip_connection_rate,
                                       dynamic=self._dynamic_broker_config)
        self.batches = BatchChecker()  # Produce validation off the loop (offload.py)
        self.purgatory = Purgatory(state)
        self.tick_hooks = self.purgatory.tick_hooks
        txn = getattr(self.services, "transactions", None)
        if txn is not None and hasattr(txn, "next_deadline"):
            self.purgatory.deadline_sources.append(txn.next_deadline)
        self.dispatcher = Dispatcher(state, self.advertised, self.services, self.faults,
                                     self.batches, self.purgatory)
        self.connections = ClientConnections(state, self.limits, self.faults,
                                             self.dispatcher, self.security,
                                             self.max_request_bytes)
        self.frame_observers = self.connections.frame_observers
        self._tasks: list[asyncio.Task] = []
        state.on_change = self.purgatory.on_change
        # One request frame served as a connection would (tests/test_scale.py and
        # bench/produce_path.py drive the request path without sockets), a Delayed
        # waited out, a Sliced run: the parts' own methods, no extra await between.
        self._process = self.dispatcher.process
        self.wait_delayed = self.purgatory.wait_delayed
        self.run_sliced = self.purgatory.run_sliced

    def _add_listeners(self, b: Broker) -> None:
        """Broker ``b``'s listeners, not open yet: the first on the broker's port, each
        other one on its given port plus the broker's rank (0: a free port)."""
        n = len(self.listeners)
        first = self._specs[0]
        bl = BrokerListener(b, first.host or self.bind_host, bind_port=b.port,
                            name=first.name, protocol=first.protocol)
        self.listeners[b.id] = bl
        self.endpoints[b.id] = [bl] + [
            BrokerListener(b, sp.host or self.bind_host, bind_port=sp.port + n if sp.port else 0,
                           name=sp.name, protocol=sp.protocol, primary=False)
            for sp in self._specs[1:]]

    def add_broker(self, broker_id: int) -> None:
        """Listeners for a broker added to the cluster after the server started
        (ClusterMetadata.add_broker); they open when the broker starts (reopen_listener)."""
        if broker_id not in self.listeners:
            self._add_listeners(self.state.brokers[broker_id])

    def _dynamic_broker_config(self, broker_id: int, key: str) -> str | None:
        """A broker's dynamic value of ``key``: its own, else the cluster default."""
        value = self.state.broker_overrides.get(broker_id, {}).get(key)
        return value if value is not None else self.state.dynamic_default.get(key)

    def _ip_connection_rate(self, ip: str) -> int | None:
        """An address's connection_creation_rate quota (KIP-612), from the client quotas."""
        quotas = self.services.quotas
        return quotas.ip_connection_rate(ip) if quotas is not None else None

    # ---- lifecycle ---------------------------------------------------------------
    async def start(self) -> None:
        for bls in self.endpoints.values():
            for bl in bls:
                await self._open(bl)
        loop = asyncio.get_running_loop()
        self._tasks.append(loop.create_task(self.purgatory.periodic()))
        self._tasks.append(loop.create_task(self.purgatory.cleaner()))
        self._tasks.append(loop.create_task(self._sweep_connections()))

    async def _sweep_connections(self) -> None:
        """Close idle and stalled client connections (emulator/server/limits.py)."""
        while True:
            await asyncio.sleep(self.limits.sweep_interval())
            self.limits.sweep()

    async def _open(self, bl: BrokerListener) -> None:
        async def on_conn(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
            try:
                await self.connections.serve(bl, r, w)
            except asyncio.CancelledError:
                pass  # the listener closed (broker stopped): end quietly

        if bl.protocol in ("SSL", "SASL_SSL"):
            if self.ssl_context is None:
                raise RuntimeError(f"listener {bl.name} needs TLS but no context was given")
            server: asyncio.Server | TlsServer = await TlsServer.start(
                bl, self.ssl_context, on_conn)
        else:
            sock = bound_socket(bl.bind_host, max(bl.bind_port, 0))
            if sock is not None:
                server = await asyncio.start_server(on_conn, sock=sock, limit=1 << 20)
            else:
                server = await asyncio.start_server(
                    on_conn, bl.bind_host, max(bl.bind_port, 0), reuse_address=True,
                    limit=1 << 20)
        bl.server = server
        if bl.bind_port <= 0:
            bl.bind_port = server.sockets[0].getsockname()[1]
        if not bl.primary:
            bl.broker.endpoints.setdefault(bl.name, bl.bind_port)
        elif bl.broker.port == 0:
            bl.broker.port = bl.bind_port

    async def close_listener(self, broker_id: int) -> None:
        """Stop accepting and cut every connection: clients see a dead broker."""
        for bl in self.endpoints[broker_id]:
            await self._close(bl)

    async def _close(self, bl: BrokerListener) -> None:
        if bl.server is not None:
            bl.server.close()
            for w in list(bl.connections):
                w.transport.abort()
            tasks = [t for t in bl.tasks if t is not asyncio.current_task()]
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            await bl.server.wait_closed()
            bl.server = None

    async def reopen_listener(self, broker_id: int) -> None:
        for bl in self.endpoints[broker_id]:
            if bl.server is None:
                await self._open(bl)

    def client_connections(self, broker_id: int) -> list[asyncio.StreamWriter]:
        """Every client connection of a broker, over all its listeners."""
        return [w for bl in self.endpoints[broker_id] for w in bl.connections]

    def cut_client_connections(self, broker_id: int) -> None:
        for w in self.client_connections(broker_id):
            w.transport.abort()

    async def stop(self) -> None:
        for t in self._tasks:
            t.cancel()
        for t in self._tasks:
            try:
                await t
            except (asyncio.CancelledError, Exception):  # noqa: BLE001
                pass
        for bid in list(self.listeners):
            await self.close_listener(bid)
        self.purgatory.stop()
        await self.batches.aclose()
        self.state.on_change = None


def bound_socket(host: str, port: int) -> socket.socket | None:
    """A socket bound to ``host`` when it is an IP address, made as start_server makes
    one (SO_REUSEADDR; an IPv6 socket for IPv6 only), or None for a host name or every
    interface (start_server resolves those). An address needs no resolving: the loop's
    getaddrinfo would cost a round trip through its thread pool and, on uvloop, the idna
    codec's import, for each listener a start opens (docs/scale.md, start-up)."""
    for family in (socket.AF_INET, socket.AF_INET6):
        try:
            socket.inet_pton(family, host)
        except (OSError, ValueError):
            continue
        # IPPROTO_TCP as getaddrinfo gives it: asyncio sets TCP_NODELAY on the accepted
        # connections of a socket whose proto says TCP, and only those.
        sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            sock.bind((host, port))
        except OSError as e:
            sock.close()
            raise OSError(e.errno, f"error while attempting to bind on address "
                          f"{(host, port)!r}: {(e.strerror or str(e)).lower()}") from None
        return sock
    return None
