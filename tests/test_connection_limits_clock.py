"""Connection limits on a stepped clock (emulator/server/limits.py reads an injected
monotonic clock): the idle and stall sweep and the creation rate decided without a
sleep. client_tests/test_connection_limits.py has the same rules over real sockets."""

from __future__ import annotations

import asyncio

from emulator.server.limits import ConnectionLimits, ConnState


class Seconds:
    """A monotonic clock that moves only when told to (seconds, as time.monotonic)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Transport(asyncio.WriteTransport):
    """The one transport call the limits make: abort, when the sweeper closes."""

    def __init__(self) -> None:
        super().__init__()
        self.aborted = False

    def abort(self) -> None:
        self.aborted = True


def _admit(limits: ConnectionLimits, host: str = "10.0.0.1") -> tuple[ConnState, Transport]:
    transport = Transport()
    conn = asyncio.run(limits.admit(1, host, transport))
    assert conn is not None
    return conn, transport


def test_an_idle_connection_is_closed_at_the_idle_time_and_a_busy_one_is_not() -> None:
    clock = Seconds()
    limits = ConnectionLimits({"connections.max.idle.ms": "10000"}, clock=clock)
    idle, idle_t = _admit(limits)
    busy, busy_t = _admit(limits)
    busy.busy = True  # its response is being written
    assert idle.last_active == clock.now
    clock.now += 9.999
    limits.sweep()
    assert not idle_t.aborted and idle in limits.conns
    clock.now += 0.001
    limits.sweep()
    assert idle_t.aborted and idle not in limits.conns
    assert not busy_t.aborted and busy in limits.conns


def test_a_stalled_frame_is_closed_at_the_stall_time() -> None:
    clock = Seconds()
    limits = ConnectionLimits({"connections.max.idle.ms": "4000"}, clock=clock)
    conn, transport = _admit(limits)
    conn.frame_size, conn.frame_read = 1000, 10  # a request's body half read
    clock.now += 3.999
    limits.sweep()
    assert not transport.aborted
    clock.now += 0.001  # min(connections.max.idle.ms, FRAME_STALL_MS)
    limits.sweep()
    assert transport.aborted and not limits.conns


def test_the_creation_rate_counts_connections_on_the_injected_clock() -> None:
    clock = Seconds()
    limits = ConnectionLimits({"max.connection.creation.rate": "5"}, clock=clock)
    for _ in range(50):  # 50 in no time: 5/s over Kafka's 10 s at least, within
        _admit(limits)
    # the 51st connection, recorded as admit records it: 5.1/s, (5.1 - 5) / 5 * 10 s
    assert limits._throttle_ms(1, "PLAINTEXT") == 200
    clock.now += 11.0  # every window of the burst has expired (11 of 1 s)
    assert limits._throttle_ms(1, "PLAINTEXT") == 0
