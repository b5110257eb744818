"""HTTP/1.1 for the server's small JSON listeners (the control plane, the schema
registry), parsed by h11: one connection's request loop and one response, so each
listener only routes and renders.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence

import h11

# Answers one request (writing the response itself) and says whether the connection may
# carry another: False ends it (the control plane's event streams end it themselves).
Respond = Callable[[h11.Connection, h11.Request, bytes], Awaitable[bool]]
# Answers a request that cannot be read (400: not HTTP, 413: its body is over the limit)
# with the listener's own error format; the connection closes after it.
Refuse = Callable[[h11.Connection, int, str], Awaitable[None]]


async def serve_connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                           respond: Respond, refuse: Refuse, max_body: int,
                           writers: set[asyncio.StreamWriter]) -> None:
    """Read requests from one connection and answer each in turn until either side is
    done; ``writers`` holds the connection while it is open (a listener's stop aborts
    them). Every way out closes the connection."""
    conn = h11.Connection(h11.SERVER)
    writers.add(writer)
    request: h11.Request | None = None
    body = bytearray()
    try:
        while True:
            try:
                event = conn.next_event()
            except h11.RemoteProtocolError as e:
                await refuse(conn, 400, f"bad HTTP request: {e}")
                return
            if event is h11.NEED_DATA:
                conn.receive_data(await reader.read(65536))
                continue
            if isinstance(event, h11.Request):
                request, body = event, bytearray()
            elif isinstance(event, h11.Data):
                body += event.data
                if len(body) > max_body:
                    await refuse(conn, 413, f"body over {max_body} bytes")
                    return
            elif isinstance(event, h11.EndOfMessage) and request is not None:
                if not await respond(conn, request, bytes(body)):
                    return
                if conn.our_state is h11.MUST_CLOSE or conn.their_state is h11.MUST_CLOSE:
                    return
                conn.start_next_cycle()
                request = None
            elif isinstance(event, h11.ConnectionClosed) or event is h11.PAUSED:
                return
    except (ConnectionError, asyncio.IncompleteReadError, h11.LocalProtocolError):
        return
    finally:
        writers.discard(writer)
        writer.transport.abort()


async def send_response(conn: h11.Connection, writer: asyncio.StreamWriter, status: int,
                        data: bytes, content_type: str,
                        extra_headers: Sequence[tuple[str, str]] = ()) -> None:
    """One whole response, unless one is already under way on ``conn``."""
    if conn.our_state not in (h11.IDLE, h11.SEND_RESPONSE):
        return
    headers = [("Content-Type", content_type), ("Content-Length", str(len(data))),
               *extra_headers]
    out = conn.send(h11.Response(status_code=status, headers=headers))
    out += conn.send(h11.Data(data=data))
    out += conn.send(h11.EndOfMessage())
    writer.write(out)
    await writer.drain()
