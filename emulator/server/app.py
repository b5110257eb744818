"""The asyncio nucleus: one listener per virtual broker, framing, dispatch, waiting.

This is the only layer that awaits. It reads size-prefixed frames, decodes the
header and body with ``wire``, calls the handler for the API key, turns a
``Delayed`` into an awaitable (woken whenever the cluster changes), and writes the
responses of a connection in request order, as a Kafka broker does (it reads the
next request only after answering the previous one).
"""

from __future__ import annotations

import asyncio
import gc
import logging
import socket
import ssl
import struct
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from emulator.cluster.metadata import ChangeKey
from emulator.cluster.quotas import REQUEST_QUOTA_EXEMPT
from emulator.cluster.state import Broker, ClusterState
from emulator.faults.model import Injection, split_request
from emulator.handlers import HANDLERS
from emulator.handlers.api_018_api_versions import unsupported as api_versions_unsupported
from emulator.handlers.base import NO_RESPONSE, Delayed, RequestContext, Sliced
from emulator.handlers.errors import build_error_response, merge, safe_error_response
from emulator.security.config import Security
from emulator.security.listeners import ListenerSpec
from emulator.security.sasl import AuthenticationFailed
from emulator.security.session import RAW_TOKENS, Session
from emulator.server.limits import ConnectionLimits, ConnState
from emulator.server.offload import BatchChecker
from emulator.server.tls import peer_principal
from emulator.versions import DEFAULT_RELEASE, advertised, features
from wire.codec import DecodeError
from wire.errors import ErrorCode as E
from wire.frames import read_request_header, response_header
from wire.messages import REQUESTS, RESPONSES

log = logging.getLogger("kafka_emulator")
_SIZE = struct.Struct(">i")
TICK_INTERVAL_S = 0.05
CLEANER_SLICE_S = 0.005  # the longest a request waits behind the log cleaner
STEP_SLICE_NS = 5_000_000  # ... and behind a large operation's steps (run_sliced)
# Partitions one tick visits at most (10-25 us each): 10,000 new partitions, or every
# partition after a broker change, are replicated over several loop turns.
TICK_VISITS = 250
# Corked responses (EmulatorServer._serve) are written at once past this many bytes.
OUTBOX_FLUSH_BYTES = 1 << 18


def _frame_waiting(reader: asyncio.StreamReader) -> bool:
    """Is a whole request frame already in the reader's buffer? (asyncio's
    StreamReader keeps it in ``_buffer``; without one, say no: nothing is corked.)"""
    buf = getattr(reader, "_buffer", None)
    if buf is None or len(buf) < 4:
        return False
    return len(buf) >= 4 + _SIZE.unpack_from(buf, 0)[0]


_gc_hold = {"count": 0, "was_enabled": True}  # large operations running, process-wide


def _hold_gc() -> None:
    """No cyclic garbage collection while a large operation runs (run_sliced). Its
    objects (some 300,000 for 10,000 partitions) would trigger full collections, each a
    pause that scans every object of the process (0.1-1 s with a few such topics
    measured): the stall the slices are there to avoid. Refcounting still frees
    almost everything meanwhile."""
    if _gc_hold["count"] == 0:
        _gc_hold["was_enabled"] = gc.isenabled()
        gc.disable()
    _gc_hold["count"] += 1


def _release_gc() -> None:
    """At the end of the last large operation: freeze what exists (gc.freeze: the
    collector no longer scans it, so the new partitions never cost a pause later;
    frozen objects are still freed by refcounting, only cyclic garbage alive at this
    moment is kept) and collect as before."""
    _gc_hold["count"] -= 1
    if _gc_hold["count"] == 0:
        gc.freeze()
        if _gc_hold["was_enabled"]:
            gc.enable()
RETENTION_INTERVAL_S = 1.0


def _wake(fut: asyncio.Future) -> None:
    if not fut.done():
        fut.set_result(None)


