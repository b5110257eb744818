"""Connection limits like Kafka's SocketServer (emulator/server/limits.py), over TCP:
max.connections.per.ip closes the extra connection, max.connections (broker-wide or per
listener) leaves it unread until a slot frees, max.connection.creation.rate delays new
connections, connections.max.idle.ms closes idle ones, a stalled frame is closed,
queued.max.request.bytes bounds the request bytes held across connections.

Each test is a scenario function over "a way to open a connection to the broker" and
the limits (the configs below); test_connection_limits_kafka.py runs the same
scenarios on a real Kafka configured with the same limits. What the emulator tests add
beyond the scenario (its budget counters) is about its own accounting, not Kafka's."""

from __future__ import annotations

import contextlib
import socket
import struct
import time
import uuid
from collections.abc import Callable, Iterator

import pytest

from client_tests.rawkafka import fetch_body
from emulator import Cluster
from emulator.blocking_client import BlockingConnection, ConnectionClosed
from emulator.blocking_client import call as wire_call
from emulator.testing import wait_for

# Not run with --target kafka: each scenario an emulator with its own connection limits, as the
# session's Kafka has none; the Kafka side is test_connection_limits_kafka.py.
pytestmark = pytest.mark.emulator_only

Connect = Callable[[], socket.socket]

API_VERSIONS = {"client_software_name": "t", "client_software_version": "1"}
# The limits each scenario runs under, on the emulator and on Kafka alike.
PER_IP = {"max.connections.per.ip": "2"}
PER_IP_OVERRIDES = {"max.connections.per.ip": "1",
                    "max.connections.per.ip.overrides": "localhost:3"}
MAX_CONNECTIONS = {"max.connections": "2"}
IDLE = {"connections.max.idle.ms": "1000"}
# Kafka refuses a budget under socket.request.max.bytes: no single request can be over it.
QUEUED = {"queued.max.request.bytes": "100000", "socket.request.max.bytes": "100000",
          "connections.max.idle.ms": "3000"}
REFUSED_BUDGET = "queued.max.request.bytes must be larger or equal to socket.request.max.bytes"
CREATION_RATE = {"max.connection.creation.rate": "1", "quota.window.num": "2"}
LISTENER_MAX = {"listener.name.other.max.connections": "1"}
IP_RATE = {"quota.window.num": "2"}


def connect(c: Cluster) -> socket.socket:
    b = c.state.brokers[1]
    return socket.create_connection((b.host, b.port), timeout=10)


def answered(s: socket.socket, timeout: float) -> bool:
    """Send ApiVersions; True if the answer comes within ``timeout``."""
    s.settimeout(timeout)
    try:
        send_api_versions(s)
        return read_answer(s)
    except (TimeoutError, ConnectionError):
        return False


def send_api_versions(s: socket.socket) -> None:
    """Send an ApiVersions request (correlation id 1), its answer read later."""
    BlockingConnection(s, "limits").send(18, 3, API_VERSIONS, correlation_id=1)


def read_answer(s: socket.socket) -> bool:
    """Read one ApiVersions response (to a request sent earlier); True if error 0."""
    c = BlockingConnection(s, "limits")
    c.protocol.expect(18, 3, 1)
    try:
        return c.receive().body["error_code"] == 0
    except ConnectionClosed:
        return False


def closed(s: socket.socket, timeout: float = 5.0) -> bool:
    s.settimeout(timeout)
    try:
        return s.recv(1) == b""
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False


def served(conn: Connect) -> socket.socket | None:
    """A new connection if the broker serves it, else None (it was closed)."""
    s = conn()
    if answered(s, 5):
        return s
    s.close()
    return None


@contextlib.contextmanager
def limited(config: dict[str, str]) -> Iterator[Cluster]:
    with Cluster(brokers=1, port=0, config=config) as c:
        yield c


# ---- scenarios: the same assertions on the emulator and on Kafka ----------------------
def served_once_released(conn: Connect) -> socket.socket:
    """A new connection, once the broker serves one. A scenario that follows another
    on the same broker starts here: the earlier scenario's closed connections still
    count against max.connections.per.ip until the broker has seen them close, which
    Kafka's network threads do on a later poll (a third of immediate reconnections
    were refused on Kafka 4.4 after two closes), so the first connection may be
    refused, and a new one must be tried, as a client's reconnect would."""
    return wait_for(lambda: served(conn), "the broker to release earlier connections")


