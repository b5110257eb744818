"""The cluster's data: brokers, topics, partitions, configs, and the news of change.

The bottom of the domain core (docs/CONTRIBUTING.md): everything above reads and
writes through this, and it calls nothing above it. Who may write what is the
upper layers' business: replication moves logs, high watermarks and the ISR
(``emulator.cluster.replication``); only the controller writes leadership and
replica sets (``emulator.cluster.controller`` and the modules it drives).

News goes up two ways: ``changed`` bumps ``version`` and calls ``on_change`` so the
server can wake parked requests (Kafka's purgatory), and ``emit`` tells observers
(``hooks``) what happened, by Kafka's names.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from emulator.cluster.clock import SystemClock
from emulator.cluster.configs import TOPIC_CONFIGS, default_broker_config
from emulator.cluster.partition import KafkaError, Partition
from emulator.cluster.throttle import ReplicationQuotas
from wire.errors import ErrorCode as E

LEGAL_TOPIC = re.compile(r"^[a-zA-Z0-9._-]+$")
MAX_TOPIC_LENGTH = 249
INTERNAL_TOPICS = ("__consumer_offsets", "__transaction_state", "__share_group_state")


@dataclass
class Broker:
    """A virtual broker: its listener address and whether it is up."""

    id: int
    host: str
    port: int
    rack: str | None = None
    alive: bool = True  # registered and unfenced: what the controller and metadata see
    # The process is down but the controller has not fenced it yet (a crash with a
    # broker session timeout): no listener, no fetching, no leading; alive until fenced.
    crashed: bool = False
    # Advertised ports of the listeners after the first (listener name -> port); the
    # first listener's port is ``port``. Metadata answers with the asking listener's.
    endpoints: dict[str, int] = field(default_factory=dict)

    def port_for(self, listener: str | None) -> int:
        return self.port if listener is None else self.endpoints.get(listener, self.port)


@dataclass
class Topic:
    name: str
    id: bytes
    partitions: list[Partition]
    configs: dict[str, str] = field(default_factory=dict)  # dynamic (non-default) only

    @property
    def is_internal(self) -> bool:
        return self.name in INTERNAL_TOPICS


@dataclass(slots=True)
class AppendResult:
    error: int = 0
    base_offset: int = -1
    last_offset: int = -1
    log_append_time: int = -1
    log_start_offset: int = -1
    message: str | None = None
    record_errors: list = field(default_factory=list)
    leader_epoch: int = -1  # the leader epoch the append was made in (acks=all waits)


def validate_topic_name(name: str) -> None:
    """Kafka's Topic.validate: length, characters, and not '.' or '..'."""
    if not name:
        raise KafkaError(E.INVALID_TOPIC_EXCEPTION, "Topic name is illegal, it can't be empty")
    if name in (".", ".."):
        raise KafkaError(E.INVALID_TOPIC_EXCEPTION, "Topic name cannot be \".\" or \"..\"")
    if len(name) > MAX_TOPIC_LENGTH:
        raise KafkaError(
            E.INVALID_TOPIC_EXCEPTION,
            f"Topic name is illegal, it can't be longer than {MAX_TOPIC_LENGTH} characters, "
            f"topic name: {name}",
        )
    if not LEGAL_TOPIC.match(name):
        raise KafkaError(
            E.INVALID_TOPIC_EXCEPTION,
            f"Topic name \"{name}\" is illegal, it contains a character other than ASCII "
            "alphanumerics, '.', '_' and '-'",
        )



