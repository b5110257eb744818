"""A blocking socket over wire.connection.ClientConnection: the raw Kafka client of
the tools, tests and benchmarks that send exact requests (Kafka's own clients hide
error codes and retry).

It lives outside wire/, which does no I/O (docs/architecture.md); the framing,
correlation ids and header versions are ClientConnection's (wire/connection.py), so this
only moves bytes.
"""

from __future__ import annotations

import socket
from typing import Any

from wire.connection import Body, ClientConnection, Response

_RECV = 1 << 16

# How long a raw connection that may face a real Kafka waits for one answer: Kafka's own
# clients' request.timeout.ms default (30 s), the time they give a broker before they call
# a request lost. A JVM broker answers most requests in milliseconds, but one sharing two
# cores with other JVMs took over 10 s (the socket timeout this replaces) to refuse a
# CreateAcls of 10,001 bindings: slow is not lost, and only a lost answer should fail.
KAFKA_REQUEST_TIMEOUT_S = 30.0


class ConnectionClosed(ConnectionError):
    """The broker closed the connection before the answer came."""


class BlockingConnection:
    """One socket to one broker, speaking Kafka with blocking calls."""

    def __init__(self, sock: socket.socket, client_id: str | None = "kafka-emulator",
                 first_correlation_id: int = 1) -> None:
        self.sock = sock
        self.protocol = ClientConnection(client_id, first_correlation_id)

    @classmethod
    def connect(cls, host: str, port: int, client_id: str | None = "kafka-emulator",
                timeout: float | None = 10.0, first_correlation_id: int = 1,
                ) -> BlockingConnection:
        return cls(socket.create_connection((host, port), timeout=timeout), client_id,
                   first_correlation_id)

    @property
    def client_id(self) -> str | None:
        return self.protocol.client_id

    @client_id.setter
    def client_id(self, value: str | None) -> None:
        self.protocol.client_id = value

    def send(self, api_key: int, api_version: int, body: Body, *,
             correlation_id: int | None = None, expect_response: bool = True) -> int:
        """Send a request; returns its correlation id."""
        self.sock.sendall(self.protocol.send_request(
            api_key, api_version, body, correlation_id=correlation_id,
            expect_response=expect_response))
        return self.protocol.last_correlation_id

    def receive(self) -> Response:
        """The next response; ConnectionClosed when the broker closes first."""
        while True:
            resp = self.protocol.next_response()
            if resp is not None:
                return resp
            self._fill()

    def call(self, api_key: int, api_version: int, body: Body) -> dict[str, Any]:
        """One request and its response body."""
        self.send(api_key, api_version, body)
        return self.receive().body

    def send_raw(self, data: bytes) -> None:
        """Bytes as they are (a hand-made or malformed frame, a SASL v0 token frame)."""
        self.sock.sendall(data)

    def read_frame(self) -> bytes | None:
        """The next frame as it came (without its size), or None when the broker closed
        the connection first."""
        while True:
            frame = self.protocol.next_frame()
            if frame is not None:
                return frame
            try:
                self._fill()
            except ConnectionClosed:
                return None

    def closed(self) -> bool:
        """Has the broker closed the connection (blocking until it does, or until it
        sends something or the socket's timeout passes)?"""
        if self.protocol.buffered:
            return False
        try:
            data = self.sock.recv(_RECV)
        except ConnectionResetError:
            return True
        self.protocol.receive_data(data)
        return data == b""

    def _fill(self) -> None:
        data = self.sock.recv(_RECV)
        if not data:
            raise ConnectionClosed("the broker closed the connection")
        self.protocol.receive_data(data)

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> BlockingConnection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def call(sock: socket.socket, api_key: int, api_version: int, body: Body,
         client_id: str | None = "kafka-emulator", correlation_id: int = 1) -> dict[str, Any]:
    """One request and its answer on a socket the caller keeps using (a connection whose
    limits or timing a test watches at the socket level); BlockingConnection.call."""
    return BlockingConnection(sock, client_id, correlation_id).call(api_key, api_version, body)