def per_ip_scenario(conn: Connect, limit: int) -> None:
    """``limit`` connections are served, the next is closed at once; once one of them
    is closed (and the broker has seen it close) a new one is served again."""
    conns = [served_once_released(conn) for _ in range(limit)]
    extra = conn()
    assert closed(extra)
    conns[0].close()
    again = served_once_released(conn)
    assert all(answered(s, 5) for s in (*conns[1:], again))
    for s in (*conns, extra, again):
        s.close()


def alter_broker_config(admin: socket.socket, broker_id: int, key: str,
                        value: str | None) -> int:
    """IncrementalAlterConfigs on the broker: SET ``key`` (None: DELETE); the error code."""
    r = call(admin, 44, 1, {"resources": [{
        "resource_type": 4, "resource_name": str(broker_id), "configs": [{
            "name": key, "config_operation": 0 if value is not None else 1,
            "value": value}]}], "validate_only": False})
    return r["responses"][0]["error_code"]


def serves_exactly(conn: Connect, n: int) -> bool:
    """``n`` new connections are served and the next is closed (then all are closed)."""
    conns = [served(conn) for _ in range(n)]
    extra = conn()
    ok = all(conns) and closed(extra, 2)
    for s in (*conns, extra):
        if s is not None:
            s.close()
    return ok


def dynamic_per_ip_scenario(conn: Connect, broker_id: int, static: int) -> None:
    """max.connections.per.ip changes at run time (IncrementalAlterConfigs on the broker,
    as Kafka's DynamicConnectionQuota takes it), and deleting the dynamic value brings
    back the one the broker started with."""
    admin = served_once_released(conn)  # counts against the limit: closed before counting
    assert alter_broker_config(admin, broker_id, "max.connections.per.ip",
                               str(static + 1)) == 0
    admin.close()
    wait_for(lambda: serves_exactly(conn, static + 1), f"a limit of {static + 1}",
             interval=0.3)
    admin = served_once_released(conn)
    assert alter_broker_config(admin, broker_id, "max.connections.per.ip", None) == 0
    admin.close()
    wait_for(lambda: serves_exactly(conn, static), f"the static limit of {static} again",
             interval=0.3)


def per_ip_override_scenario(conn: Connect, override: int) -> None:
    conns = [served_once_released(conn) for _ in range(override)]
    extra = conn()
    assert closed(extra)
    for s in (*conns, extra):
        s.close()


def max_connections_scenario(conn: Connect, limit: int) -> None:
    """Over max.connections the connection is not refused: the kernel accepts it and the
    broker reads nothing from it until a slot frees (Kafka's acceptor waits)."""
    conns = [conn() for _ in range(limit)]
    assert all(answered(s, 5) for s in conns)
    waiting = conn()
    assert not answered(waiting, 0.5)
    conns[0].close()
    waiting.settimeout(10)
    assert read_answer(waiting)  # the request sent above is answered now
    assert all(answered(s, 5) for s in (waiting, *conns[1:]))
    for s in (*conns, waiting):
        s.close()


def idle_scenario(conn: Connect, idle_ms: int) -> None:
    """The idle connection is closed (not before half the idle time: no early close),
    the one with a request every 100 ms is not."""
    idle, busy = conn(), conn()
    assert answered(idle, 5)
    quiet_since = time.monotonic()

    def idle_closed() -> bool:
        if closed(idle, 0.1):  # 0.1 s between the busy one's requests
            return True
        assert answered(busy, 5)
        return False

    wait_for(idle_closed, "the idle connection to be closed", timeout=idle_ms / 1000 + 15,
             interval=0)
    assert time.monotonic() - quiet_since >= idle_ms / 2000
    assert answered(busy, 5)
    idle.close()
    busy.close()


def call(s: socket.socket, key: int, version: int, body: dict) -> dict:
    return wire_call(s, key, version, body, "limits")


def long_poll_body(topic: str, max_wait_ms: int) -> dict:
    """A Fetch of partition 0 from offset 0 that waits ``max_wait_ms`` for a byte."""
    return fetch_body(topic, min_bytes=1, max_wait=max_wait_ms, max_bytes=1 << 20,
                      part_max=1 << 16)


