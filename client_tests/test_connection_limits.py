"""Connection limits like Kafka's SocketServer (emulator/server/limits.py), over TCP:
max.connections.per.ip closes the extra connection, max.connections (broker-wide or per
listener) leaves it unread until a slot frees, max.connection.creation.rate delays new
connections, connections.max.idle.ms closes idle ones, a stalled frame is closed,
queued.max.request.bytes bounds the request bytes held across connections."""

from __future__ import annotations

import socket
import struct
import time
from collections.abc import Iterator

import pytest

from emulator import Cluster
from emulator.testing import wait_for
from wire.frames import decode_response, encode_request

API_VERSIONS = encode_request(18, 3, 1, "limits", {"client_software_name": "t",
                                                    "client_software_version": "1"})


def connect(c: Cluster) -> socket.socket:
    b = c.state.brokers[1]
    return socket.create_connection((b.host, b.port), timeout=10)


def answered(s: socket.socket, timeout: float) -> bool:
    """Send ApiVersions; True if the answer comes within ``timeout``."""
    s.settimeout(timeout)
    try:
        s.sendall(API_VERSIONS)
        head = s.recv(4, socket.MSG_WAITALL)
        if len(head) < 4:
            return False
        size = struct.unpack(">i", head)[0]
        body = s.recv(size, socket.MSG_WAITALL)
        return decode_response(18, 3, body)[1]["error_code"] == 0
    except (TimeoutError, ConnectionError):
        return False


def closed(s: socket.socket, timeout: float = 5.0) -> bool:
    s.settimeout(timeout)
    try:
        return s.recv(1) == b""
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False


@pytest.fixture
def limited(request: pytest.FixtureRequest) -> Iterator[Cluster]:
    with Cluster(brokers=1, port=0, config=request.param) as c:
        yield c


@pytest.mark.parametrize("limited", [{"max.connections.per.ip": "2"}], indirect=True)
def test_max_connections_per_ip_closes_the_extra_one(limited: Cluster) -> None:
    a, b = connect(limited), connect(limited)
    assert answered(a, 5) and answered(b, 5)
    extra = connect(limited)
    assert closed(extra)
    a.close()
    wait_for(lambda: limited.server.limits._per_ip.get((1, "127.0.0.1"), 0) < 2,
             "the closed connection to be released")
    again = connect(limited)
    assert answered(again, 5) and answered(b, 5)
    for s in (b, extra, again):
        s.close()


@pytest.mark.parametrize("limited", [{"max.connections.per.ip": "1",
                                      "max.connections.per.ip.overrides": "localhost:3"}],
                         indirect=True)
def test_max_connections_per_ip_overrides_name_their_own_limit(limited: Cluster) -> None:
    """An override (a host name, resolved to 127.0.0.1 as Kafka resolves it) replaces the
    default of 1 for that address: three connections are served, the fourth closed."""
    conns = [connect(limited) for _ in range(3)]
    assert all(answered(s, 5) for s in conns)
    extra = connect(limited)
    assert closed(extra)
    for s in (*conns, extra):
        s.close()


@pytest.mark.parametrize("limited", [{"max.connections": "2"}], indirect=True)
def test_max_connections_waits_for_a_slot(limited: Cluster) -> None:
    a, b = connect(limited), connect(limited)
    assert answered(a, 5) and answered(b, 5)
    waiting = connect(limited)  # the kernel accepts it; the broker reads nothing yet
    assert not answered(waiting, 0.5)
    a.close()
    waiting.settimeout(10)
    head = waiting.recv(4, socket.MSG_WAITALL)  # the request sent above is answered now
    assert len(head) == 4
    waiting.recv(struct.unpack(">i", head)[0], socket.MSG_WAITALL)
    assert answered(waiting, 5) and answered(b, 5)
    b.close()
    waiting.close()


@pytest.mark.parametrize("limited", [{"connections.max.idle.ms": "400"}], indirect=True)
def test_idle_connections_are_closed_busy_ones_are_not(limited: Cluster) -> None:
    idle, busy = connect(limited), connect(limited)
    assert answered(idle, 5)
    deadline = time.monotonic() + 1.5
    while time.monotonic() < deadline:  # a request every 100 ms keeps it open
        assert answered(busy, 5)
        time.sleep(0.1)
    assert closed(idle, 0.1)
    assert answered(busy, 5)
    idle.close()
    busy.close()


@pytest.mark.parametrize("limited", [{"connections.max.idle.ms": "500"}], indirect=True)
def test_a_stalled_frame_is_closed_and_its_bytes_freed(limited: Cluster) -> None:
    """Issue 18: stalled 100 MB frames were held indefinitely."""
    s = connect(limited)
    s.sendall(struct.pack(">i", 50_000_000) + b"\0" * 1_000_000)
    assert closed(s, 10)
    other = connect(limited)
    assert answered(other, 5)
    s.close()
    other.close()


@pytest.mark.parametrize("limited", [{"queued.max.request.bytes": "100000",
                                      "connections.max.idle.ms": "600"}], indirect=True)
