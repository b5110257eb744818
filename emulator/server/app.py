"""The asyncio nucleus: one listener per virtual broker, framing, dispatch, waiting.

This is the only layer that awaits. It reads size-prefixed frames, decodes the
header and body with ``wire``, calls the handler for the API key, turns a
``Delayed`` into an awaitable (woken whenever the cluster changes), and writes the
responses of a connection in request order, as a Kafka broker does (it reads the
next request only after answering the previous one).
"""

from __future__ import annotations

import asyncio
import logging
import struct
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from emulator.cluster.state import Broker, ClusterState
from emulator.handlers import HANDLERS
from emulator.handlers.api_018_api_versions import unsupported as api_versions_unsupported
from emulator.handlers.base import NO_RESPONSE, Delayed, RequestContext
from emulator.versions import advertised
from wire.codec import DecodeError
from wire.errors import ErrorCode as E
from wire.frames import read_request_header, response_header
from wire.messages import REQUESTS, RESPONSES

log = logging.getLogger("kafka_emulator")
_SIZE = struct.Struct(">i")
TICK_INTERVAL_S = 0.05
RETENTION_INTERVAL_S = 1.0


class CloseConnection(Exception):
    """Raised to drop a client connection after logging why."""


@dataclass
class FaultHooks:
    """Server-side fault points, filled by the fault injector (emulator.faults)."""

    # (broker_id, api_key, request) -> error code to answer with, or None
    inject_error: Callable[[int, int, dict], int | None] | None = None
    # (broker_id, api_key) -> extra seconds before answering
    latency: Callable[[int, int], float] | None = None
    # (broker_id, api_key) -> True to apply the request but drop its response
    drop_response: Callable[[int, int], bool] | None = None
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