def long_poll_idle_scenario(conn: Connect, broker_id: int, idle_ms: int) -> None:
    """A connection's own long poll does not keep it open: a Fetch on an empty partition
    waiting longer than connections.max.idle.ms is closed unanswered once the idle time
    (counted from the request) is up."""
    s = conn()
    s.settimeout(30)
    topic = f"long-poll-{uuid.uuid4().hex[:8]}"
    r = call(s, 19, 7, {"topics": [{
        "name": topic, "num_partitions": -1, "replication_factor": -1,
        "assignments": [{"partition_index": 0, "broker_ids": [broker_id]}], "configs": []}],
        "timeout_ms": 30000, "validate_only": False})
    assert r["topics"][0]["error_code"] == 0, r
    # Until the broker leads the partition (Kafka: through the metadata log); these
    # requests keep the connection busy meanwhile.
    wait_for(lambda: call(s, 1, 12, long_poll_body(topic, 0))["responses"][0]["partitions"][0]
             ["error_code"] == 0, f"broker {broker_id} to lead {topic}")
    BlockingConnection(s, "limits").send(1, 12, long_poll_body(topic, idle_ms + 5000),
                                         correlation_id=2)
    sent = time.monotonic()
    assert closed(s, idle_ms / 1000 + 4), "the long poll was answered or kept open"
    assert time.monotonic() - sent >= idle_ms / 2000
    s.close()


def stalled_frame_scenario(conn: Connect) -> None:
    """A 50 MB frame stalled after 1 MB is closed (the idle time), not held."""
    s = conn()
    s.sendall(struct.pack(">i", 50_000_000) + b"\0" * 1_000_000)
    assert closed(s, 10)
    other = conn()
    assert answered(other, 5)
    s.close()
    other.close()


def queued_bytes_scenario(conn: Connect, max_request: int,
                          held: Callable[[int], None]) -> None:
    """queued.max.request.bytes (100 kB here) as Kafka's non-strict memory pool: a
    request is read while any of the budget is left, even one that takes it below
    zero; once it is used up the next request waits, unread, until bytes are freed.
    ``held(n)``: wait until the broker holds ``n`` bytes of stalled requests."""
    too_big = conn()  # over socket.request.max.bytes: closed, though it keeps sending
    too_big.sendall(struct.pack(">i", max_request + 1))
    assert closed_while_sending(too_big)
    first = conn()  # 80 kB of the budget held by a stalled request
    first.sendall(struct.pack(">i", 80_000) + b"\0" * 100)
    first_quiet = time.monotonic()
    held(80_000)
    over = conn()  # 30 kB more than the 20 kB left: read all the same, and answered
    assert answered_padded(over, 30_000, 5)
    second = conn()  # 30 kB more, stalled: the budget is now 10 kB below zero
    second.sendall(struct.pack(">i", 30_000) + b"\0" * 100)
    held(110_000)
    # The waiting connection is idle (its idle timer runs while it waits, as on Kafka):
    # it comes 1.5 s after the first went quiet, so the first's close frees the budget
    # well before the waiting one's own idle time is up.
    time.sleep(max(0.0, first_quiet + 1.5 - time.monotonic()))
    waiting = conn()
    send_api_versions(waiting)
    waiting.settimeout(0.5)
    try:
        early = waiting.recv(4)
    except TimeoutError:
        early = None
    assert early is None, "a request was read with the budget used up"
    assert closed(first, 10)  # the stall (the idle time) ends it, freeing 80 kB
    waiting.settimeout(10)
    assert read_answer(waiting)
    assert closed(second, 10)
    for s in (too_big, first, over, second, waiting):
        s.close()


def waiting_for_the_budget_idle_scenario(conn: Connect, idle_ms: int) -> None:
    """A request that finds the queued.max.request.bytes budget used up waits, unread,
    and Kafka's idle timer still runs for it: it is closed (unanswered) once idle,
    while the stalled request holding the budget, a byte every 0.2 s, is not."""
    holder = conn()
    holder.sendall(struct.pack(">i", 100_000) + b"\0" * 10)
    time.sleep(0.5)  # its size read and the whole budget taken
    waiting = conn()
    send_api_versions(waiting)
    quiet_since = time.monotonic()

    def waiting_closed() -> bool:
        if closed(waiting, 0.2):  # EOF, no answer: recv gives b""
            return True
        holder.sendall(b"\0")
        return False

    wait_for(waiting_closed, "the waiting connection to be closed",
             timeout=idle_ms / 1000 + 15, interval=0)
    assert time.monotonic() - quiet_since >= idle_ms / 2000
    holder.sendall(b"\0")  # still open
    holder.close()
    waiting.close()
    again = conn()  # the holder's bytes are freed with it
    assert answered(again, 10)
    again.close()


def closed_while_sending(s: socket.socket, timeout: float = 10.0) -> bool:
    """Closed by the broker though a byte comes every 0.1 s (so not for being idle)."""
    def closed_now() -> bool:
        try:
            s.sendall(b"\0")
        except OSError:
            return True
        return closed(s, 0.1)

    return wait_for(closed_now, "the broker to close the connection", timeout=timeout,
                    interval=0)


