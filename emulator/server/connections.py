"""Serving one client connection: admission, framing, corking, the request budget.

A connection reads one size-prefixed frame at a time (its memory reserved first,
queued.max.request.bytes), has it served by the Dispatcher (emulator/server/dispatch.py)
and writes the responses in request order, as a Kafka broker does. The sizes, headers
and response frames are wire.connection.ServerConnection's.
"""

from __future__ import annotations

import asyncio
import logging
import struct
from collections.abc import Callable
from dataclasses import dataclass, field

from emulator.cluster.state import ClusterState
from emulator.security.config import Security
from emulator.security.sasl import AuthenticationFailed
from emulator.security.session import RAW_TOKENS, Session
from emulator.server.dispatch import CloseConnection, Dispatcher, FaultHooks
from emulator.server.limits import ConnectionLimits, ConnState
from emulator.server.listeners import BrokerListener
from wire.connection import (
    LARGE_FRAME,
    Frame,
    ServerConnection,
    frame_complete,
    frame_size,
    size_prefixed,
)

log = logging.getLogger("kafka_emulator")
# Corked responses (ClientConnections.serve) are written at once past this many bytes.
OUTBOX_FLUSH_BYTES = 1 << 18
FrameObserver = Callable[[int, int, int, bytes, "bytes | None"], None]


def _frame_waiting(reader: asyncio.StreamReader) -> bool:
    """Is a whole request frame already in the reader's buffer? (asyncio's
    StreamReader keeps it in ``_buffer``; without one, say no: nothing is corked.)"""
    buf = getattr(reader, "_buffer", None)
    return buf is not None and frame_complete(buf)