def test_queued_max_request_bytes_bounds_requests_in_flight(limited: Cluster) -> None:
    too_big = connect(limited)
    too_big.sendall(struct.pack(">i", 200_000))
    assert closed(too_big)
    # A started 80 kB request holds 80 kB of the budget: another connection's request
    # waits, unread, until the stalled one is closed.
    stalled = connect(limited)
    stalled.sendall(struct.pack(">i", 80_000) + b"\0" * 100)
    wait_for(lambda: limited.server.limits.queued_bytes == 80_000, "the budget to be taken")
    padded = encode_request(18, 3, 1, "x" * 30_000, {"client_software_name": "t",
                                                     "client_software_version": "1"})
    waiting = connect(limited)
    waiting.sendall(padded)
    waiting.settimeout(0.3)
    with pytest.raises(TimeoutError):
        waiting.recv(4)
    assert closed(stalled, 10)  # the stall (min(idle, 30 s)) ends it, freeing the budget
    waiting.settimeout(10)
    assert len(waiting.recv(4, socket.MSG_WAITALL)) == 4
    wait_for(lambda: limited.server.limits.queued_bytes == 0, "the budget to be freed")
    for s in (too_big, stalled, waiting):
        s.close()


@pytest.mark.parametrize("limited", [{"max.connection.creation.rate": "1",
                                      "quota.window.num": "2"}], indirect=True)
def test_max_connection_creation_rate_delays_new_connections(limited: Cluster) -> None:
    """Kafka's ConnectionQuotas: the second connection within the first window puts the
    rate (2 over Kafka's minimum elapsed time of 1 window) over the quota of 1/s, so it
    waits (2 - 1) / 1 * 1 s, capped at one window, before it is read; the third, opened
    meanwhile, waits behind it (one acceptor per listener) and is then delayed itself.
    Nothing is refused."""
    first = connect(limited)
    assert answered(first, 5)
    second, third = connect(limited), connect(limited)
    assert not answered(second, 0.3)  # delayed by a full window (1 s)
    third.sendall(API_VERSIONS)
    second.settimeout(10)
    head = second.recv(4, socket.MSG_WAITALL)  # the request sent above, answered later
    second.recv(struct.unpack(">i", head)[0], socket.MSG_WAITALL)
    third.settimeout(0.3)
    with pytest.raises(TimeoutError):  # its own delay starts after the second's
        third.recv(4)
    third.settimeout(10)
    assert len(third.recv(4, socket.MSG_WAITALL)) == 4
    assert answered(first, 5) and answered(second, 5)
    for s in (first, second, third):
        s.close()


@pytest.fixture
def two_listeners() -> Iterator[Cluster]:
    with Cluster(brokers=1, port=0, security={
            "listeners": "PLAINTEXT://127.0.0.1:0,OTHER://127.0.0.1:0",
            "protocol_map": "PLAINTEXT:PLAINTEXT,OTHER:PLAINTEXT"},
            config={"listener.name.other.max.connections": "1"}) as c:
        yield c


def test_listener_max_connections_limits_that_listener_only(two_listeners: Cluster) -> None:
    """listener.name.other.max.connections=1: the OTHER listener's second connection
    waits for a slot, as max.connections does broker-wide; PLAINTEXT is not limited."""
    host, port = two_listeners.bootstrap_for("OTHER").split(",")[0].rsplit(":", 1)
    other = socket.create_connection((host, int(port)), timeout=10)
    assert answered(other, 5)
    waiting = socket.create_connection((host, int(port)), timeout=10)
    assert not answered(waiting, 0.5)
    plain = [connect(two_listeners) for _ in range(3)]
    assert all(answered(s, 5) for s in plain)
    other.close()
    waiting.settimeout(10)
    head = waiting.recv(4, socket.MSG_WAITALL)
    assert len(head) == 4
    waiting.recv(struct.unpack(">i", head)[0], socket.MSG_WAITALL)
    assert answered(waiting, 5)
    for s in (waiting, *plain):
        s.close()


@pytest.mark.parametrize("limited", [{"quota.window.num": "2"}], indirect=True)
def test_an_ip_connection_creation_rate_closes_the_extra_connection(limited: Cluster) -> None:
    """KIP-612: connection_creation_rate=1 on the ip entity 127.0.0.1. The second
    connection within the window would put the address at 2/s: it is not counted, is
    never served, and is closed after its throttle time (Kafka's delayed close); the
    first goes on, and once the window has passed a new connection is served."""
    admin = connect(limited)  # (made before the quota: not in the address's rate)
    admin.sendall(encode_request(49, 1, 1, "limits", {"entries": [{"entity": [
        {"entity_type": "ip", "entity_name": "127.0.0.1"}], "ops": [
        {"key": "connection_creation_rate", "value": 1.0, "remove": False}]}],
        "validate_only": False}))
    head = admin.recv(4, socket.MSG_WAITALL)
    resp = decode_response(49, 1, admin.recv(struct.unpack(">i", head)[0],
                                              socket.MSG_WAITALL))[1]
    assert resp["entries"][0]["error_code"] == 0
    first = connect(limited)
    assert answered(first, 5)
    extra = connect(limited)
    assert not answered(extra, 0.3)
    assert closed(extra, 5)
    time.sleep(1.1)
    again = connect(limited)
    assert answered(again, 5) and answered(first, 5) and answered(admin, 5)
    for s in (admin, first, extra, again):
        s.close()
