"""Replication throttles, as Kafka's ReplicationQuotaManager enforces them.

Four settings (docs/reassignment.md, Throttles), set through AlterConfigs or
IncrementalAlterConfigs like on Kafka:

- brokers: ``leader.replication.throttled.rate`` and
  ``follower.replication.throttled.rate`` (bytes/s, default Long.MAX_VALUE);
- topics: ``leader.replication.throttled.replicas`` and
  ``follower.replication.throttled.replicas``, "partition:broker,..." or "*". A
  broker heeds only the entries naming itself (ConfigHandler.parseThrottledPartitions):
  the leader list throttles what a leader sends, the follower list what a follower
  fetches.

Each broker has a leader quota and a follower quota, each a Kafka ``SimpleRate``
over a ``WindowedSum``: ``replication.quota.window.num`` samples (11) of
``replication.quota.window.size.seconds`` (1 s); the rate is the bytes in the
retained samples over max(time since the oldest sample began, one window). A
fetch is refused only when the replica is out of the ISR, its partition is in the
broker's throttled list, and the quota is already exceeded
(``shouldLeaderThrottle``, ``shouldFollowerThrottle``); the bytes of every fetch of
a throttled partition are recorded, in-sync or not. So a throttled move proceeds
one fetch (``replica.fetch.max.bytes``) at a time and its average rate converges
on the bound.

The replication loop (``Followers.replicate_partition``) asks ``follower_excluded``
before a follower fetches, ``fetch_budget`` for how much it may get, and ``record``
for what it got; ``Followers.follower_can_fetch`` asks ``follower_excluded`` too.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from emulator.cluster.partition import Partition

LEADER_RATE = "leader.replication.throttled.rate"
FOLLOWER_RATE = "follower.replication.throttled.rate"
LEADER_REPLICAS = "leader.replication.throttled.replicas"
FOLLOWER_REPLICAS = "follower.replication.throttled.replicas"
UNLIMITED = (1 << 63) - 1  # Long.MAX_VALUE: the rates' default
DEFAULT_SAMPLES = 11  # replication.quota.window.num
DEFAULT_WINDOW_S = 1  # replication.quota.window.size.seconds


@dataclass
class Sample:
    start_ms: int
    last_event_ms: int
    value: float = 0.0
    events: int = 0

    def reset(self, now: int) -> None:
        self.start_ms = self.last_event_ms = now
        self.value = 0.0
        self.events = 0


@dataclass
class SimpleRate:
    """Kafka's SimpleRate over a WindowedSum (SampledStat's sample rotation, exactly)."""

    samples: int = DEFAULT_SAMPLES
    window_ms: int = DEFAULT_WINDOW_S * 1000
    _list: list[Sample] = field(default_factory=list)
    _current: int = 0

    def _current_sample(self, now: int) -> Sample:
        if not self._list:
            self._list.append(Sample(now, now))
        return self._list[self._current]

    def record(self, value: float, now: int) -> None:
        s = self._current_sample(now)
        if now - s.start_ms >= self.window_ms:
            self._current = (self._current + 1) % (self.samples + 1)
            if self._current >= len(self._list):
                s = Sample(now, now)
                self._list.append(s)
            else:
                s = self._list[self._current]
                s.reset(now)
        s.value += value
        s.events += 1
        s.last_event_ms = now

    def _purge(self, now: int) -> None:
        expire = self.samples * self.window_ms
        for s in self._list:
            if now - s.last_event_ms >= expire:
                s.reset(now)

    def measure(self, now: int) -> float:
        """Bytes per second."""
        self._purge(now)
        total = sum(s.value for s in self._list)
        if not self._list:
            self._list.append(Sample(now, now))
        oldest = min(s.start_ms for s in self._list)
        window = max(now - oldest, self.window_ms)
        return total / (window / 1000.0)


@lru_cache(maxsize=1024)
def parse_throttled(value: str | None, broker_id: int) -> frozenset[int] | None:
    """The partitions a broker throttles; None for none, ALL for "*"."""
    v = (value or "").strip()
    if not v:
        return None
    if v == "*":
        return ALL
    out = set()
    for item in v.split(","):
        part, _, broker = item.strip().partition(":")
        try:
            if int(broker) == broker_id:
                out.add(int(part))
        except ValueError:
            continue  # Kafka's validator refuses these when the config is set
    return frozenset(out)


ALL: frozenset[int] = frozenset({-1})


class Topic(Protocol):
    """What the quotas read of a topic: its dynamic configs (the throttled-replicas lists)."""

    @property
    def configs(self) -> Mapping[str, str]: ...


class ClusterState(Protocol):
    """What the quotas read of the cluster (emulator.cluster.metadata.ClusterMetadata,
    which owns the quotas: a protocol here, so that the two modules are no cycle)."""

    @property
    def config(self) -> Mapping[str, str]: ...
    @property
    def topics(self) -> Mapping[str, Topic]: ...
    def now(self) -> int: ...
    def broker_config(self, key: str, broker_id: int | None = None) -> str: ...
    def config_int(self, key: str, broker_id: int | None = None) -> int: ...


class ReplicationQuotas:
    """Every broker's leader and follower ReplicationQuotaManager."""

    def __init__(self, state: ClusterState) -> None:
        self.state = state
        self.leader: dict[int, SimpleRate] = {}
        self.follower: dict[int, SimpleRate] = {}

    # ---- configuration ------------------------------------------------------------------
    def _sensor(self, table: dict[int, SimpleRate], broker: int) -> SimpleRate:
        s = table.get(broker)
        if s is None:
            conf = self.state.config
            samples = int(conf.get("replication.quota.window.num", DEFAULT_SAMPLES))
            window = int(conf.get("replication.quota.window.size.seconds", DEFAULT_WINDOW_S))
            s = table[broker] = SimpleRate(samples, window * 1000)
        return s

    def bound(self, key: str, broker: int) -> int:
        try:
            return int(self.state.broker_config(key, broker))
        except (KeyError, ValueError):
            return UNLIMITED

    @staticmethod
    def is_throttled(t: Topic, key: str, index: int, broker: int) -> bool:
        parts = parse_throttled(t.configs.get(key), broker)
        return parts is not None and (parts is ALL or index in parts)

    def exceeded(self, table: dict[int, SimpleRate], key: str, broker: int, now: int) -> bool:
        bound = self.bound(key, broker)
        if bound >= UNLIMITED:
            return False
        return self._sensor(table, broker).measure(now) > bound

    # ---- the replication loop's questions -------------------------------------------------
    def covers(self, p: Partition) -> bool:
        """Does a throttled-replicas list of ``p``'s topic exist at all? When not, every
        question below answers "not throttled" (replication asks this once per round)."""
        t = self.state.topics.get(p.topic)
        return t is not None and (LEADER_REPLICAS in t.configs or FOLLOWER_REPLICAS in t.configs)

    def throttled_sides(self, p: Partition, follower: int) -> tuple[bool, bool]:
        """(leader side, follower side): is this partition in each broker's list?"""
        t = self.state.topics.get(p.topic)
        if t is None or (LEADER_REPLICAS not in t.configs and FOLLOWER_REPLICAS not in t.configs):
            return False, False
        return (self.is_throttled(t, LEADER_REPLICAS, p.index, p.leader),
                self.is_throttled(t, FOLLOWER_REPLICAS, p.index, follower))

    def follower_excluded(self, p: Partition, follower: int) -> bool:
        """RemoteLeaderEndPoint.shouldFollowerThrottle: the follower leaves the partition
        out of its next fetch (so the leader does not see it fetch at all)."""
        t = self.state.topics.get(p.topic)
        if t is None or FOLLOWER_REPLICAS not in t.configs or follower in p.isr:
            return False
        return (self.is_throttled(t, FOLLOWER_REPLICAS, p.index, follower)
                and self.exceeded(self.follower, FOLLOWER_RATE, follower, self.state.now()))

    def fetch_budget(self, p: Partition, follower: int, budget: int) -> int:
        """Bytes ``follower`` may fetch of ``p`` now: none when the leader throttles it
        (ReplicaManager.shouldLeaderThrottle: an empty answer), one fetch's worth
        (replica.fetch.max.bytes) for a throttled partition, else ``budget``."""
        leader_side, follower_side = self.throttled_sides(p, follower)
        if not (leader_side or follower_side):
            return budget
        if (leader_side and follower not in p.isr
                and self.exceeded(self.leader, LEADER_RATE, p.leader, self.state.now())):
            return 0
        return min(budget, self.state.config_int("replica.fetch.max.bytes"))

    def record(self, p: Partition, follower: int, n: int) -> None:
        """Account the bytes of one fetch on both quotas that track the partition."""
        leader_side, follower_side = self.throttled_sides(p, follower)
        if not (leader_side or follower_side):
            return
        now = self.state.now()
        if leader_side:
            self._sensor(self.leader, p.leader).record(n, now)
        if follower_side:
            self._sensor(self.follower, follower).record(n, now)

    def rates(self, broker: int) -> dict[str, float]:
        """Measured leader and follower replication byte rates of a broker (views)."""
        now = self.state.now()
        out = {}
        for name, table in (("leader", self.leader), ("follower", self.follower)):
            s = table.get(broker)
            out[name] = s.measure(now) if s is not None else 0.0
        return out
