"""Connection limits as Kafka's SocketServer applies them, per virtual broker.

- ``max.connections.per.ip``: a connection over the limit is closed at once, with
  Kafka's log line ("Rejected connection from ..., address already has the configured
  maximum of N connections."). ``max.connections.per.ip.overrides``
  ("host:count,host:count", host names resolved once at start as Kafka resolves them)
  sets the limit of the addresses it names.
- ``max.connections``: over the limit Kafka's acceptor stops accepting until a slot
  frees; here the connection is accepted by the kernel as in Kafka's backlog and
  nothing is read from it until a slot frees. ``listener.name.<listener>.max.connections``
  (the listener's name in lower case) limits one listener of a broker the same way;
  a listener without it takes the broker-wide value (Kafka's prefix override).
- ``max.connection.creation.rate`` (broker-wide) and
  ``listener.name.<listener>.max.connection.creation.rate``: every new connection is
  recorded in a rate over ``quota.window.num`` windows of ``quota.window.size.seconds``
  (11 of 1 s, and at least 10 s of elapsed time, Kafka's Rate); one that brings the rate
  over the quota waits (rate - quota) / quota * elapsed, at most one window, before
  it is served, and, as Kafka's acceptor thread waits, the listener's next connections
  wait behind it. Kafka's ConnectionQuotas.waitForConnectionSlot, in its order: the
  rate and slot wait first, then the per-IP rate, then the per-IP limit.
- An address's ``connection_creation_rate`` (KIP-612, set with AlterClientQuotas on an
  ``ip`` entity or its default): a connection that would bring the address over it is
  not counted and is closed after the throttle time (Kafka's delayed close); the
  listener goes on accepting others meanwhile.
- ``connections.max.idle.ms``: a connection with no bytes in or out for that long is
  closed (Kafka's Selector), even one waiting on its own request (a long-poll Fetch
  longer than the idle time: Kafka closes it, unanswered) or waiting for the
  queued.max.request.bytes budget; only one whose response is being written is not.
- A started request must keep arriving: no byte for min(connections.max.idle.ms,
  ``FRAME_STALL_MS``) in the middle of a frame closes the connection (a stalled large
  frame would otherwise hold its bytes until the idle timeout; Kafka waits the full
  idle time).
- ``queued.max.request.bytes``: a budget for the bytes of requests read and not yet
  answered, over all connections of all brokers. As Kafka's non-strict memory pool
  (SimpleMemoryPool with strict=false), a request is read as long as any of the budget
  is left, even if it takes the budget below zero; a connection whose next request
  finds the budget used up waits before reading its body (Kafka mutes it until memory
  frees), and is closed if that wait outlasts connections.max.idle.ms (Kafka's idle
  timer does not spare a connection muted for memory). Kafka refuses to start when the budget is smaller than
  socket.request.max.bytes (so no single request can be over it); so does the emulator.
  Kafka's default (-1) is no limit.

Time is read from an injected monotonic clock (``ConnectionLimits.clock``, seconds;
``time.monotonic`` by default), as the domain reads its ``Clock``: the idle and stall
sweep and the creation rates can be stepped by a test instead of slept through.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass

from emulator.cluster.configs import ConfigError

log = logging.getLogger("kafka_emulator")
INT_MAX = 2147483647
FRAME_STALL_MS = 30_000


def _int(config: dict[str, str], key: str, default: int) -> int:
    try:
        return int(config.get(key, default))
    except (TypeError, ValueError):
        return default


def ip_overrides(value: str | None) -> dict[str, int]:
    """max.connections.per.ip.overrides as Kafka reads it: comma-separated host:count,
    each host an address or a name resolved to its address. An entry that does not
    parse is refused at start, as Kafka refuses the config."""
    out: dict[str, int] = {}
    for entry in (value or "").split(","):
        entry = entry.strip()
        if not entry:
            continue
        host, sep, count = entry.rpartition(":")
        if not sep or not host or not count.strip().isdigit():
            raise ConfigError(f"Invalid value {value!r} for configuration "
                             "max.connections.per.ip.overrides: expected host:count entries")
        try:
            address = socket.gethostbyname(host.strip())
        except OSError:
            address = host.strip()
        out[address] = int(count)
    return out


class CreationRate:
    """Kafka's Rate sensor with a quota, for connection creations: counts in
    ``window_num`` windows of ``window_ms``, over an elapsed time of at least
    ``window_num - 1`` windows; ``record`` returns the throttle time the new event
    costs (0 within the quota), bounded by one window as ConnectionQuotas bounds it."""

    def __init__(self, quota: int, window_num: int, window_ms: int) -> None:
        self.quota = quota
        self.window_num = max(window_num, 1)
        self.window_ms = max(window_ms, 1)
        self._windows: list[list[int]] = []  # [start ms, count]

    def record(self, now_ms: int) -> int:
        span = self.window_num * self.window_ms
        self._windows = [w for w in self._windows if now_ms - w[0] < span]
        if not self._windows or now_ms - self._windows[-1][0] >= self.window_ms:
            self._windows.append([now_ms, 0])
        self._windows[-1][1] += 1
        elapsed = now_ms - self._windows[0][0]
        full = elapsed // self.window_ms
        if full < self.window_num - 1:
            elapsed += (self.window_num - 1 - full) * self.window_ms
        elapsed = max(elapsed, 1)
        rate = sum(c for _, c in self._windows) * 1000 / elapsed
        if rate <= self.quota:
            return 0
        if self.quota <= 0:  # Kafka's bound of 0: any rate violates it, the delay is capped
            return self.window_ms
        return min(round((rate - self.quota) / self.quota * elapsed), self.window_ms)

    def unrecord(self) -> None:
        """Take the last event back (Kafka records -1: a refused connection)."""
        if self._windows and self._windows[-1][1] > 0:
            self._windows[-1][1] -= 1


@dataclass(eq=False)
class ConnState:
    """What the sweeper needs to know of one client connection."""

    broker_id: int
    host: str
    transport: asyncio.WriteTransport
    last_active: float  # the last byte in or out, by ConnectionLimits.clock
    busy: bool = False  # its response is being written
    frame_size: int = -1  # >= 0 while a request's body is being read
    frame_read: int = 0
    listener: str = "PLAINTEXT"


class ConnectionLimits:
    """Counters, the in-flight request budget and the idle/stall sweeper."""

    def __init__(self, config: dict[str, str],
                 ip_rate: Callable[[str], int | None] | None = None,
                 dynamic: Callable[[int, str], str | None] | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.config = config
        # Monotonic seconds: every time this reads, and the connections' last_active
        self.clock = clock
        # A broker's dynamic value of a key (IncrementalAlterConfigs), or None: Kafka
        # applies max.connections, max.connections.per.ip(.overrides) and
        # max.connection.creation.rate (the last two and max.connections per listener
        # too) at run time, so they are looked up on each use.
        self.dynamic = dynamic
        self._parsed_overrides: dict[str, dict[str, int]] = {}
        # An address's connection_creation_rate quota (the client quotas), or None.
        self.ip_rate = ip_rate
        self._ip_rates: dict[tuple[int, str], CreationRate] = {}
        self.max_connections = _int(config, "max.connections", INT_MAX)
        self.max_rate = _int(config, "max.connection.creation.rate", INT_MAX)
        self.window_num = _int(config, "quota.window.num", 11)
        self.window_ms = _int(config, "quota.window.size.seconds", 1) * 1000
        # (broker, listener) -> its rate sensor, its connection count; broker -> rate
        self._rates: dict[tuple[int, str | None], CreationRate] = {}
        self._per_listener: dict[tuple[int, str], int] = {}
        # One acceptor per listener of a broker: connections are admitted one at a time,
        # a throttled one holding back those behind it, as Kafka's acceptor thread does.
        self._acceptors: dict[tuple[int, str], asyncio.Lock] = {}
        self.max_per_ip = _int(config, "max.connections.per.ip", INT_MAX)
        self.per_ip_overrides = ip_overrides(config.get("max.connections.per.ip.overrides"))
        self.idle_ms = _int(config, "connections.max.idle.ms", 600_000)
        self.stall_ms = min(self.idle_ms, FRAME_STALL_MS) if self.idle_ms > 0 else FRAME_STALL_MS
        self.queued_max_bytes = _int(config, "queued.max.request.bytes", -1)
        max_request = _int(config, "socket.request.max.bytes", 104857600)
        if 0 < self.queued_max_bytes < max_request:
            # Kafka's KafkaConfig check, at start (kafka-storage format refuses it too).
            raise ConfigError("queued.max.request.bytes must be larger or equal to "
                              "socket.request.max.bytes")
        self.conns: set[ConnState] = set()
        self._per_broker: dict[int, int] = {}
        self._per_ip: dict[tuple[int, str], int] = {}
        self._slot_freed: asyncio.Event | None = None
        self.queued_bytes = 0
        self._budget_freed: asyncio.Event | None = None

    # ---- admission ------------------------------------------------------------------
    def value(self, broker_id: int, key: str, default: int) -> int:
        """A limit for a broker: its dynamic value (per broker, else the cluster
        default), else ``default``, the value read at start."""
        raw = self.dynamic(broker_id, key) if self.dynamic is not None else None
        if raw is not None:
            try:
                return int(raw)
            except ValueError:
                pass
        return default

    def max_for(self, broker_id: int, host: str) -> int:
        """ConnectionQuotas.maxConnectionsPerIp: the address's override, else the default."""
        overrides = self.per_ip_overrides
        raw = (self.dynamic(broker_id, "max.connections.per.ip.overrides")
               if self.dynamic is not None else None)
        if raw is not None:
            if raw not in self._parsed_overrides:
                try:
                    self._parsed_overrides[raw] = ip_overrides(raw)
                except ConfigError:
                    self._parsed_overrides[raw] = self.per_ip_overrides
            overrides = self._parsed_overrides[raw]
        return overrides.get(host, self.value(broker_id, "max.connections.per.ip",
                                              self.max_per_ip))

    def over_ip_limit(self, broker_id: int, host: str) -> bool:
        return self._per_ip.get((broker_id, host), 0) >= self.max_for(broker_id, host)

    def listener_value(self, broker_id: int, listener: str, key: str, default: int) -> int:
        """A listener's value of ``key``: listener.name.<listener>.<key> (dynamic, else
        read at start), else the broker-wide one (Kafka's valuesWithPrefixOverride)."""
        name = f"listener.name.{listener.lower()}.{key}"
        at_start = self.config.get(name)
        if at_start is not None:
            try:
                default = int(at_start)
            except ValueError:
                pass
        return self.value(broker_id, name, default)

    def _rate(self, broker_id: int, listener: str | None) -> CreationRate | None:
        broker_wide = self.value(broker_id, "max.connection.creation.rate", self.max_rate)
        quota = broker_wide if listener is None else self.listener_value(
            broker_id, listener, "max.connection.creation.rate", broker_wide)
        if quota >= INT_MAX:
            return None
        r = self._rates.get((broker_id, listener))
        if r is None:
            r = self._rates[(broker_id, listener)] = CreationRate(quota, self.window_num,
                                                                  self.window_ms)
        r.quota = quota
        return r

    def _throttle_ms(self, broker_id: int, listener: str) -> int:
        """recordConnectionAndGetThrottleTimeMs: the connection is recorded in the
        broker's and the listener's rates; the longer delay of the two."""
        now = int(self.clock() * 1000)
        delays = [r.record(now) for r in (self._rate(broker_id, None),
                                          self._rate(broker_id, listener)) if r is not None]
        return max(delays, default=0)

    def _ip_throttle_ms(self, broker_id: int, listener: str, host: str) -> int:
        """recordIpConnectionMaybeThrottle: over the address's quota, the connection is
        taken back out of every rate it was recorded in, and the delay returned."""
        quota = self.ip_rate(host) if self.ip_rate is not None else None
        if quota is None:
            return 0
        r = self._ip_rates.get((broker_id, host))
        if r is None:
            r = self._ip_rates[(broker_id, host)] = CreationRate(quota, self.window_num,
                                                                 self.window_ms)
        r.quota = quota
        throttle = r.record(int(self.clock() * 1000))
        if throttle > 0:
            for rate in (r, self._rate(broker_id, None), self._rate(broker_id, listener)):
                if rate is not None:
                    rate.unrecord()
        return throttle

    def _slot_available(self, broker_id: int, listener: str) -> bool:
        broker_wide = self.value(broker_id, "max.connections", self.max_connections)
        return (self._per_listener.get((broker_id, listener), 0)
                < self.listener_value(broker_id, listener, "max.connections", broker_wide)
                and self._per_broker.get(broker_id, 0) < broker_wide)

    async def admit(self, broker_id: int, host: str, transport: asyncio.WriteTransport,
                    listener: str = "PLAINTEXT") -> ConnState | None:
        """Register a new connection, or None when it must be closed (per-IP limit)."""
        key = (broker_id, listener)
        acceptor = self._acceptors.get(key)
        if acceptor is None:
            acceptor = self._acceptors[key] = asyncio.Lock()
        async with acceptor:
            throttle = self._throttle_ms(broker_id, listener)
            if throttle > 0:
                log.debug("broker %d: delaying a new connection on listener %s by %d ms "
                          "(max.connection.creation.rate)", broker_id, listener, throttle)
                await asyncio.sleep(throttle / 1000)
            while not self._slot_available(broker_id, listener):
                if self._slot_freed is None:
                    self._slot_freed = asyncio.Event()
                # Woken by a release; every second too, for a limit raised at run time.
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._slot_freed.wait(), 1.0)
            ip_throttle = self._ip_throttle_ms(broker_id, listener, host)
            if ip_throttle <= 0 and self.over_ip_limit(broker_id, host):
                log.warning("broker %d: Rejected connection from /%s, address already has "
                            "the configured maximum of %d connections.", broker_id, host,
                            self.max_for(broker_id, host))
                return None
            if ip_throttle <= 0:
                c = ConnState(broker_id, host, transport, self.clock(), listener=listener)
                self.conns.add(c)
                self._per_broker[broker_id] = self._per_broker.get(broker_id, 0) + 1
                self._per_listener[key] = self._per_listener.get(key, 0) + 1
                self._per_ip[(broker_id, host)] = self._per_ip.get((broker_id, host), 0) + 1
                return c
        # Over the address's connection_creation_rate: closed once the delay has passed
        # (Kafka's DelayedCloseSocket), outside the acceptor, which goes on meanwhile.
        log.debug("broker %d: delaying closing of connection from %s for %d ms "
                  "(connection_creation_rate)", broker_id, host, ip_throttle)
        await asyncio.sleep(ip_throttle / 1000)
        return None

    def release(self, c: ConnState) -> None:
        if c not in self.conns:
            return
        self.conns.discard(c)
        self._per_broker[c.broker_id] -= 1
        self._per_listener[(c.broker_id, c.listener)] -= 1
        key = (c.broker_id, c.host)
        self._per_ip[key] -= 1
        if not self._per_ip[key]:
            del self._per_ip[key]
        if self._slot_freed is not None:
            self._slot_freed.set()
            self._slot_freed = None

    # ---- queued.max.request.bytes -------------------------------------------------
    async def reserve(self, size: int, gone: Callable[[], bool]) -> bool:
        """Wait until some of the budget is left, then take ``size`` bytes of it, even
        past the end (Kafka's non-strict pool: it allocates when any memory is free).
        False, taking nothing, if the connection is ``gone`` (closed as idle) first."""
        if self.queued_max_bytes <= 0:
            return not gone()
        while self.queued_bytes >= self.queued_max_bytes:
            if gone():
                return False
            if self._budget_freed is None:
                self._budget_freed = asyncio.Event()
            # Woken when bytes are freed; every sweep interval to notice an idle close.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._budget_freed.wait(), self.sweep_interval())
        if gone():
            return False
        self.queued_bytes += size
        return True

    def reserve_now(self, size: int) -> bool:
        """``reserve`` when it would not wait: True, ``size`` bytes taken, while some of
        the budget is left (or none is set); False, nothing taken, when the caller must
        wait in ``reserve``. (No coroutine for the common request.)"""
        if self.queued_max_bytes <= 0:
            return True
        if self.queued_bytes >= self.queued_max_bytes:
            return False
        self.queued_bytes += size
        return True

    def free(self, size: int) -> None:
        if self.queued_max_bytes <= 0:
            return
        self.queued_bytes -= size
        if self._budget_freed is not None:
            self._budget_freed.set()
            self._budget_freed = None

    # ---- idle and stalled connections ----------------------------------------------
    def sweep_interval(self) -> float:
        shortest = min(x for x in (self.idle_ms, self.stall_ms) if x > 0)
        return min(5.0, max(0.05, shortest / 4000))

    def sweep(self, now: float | None = None) -> None:
        """Close connections idle past connections.max.idle.ms, or stalled mid-frame."""
        now = self.clock() if now is None else now
        for c in list(self.conns):
            if c.busy:
                continue
            quiet_ms = (now - c.last_active) * 1000
            if c.frame_size >= 0 and quiet_ms >= self.stall_ms:
                log.warning("broker %d: closing connection from %s: a request of %d bytes "
                            "stalled at %d bytes for %d ms", c.broker_id, c.host,
                            c.frame_size, c.frame_read, quiet_ms)
            elif c.frame_size < 0 and self.idle_ms > 0 and quiet_ms >= self.idle_ms:
                log.info("broker %d: closing connection from %s: idle for %d ms "
                         "(connections.max.idle.ms)", c.broker_id, c.host, quiet_ms)
            else:
                continue
            self.release(c)
            c.transport.abort()