class EmulatorServer:
    """Runs a ClusterState behind N Kafka listeners in the current event loop."""

    def __init__(
        self,
        state: ClusterState,
        bind_host: str = "127.0.0.1",
        kafka_version: str = "4.1",
        services: dict[str, Any] | None = None,
    ) -> None:
        self.state = state
        self.bind_host = bind_host
        implemented = {k: h.versions for k, h in HANDLERS.items()}
        self.advertised = advertised(implemented, kafka_version)
        self.services: dict[str, Any] = {"advertised": self.advertised, **(services or {})}
        self.listeners: dict[int, BrokerListener] = {
            b.id: BrokerListener(b, bind_host, bind_port=b.port) for b in state.brokers.values()
        }
        self.faults = FaultHooks()
        self.max_request_bytes = int(state.config["socket.request.max.bytes"])
        self._waiters: set[asyncio.Future] = set()
        self._tick_handle: asyncio.Handle | None = None
        self._tasks: list[asyncio.Task] = []
        self._conn_ids = 0
        self.tick_hooks: list[Callable[[], None]] = []
        # (broker id, api key, version, request frame, response frame or None): tools
        # and tests that capture real clients' bytes (tests/golden).
        self.frame_observers: list[Callable[[int, int, int, bytes, bytes | None], None]] = []
        state.on_change = self._on_change

    # ---- lifecycle ---------------------------------------------------------------
    async def start(self) -> None:
        for bl in self.listeners.values():
            await self._open(bl)
        loop = asyncio.get_running_loop()
        self._tasks.append(loop.create_task(self._periodic()))

    async def _open(self, bl: BrokerListener) -> None:
        async def on_conn(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
            try:
                await self._serve(bl, r, w)
            except asyncio.CancelledError:
                pass  # the listener closed (broker stopped): end quietly

        bl.server = await asyncio.start_server(
            on_conn, bl.bind_host, max(bl.bind_port, 0), reuse_address=True, limit=1 << 20
        )
        if bl.bind_port <= 0:
            bl.bind_port = bl.server.sockets[0].getsockname()[1]
        if bl.broker.port == 0:
            bl.broker.port = bl.bind_port

    async def close_listener(self, broker_id: int) -> None:
        """Stop accepting and cut every connection: clients see a dead broker."""
        bl = self.listeners[broker_id]
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
        bl = self.listeners[broker_id]
        if bl.server is None:
            await self._open(bl)

    def cut_client_connections(self, broker_id: int) -> None:
        for w in list(self.listeners[broker_id].connections):
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
        self.state.on_change = None

    # ---- change notification and ticks ---------------------------------------------
    def _on_change(self) -> None:
        for f in self._waiters:
            if not f.done():
                f.set_result(None)
        self._waiters.clear()
        if self._tick_handle is None:
            loop = asyncio.get_running_loop()
            self._tick_handle = loop.call_soon(self._tick, False)

    def _tick(self, full: bool = True) -> None:
        """A full tick on the timer; right after a change, only the partitions with work."""
        if full and self._tick_handle is not None:
            self._tick_handle.cancel()
        self._tick_handle = None
        try:
            self.state.tick(full)
            for hook in self.tick_hooks:
                hook()
        except Exception:  # noqa: BLE001 - our bug must not stop the cluster
            log.exception("cluster tick failed")

    async def _periodic(self) -> None:
        last_retention = time.monotonic()
        while True:
            await asyncio.sleep(TICK_INTERVAL_S)
            self._tick()
            if time.monotonic() - last_retention >= RETENTION_INTERVAL_S:
                last_retention = time.monotonic()
                try:
                    self.state.apply_retention()
                except Exception:  # noqa: BLE001
                    log.exception("retention failed")

    async def wait_delayed(self, d: Delayed) -> dict:
        loop = asyncio.get_running_loop()
        while True:
            r = d.check()
            if r is not None:
                return r
            remaining = d.deadline_ms - self.state.now()
            if remaining <= 0:
                return d.expire()
            fut = loop.create_future()
            self._waiters.add(fut)
            try:
                await asyncio.wait_for(fut, min(remaining, 1000) / 1000)
            except TimeoutError:
                pass
            finally:
                self._waiters.discard(fut)

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
        self._conn_ids += 1
        conn_id = self._conn_ids
        bl.connections.add(writer)
        task = asyncio.current_task()
        if task is not None:
            bl.tasks.add(task)
        try:
            while True:
                try:
                    head = await reader.readexactly(4)
                except (asyncio.IncompleteReadError, ConnectionError):
                    return
                size = _SIZE.unpack(head)[0]
                if size < 0 or size > self.max_request_bytes:
                    log.warning(
                        "broker %d: closing connection from %s:%s: request size %d is "
                        "outside 0..%d (socket.request.max.bytes)",
                        bid, peer[0], peer[1], size, self.max_request_bytes)
                    return
                try:
                    frame = await reader.readexactly(size)
                except (asyncio.IncompleteReadError, ConnectionError):
                    return
                try:
                    out = await self._process(bl, conn_id, peer[0], frame)
                except CloseConnection as e:
                    log.warning("broker %d: closing connection from %s:%s: %s",
                                bid, peer[0], peer[1], e)
                    return
                if self.frame_observers and len(frame) >= 4:
                    key, version = struct.unpack_from(">hh", frame, 0)
                    for obs in self.frame_observers:
                        obs(bid, key, version, frame, out)
                if out is not None:
                    writer.write(out)
                    await writer.drain()
        except ConnectionError:
            return
        finally:
            bl.connections.discard(writer)
            if task is not None:
                bl.tasks.discard(task)
            writer.transport.abort()

    async def _process(self, bl: BrokerListener, conn_id: int, host: str,
                       frame: bytes) -> bytes | None:
        try:
            hdr = read_request_header(frame)
        except (DecodeError, IndexError, struct.error) as e:
            raise CloseConnection(f"malformed request header ({e})") from e
        key, version = hdr.api_key, hdr.api_version
        info = HANDLERS.get(key)
        adv = self.advertised.get(key)
        if info is None or adv is None:
            raise CloseConnection(f"unknown or unadvertised API key {key} (v{version})")
        lo, hi = info.accepted
        if not (lo <= version <= hi and version <= adv[1]):
            if key == 18:  # ApiVersions: answer with error 35 and a v0 body
                body = api_versions_unsupported(self._ctx(bl, hdr, conn_id, host))
                return self._frame(key, 0, hdr.correlation_id, body)
            raise CloseConnection(
                f"unsupported version {version} of API key {key} (serving {lo}-{min(hi, adv[1])})")
        try:
            req, end = REQUESTS[key].decode(frame, version, hdr.body_offset)
        except DecodeError as e:
            raise CloseConnection(f"malformed {REQUESTS[key].msg.name} v{version}: {e}") from e
        ctx = self._ctx(bl, hdr, conn_id, host)
        f = self.faults
        if f.latency is not None:
            delay = f.latency(bl.broker.id, key)
            if delay > 0:
                await asyncio.sleep(delay)
        injected = f.inject_error(bl.broker.id, key, req) if f.inject_error else None
        if injected is not None:
            from emulator.handlers.errors import error_response

            result: Any = error_response(key, version, req, injected)
        else:
            try:
                result = info.module.handle(ctx, req, version)
                if isinstance(result, Delayed):
                    result = await self.wait_delayed(result)
            except Exception as e:  # noqa: BLE001 - our bug: answer an error, keep serving
                log.exception("broker %d: %s v%d failed", bl.broker.id,
                              REQUESTS[key].msg.name, version)
                from emulator.handlers.errors import error_response

                result = error_response(key, version, req, E.UNKNOWN_SERVER_ERROR, str(e))
        if result is NO_RESPONSE:
            return None
        if f.drop_response is not None and f.drop_response(bl.broker.id, key):
            raise CloseConnection(f"fault: dropped the response to {REQUESTS[key].msg.name}")
        return self._frame(key, version, hdr.correlation_id, result)

    def _ctx(self, bl: BrokerListener, hdr: Any, conn_id: int, host: str) -> RequestContext:
        return RequestContext(self.state, bl.broker.id, hdr.api_key, hdr.api_version,
                              hdr.correlation_id, hdr.client_id, conn_id, host, self.services)

    @staticmethod
    def _frame(key: int, version: int, corr: int, body: dict) -> bytes:
        parts = [b"", response_header(key, version, corr)]
        RESPONSES[key].encode_into(body, version, parts)
        size = sum(len(p) for p in parts)
        parts[0] = _SIZE.pack(size)
        return b"".join(parts)
