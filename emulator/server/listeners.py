"""A broker's listeners: the record of one (its address, name and security protocol,
its connections) and the accept loop of TLS listeners.

Plain listeners are asyncio servers (emulator/server/app.py opens them); a TLS
listener accepts sockets itself so that a failed handshake is one clear log line.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import ssl
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from emulator.cluster.state import Broker

log = logging.getLogger("kafka_emulator")


@dataclass
class BrokerListener:
    broker: Broker
    bind_host: str
    server: asyncio.base_events.Server | TlsServer | None = None
    connections: set[asyncio.StreamWriter] = field(default_factory=set)
    tasks: set[asyncio.Task] = field(default_factory=set)
    # The port to bind, kept apart from the advertised one (broker.port), which may be
    # a mapped port: a restarted broker must listen where it listened before.
    bind_port: int = -1
    # Kafka's listener name and its security protocol (PLAINTEXT, SSL, SASL_*).
    name: str = "PLAINTEXT"
    protocol: str = "PLAINTEXT"
    primary: bool = True  # the first listener: its port is broker.port


class TlsServer:
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
                    ) -> TlsServer:
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

    def is_serving(self) -> bool:
        """Whether it still accepts (asyncio.Server.is_serving): False once closed."""
        return self.sockets[0].fileno() != -1

    def close(self) -> None:
        self._task.cancel()
        for t in list(self._conns):
            t.cancel()
        self.sockets[0].close()

    async def wait_closed(self) -> None:
        await asyncio.gather(self._task, *self._conns, return_exceptions=True)