def answered_padded(s: socket.socket, size: int, timeout: float) -> bool:
    """An ApiVersions request of about ``size`` bytes (a long client id)."""
    s.settimeout(timeout)
    try:
        BlockingConnection(s, "x" * (size - 60)).send(18, 3, API_VERSIONS, correlation_id=1)
        return read_answer(s)
    except (TimeoutError, ConnectionError):
        return False


def creation_rate_scenario(conn: Connect) -> None:
    """Kafka's ConnectionQuotas, max.connection.creation.rate=1 over 2 windows of 1 s:
    the second connection within the first window puts the rate (2 over Kafka's minimum
    elapsed time of 1 window) over the quota of 1/s, so it waits (2 - 1) / 1 * 1 s,
    capped at one window, before it is read; the third, opened meanwhile, waits behind
    it (one acceptor per listener) and is then delayed itself. Nothing is refused."""
    first = conn()
    assert answered(first, 5)
    second, third = conn(), conn()
    assert not answered(second, 0.3)  # delayed by a full window (1 s)
    send_api_versions(third)
    second.settimeout(10)
    assert read_answer(second)  # the request sent above, answered later
    third.settimeout(0.3)
    try:
        early = third.recv(4)
    except TimeoutError:
        early = None
    assert early is None, "the third connection was not delayed after the second"
    third.settimeout(10)
    assert read_answer(third)
    assert answered(first, 5) and answered(second, 5)
    for s in (first, second, third):
        s.close()


def listener_max_scenario(plain: Connect, other: Connect) -> None:
    """listener.name.other.max.connections=1: the OTHER listener's second connection
    waits for a slot, as max.connections does broker-wide; PLAINTEXT is not limited."""
    first = other()
    assert answered(first, 5)
    waiting = other()
    assert not answered(waiting, 0.5)
    plains = [plain() for _ in range(3)]
    assert all(answered(s, 5) for s in plains)
    first.close()
    waiting.settimeout(10)
    assert read_answer(waiting)
    assert answered(waiting, 5)
    for s in (waiting, *plains):
        s.close()


def only_served(other: Connect, n: int) -> bool:
    """``n`` new connections are served and one more is left unread (then all closed)."""
    conns = [other() for _ in range(n + 1)]
    ok = all(answered(s, 5) for s in conns[:n]) and not answered(conns[n], 1.0)
    for s in conns:
        s.close()
    return ok


def dynamic_listener_max_scenario(plain: Connect, other: Connect, broker_id: int) -> None:
    """listener.name.other.max.connections (1 at start) changes at run time too: the
    broker serves two OTHER connections, the third waiting for a slot, and lists the
    key as DYNAMIC_BROKER_CONFIG; deleting it brings back the 1 it started with."""
    key = "listener.name.other.max.connections"
    admin = plain()
    assert alter_broker_config(admin, broker_id, key, "2") == 0
    wait_for(lambda: only_served(other, 2), "two OTHER connections", interval=0.3)
    r = call(admin, 32, 4, {"resources": [{"resource_type": 4, "resource_name": str(broker_id),
                                           "configuration_keys": None}],
                            "include_synonyms": False, "include_documentation": False})
    listed = {e["name"]: (e["value"], e["config_source"], e["read_only"])
              for e in r["results"][0]["configs"]}
    # DYNAMIC_BROKER_CONFIG, and read-only as Kafka 4.4 marks a listener-prefixed key
    assert listed.get(key) == ("2", 2, True), listed.get(key)
    assert alter_broker_config(admin, broker_id, key, None) == 0
    wait_for(lambda: only_served(other, 1), "one OTHER connection again", interval=0.3)
    admin.close()


def alter_ip_rate(admin: socket.socket, rate: float | None) -> int:
    """AlterClientQuotas: connection_creation_rate of the ip entity 127.0.0.1 (None:
    removed); the entry's error code."""
    admin.settimeout(30)
    resp = call(admin, 49, 1, {"entries": [{"entity": [
        {"entity_type": "ip", "entity_name": "127.0.0.1"}], "ops": [
        {"key": "connection_creation_rate", "value": rate or 0.0, "remove": rate is None}]}],
        "validate_only": False})
    return resp["entries"][0]["error_code"]


