"""The cluster's data: brokers, topics, partitions, configs, and the news of change.

The bottom of the domain core (docs/CONTRIBUTING.md): everything above reads and
writes through this, and it calls nothing above it. Who may write what is the
upper layers' business: replication moves logs, high watermarks and the ISR
(``emulator.cluster.replication``); only the controller writes leadership and
replica sets (``emulator.cluster.controller`` and the modules it drives).

News goes up two ways: ``changed`` bumps ``version`` and calls ``on_change`` so the
server can wake parked requests (Kafka's purgatory), and ``emit`` tells observers
(``hooks``) what happened: a typed event of emulator.cluster.events, by Kafka's names.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field

from emulator.cluster.clock import Clock, SystemClock
from emulator.cluster.configs import ConfigDict, default_broker_config
from emulator.cluster.effective_configs import (
    EffectiveConfigs,
    ProduceConfigs,
    produce_configs_of,
    resolve_topic_config,
    retention_configs_of,
)
from emulator.cluster.events import DomainEvent
from emulator.cluster.metadata_views import MetadataViews, PartitionImage, TopicImage
from emulator.cluster.partition import Partition
from emulator.cluster.ports import ControllerRole, FaultConditions, LogDirFailureChannel
from emulator.cluster.throttle import ReplicationQuotas
from emulator.fidelity import Fidelity
from wire.codec import EncodedList
from wire.errors import ErrorCode as E
from wire.errors import KafkaError

LEGAL_TOPIC = re.compile(r"^[a-zA-Z0-9._-]+$")
MAX_TOPIC_LENGTH = 249
# QuorumController.MAX_RECORDS_PER_USER_OP: the most metadata records one user operation
# may write (CreateTopics, CreatePartitions, CreateAcls, DeleteAcls, reassignments).
MAX_RECORDS_PER_USER_OP = 10_000
# What ``changed(keys=...)`` names and a parked request (``Delayed.keys``) waits on: a
# partition (topic, index), or a group ("group", id) (emulator.coordinators.groups.coordinator.group_key).
ChangeKey = tuple[str, int] | tuple[str, str]
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
    # Its process runs but UnregisterBroker removed its registration (--fidelity kafka,
    # docs/fidelity.md unregister-running-broker): fenced like a stopped broker (not
    # alive), its listener still answering, until it restarts.
    unregistered: bool = False
    # Advertised ports of the listeners after the first (listener name -> port); the
    # first listener's port is ``port``. Metadata answers with the asking listener's.
    endpoints: dict[str, int] = field(default_factory=dict)
    # Advertised hosts of listeners whose host differs from ``host`` (listener name ->
    # host): Kafka's advertised.listeners may name another host per listener, e.g. the
    # container's name for other containers and localhost for the Docker host.
    endpoint_hosts: dict[str, str] = field(default_factory=dict)

    def port_for(self, listener: str | None) -> int:
        return self.port if listener is None else self.endpoints.get(listener, self.port)

    def host_for(self, listener: str | None) -> str:
        return self.host if listener is None else self.endpoint_hosts.get(listener, self.host)


@dataclass
class Topic:
    name: str
    id: bytes
    partitions: list[Partition]
    configs: dict[str, str] = field(default_factory=ConfigDict)  # dynamic (non-default) only
    # Bumped when a partition's leader, epochs, replicas or ISR change: what the
    # Metadata cache (``ClusterMetadata.partition_metadata``) is keyed on.
    metadata_version: int = 0
    # The effective configs resolved so far (ClusterMetadata.effective_configs)
    effective: EffectiveConfigs | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if type(self.configs) is not ConfigDict:  # its changes must be seen (ConfigDict)
            self.configs = ConfigDict(self.configs)

    @property
    def is_internal(self) -> bool:
        return self.name in INTERNAL_TOPICS


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
            f"Topic name is invalid: '{name}' contains one or more characters other than "
            "ASCII alphanumerics, '.', '_' and '-'",
        )



class ClusterMetadata:
    """The data of one emulated cluster. Owned by one event loop: no locks."""

    def __init__(
        self,
        brokers: list[Broker],
        *,
        clock: Clock | None = None,
        seed: int = 0,
        broker_config: dict[str, str] | None = None,
        cluster_id: str = "kafka-emulator-cluster",
        fidelity: Fidelity | None = None,
    ) -> None:
        self.brokers: dict[int, Broker] = {b.id: b for b in brokers}
        # fast / kafka / adversarial (emulator/fidelity/modes.py): which of Kafka's delays
        # and races the domain reproduces.
        self.fidelity: Fidelity = fidelity or Fidelity()
        self.clock: Clock = clock or SystemClock()
        self.rng = random.Random(seed)
        self.config = default_broker_config(broker_config)
        self.broker_overrides: dict[int, dict[str, str]] = {b.id: {} for b in brokers}
        # Cluster-wide dynamic broker configs. Kafka 4.x's controller writes a cluster-level
        # min.insync.replicas at bootstrap (the eligible-leader-replicas safety record, of
        # the static value), so DescribeConfigs reports its source as
        # DYNAMIC_DEFAULT_BROKER_CONFIG on brokers and topics (measured on a 4.4 broker).
        self.dynamic_default = ConfigDict({
            "min.insync.replicas": self.config["min.insync.replicas"]})
        # config_int's answers without a broker id, for ConfigDict.generation [0]
        self._broker_ints: tuple[int, dict[str, int]] = (-1, {})
        self.group_configs: dict[str, dict[str, str]] = {}  # GROUP resource (group_configs)
        self.static_overrides: dict[str, str] = dict(broker_config or {})
        self.cluster_id = cluster_id
        self.topics: dict[str, Topic] = {}
        # Topics a stepped CreateTopics/CreatePartitions (emulator/cluster/steps.py) is
        # building but has not published yet: their names are taken until it ends.
        self.pending_topics: set[str] = set()
        # Topics a Metadata request auto-created, and when Metadata first shows them
        # (topics.auto_create: Kafka's brokers learn them from the controller later).
        self.auto_created: dict[str, int] = {}
        self.topics_by_id: dict[bytes, Topic] = {}
        self.version = 0
        self.on_change: Callable[[], None] | None = None
        # observers of domain events (emulator.cluster.events): called with (kind, event)
        # (append only: ``emit`` keeps per event type the observers that want it, and
        # rebuilds that when the list grows; see events.observes)
        self.hooks: list[Callable[[str, DomainEvent], None]] = []
        self._routes: dict[type, list[Callable[[str, DomainEvent], None]]] = {}
        self._routed = 0  # len(hooks) when _routes was built
        # Domain services driven by time (group and transaction coordinators): called
        # with the current time at the end of every tick (what they answer is ignored:
        # the coordinators' ticks say whether they changed anything, for their tests).
        self.tick_hooks: list[Callable[[int], object]] = []
        self.isr_shrinks = 0
        self.isr_expands = 0
        # per leader broker, for IsrShrinksPerSec / IsrExpandsPerSec
        self.isr_shrinks_by_broker: dict[int, int] = {b: 0 for b in self.brokers}
        self.isr_expands_by_broker: dict[int, int] = {b: 0 for b in self.brokers}
        self.shutting_down: set[int] = set()  # brokers in controlled shutdown
        self.pending_fence: dict[int, int] = {}  # crashed broker -> when it is fenced (ms)
        # broker -> its failed log directories (Kafka's LogDirFailureChannel), until the
        # broker restarts; (topic, partition, broker) -> the log dir an
        # AlterReplicaLogDirs moved the replica to (emulator/cluster/log_dirs.py)
        self.offline_log_dirs: dict[int, set[str]] = {}
        # A write of the data directory (emulator.storage) that failed, reported from
        # inside an event observer, until the domain tells the controller (ports.py)
        self.log_dir_failure_channel = LogDirFailureChannel()
        self.replica_dir_moves: dict[tuple[str, int, int], str] = {}
        # The faults in force (emulator.faults.FaultModel) when faults are wired in: what
        # replication and the followers ask of them (emulator.cluster.ports).
        self.faults: FaultConditions | None = None
        # What replication must look at next (emulator.cluster.replication): the
        # partitions touched since the last tick (an append, a leader or ISR change, a
        # new replica), or every partition after a cluster-wide change (a broker, a
        # fault, a config). Idle partitions are in neither and cost nothing.
        self.dirty: set[Partition] = set()
        self.touched_in_order: list[Partition] = []  # see touch_in_order
        self.dirty_all = True
        # What changed since the server last woke parked requests: partition keys, or
        # everything (``changed_all``) after a change that is not about given partitions.
        self.changed_keys: set[ChangeKey] = set()
        self.changed_all = False
        # Told every change (the keys, or None for a change naming none) and answering
        # more keys to wake: the fetch sessions holding a changed partition
        # (emulator.cluster.fetch_sessions.SessionWatch.note).
        self.key_watchers: list[Callable[[Collection[ChangeKey] | None],
                                         Iterable[ChangeKey]]] = []
        self.topic_order: dict[str, int] = {}  # topic -> creation rank (replication order)
        # topic -> (key, Metadata partition entries): see partition_metadata
        # (id of the topic, partition count, metadata_version, which brokers are alive)
        self._metadata_cache: dict[str, tuple[tuple[int, int, int, tuple[bool, ...]],
                                              EncodedList]] = {}
        self._next_topic_rank = 0
        # The active controller (emulator.cluster.controller.Controller, seen through
        # ports.ControllerRole); the metadata it acts on (partitions, brokers,
        # controller_epoch) lives here and survives it.
        self.controller: ControllerRole | None = None
        self.controller_epoch = 0
        # Replication throttles (leader/follower.replication.throttled.*), Kafka's quotas
        self.replication_quotas = ReplicationQuotas(self)
        # Partitions whose retention inputs (the leader's log, the high watermark, the
        # leader) may have moved since the last retention pass: replication adds each
        # partition it visits, the log cleaner each it cleans (emulator.cluster.retention).
        self.retention_marks: set[Partition] = set()
        # Each broker's view of the topics, behind the controller's by a lag under Kafka's
        # timing (emulator/cluster/metadata_views.py); off (nothing recorded) in fast.
        self.metadata_views = MetadataViews(
            self.now, self.brokers, self._topic_image, lambda: self.topics,
            active=self.fidelity.kafka_timing, seed=self.fidelity.seed)
        self.tick_hooks.append(self.metadata_views.flush)

    # ---- plumbing ----------------------------------------------------------------
    # ``config`` and ``dynamic_default`` are ConfigDicts (their changes invalidate the
    # resolved configs); a dict assigned to them is wrapped.
    @property
    def config(self) -> ConfigDict:
        return self._config

    @config.setter
    def config(self, value: dict[str, str]) -> None:
        self._config = value if type(value) is ConfigDict else ConfigDict(value)
        ConfigDict.generation += 1

    @property
    def dynamic_default(self) -> ConfigDict:
        return self._dynamic_default

    @dynamic_default.setter
    def dynamic_default(self, value: dict[str, str]) -> None:
        self._dynamic_default = value if type(value) is ConfigDict else ConfigDict(value)
        ConfigDict.generation += 1

    def now(self) -> int:
        return self.clock.now_ms()

    def changed(self, partitions_only: bool = False,
                keys: Iterable[ChangeKey] | None = None) -> None:
        """Something changed: wake parked requests.

        ``keys`` names the partitions (or groups, ``groups.group_key``) that changed:
        only requests waiting on them (or
        on no partition in particular) are woken; None wakes every parked request.
        Unless ``partitions_only`` (the caller touched the partitions replication must
        look at, or changed nothing replication depends on), the next tick visits
        every partition: the safe default for cluster-wide changes (brokers, faults,
        configs), which are rare.
        """
        self.version += 1
        if not partitions_only:
            self.dirty_all = True
        if keys is None:
            self.changed_all = True
            for watcher in self.key_watchers:
                watcher(None)
        else:
            if not isinstance(keys, (list, tuple, set, frozenset)):
                keys = list(keys)  # read again by each watcher
            self.changed_keys.update(keys)
            for watcher in self.key_watchers:
                self.changed_keys.update(watcher(keys))
        if self.on_change is not None:
            self.on_change()

    def touch(self, p: Partition) -> None:
        """``p``'s replication state may have changed: the next tick visits it."""
        self.dirty.add(p)

    def touch_in_order(self, parts: list[Partition]) -> None:
        """Touch many partitions that are already in visiting order (a new topic's, or a
        topic's new ones, in index order): replication takes them as they are, without
        sorting them in with the other touched ones (10,000 at a time cost a tick 20 ms)."""
        self.touched_in_order.extend(parts)

    def touch_all(self) -> None:
        """A cluster-wide change: the next tick visits every partition once."""
        self.dirty_all = True

    def take_changes(self) -> tuple[bool, set[ChangeKey]]:
        """(everything changed, changed partition keys) since the last call; resets both."""
        everything, keys = self.changed_all, self.changed_keys
        self.changed_all, self.changed_keys = False, set()
        return everything, keys

    def emit(self, event: DomainEvent) -> None:
        """Tell every observer ``event`` (one of emulator.cluster.events), but those
        marked as observing other types only (``events.observes``)."""
        for h in self._route(type(event)):
            h(event.kind, event)

    def observed(self, cls: type[DomainEvent]) -> bool:
        """Would ``emit`` pass an event of ``cls`` to anyone? (so that a hot path builds
        the event only when it would: Appended, once per partition of a Produce)"""
        return bool(self.hooks) and bool(self._route(cls))

    def _route(self, cls: type) -> list[Callable[[str, DomainEvent], None]]:
        """The observers of ``cls``, kept per type until ``hooks`` grows."""
        if self._routed != len(self.hooks):
            self._routes, self._routed = {}, len(self.hooks)
        route = self._routes.get(cls)
        if route is None:
            route = self._routes[cls] = [
                h for h in self.hooks
                if issubclass(cls, getattr(h, "observed_events", DomainEvent))]
        return route

    def broker_config(self, key: str, broker_id: int | None = None) -> str:
        """Effective broker config: per-broker dynamic, cluster dynamic, then static."""
        if broker_id is not None and key in self.broker_overrides.get(broker_id, {}):
            return self.broker_overrides[broker_id][key]
        if key in self.dynamic_default:
            return self.dynamic_default[key]
        return self.config[key]

    def config_int(self, key: str, broker_id: int | None = None) -> int:
        if broker_id is not None:
            return int(self.broker_config(key, broker_id))
        # Cluster-wide values (replica.lag.time.max.ms, replica.fetch.max.bytes: read at
        # every replication tick) are kept until a config changes (ConfigDict).
        gen, known = self._broker_ints
        if gen != ConfigDict.generation:
            known = {}
            self._broker_ints = (ConfigDict.generation, known)
        v = known.get(key)
        if v is None:
            v = known[key] = int(self.broker_config(key))
        return v

    def config_bool(self, key: str) -> bool:
        return str(self.config[key]).lower() == "true"

    def effective_configs(self, topic: Topic) -> EffectiveConfigs:
        """The topic's resolved configs, rebuilt after any config change (ConfigDict)."""
        e = topic.effective
        if e is None or e.generation != ConfigDict.generation or e.configs is not topic.configs:
            e = topic.effective = EffectiveConfigs(topic.configs)
        return e

    def topic_config(self, topic: Topic, key: str) -> str:
        """A topic's effective config: its own override, else the broker synonym, else default."""
        values = self.effective_configs(topic).values
        v = values.get(key)
        if v is None:
            v = values[key] = self._resolve_topic_config(topic, key)
        return v

    def produce_configs(self, topic: Topic) -> ProduceConfigs:
        """The typed configs an append reads (resolved once per config change)."""
        e = self.effective_configs(topic)
        pc = e.produce
        if pc is None:
            pc = e.produce = produce_configs_of(
                topic.configs, lambda key: self.topic_config(topic, key))
        return pc

    def retention_configs(self, topic: Topic) -> tuple[bool, int, int]:
        """(cleanup.policy includes delete, retention.ms, retention.bytes), resolved once
        per config change."""
        e = self.effective_configs(topic)
        r = e.retention
        if r is None:
            r = e.retention = retention_configs_of(lambda key: self.topic_config(topic, key))
        return r

    def _resolve_topic_config(self, topic: Topic, key: str) -> str:
        return resolve_topic_config(topic.configs, key, self._broker_value, self.broker_config)

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

    def add_broker(self, broker: Broker) -> None:
        """A broker the cluster was not made with joins it (Kafka's brokers register with
        the controller by their own node id when they first start: an official-image
        broker node in isolated mode). It joins fenced, with its per-broker tables and
        its metadata view; controller.broker_started unfences it as any broker coming
        back. A known id is a ValueError: a broker coming back is broker_started's."""
        if broker.id in self.brokers:
            raise ValueError(f"broker {broker.id} is a broker of the cluster already")
        broker.alive = broker.crashed = broker.unregistered = False
        self.brokers[broker.id] = broker
        self.broker_overrides[broker.id] = {}
        self.isr_shrinks_by_broker[broker.id] = 0
        self.isr_expands_by_broker[broker.id] = 0
        self.metadata_views.add_broker(broker.id)
        self.changed()

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
        """Kafka's replica placement (StripedReplicaPlacer), rack-unaware: a seeded start
        index and replica shift over the unfenced brokers. As Kafka's, every registered broker not shutting down is usable, a fenced one too
        (stopped, or crashed and fenced; not one UnregisterBroker took out): a replication
        factor above the unfenced brokers' count is filled with fenced ones, after the
        unfenced, so the first replica (the leader) is always unfenced and the fenced
        replicas start outside the ISR (``controller.on_new_partition``) and join it once
        their broker is back. Refused: more replicas than usable brokers, or none unfenced.
        """
        usable = [b for b in sorted(self.brokers) if b not in self.shutting_down
                  and not self.brokers[b].unregistered]
        brokers = [b for b in usable if self.brokers[b].alive]
        fenced = [b for b in usable if not self.brokers[b].alive]
        if rf > len(usable):
            raise KafkaError(
                E.INVALID_REPLICATION_FACTOR,
                f"Unable to replicate the partition {rf} time(s): The target replication factor "
                f"of {rf} cannot be reached because only {len(usable)} broker(s) are registered "
                "or some brokers have all their log directories cordoned.",
            )
        if not brokers:
            raise KafkaError(E.INVALID_REPLICATION_FACTOR, f"Unable to replicate the partition "
                             f"{rf} time(s): All brokers are currently fenced.")
        n = len(brokers)
        unfenced_rf = min(rf, n)
        start = self.rng.randrange(n)
        shift = self.rng.randrange(n)
        out = []
        for p in range(start_partition, start_partition + num_partitions):
            if p > 0 and p % n == 0:
                shift += 1
            first = (p + start) % n
            replicas = [brokers[first]]
            for j in range(unfenced_rf - 1):
                s = 1 + (shift + j) % (n - 1)
                replicas.append(brokers[(first + s) % n])
            replicas += [fenced[(p + j) % len(fenced)] for j in range(rf - unfenced_rf)]
            out.append(replicas)
        return out

    def add_topic(self, topic: Topic) -> None:
        """Register a new topic (its partitions get a place in replication's order)."""
        self.before_metadata_change()
        self.topics[topic.name] = topic
        self.topics_by_id[topic.id] = topic
        self.topic_order[topic.name] = self._next_topic_rank
        self._next_topic_rank += 1
        if self.metadata_views.active:
            self.metadata_views.changed(topic.name)

    @property
    def topic_set_version(self) -> tuple[int, int]:
        """Changes whenever a topic is created or deleted: the key of caches of what
        depends on the set of topic names alone (regex subscriptions' matches)."""
        return self._next_topic_rank, len(self.topics)

    def remove_topic(self, topic: Topic) -> None:
        self.before_metadata_change()
        del self.topics[topic.name]
        del self.topics_by_id[topic.id]
        self.topic_order.pop(topic.name, None)
        self._metadata_cache.pop(topic.name, None)
        self.auto_created.pop(topic.name, None)
        if self.metadata_views.active:
            self.metadata_views.changed(topic.name)

    def not_yet_shown(self, name: str) -> bool:
        """Whether Metadata still answers ``name`` as unknown: a topic a Metadata request
        auto-created less than topics.AUTO_CREATE_SHOWN_MS ago (the controller has it,
        the brokers' metadata not yet)."""
        due = self.auto_created.get(name)
        if due is None:
            return False
        if self.now() < due:
            return True
        del self.auto_created[name]
        return False

    def partition_changed(self, p: Partition) -> None:
        """``p``'s leader, epochs, replicas or ISR changed: its topic's metadata is stale."""
        t = self.topics.get(p.topic)
        if t is not None:
            t.metadata_version += 1
            if self.metadata_views.active:
                self.metadata_views.changed(p.topic)

    def before_metadata_change(self) -> None:
        """The controller is about to change a topic's metadata (its leader, ISR,
        replicas, partitions or configs): under Kafka's timing, the brokers' views take
        the changes of an earlier time first (metadata_views.before_change). Call it
        before the change, ``partition_changed``/``topic_metadata_changed`` after."""
        if self.metadata_views.active:
            self.metadata_views.before_change()

    def topic_metadata_changed(self, name: str) -> None:
        """Topic ``name``'s partitions were added or its configs altered: the brokers
        learn it after their metadata lag (metadata_views; nothing in fast)."""
        if self.metadata_views.active:
            self.metadata_views.changed(name)

    def _topic_image(self, name: str) -> TopicImage | None:
        """Topic ``name`` as the controller has it now (for metadata_views)."""
        t = self.topics.get(name)
        if t is None:
            return None
        return TopicImage(
            t.name, t.id, t.is_internal,
            tuple(PartitionImage(p.leader, p.leader_epoch, tuple(p.replicas), tuple(p.isr))
                  for p in t.partitions),
            dict(t.configs), self.partition_metadata(t))

    def partition_metadata(self, topic: Topic) -> EncodedList:
        """The Metadata response's partition entries of ``topic``, built once per change.

        Whole-cluster Metadata then costs what changed since the last request, not
        the size of the cluster. The entries are shared between responses: read only.
        They come as an ``EncodedList``, so each response version encodes them once
        per change too (the wire codec keeps the bytes).
        """
        alive = tuple(b.alive for b in self.brokers.values())
        key = (id(topic), len(topic.partitions), topic.metadata_version, alive)
        hit = self._metadata_cache.get(topic.name)
        if hit is not None and hit[0] == key:
            return hit[1]
        is_alive = self.is_alive
        entries = EncodedList({
            "error_code": E.LEADER_NOT_AVAILABLE if p.leader < 0 else E.NONE,
            "partition_index": p.index,
            "leader_id": p.leader,
            "leader_epoch": p.leader_epoch,
            "replica_nodes": list(p.replicas),
            "isr_nodes": list(p.isr),
            "offline_replicas": [b for b in p.replicas if not is_alive(b) or b in p.offline],
        } for p in topic.partitions)
        self._metadata_cache[topic.name] = (key, entries)
        return entries

    def is_current(self, p: Partition) -> bool:
        """Is ``p`` still a partition of the cluster (not of a deleted topic)?"""
        t = self.topics.get(p.topic)
        return t is not None and p.index < len(t.partitions) and t.partitions[p.index] is p

    def partition_order(self, p: Partition) -> tuple[int, int]:
        """Sort key: topics in creation order, then partition index (a full visit's order)."""
        return self.topic_order.get(p.topic, 0), p.index

    def effective_min_isr(self, t: Topic, p: Partition) -> int:
        """min(min.insync.replicas, replication factor), Partition.effectiveMinIsr."""
        return min(self.produce_configs(t).min_insync_replicas, max(1, len(p.replicas)))