class ClusterMetadata:
    """The data of one emulated cluster. Owned by one event loop: no locks."""

    def __init__(
        self,
        brokers: list[Broker],
        *,
        clock: object | None = None,
        seed: int = 0,
        broker_config: dict[str, str] | None = None,
        cluster_id: str = "kafka-emulator-cluster",
    ) -> None:
        self.brokers: dict[int, Broker] = {b.id: b for b in brokers}
        self.clock = clock or SystemClock()
        self.rng = random.Random(seed)
        self.config = default_broker_config(broker_config)
        self.broker_overrides: dict[int, dict[str, str]] = {b.id: {} for b in brokers}
        self.dynamic_default: dict[str, str] = {}  # cluster-wide dynamic broker configs
        self.group_configs: dict[str, dict[str, str]] = {}  # GROUP resource (group_configs)
        self.static_overrides: dict[str, str] = dict(broker_config or {})
        self.cluster_id = cluster_id
        self.topics: dict[str, Topic] = {}
        self.topics_by_id: dict[bytes, Topic] = {}
        self.version = 0
        self.on_change: Callable[[], None] | None = None
        self.hooks: list[Callable[[str, dict], None]] = []  # observers of domain events
        # Domain services driven by time (group and transaction coordinators): called
        # with the current time at the end of every tick.
        self.tick_hooks: list[Callable[[int], None]] = []
        self.isr_shrinks = 0
        self.isr_expands = 0
        # per leader broker, for IsrShrinksPerSec / IsrExpandsPerSec
        self.isr_shrinks_by_broker: dict[int, int] = {b: 0 for b in self.brokers}
        self.isr_expands_by_broker: dict[int, int] = {b: 0 for b in self.brokers}
        self.shutting_down: set[int] = set()  # brokers in controlled shutdown
        self.pending_fence: dict[int, int] = {}  # crashed broker -> when it is fenced (ms)
        self.faults: Any = None  # emulator.faults.FaultModel when faults are wired in
        # Set when something other than partition data changed: the next replication
        # tick visits every partition, not only those with replication to do.
        self.needs_full_tick = True
        # The active controller (emulator.cluster.controller.Controller); the metadata
        # it acts on (partitions, brokers, controller_epoch) lives here and survives it.
        self.controller: Any = None
        self.controller_epoch = 0
        # Replication throttles (leader/follower.replication.throttled.*), Kafka's quotas
        self.replication_quotas = ReplicationQuotas(self)

    # ---- plumbing ----------------------------------------------------------------
    def now(self) -> int:
        return self.clock.now_ms()

    def changed(self, partitions_only: bool = False) -> None:
        """Something changed: wake waiters. Unless only partition data moved (appends,
        replication), the next tick visits every partition, not just the active ones."""
        self.version += 1
        if not partitions_only:
            self.needs_full_tick = True
        if self.on_change is not None:
            self.on_change()

    def emit(self, event: str, **data: object) -> None:
        for h in self.hooks:
            h(event, data)

    def broker_config(self, key: str, broker_id: int | None = None) -> str:
        """Effective broker config: per-broker dynamic, cluster dynamic, then static."""
        if broker_id is not None and key in self.broker_overrides.get(broker_id, {}):
            return self.broker_overrides[broker_id][key]
        if key in self.dynamic_default:
            return self.dynamic_default[key]
        return self.config[key]

    def config_int(self, key: str, broker_id: int | None = None) -> int:
        return int(self.broker_config(key, broker_id))

    def config_bool(self, key: str) -> bool:
        return str(self.config[key]).lower() == "true"

    def topic_config(self, topic: Topic, key: str) -> str:
        """A topic's effective config: its own override, else the broker synonym, else default."""
        if key in topic.configs:
            return topic.configs[key]
        defn = TOPIC_CONFIGS[key]
        if key == "retention.ms":
            ms = self._broker_value("log.retention.ms")
            return ms if ms is not None else str(int(self.broker_config("log.retention.hours"))
                                                 * 3600000)
        if defn.broker_synonym:
            v = self._broker_value(defn.broker_synonym)
            if v is not None:
                return v
        return defn.default or ""

    def _broker_value(self, key: str) -> str | None:
        if key in self.dynamic_default:
            return self.dynamic_default[key]
        return self.config.get(key)

    # ---- brokers and controller ------------------------------------------------------
    @property
    def controller_id(self) -> int:
        return self.controller.broker_id if self.controller is not None else -1

    def alive_brokers(self) -> list[int]:
        return sorted(b.id for b in self.brokers.values() if b.alive)

    def is_alive(self, broker_id: int) -> bool:
        b = self.brokers.get(broker_id)
        return b is not None and b.alive

    def is_running(self, broker_id: int) -> bool:
        """Alive and its process up: it fetches, leads and answers (a crashed broker
        awaiting its fence is alive to the controller but does none of these)."""
        b = self.brokers.get(broker_id)
        return b is not None and b.alive and not b.crashed

    def isr_eligible(self, broker_id: int) -> bool:
        """KRaft's isReplicaIsrEligible: unfenced and not in controlled shutdown."""
        return self.is_alive(broker_id) and broker_id not in self.shutting_down

    # ---- topics ------------------------------------------------------------------------
    def get_topic(self, name: str) -> Topic:
        t = self.topics.get(name)
        if t is None:
            raise KafkaError(E.UNKNOWN_TOPIC_OR_PARTITION)
        return t

    def get_partition(self, topic: str, index: int) -> Partition:
        t = self.topics.get(topic)
        if t is None or not 0 <= index < len(t.partitions):
            raise KafkaError(E.UNKNOWN_TOPIC_OR_PARTITION)
        return t.partitions[index]

    def new_topic_id(self) -> bytes:
        while True:
            b = self.rng.getrandbits(128).to_bytes(16, "big")
            if b != bytes(16) and b not in self.topics_by_id:
                return b

    def assign_replicas(self, num_partitions: int, rf: int, start_partition: int = 0) -> list[list[int]]:
        """Kafka's rack-unaware assignment: a seeded start index and replica shift."""
        brokers = self.alive_brokers() or sorted(self.brokers)
        n = len(brokers)
        if rf > n:
            raise KafkaError(
                E.INVALID_REPLICATION_FACTOR,
                f"Unable to replicate the partition {rf} time(s): The target replication factor "
                f"of {rf} cannot be reached because only {n} broker(s) are registered or some "
                "brokers have all their log directories cordoned.",
            )
        start = self.rng.randrange(n)
        shift = self.rng.randrange(n)
        out = []
        for p in range(start_partition, start_partition + num_partitions):
            if p > 0 and p % n == 0:
                shift += 1
            first = (p + start) % n
            replicas = [brokers[first]]
            for j in range(rf - 1):
                s = 1 + (shift + j) % (n - 1)
                replicas.append(brokers[(first + s) % n])
            out.append(replicas)
        return out

    def effective_min_isr(self, t: Topic, p: Partition) -> int:
        """min(min.insync.replicas, replication factor), Partition.effectiveMinIsr."""
        return min(int(self.topic_config(t, "min.insync.replicas")), max(1, len(p.replicas)))