@dataclass(eq=False)
class ClientConnections:
    """The client connections of every listener of an EmulatorServer."""

    state: ClusterState
    limits: ConnectionLimits
    faults: FaultHooks
    dispatcher: Dispatcher
    security: Security | None
    max_request_bytes: int
    conn_ids: int = 0
    # (broker id, api key, version, request frame, response frame or None): tools and
    # tests that capture real clients' bytes (tests/golden).
    frame_observers: list[FrameObserver] = field(default_factory=list)

    async def serve(
        self, bl: BrokerListener, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        peer = writer.get_extra_info("peername") or ("?", 0)
        bid = bl.broker.id
        up = bl.broker.alive or bl.broker.unregistered  # unregistered: runs, fenced
        if not up or bl.broker.crashed or (
            self.faults.client_allowed and not self.faults.client_allowed(bid, peer[0])
        ):
            writer.transport.abort()
            return
        conn = await self.limits.admit(bid, peer[0], writer.transport, bl.name)
        if conn is None:
            writer.transport.abort()
            return
        if not (bl.broker.alive or bl.broker.unregistered) or bl.broker.crashed \
                or bl.server is None:
            self.limits.release(conn)  # it waited for a slot while the broker stopped
            writer.transport.abort()
            return
        self.conn_ids += 1
        conn_id = self.conn_ids
        bl.connections.add(writer)
        task = asyncio.current_task()
        if task is not None:
            bl.tasks.add(task)
        # Responses are corked while the next request is already here, whole
        # (librdkafka pipelines one ProduceRequest per partition): the answers to a run
        # of such requests leave in one send(), after the last of them, or on the loop's
        # next turn should one of them wait. Order and content are Kafka's; the client
        # gets several answers per read instead of one wake-up each.
        # A large answer comes in parts (wire.connection.encode_response_frame): written
        # with one writev, never joined into one buffer.
        outbox: list[bytes] = []
        outbox_bytes = 0

        def flush() -> None:
            nonlocal outbox_bytes
            if outbox and not writer.is_closing():
                if len(outbox) == 1:
                    writer.write(outbox[0])
                elif outbox_bytes < LARGE_FRAME:
                    writer.write(b"".join(outbox))
                else:
                    writer.writelines(outbox)
            outbox.clear()
            outbox_bytes = 0

        loop = asyncio.get_running_loop()
        wire = ServerConnection(self.max_request_bytes)
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
                conn.last_active = self.limits.clock()
                size = frame_size(head)
                if not wire.size_allowed(size):
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
                out: Frame | None
                try:
                    if session.state == RAW_TOKENS:
                        out = self._raw_token(session, frame)
                    else:
                        out = await self.dispatcher.process(bl, conn_id, peer[0], frame, session)
                except CloseConnection as e:
                    log.warning("broker %d: closing connection from %s:%s: %s",
                                bid, peer[0], peer[1], e)
                    return
                if self.frame_observers and len(frame) >= 4:
                    key, version = struct.unpack_from(">hh", frame, 0)
                    whole = out if out is None or isinstance(out, bytes) else b"".join(out)
                    for obs in self.frame_observers:
                        obs(bid, key, version, frame, whole)
                if out is not None:
                    if writer.is_closing():
                        return  # closed while the request was served (broker stopped, sweeper)
                    conn.busy = True  # its response is being written: not idle
                    if isinstance(out, bytes):
                        outbox.append(out)
                        outbox_bytes += len(out)
                    else:
                        outbox.extend(out)
                        outbox_bytes += sum(map(len, out))
                    if outbox_bytes >= OUTBOX_FLUSH_BYTES or not _frame_waiting(reader):
                        flush()  # nothing more to answer at once (or much already): send
                    elif len(outbox) == 1:
                        loop.call_soon(flush)  # should the next one wait, this goes now
                    await writer.drain()
                self.limits.free(size)
                conn.frame_size = -1
                conn.last_active = self.limits.clock()
                if session.close_after_response is not None:
                    flush()
                    log.warning("broker %d: closing connection from %s:%s on listener %s: %s",
                                bid, peer[0], peer[1], bl.name, session.close_after_response)
                    return
                if session.mute_ms > 0:
                    # throttled (--fidelity kafka): the answer leaves now, the next
                    # request is read once the throttle time is over, as Kafka mutes
                    mute, session.mute_ms = session.mute_ms, 0
                    flush()
                    await asyncio.sleep(mute / 1000)
        except ConnectionError:
            return
        finally:
            flush()  # the answers already made leave before the connection closes
            if conn.frame_size == -2:  # its request bytes were still reserved
                self.limits.free(conn.frame_read)
            self.limits.release(conn)
            share = self.dispatcher.services.share_if_built  # none built: no sessions
            if share is not None and bl.server is not None and bl.server.is_serving():
                # its share sessions close with it, as on Kafka; not when the broker
                # goes away (a crash or a shutdown closes its listener first): its
                # share-partitions' next leader loads what was written
                share.connection_closed(bid, conn_id)
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
        closing = conn.transport.is_closing
        if closing():
            return None  # closed (idle) meanwhile: it takes none of the budget
        if not self.limits.reserve_now(size) \
                and not await self.limits.reserve(size, closing):
            return None  # closed (idle) while it waited; it holds none of the budget
        conn.frame_size, conn.frame_read = size, 0
        conn.last_active = self.limits.clock()
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
                conn.last_active = self.limits.clock()
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
            # Imported here: emulator.server.tls loads cryptography's x509, which a
            # PLAINTEXT cluster never needs (docs/scale.md, start-up).
            from emulator.server.tls import peer_principal

            tls_principal = peer_principal(writer.get_extra_info("ssl_object"))
        return Session.for_listener(bl.name, bl.protocol, tls_principal)

    def _raw_token(self, session: Session, frame: bytes) -> bytes:
        """SaslHandshake v0: SASL tokens travel size-prefixed without Kafka headers."""
        assert self.security is not None
        try:
            out = session.authenticate(frame, self.security, self.state.now())
        except AuthenticationFailed as e:
            raise CloseConnection(f"{session.mechanism} authentication failed: {e}") from e
        return size_prefixed(out)