class _Parked:
    """A parked request's place in the purgatory: registered under its keys once, for
    as long as it waits, and woken through the future of its current wait. (A request
    waiting on thousands of partitions, replicated over several budgeted ticks, would
    otherwise register every key again at each wake-up.)"""

    __slots__ = ("fut",)

    def __init__(self) -> None:
        self.fut: asyncio.Future | None = None

    def wake(self) -> None:
        if self.fut is not None and not self.fut.done():
            self.fut.set_result(None)


class CloseConnection(Exception):
    """Raised to drop a client connection after logging why."""


@dataclass
class FaultHooks:
    """Server-side fault points, filled by the fault injector (emulator.faults)."""

    # (broker_id, api_key, request, client_id) -> the error to answer (for the whole
    # request or for the items naming a topic/partition), or None
    inject_error: Callable[[int, int, dict, str | None], Injection | None] | None = None
    # (broker_id, api_key) -> extra seconds before answering
    latency: Callable[[int, int], float] | None = None
    # (broker_id, api_key, client_id) -> True to apply the request but drop its response
    drop_response: Callable[[int, int, str | None], bool] | None = None
    # (broker_id, client host) -> False to refuse/cut client connections
    client_allowed: Callable[[int, str], bool] | None = None


@dataclass
class BrokerListener:
    broker: Broker
    bind_host: str
    server: asyncio.base_events.Server | None = None
    connections: set[asyncio.StreamWriter] = field(default_factory=set)
    tasks: set[asyncio.Task] = field(default_factory=set)
    # The port to bind, kept apart from the advertised one (broker.port), which may be
    # a mapped port: a restarted broker must listen where it listened before.
    bind_port: int = -1
    # Kafka's listener name and its security protocol (PLAINTEXT, SSL, SASL_*).
    name: str = "PLAINTEXT"
    protocol: str = "PLAINTEXT"
    primary: bool = True  # the first listener: its port is broker.port


class _TlsServer:
    """A TLS listener: accepts sockets itself and hands each to the loop's native TLS
    (connect_accepted_socket), so that a failed handshake (a PLAINTEXT client, an
    untrusted client certificate) is one log line here rather than lost inside the
    loop; asyncio.Server's interface as the listener code uses it."""

    def __init__(self, sock: socket.socket, task: asyncio.Task) -> None:
        self.sockets = [sock]
        self._task = task
        self._conns: set[asyncio.Task] = set()

    @classmethod
    async def start(cls, bl: BrokerListener, ctx: ssl.SSLContext,
                    on_conn: Callable[[asyncio.StreamReader, asyncio.StreamWriter], Any],
                    ) -> _TlsServer:
        loop = asyncio.get_running_loop()
        infos = await loop.getaddrinfo(bl.bind_host, max(bl.bind_port, 0),
                                       type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
        family, _, _, _, addr = infos[0]
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setblocking(False)
        try:
            sock.bind(addr)
            sock.listen(128)
        except OSError:
            sock.close()
            raise
        server = cls(sock, None)  # type: ignore[arg-type]
        server._task = loop.create_task(server._accept(bl, ctx, on_conn))
        return server

    async def _accept(self, bl: BrokerListener, ctx: ssl.SSLContext,
                      on_conn: Callable[..., Any]) -> None:
        loop = asyncio.get_running_loop()
        while True:
            conn, peer = await loop.sock_accept(self.sockets[0])
            t = loop.create_task(self._handshake(bl, ctx, conn, peer, on_conn))
            self._conns.add(t)
            t.add_done_callback(self._conns.discard)

    @staticmethod
    async def _handshake(bl: BrokerListener, ctx: ssl.SSLContext, conn: socket.socket,
                         peer: tuple, on_conn: Callable[..., Any]) -> None:
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=1 << 20)
        protocol = asyncio.StreamReaderProtocol(reader)
        try:
            transport, _ = await loop.connect_accepted_socket(
                lambda: protocol, conn, ssl=ctx, ssl_handshake_timeout=10)
        except (ssl.SSLError, OSError, TimeoutError, ConnectionError) as e:
            why = getattr(e, "reason", None) or str(e) or type(e).__name__
            hint = " (a PLAINTEXT client on a TLS listener?)" if why in (
                "WRONG_VERSION_NUMBER", "HTTP_REQUEST", "UNEXPECTED_RECORD",
                "RECORD_LAYER_FAILURE", "PACKET_LENGTH_TOO_LONG") else ""
            log.warning("broker %d: closing connection from %s:%s on listener %s: TLS "
                        "handshake failed: %s%s", bl.broker.id, peer[0], peer[1], bl.name,
                        why, hint)
            conn.close()
            return
        writer = asyncio.StreamWriter(transport, protocol, reader, loop)
        await on_conn(reader, writer)

    def close(self) -> None:
        self._task.cancel()
        for t in list(self._conns):
            t.cancel()
        self.sockets[0].close()

    async def wait_closed(self) -> None:
        await asyncio.gather(self._task, *self._conns, return_exceptions=True)