def ip_rate_scenario(conn: Connect, admin: socket.socket,
                     applied: Callable[[], None]) -> None:
    """KIP-612: connection_creation_rate=1 on the ip entity 127.0.0.1 (set over
    ``admin``, a connection made before the quota; ``applied`` waits until the broker
    has it). The second connection within the window would put the address at 2/s: it
    is not counted, is never served, and is closed after its throttle time (Kafka's
    delayed close); the first goes on, and once the window has passed a new connection
    is served."""
    assert alter_ip_rate(admin, 1.0) == 0
    applied()
    first = conn()
    assert answered(first, 5)
    extra = conn()
    assert not answered(extra, 0.3)
    assert closed(extra, 5)
    time.sleep(1.1)
    again = conn()
    assert answered(again, 5) and answered(first, 5) and answered(admin, 5)
    for s in (first, extra, again):
        s.close()


# ---- on the emulator ------------------------------------------------------------------
def test_max_connections_per_ip_closes_the_extra_one() -> None:
    with limited(PER_IP) as c:
        per_ip_scenario(lambda: connect(c), 2)


def test_max_connections_per_ip_changes_at_run_time() -> None:
    with limited(PER_IP) as c:
        dynamic_per_ip_scenario(lambda: connect(c), 1, 2)


def test_max_connections_per_ip_overrides_name_their_own_limit() -> None:
    """An override (a host name, resolved to 127.0.0.1 as Kafka resolves it) replaces the
    default of 1 for that address: three connections are served, the fourth closed."""
    with limited(PER_IP_OVERRIDES) as c:
        per_ip_override_scenario(lambda: connect(c), 3)


def test_max_connections_waits_for_a_slot() -> None:
    with limited(MAX_CONNECTIONS) as c:
        max_connections_scenario(lambda: connect(c), 2)


def test_idle_connections_are_closed_busy_ones_are_not() -> None:
    with limited(IDLE) as c:
        idle_scenario(lambda: connect(c), 1000)


def test_a_long_poll_longer_than_the_idle_time_is_closed() -> None:
    with limited(IDLE) as c:
        long_poll_idle_scenario(lambda: connect(c), 1, 1000)


def test_a_stalled_frame_is_closed_and_its_bytes_freed() -> None:
    with limited(IDLE) as c:
        stalled_frame_scenario(lambda: connect(c))


def test_queued_max_request_bytes_bounds_requests_in_flight() -> None:
    """The scenario, plus the emulator's own budget counter (its accounting, which a
    client of Kafka cannot see): exactly the stalled bytes are held, all freed after."""
    with limited(QUEUED) as c:
        def held(n: int) -> None:
            wait_for(lambda: c.server.limits.queued_bytes == n, f"{n} bytes to be held")
        queued_bytes_scenario(lambda: connect(c), 100_000, held)
        wait_for(lambda: c.server.limits.queued_bytes == 0, "the budget to be freed")


def test_a_connection_waiting_for_the_budget_is_closed_when_idle() -> None:
    with limited(QUEUED) as c:
        waiting_for_the_budget_idle_scenario(lambda: connect(c), 3000)
        wait_for(lambda: c.server.limits.queued_bytes == 0, "the budget to be freed")


def test_queued_max_request_bytes_under_socket_request_max_bytes_is_refused() -> None:
    """Kafka will not start with a budget smaller than one request may be."""
    with pytest.raises(ValueError, match=REFUSED_BUDGET), limited(
            {"queued.max.request.bytes": "100000"}):
        pass


def test_max_connection_creation_rate_delays_new_connections() -> None:
    with limited(CREATION_RATE) as c:
        creation_rate_scenario(lambda: connect(c))


@contextlib.contextmanager
def two_listeners() -> Iterator[tuple[Connect, Connect]]:
    """One broker with LISTENER_MAX on a PLAINTEXT and an OTHER listener: (connect to
    PLAINTEXT, connect to OTHER)."""
    with Cluster(brokers=1, port=0, security={
            "listeners": "PLAINTEXT://127.0.0.1:0,OTHER://127.0.0.1:0",
            "protocol_map": "PLAINTEXT:PLAINTEXT,OTHER:PLAINTEXT"},
            config=LISTENER_MAX) as c:
        host, port = c.bootstrap_for("OTHER").split(",")[0].rsplit(":", 1)
        yield lambda: connect(c), lambda: socket.create_connection((host, int(port)),
                                                                   timeout=10)


def test_listener_max_connections_limits_that_listener_only() -> None:
    with two_listeners() as (plain, other):
        listener_max_scenario(plain, other)


def test_listener_max_connections_changes_at_run_time() -> None:
    with two_listeners() as (plain, other):
        dynamic_listener_max_scenario(plain, other, 1)


def test_an_ip_connection_creation_rate_closes_the_extra_connection() -> None:
    with limited(IP_RATE) as c:
        admin = connect(c)
        ip_rate_scenario(lambda: connect(c), admin, lambda: None)
        admin.close()
