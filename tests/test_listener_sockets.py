"""The brokers' listeners bind their own socket when the host is an address
(emulator/server/app.py bound_socket: no resolution at start); their connections must
still be what start_server's would be: TCP_NODELAY on, on uvloop and on asyncio's own
loop alike (asyncio sets it only on sockets whose proto says TCP; without it a small
response waits for the client's delayed ACK, up to 40 ms)."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Callable

import pytest

from emulator.runtime import Cluster, new_event_loop


async def _nodelay_of_a_client_connection() -> int:
    c = Cluster(1, port=0)
    await c.start_async()
    try:
        host, port = c.bootstrap_servers.split(":")
        _, w = await asyncio.open_connection(host, int(port))
        for _ in range(200):
            conns = c.server.client_connections(1)
            if conns:
                break
            await asyncio.sleep(0.005)
        sock = conns[0].get_extra_info("socket")
        w.close()
        return sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
    finally:
        await c.stop_async()


@pytest.mark.parametrize("make_loop", [asyncio.new_event_loop, new_event_loop],
                         ids=["asyncio", "default (uvloop where built)"])
def test_client_connections_have_nodelay(
        make_loop: Callable[[], asyncio.AbstractEventLoop]) -> None:
    loop = make_loop()
    try:
        assert loop.run_until_complete(_nodelay_of_a_client_connection()) != 0
    finally:
        loop.close()
