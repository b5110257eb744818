"""The sockets of a cluster of official-image nodes: the link and the fronts.

emulator.official_cluster says the design (the state in the lowest voter's process,
every node a front forwarding its listeners to its virtual broker there) and computes
the messages; this module moves the bytes. ``LinkServer`` runs in the state node: a
front's registration starts its broker, the front's silence or goodbye stops it.
In isolated mode the state node is a controller: its cluster is made when the first
broker node registers (with that broker's listeners and the SASL users its JAAS file
gives), and each later broker is added
to it when it first registers (``Cluster.add_broker_async``). Controller nodes' fronts
listen nowhere: they only keep a registration, for the health check.
``NodeFront`` runs in every node: it listens where the node's ``KAFKA_LISTENERS`` say,
keeps its registration alive, and pipes each client connection to its broker's
listener of the same name. While the link is down (the state node stopped) a front
accepts and closes connections at once, so clients see a broker that is not there,
and it registers again as soon as the link answers.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Protocol

from emulator.official_cluster import (
    GOODBYE,
    HEARTBEAT,
    HEARTBEAT_S,
    LINK_TIMEOUT_S,
    NodeCluster,
    Registration,
    check_registration,
    decode_reply,
    encode_reply,
    listener_kinds,
)

if TYPE_CHECKING:
    from emulator.cluster.state import ClusterState
    from emulator.official_image import Listener
    from emulator.server.app import EmulatorServer

log = logging.getLogger("kafka_emulator.official_cluster")
PIPE_CHUNK = 1 << 16
RETRY_S = 0.5  # how often a front without a link tries the state node again


class BrokerHost(Protocol):
    """What the link needs of the running cluster (emulator.runtime.Cluster)."""

    state: ClusterState
    server: EmulatorServer | None

    async def start_broker_async(self, broker_id: int) -> None: ...

    async def add_broker_async(self, broker_id: int) -> None: ...

    async def stop_broker_async(self, broker_id: int, controlled: bool = False,
                                fence_after_ms: int | None = None) -> None: ...


# Isolated mode: the state node's cluster, made (started) for the first broker node's
# registration.
ClusterMaker = Callable[[Registration], Awaitable[BrokerHost]]


class LinkServer:
    """The state node's end of the link: one connection per registered node. Given a
    running ``cluster`` (combined nodes), every broker must serve ``listeners``' names
    and protocols; given ``make_cluster`` instead (isolated mode), the first broker's
    registration makes the cluster and sets them."""

    def __init__(self, cluster: BrokerHost | None, nodes: NodeCluster,
                 listeners: list[Listener], make_cluster: ClusterMaker | None = None) -> None:
        assert (cluster is None) != (make_cluster is None), "a cluster or its maker"
        self.cluster = cluster
        self.make_cluster = make_cluster
        self.nodes = nodes
        self.served: list[tuple[str, str]] | None = (
            listener_kinds(listeners) if cluster is not None else None)
        self.served_by: int | None = None  # the broker node whose listeners set them
        # isolated mode: the SASL users of that first broker's JAAS file, the cluster's
        self.users: tuple[tuple[str, str], ...] = ()
        # The registration currently in force per node: an old link that ends after its
        # node registered again must not stop the new incarnation.
        self._current: dict[int, object] = {}
        # Broker starts and stops one at a time, in the order the links asked.
        self._lock = asyncio.Lock()
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[object]] = set()

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, "0.0.0.0", self.nodes.link_port,
                                                  reuse_address=True)

    async def stop(self) -> None:
        """No more registrations, and the links' own work (a goodbye's broker stop)
        ended before the cluster stops under it."""
        if self._server is not None:
            self._server.close()
            self._server = None
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _serve(self, r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None, "asyncio runs a connection's callback in a task"
        self._tasks.add(task)
        try:
            await self._link(r, w)
        except asyncio.CancelledError:
            w.transport.abort()  # the state node is stopping: its cluster goes too
        finally:
            self._tasks.discard(task)

    async def _link(self, r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
        try:
            line = await asyncio.wait_for(r.readline(), LINK_TIMEOUT_S * 3)
            reg = Registration.decode(line)
        except (ValueError, KeyError, TypeError, OSError, TimeoutError):
            log.warning("link: a connection from %s sent no registration; closed",
                        w.get_extra_info("peername"))
            w.close()
            return
        if reg.controller_only:
            refused = check_registration(reg, self.nodes, self.served, self.served_by,
                                         self.users)
            if refused is None:
                await self._controller(reg, r, w)
            else:
                await self._refuse(reg, w, refused)
            return
        async with self._lock:
            # checked under the lock: in isolated mode the first broker's start sets the
            # listeners (and SASL users) the next one must serve, and two may register
            # at once
            refused = check_registration(reg, self.nodes, self.served, self.served_by,
                                         self.users)
            if refused is None:
                token = object()
                self._current[reg.node_id] = token
                cluster, endpoints = await self._start(reg)
        if refused is not None:
            await self._refuse(reg, w, refused)
            return
        w.write(encode_reply(endpoints))
        controlled = await self._watch(r, w, reg.node_id)
        if self._current.get(reg.node_id) is token:
            del self._current[reg.node_id]
            async with self._lock:
                await cluster.stop_broker_async(reg.node_id, controlled=controlled)
            if controlled:
                log.info("node %d said goodbye: broker %d shut down", reg.node_id, reg.node_id)
            else:
                log.warning("node %d lost (its link closed or went silent): broker %d "
                            "crashed", reg.node_id, reg.node_id)
        w.close()

    @staticmethod
    async def _refuse(reg: Registration, w: asyncio.StreamWriter, why: str) -> None:
        log.warning("link: node %d refused: %s", reg.node_id, why)
        w.write(encode_reply(None, why))
        with contextlib.suppress(OSError):
            await w.drain()
        w.close()

    async def _controller(self, reg: Registration, r: asyncio.StreamReader,
                          w: asyncio.StreamWriter) -> None:
        """A controller node's link: no broker, nothing for clients to see when it
        ends (the quorum's state is in this process); only its health depends on it."""
        w.write(encode_reply({}))
        controlled = await self._watch(r, w, reg.node_id)
        log.info("controller node %d %s", reg.node_id,
                 "said goodbye" if controlled else "lost (its link closed or went silent)")
        w.close()

    async def _start(self, reg: Registration) -> tuple[BrokerHost, dict[str, int]]:
        """The node's broker at its advertised addresses, started (a running earlier
        incarnation stopped first, as Kafka fences it; in isolated mode the cluster made
        for the first broker, a new broker id added); the cluster, and the broker's
        listener ports by name."""
        if self.cluster is None:
            assert self.make_cluster is not None
            self.cluster = await self.make_cluster(reg)
            self.served = sorted((n, p) for n, p, _, _ in reg.listeners)
            self.served_by = reg.node_id
            self.users = reg.sasl_users
        cluster = self.cluster
        state, server = cluster.state, cluster.server
        assert server is not None, "the cluster is started before the link"
        if reg.node_id not in state.brokers:
            await cluster.add_broker_async(reg.node_id)
        b = state.brokers[reg.node_id]
        if b.alive or b.crashed:
            await cluster.stop_broker_async(reg.node_id, fence_after_ms=0)
        primary = server.endpoints[reg.node_id][0].name
        for name, _protocol, host, port in reg.listeners:
            if name == primary:
                b.host, b.port = host, port
            else:
                b.endpoint_hosts[name], b.endpoints[name] = host, port
        await cluster.start_broker_async(reg.node_id)
        log.info("node %d registered: broker %d at %s", reg.node_id, reg.node_id,
                 ", ".join(f"{n} {h}:{p}" for n, _, h, p in reg.listeners))
        return cluster, {bl.name: bl.bind_port for bl in server.endpoints[reg.node_id]}

    @staticmethod
    async def _watch(r: asyncio.StreamReader, w: asyncio.StreamWriter, node: int) -> bool:
        """Until the link ends: True when the node said goodbye (SIGTERM: a
        controlled shutdown), False when it closed or went silent (a crash)."""
        try:
            await w.drain()
            while True:
                line = await asyncio.wait_for(r.readline(), LINK_TIMEOUT_S)
                if not line:
                    return False
                if line == GOODBYE:
                    return True
                w.write(HEARTBEAT)  # answered, so that the front knows the state node lives
        except (TimeoutError, OSError):
            return False


class NodeFront:
    """One node's listeners, forwarding to its virtual broker in the state node."""

    def __init__(self, listeners: list[Listener], registration: Registration,
                 nodes: NodeCluster) -> None:
        self.listeners = listeners
        self.registration = registration
        self.nodes = nodes
        self.endpoints: dict[str, int] | None = None  # None: not registered (no link)
        self.registered = asyncio.Event()
        self._servers: list[asyncio.Server] = []
        self._pipes: set[asyncio.StreamWriter] = set()
        self._forwards: set[asyncio.Task[object]] = set()  # each client connection's

    async def open(self) -> None:
        """Listen on every listener of the node (before registering: a client that
        comes early is closed, as by a broker still starting)."""
        for ls in self.listeners:
            self._servers.append(await asyncio.start_server(
                self._forwarder(ls.name), ls.bind_host, ls.port, reuse_address=True))

    async def run(self, stop: asyncio.Event) -> None:
        """Keep the registration alive until ``stop``; emulator.official_image.Refused
        propagates when the state node refuses this node."""
        host, port = self.nodes.link_host, self.nodes.link_port
        waiting_logged = False
        while not stop.is_set():
            try:
                r, w = await asyncio.open_connection(host, port)
            except OSError as e:
                if not waiting_logged:
                    log.info("waiting for node %d's link at %s:%d (%s)", self.nodes.state_node,
                             host, port, e.strerror or e)
                    waiting_logged = True
                await _sleep_or_stop(stop, RETRY_S)
                continue
            waiting_logged = False
            try:
                w.write(self.registration.encode())
                line = await asyncio.wait_for(r.readline(), LINK_TIMEOUT_S * 3)
                if not line:
                    raise ConnectionResetError("the link closed")
                self.endpoints = decode_reply(line)
                self.registered.set()
                await self._heartbeat(r, w, stop)
            except (OSError, TimeoutError) as e:
                log.debug("link: %s", e)
            finally:
                self._lost(w)
            if not stop.is_set():
                log.warning("node %d: the link to node %d closed; clients are refused until "
                            "it answers again", self.registration.node_id, self.nodes.state_node)
                await _sleep_or_stop(stop, RETRY_S)

    async def _heartbeat(self, r: asyncio.StreamReader, w: asyncio.StreamWriter,
                         stop: asyncio.Event) -> None:
        """A heartbeat every HEARTBEAT_S, each answered by the state node; returns when
        the link closes, when the state node has not answered for LINK_TIMEOUT_S (a
        paused container sends no FIN), or on ``stop`` after saying goodbye."""
        loop = asyncio.get_running_loop()
        heard = loop.time()
        line = asyncio.ensure_future(r.readline())
        stopped = asyncio.ensure_future(stop.wait())
        try:
            while loop.time() - heard <= LINK_TIMEOUT_S:
                w.write(HEARTBEAT)
                await w.drain()
                beat = loop.time() + HEARTBEAT_S
                while (left := beat - loop.time()) > 0:
                    done, _ = await asyncio.wait({line, stopped}, timeout=left,
                                                 return_when=asyncio.FIRST_COMPLETED)
                    if stopped in done:  # SIGTERM: a controlled shutdown, as Kafka's
                        w.write(GOODBYE)
                        await asyncio.wait_for(w.drain(), 2)
                        return
                    if line in done:
                        if not line.result():
                            return  # the state node closed the link
                        heard = loop.time()
                        line = asyncio.ensure_future(r.readline())
            log.warning("node %d: node %d did not answer for %.0f s", self.registration.node_id,
                        self.nodes.state_node, LINK_TIMEOUT_S)
        finally:
            line.cancel()
            stopped.cancel()

    def _lost(self, w: asyncio.StreamWriter) -> None:
        self.endpoints = None
        w.transport.abort()
        for pipe in list(self._pipes):
            pipe.transport.abort()

    async def close(self) -> None:
        """Stop listening and end every forwarded connection, its task awaited: a task
        still pending when the node's loop closes is reported destroyed pending."""
        for server in self._servers:
            server.close()
        for pipe in list(self._pipes):
            pipe.transport.abort()
        for task in list(self._forwards):
            task.cancel()
        await asyncio.gather(*self._forwards, return_exceptions=True)

    def _forwarder(self, name: str) -> Callable[[asyncio.StreamReader, asyncio.StreamWriter],
                                                Awaitable[None]]:
        """asyncio's client_connected_cb for one listener."""
        async def forward(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
            task = asyncio.current_task()
            assert task is not None, "asyncio runs a connection's callback in a task"
            self._forwards.add(task)
            try:
                await self._forward(name, r, w)
            except asyncio.CancelledError:
                w.transport.abort()  # the node is stopping
            finally:
                self._forwards.discard(task)
        return forward

    async def _forward(self, name: str, r: asyncio.StreamReader,
                       w: asyncio.StreamWriter) -> None:
        """One client connection piped to the broker's listener ``name``."""
        endpoints = self.endpoints
        if endpoints is None or name not in endpoints:
            w.transport.abort()
            return
        try:
            up_r, up_w = await asyncio.open_connection(self.nodes.link_host,
                                                       endpoints[name])
        except OSError:
            w.transport.abort()  # the broker is stopped: a refused connection
            return
        self._pipes.update((w, up_w))
        try:
            await _pipe(r, w, up_r, up_w)
        finally:
            self._pipes.difference_update((w, up_w))


async def _pipe(r: asyncio.StreamReader, w: asyncio.StreamWriter,
                up_r: asyncio.StreamReader, up_w: asyncio.StreamWriter) -> None:
    """Bytes both ways until either side ends; then both connections end (a Kafka
    connection has no use for a half-closed socket)."""
    tasks = [asyncio.ensure_future(_copy(r, up_w)), asyncio.ensure_future(_copy(up_r, w))]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for t in tasks:
            t.cancel()
        w.transport.abort()
        up_w.transport.abort()
        await asyncio.gather(*tasks, return_exceptions=True)


async def _copy(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
    with contextlib.suppress(OSError, asyncio.IncompleteReadError):
        while data := await r.read(PIPE_CHUNK):
            w.write(data)
            await w.drain()


async def _sleep_or_stop(stop: asyncio.Event, seconds: float) -> None:
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(stop.wait(), seconds)


class NodeHealth:
    """The control port of a node that holds no state: a 200 while the node's broker is
    registered, else 503, for the image's HEALTHCHECK (docker/healthcheck.py asks the
    control plane, which only the state node runs)."""

    def __init__(self, front: NodeFront) -> None:
        self.front = front
        self._server: asyncio.Server | None = None

    async def start(self, host: str, port: int) -> None:
        self._server = await asyncio.start_server(self._answer, host, port,
                                                  reuse_address=True)

    def close(self) -> None:
        if self._server is not None:
            self._server.close()

    async def _answer(self, r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
        with contextlib.suppress(OSError, TimeoutError, asyncio.LimitOverrunError):
            while (await asyncio.wait_for(r.readline(), 5)).strip():
                pass  # the request line and headers: every path answers the same
            up = self.front.endpoints is not None
            body = json.dumps({"node": self.front.registration.node_id,
                               "registered": up}).encode()
            w.write(b"HTTP/1.1 %s\r\nContent-Type: application/json\r\nContent-Length: %d"
                    b"\r\nConnection: close\r\n\r\n%s" % (
                        b"200 OK" if up else b"503 Service Unavailable", len(body), body))
            await w.drain()
        w.close()