class EmulatorServer:
    """Runs a ClusterState behind N Kafka listeners in the current event loop."""

    def __init__(
        self,
        state: ClusterState,
        bind_host: str = "127.0.0.1",
        kafka_version: str = DEFAULT_RELEASE,
        services: dict[str, Any] | None = None,
        listener_specs: list[ListenerSpec] | None = None,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        self.state = state
        self.bind_host = bind_host
        implemented = {k: h.versions for k, h in HANDLERS.items()}
        self.advertised = advertised(implemented, kafka_version)
        self.services: dict[str, Any] = {
            "advertised": self.advertised, "features": features(self.advertised, kafka_version),
            **(services or {})}
        self.security: Security | None = self.services.get("security")
        self.ssl_context = ssl_context
        specs = listener_specs or [ListenerSpec("PLAINTEXT", "PLAINTEXT", "", 0)]
        first = specs[0]
        # The primary (first) listener of each broker; ``endpoints`` holds every listener.
        self.listeners: dict[int, BrokerListener] = {
            b.id: BrokerListener(b, first.host or bind_host, bind_port=b.port, name=first.name,
                                 protocol=first.protocol)
            for b in state.brokers.values()
        }
        self.endpoints: dict[int, list[BrokerListener]] = {
            bid: [bl] + [
                BrokerListener(bl.broker, sp.host or bind_host,
                               bind_port=sp.port + n if sp.port else 0, name=sp.name,
                               protocol=sp.protocol, primary=False)
                for sp in specs[1:]]
            for n, (bid, bl) in enumerate(sorted(self.listeners.items()))
        }
        self.faults = FaultHooks()
        self.max_request_bytes = int(state.config["socket.request.max.bytes"])
        self.limits = ConnectionLimits(state.config, ip_rate=self._ip_connection_rate,
                                       dynamic=self._dynamic_broker_config)
        self.batches = BatchChecker()  # Produce validation off the loop (offload.py)
        # Parked requests (Delayed): those waiting on any change, and those waiting on
        # given partitions (woken only when one of them changes): Kafka's purgatory keys.
        self._waiters: set[_Parked] = set()
        self._keyed: dict[ChangeKey, set[_Parked]] = {}
        self._tick_handle: asyncio.Handle | None = None
        self._tasks: list[asyncio.Task] = []
        self._conn_ids = 0
        self.tick_hooks: list[Callable[[], None]] = []
        # (broker id, api key, version, request frame, response frame or None): tools
        # and tests that capture real clients' bytes (tests/golden).
        self.frame_observers: list[Callable[[int, int, int, bytes, bytes | None], None]] = []
        state.on_change = self._on_change

    def _dynamic_broker_config(self, broker_id: int, key: str) -> str | None:
        """A broker's dynamic value of ``key``: its own, else the cluster default."""
        value = self.state.broker_overrides.get(broker_id, {}).get(key)
        return value if value is not None else self.state.dynamic_default.get(key)

    def _ip_connection_rate(self, ip: str) -> int | None:
        """An address's connection_creation_rate quota (KIP-612), from the client quotas."""
        quotas = self.services.get("quotas")
        return quotas.ip_connection_rate(ip) if quotas is not None else None

    # ---- lifecycle ---------------------------------------------------------------
    async def start(self) -> None:
        for bls in self.endpoints.values():
            for bl in bls:
                await self._open(bl)
        loop = asyncio.get_running_loop()
        self._tasks.append(loop.create_task(self._periodic()))
        self._tasks.append(loop.create_task(self._cleaner()))
        self._tasks.append(loop.create_task(self._sweep_connections()))

    async def _open(self, bl: BrokerListener) -> None:
        async def on_conn(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
            try:
                await self._serve(bl, r, w)
            except asyncio.CancelledError:
                pass  # the listener closed (broker stopped): end quietly

        if bl.protocol in ("SSL", "SASL_SSL"):
            if self.ssl_context is None:
                raise RuntimeError(f"listener {bl.name} needs TLS but no context was given")
            bl.server = await _TlsServer.start(bl, self.ssl_context, on_conn)
        else:
            bl.server = await asyncio.start_server(
                on_conn, bl.bind_host, max(bl.bind_port, 0), reuse_address=True,
                limit=1 << 20)
        if bl.bind_port <= 0:
            bl.bind_port = bl.server.sockets[0].getsockname()[1]
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
        if self._tick_handle is not None:
            self._tick_handle.cancel()
        await self.batches.aclose()
        self.state.on_change = None

    # ---- change notification and ticks ---------------------------------------------
    def _on_change(self) -> None:
        """Wake the parked requests the change concerns, and replicate soon."""
        everything, keys = self.state.take_changes()
        woken = list(self._waiters)
        if everything:
            for parked in self._keyed.values():
                woken.extend(parked)
        else:
            keyed = self._keyed
            for k in keys:
                parked = keyed.get(k)
                if parked:
                    woken.extend(parked)
        for w in woken:
            w.wake()
        if self._tick_handle is None:
            loop = asyncio.get_running_loop()
            self._tick_handle = loop.call_soon(self._tick, False)

    def _tick(self, periodic: bool = True) -> None:
        """On the timer and right after a change: the domain visits only what has work
        (touched, unfinished or due partitions), so a tick costs what changed."""
        if periodic and self._tick_handle is not None:
            self._tick_handle.cancel()
        self._tick_handle = None
        try:
            self.state.tick(full=False, budget=TICK_VISITS)
            for hook in self.tick_hooks:
                hook()
        except Exception:  # noqa: BLE001 - our bug must not stop the cluster
            log.exception("cluster tick failed")
        if self.state.replication.backlog and self._tick_handle is None:
            # More partitions to visit than one tick may: the rest on the next loop turn.
            self._tick_handle = asyncio.get_running_loop().call_soon(self._tick, False)

    async def _sweep_connections(self) -> None:
        """Close idle and stalled client connections (emulator/server/limits.py)."""
        while True:
            await asyncio.sleep(self.limits.sweep_interval())
            self.limits.sweep()

    async def _periodic(self) -> None:
        last_retention = time.monotonic()
        while True:
            await asyncio.sleep(TICK_INTERVAL_S)
            self._tick()
            if time.monotonic() - last_retention >= RETENTION_INTERVAL_S:
                last_retention = time.monotonic()
                try:
                    self.state.apply_retention(full=False)
                except Exception:  # noqa: BLE001
                    log.exception("retention failed")

    async def _cleaner(self) -> None:
        """Kafka's cleaner thread, cooperatively: slices of at most CLEANER_SLICE_S of
        cleaning steps, each followed by a return to the event loop so waiting
        requests are served; log.cleaner.backoff.ms between checks when idle (the
        emulator's default is 1000 ms, Kafka's 15000: --config
        log.cleaner.backoff.ms=15000 for Kafka's)."""
        while True:
            busy = self._clean_slice()
            backoff = int(self.state.config.get("log.cleaner.backoff.ms") or 1000) / 1000
            await asyncio.sleep(0 if busy else backoff)

    def _clean_slice(self) -> bool:
        deadline = time.monotonic() + CLEANER_SLICE_S
        try:
            while self.state.cleaner.step():
                if time.monotonic() >= deadline:
                    return True
        except Exception:  # noqa: BLE001 - our bug must not stop the cluster
            log.exception("log cleaner step failed; the partition is marked uncleanable")
            self.state.cleaner.mark_uncleanable()
            return False
        return False

    async def run_sliced(self, s: Sliced) -> tuple[Any, int]:
        """Advance a large operation's steps STEP_SLICE_S at a time, returning to the
        event loop between slices so that every other client is served meanwhile (one
        slice is the longest anyone waits behind it). Returns its result and the time
        its slices took (for request_percentage). Abandoned (the connection or broker
        went away), the steps are closed and the domain undoes what it had built."""
        steps = s.steps
        spent = 0
        _hold_gc()
        try:
            while True:
                t0 = time.perf_counter_ns()
                deadline = t0 + STEP_SLICE_NS
                try:
                    while True:
                        next(steps)
                        if time.perf_counter_ns() >= deadline:
                            break
                except StopIteration as done:
                    return done.value, spent + time.perf_counter_ns() - t0
                spent += time.perf_counter_ns() - t0
                await asyncio.sleep(0)
        finally:
            steps.close()
            _release_gc()

    async def wait_delayed(self, d: Delayed) -> dict:
        """Re-run ``d.check`` after each change to its keys (any change when it names
        none) until it answers, or ``d.expire`` at its deadline."""
        if not d.checked:
            r = d.check()
            if r is not None:
                return r
        if self._tick_handle is not None:
            # A tick is due on the next loop turn, most often asked for by this very
            # request's change (an acks=all append whose followers are to fetch): run it
            # now, and a request it completes is answered without parking (a future, a
            # timer, and two more loop turns before the answer is written).
            self._tick()
            r = d.check()
            if r is not None:
                return r
        loop = asyncio.get_running_loop()
        parked, keys = _Parked(), d.keys
        if keys is None:
            self._waiters.add(parked)
        else:
            keyed = self._keyed
            for k in keys:
                keyed.setdefault(k, set()).add(parked)
        try:
            while True:
                remaining = d.deadline_ms - self.state.now()
                if remaining <= 0:
                    return d.expire()
                # Woken by a change it waits on, or by this timer to look at the deadline
                # (a timer handle, not asyncio.wait_for's waiter future and callbacks:
                # this runs for every acks=all produce request).
                fut = parked.fut = loop.create_future()
                timer = loop.call_later(min(remaining, 1000) / 1000, _wake, fut)
                try:
                    await fut
                finally:
                    timer.cancel()
                r = d.check()
                if r is not None:
                    return r
        finally:
            parked.fut = None
            if keys is None:
                self._waiters.discard(parked)
            else:
                for k in keys:
                    waiting = keyed.get(k)
                    if waiting is not None:
                        waiting.discard(parked)
                        if not waiting:
                            del keyed[k]

    # ---- connections ----------------------------------------------------------------
    async def _serve(
        self, bl: BrokerListener, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        peer = writer.get_extra_info("peername") or ("?", 0)
        bid = bl.broker.id
        if not bl.broker.alive or bl.broker.crashed or (
            self.faults.client_allowed and not self.faults.client_allowed(bid, peer[0])
        ):
            writer.transport.abort()
            return
        conn = await self.limits.admit(bid, peer[0], writer.transport, bl.name)
        if conn is None:
            writer.transport.abort()
            return
        if not bl.broker.alive or bl.broker.crashed or bl.server is None:
            self.limits.release(conn)  # it waited for a slot while the broker stopped
            writer.transport.abort()
            return
        self._conn_ids += 1
        conn_id = self._conn_ids
        bl.connections.add(writer)
        task = asyncio.current_task()
        if task is not None:
            bl.tasks.add(task)
        # Responses are corked while the next request is already here, whole
        # (librdkafka pipelines one ProduceRequest per partition): the answers to a run
        # of such requests leave in one send(), after the last of them, or on the loop's
        # next turn should one of them wait. Order and content are Kafka's; the client
        # gets several answers per read instead of one wake-up each.
        outbox: list[bytes] = []
        outbox_bytes = 0

        def flush() -> None:
            nonlocal outbox_bytes
            if outbox and not writer.is_closing():
                writer.write(outbox[0] if len(outbox) == 1 else b"".join(outbox))
            outbox.clear()
            outbox_bytes = 0

        loop = asyncio.get_running_loop()
        try:
            session = await self._secure(bl, writer, peer)
            if session is None:
                return
            while True:
                conn.busy = False
                try:
                    head = await reader.readexactly(4)
                except (asyncio.IncompleteReadError, ConnectionError, RuntimeError):
                    return  # RuntimeError: uvloop, the sweeper closed the transport
                conn.last_active = time.monotonic()
                size = _SIZE.unpack(head)[0]
                if size < 0 or size > self.max_request_bytes:
                    hint = ""
                    if head[0] == 0x16 and head[1] == 0x03:
                        hint = (f" (a TLS ClientHello on the {bl.protocol} listener "
                                f"{bl.name}: the client uses SSL, the listener does not)")
                    log.warning(
                        "broker %d: closing connection from %s:%s: request size %d is "
                        "outside 0..%d (socket.request.max.bytes)%s",
                        bid, peer[0], peer[1], size, self.max_request_bytes, hint)
                    return
                frame = await self._read_frame(reader, conn, size)
                if frame is None:
                    return
                # Not busy while it is served: Kafka's idle timer closes a connection
                # whose own request (a long poll) outlasts connections.max.idle.ms.
                try:
                    if session.state == RAW_TOKENS:
                        out = self._raw_token(session, frame)
                    else:
                        out = await self._process(bl, conn_id, peer[0], frame, session)
                except CloseConnection as e:
                    log.warning("broker %d: closing connection from %s:%s: %s",
                                bid, peer[0], peer[1], e)
                    return
                if self.frame_observers and len(frame) >= 4:
                    key, version = struct.unpack_from(">hh", frame, 0)
                    for obs in self.frame_observers:
                        obs(bid, key, version, frame, out)
                if out is not None:
                    if writer.is_closing():
                        return  # closed while the request was served (broker stopped, sweeper)
                    conn.busy = True  # its response is being written: not idle
                    outbox.append(out)
                    outbox_bytes += len(out)
                    if outbox_bytes >= OUTBOX_FLUSH_BYTES or not _frame_waiting(reader):
                        flush()  # nothing more to answer at once (or much already): send
                    elif len(outbox) == 1:
                        loop.call_soon(flush)  # should the next one wait, this goes now
                    await writer.drain()
                self.limits.free(size)
                conn.frame_size = -1
                conn.last_active = time.monotonic()
                if session.close_after_response is not None:
                    flush()
                    log.warning("broker %d: closing connection from %s:%s on listener %s: %s",
                                bid, peer[0], peer[1], bl.name, session.close_after_response)
                    return
        except ConnectionError:
            return
        finally:
            flush()  # the answers already made leave before the connection closes
            if conn.frame_size == -2:  # its request bytes were still reserved
                self.limits.free(conn.frame_read)
            self.limits.release(conn)
            bl.connections.discard(writer)
            if task is not None:
                bl.tasks.discard(task)
            writer.transport.abort()

    async def _read_frame(self, reader: asyncio.StreamReader, conn: ConnState,
                          size: int) -> bytes | None:
        """A request body of ``size`` bytes, read as it arrives so that the sweeper sees
        progress (a stalled frame is closed, a slow but moving one is not), within the
        queued.max.request.bytes budget. None when the peer went away."""
        # Muted while it waits for the budget, and idle all the same: Kafka's idle timer
        # closes a connection muted for memory (its last activity: the size just read).
        if not await self.limits.reserve(size, conn.transport.is_closing):
            return None  # closed (idle) while it waited; it holds none of the budget
        conn.frame_size, conn.frame_read = size, 0
        conn.last_active = time.monotonic()
        chunks: list[bytes] = []
        try:
            if conn.transport.is_closing():
                raise ConnectionAbortedError
            while conn.frame_read < size:
                chunk = await reader.read(size - conn.frame_read)
                if not chunk:
                    self.limits.free(size)
                    return None
                chunks.append(chunk)
                conn.frame_read += len(chunk)
                conn.last_active = time.monotonic()
        except (ConnectionError, RuntimeError):  # RuntimeError: uvloop, transport closed
            self.limits.free(size)
            return None
        except BaseException:
            self.limits.free(size)
            raise
        # Reserved until the response is written (``free`` in _serve); -2 tells the
        # connection's cleanup to free it if the connection ends first.
        conn.frame_size, conn.frame_read = -2, size
        return chunks[0] if len(chunks) == 1 else b"".join(chunks)

    async def _secure(self, bl: BrokerListener, writer: asyncio.StreamWriter,
                      peer: tuple) -> Session | None:
        """The connection's Session; on TLS listeners (handshake done by _TlsServer) with
        the principal of the client certificate, as Kafka's default principal builder."""
        tls_principal = None
        if bl.protocol in ("SSL", "SASL_SSL"):
            tls_principal = peer_principal(writer.get_extra_info("ssl_object"))
        return Session.for_listener(bl.name, bl.protocol, tls_principal)

    def _raw_token(self, session: Session, frame: bytes) -> bytes:
        """SaslHandshake v0: SASL tokens travel size-prefixed without Kafka headers."""
        assert self.security is not None
        try:
            out = session.authenticate(frame, self.security, self.state.now())
        except AuthenticationFailed as e:
            raise CloseConnection(f"{session.mechanism} authentication failed: {e}") from e
        return _SIZE.pack(len(out)) + out

    async def _process(self, bl: BrokerListener, conn_id: int, host: str,
                       frame: bytes, session: Session | None = None) -> bytes | None:
        try:
            hdr = read_request_header(frame)
        except (DecodeError, IndexError, struct.error) as e:
            raise CloseConnection(f"malformed request header ({e})") from e
        key, version = hdr.api_key, hdr.api_version
        if session is not None:
            why = session.gate(key, self.state.now())
            if why is not None:
                raise CloseConnection(why)
        info = HANDLERS.get(key)
        adv = self.advertised.get(key)
        if info is None or adv is None:
            raise CloseConnection(f"unknown or unadvertised API key {key} (v{version})")
        lo, hi = info.accepted
        if not (max(lo, adv[0]) <= version <= min(hi, adv[1])):
            if key == 18:  # ApiVersions: answer with error 35 and a v0 body
                body = api_versions_unsupported(self._ctx(bl, hdr, conn_id, host, session))
                return self._frame(key, 0, hdr.correlation_id, body)
            raise CloseConnection(
                f"unsupported version {version} of API key {key} "
                f"(serving {max(lo, adv[0])}-{min(hi, adv[1])})")
        try:
            req, end = REQUESTS[key].decode(frame, version, hdr.body_offset)
        except DecodeError as e:
            raise CloseConnection(f"malformed {REQUESTS[key].msg.name} v{version}: {e}") from e
        ctx = self._ctx(bl, hdr, conn_id, host, session)
        f = self.faults
        if f.latency is not None:
            delay = f.latency(bl.broker.id, key)
            if delay > 0:
                await asyncio.sleep(delay)
        name = REQUESTS[key].msg.name
        injected = (f.inject_error(bl.broker.id, key, req, hdr.client_id)
                    if f.inject_error else None)
        if injected is None:
            result = await self._handle(info.module, ctx, req, version)
        else:
            result = await self._inject(info.module, ctx, req, version, injected)
            if key == 0 and req.get("acks") == 0:
                # Kafka answers an acks=0 produce that failed by closing the connection.
                raise CloseConnection(f"fault: {name} with acks=0 answered error "
                                      f"{injected.error}: closing, as Kafka does")
        if result is NO_RESPONSE:
            return None
        if f.drop_response is not None and f.drop_response(bl.broker.id, key, hdr.client_id):
            raise CloseConnection(f"fault: dropped the response to {name}")
        try:
            if ctx.large:
                # The answer to a large operation (DescribeConfigs of thousands of
                # resources: ~1 s to encode) is encoded in a thread: the codec is Python,
                # so the loop gets the GIL back every switch interval (5 ms) meanwhile.
                return await asyncio.get_running_loop().run_in_executor(
                    None, self._frame, key, version, hdr.correlation_id, result)
            return self._frame(key, version, hdr.correlation_id, result)
        except Exception:  # noqa: BLE001 - our bug: the handler built a bad response
            log.exception("broker %d: encoding the %s v%d response failed", bl.broker.id,
                          name, version)
            try:
                return self._frame(key, version, hdr.correlation_id,
                                   safe_error_response(key, version, req, E.UNKNOWN_SERVER_ERROR))
            except Exception as e:  # noqa: BLE001 - never let the error path fail
                raise CloseConnection(f"could not encode even an error response to {name} "
                                      f"v{version}: {e}") from e

    async def _handle(self, module: Any, ctx: RequestContext, req: dict, version: int) -> Any:
        """The handler's answer; our bug (any exception) answers UNKNOWN_SERVER_ERROR
        where the API carries errors, and is logged (tests fail on it: emulator.testing)."""
        try:
            if ctx.api_key == 0 and self.batches.wanted(req):
                # large compressed batches are checked off the loop first
                await self.batches.precheck(ctx, req, version)
            t0 = time.perf_counter_ns()
            result = module.handle(ctx, req, version)
            spent = time.perf_counter_ns() - t0
            while True:  # a Delayed may answer with a Sliced, and a Sliced with a Delayed
                if isinstance(result, Sliced):
                    result, dt = await self.run_sliced(result)
                    spent += dt
                    ctx.large = True
                elif isinstance(result, Delayed):
                    result = await self.wait_delayed(result)
                else:
                    break
            return self._request_quota(ctx, result, spent)
        except Exception as e:  # noqa: BLE001 - our bug: answer an error, keep serving
            log.exception("broker %d: %s v%d failed", ctx.broker_id,
                          REQUESTS[ctx.api_key].msg.name, version)
            return safe_error_response(ctx.api_key, version, req, E.UNKNOWN_SERVER_ERROR,
                                       f"{type(e).__name__}: {e}")

    def _request_quota(self, ctx: RequestContext, result: Any, spent_ns: int) -> Any:
        """request_percentage (KIP-124): the handler's time counts against the client's
        quota; the response carries the larger of its own and the request throttle."""
        quotas = self.services.get("quotas")
        if (quotas is None or not isinstance(result, dict) or ctx.api_key in REQUEST_QUOTA_EXEMPT
                or not quotas.enforces("request_percentage")):
            return result
        user = ctx.principal.split(":", 1)[-1]
        throttle = quotas.record_request_time(user, ctx.client_id or "", spent_ns,
                                              self.state.now())
        if throttle > (result.get("throttle_time_ms") or 0):
            result = dict(result, throttle_time_ms=throttle)
        return result

    async def _inject(self, module: Any, ctx: RequestContext, req: dict, version: int,
                      injected: Any) -> Any:
        """Answer an injected error: for the whole request, or (a topic/partition fault)
        for the items it names while the handler serves the others."""
        key, code = ctx.api_key, injected.error
        if injected.topic is None:
            return safe_error_response(key, version, req, code)
        hit, rest, more = split_request(self.state, req, injected.topic, injected.partition)
        errors, per_item = build_error_response(key, version, hit or req, code)
        if not per_item:  # the API has no per-item place: the request as a whole fails
            return safe_error_response(key, version, req, code)
        if not more:
            return errors
        result = await self._handle(module, ctx, rest, version)
        return result if result is NO_RESPONSE else merge(result, errors)

    def _ctx(self, bl: BrokerListener, hdr: Any, conn_id: int, host: str,
             session: Session | None = None) -> RequestContext:
        return RequestContext(self.state, bl.broker.id, hdr.api_key, hdr.api_version,
                              hdr.correlation_id, hdr.client_id, conn_id, host, self.services,
                              session=session, listener=bl.name if not bl.primary else None)

    @staticmethod
    def _frame(key: int, version: int, corr: int, body: dict) -> bytes:
        parts = [b"", response_header(key, version, corr)]
        RESPONSES[key].encode_into(body, version, parts)
        parts[0] = _SIZE.pack(sum(map(len, parts)))
        return b"".join(parts)  # one copy: a fetch answer may carry megabytes
