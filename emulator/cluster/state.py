"""The cluster: brokers, topics, partitions and the operations clients ask for.

This is the sans-I/O domain (DESIGN.md): it never awaits, never touches sockets,
and reads time from the injected clock. The server calls in with decoded
requests' intent, and calls ``tick`` to let replication and expiry happen. Every
change bumps ``version`` and calls ``on_change`` so the server can wake waiters
(long-polling fetches, acks=all produces): Kafka's purgatory.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from emulator.cluster.clock import SystemClock
from emulator.cluster.configs import (
    TOPIC_CONFIGS,
    ConfigError,
    default_broker_config,
    validate_topic_configs,
)
from emulator.cluster.partition import KafkaError, Partition, epoch_end_offset
from emulator.cluster.throttle import ReplicationQuotas
from wire.errors import ErrorCode as E
from wire.records import InvalidRecordError, read_header, split_batches

LEGAL_TOPIC = re.compile(r"^[a-zA-Z0-9._-]+$")
MAX_TOPIC_LENGTH = 249
INTERNAL_TOPICS = ("__consumer_offsets", "__transaction_state")


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


class ClusterState:
    """All state of one emulated cluster. Owned by one event loop: no locks."""

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
        self._next_isr_expiration: int | None = None
        # Partitions a change-triggered tick must visit: replication not finished, or
        # changed (partition epoch) since it was last replicated. The periodic full
        # tick visits all, so idle partitions cost nothing on the produce path.
        self._active: set[tuple[str, int]] = set()
        self._needs_full = True
        self._seen_epoch: dict[tuple[str, int], int] = {}
        # The active controller (emulator.cluster.controller.Controller); the metadata
        # it acts on (partitions, brokers, controller_epoch) lives here and survives it.
        self.controller: Any = None
        self.controller_epoch = 0
        # Replication throttles (leader/follower.replication.throttled.*), Kafka's quotas
        self.replication_quotas = ReplicationQuotas(self)
        from emulator.cluster import controller as _controller

        _controller.elect_controller(self)

    # ---- plumbing ----------------------------------------------------------------
    def now(self) -> int:
        return self.clock.now_ms()

    def changed(self, partitions_only: bool = False) -> None:
        """Something changed: wake waiters. Unless only partition data moved (appends,
        replication), the next tick visits every partition, not just the active ones."""
        self.version += 1
        if not partitions_only:
            self._needs_full = True
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

    def elect_controller(self) -> None:
        from emulator.cluster import controller as _controller

        _controller.elect_controller(self)

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
                f"of {rf} cannot be reached because only {n} broker(s) are registered.",
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

    def create_topic(
        self,
        name: str,
        num_partitions: int = -1,
        replication_factor: int = -1,
        assignments: dict[int, list[int]] | None = None,
        configs: dict[str, str | None] | None = None,
        validate_only: bool = False,
    ) -> Topic | None:
        """Validate and create a topic, as the controller's CreateTopics does."""
        validate_topic_name(name)
        if name in self.topics:
            raise KafkaError(E.TOPIC_ALREADY_EXISTS, f"Topic '{name}' already exists.")
        configs = {k: v for k, v in (configs or {}).items() if v is not None}
        try:
            validate_topic_configs(configs)
        except ConfigError as e:
            raise KafkaError(E.INVALID_CONFIG, str(e)) from e
        if assignments:
            if num_partitions != -1 or replication_factor != -1:
                raise KafkaError(
                    E.INVALID_REQUEST,
                    "Both numPartitions or replicationFactor and replicasAssignments were set. "
                    "Both cannot be used at the same time.",
                )
            plan = []
            for i in range(len(assignments)):
                if i not in assignments:
                    raise KafkaError(E.INVALID_REPLICA_ASSIGNMENT,
                                     "partitions should be a consecutive 0-based integer sequence")
                reps = assignments[i]
                if not reps or len(set(reps)) != len(reps):
                    raise KafkaError(E.INVALID_REPLICA_ASSIGNMENT,
                                     f"Duplicate brokers not allowed in replica assignment: "
                                     f"{', '.join(map(str, reps))} for partition id {i}.")
                for b in reps:
                    if b not in self.brokers:
                        raise KafkaError(E.INVALID_REPLICA_ASSIGNMENT,
                                         f"The manual partition assignment includes broker {b}, "
                                         "but no such broker is registered.")
                plan.append(list(reps))
        else:
            if num_partitions == -1:
                num_partitions = int(self.config["num.partitions"])
            if replication_factor == -1:
                replication_factor = int(self.config["default.replication.factor"])
            if num_partitions <= 0:
                raise KafkaError(E.INVALID_PARTITIONS, "Number of partitions was set to an "
                                 "invalid non-positive value.")
            if replication_factor <= 0:
                raise KafkaError(E.INVALID_REPLICATION_FACTOR, "Replication factor must be "
                                 "larger than 0, or -1 to use the default value.")
            plan = self.assign_replicas(num_partitions, replication_factor)
        if validate_only:
            return None
        tid = self.new_topic_id()
        parts = [Partition(name, tid, i, reps) for i, reps in enumerate(plan)]
        topic = Topic(name, tid, parts, dict(configs))
        now = self.now()
        for p in parts:
            self._initial_leader(p, now)
        self.topics[name] = topic
        self.topics_by_id[tid] = topic
        self.emit("topic_created", topic=name)
        self.changed()
        return topic

    def _initial_leader(self, p: Partition, now: int) -> None:
        from emulator.cluster import controller as _controller

        _controller.on_new_partition(self, p)

    def delete_topic(self, name: str) -> Topic:
        t = self.get_topic(name)
        from emulator.cluster import controller as _controller

        for p in t.partitions:
            _controller.on_partition_deletion(self, p)
        del self.topics[name]
        del self.topics_by_id[t.id]
        self.emit("topic_deleted", topic=name)
        self.changed()
        return t

    def create_partitions(
        self, name: str, count: int, assignments: list[list[int]] | None, validate_only: bool
    ) -> None:
        t = self.get_topic(name)
        old = len(t.partitions)
        if count < old:
            raise KafkaError(E.INVALID_PARTITIONS, f"Topic currently has {old} partitions, which "
                             f"is higher than the requested {count}.")
        if count == old:
            raise KafkaError(E.INVALID_PARTITIONS, f"Topic already has {old} partitions.")
        rf = len(t.partitions[0].replicas)
        if assignments:
            if len(assignments) != count - old:
                raise KafkaError(E.INVALID_REPLICA_ASSIGNMENT, f"Increasing the number of "
                                 f"partitions by {count - old} but {len(assignments)} assignments "
                                 "provided.")
            for reps in assignments:
                if len(reps) != rf:
                    raise KafkaError(E.INVALID_REPLICA_ASSIGNMENT,
                                     f"The manual partition assignment includes a partition with "
                                     f"{len(reps)} replica(s), but this is not consistent with "
                                     f"previous partitions, which have {rf} replica(s).")
                for b in reps:
                    if b not in self.brokers:
                        raise KafkaError(E.INVALID_REPLICA_ASSIGNMENT,
                                         f"The manual partition assignment includes broker {b}, "
                                         "but no such broker is registered.")
            plan = [list(r) for r in assignments]
        else:
            plan = self.assign_replicas(count - old, rf, start_partition=old)
        if validate_only:
            return
        now = self.now()
        for i, reps in enumerate(plan):
            p = Partition(name, t.id, old + i, reps)
            self._initial_leader(p, now)
            t.partitions.append(p)
        self.changed()

    def auto_create(self, name: str) -> Topic | None:
        """Metadata/Produce auto creation (auto.create.topics.enable)."""
        if not self.config_bool("auto.create.topics.enable"):
            return None
        rf = min(int(self.config["default.replication.factor"]), len(self.alive_brokers()) or 1)
        return self.create_topic(name, int(self.config["num.partitions"]), rf)

    # ---- produce --------------------------------------------------------------------
    def append(self, broker_id: int, topic: str, index: int, records: bytes | None,
               acks: int) -> AppendResult:
        """Append one partition's records on its leader; Kafka's appendRecordsToLeader."""
        try:
            p = self.get_partition(topic, index)
            p.check_leader(broker_id)
            t = self.topics[topic]
            if records is None or len(records) == 0:
                raise KafkaError(E.INVALID_RECORD, "Produce request contains no records")
            try:
                spans = split_batches(records)
            except InvalidRecordError as e:
                raise KafkaError(E.CORRUPT_MESSAGE, str(e)) from e
            if len(spans) != 1:
                raise KafkaError(E.INVALID_RECORD, "Produce requests with version 3 and above "
                                 "must contain exactly one record batch per partition")
            max_bytes = int(self.topic_config(t, "max.message.bytes"))
            if len(records) > max_bytes:
                raise KafkaError(E.MESSAGE_TOO_LARGE, f"The request included a message larger "
                                 f"than the max message size the server will accept "
                                 f"({len(records)} > {max_bytes})")
            min_isr = self.effective_min_isr(t, p)
            if acks == -1 and len(p.isr) < min_isr:
                raise KafkaError(E.NOT_ENOUGH_REPLICAS, f"The size of the current ISR "
                                 f"{set(p.isr)} is insufficient to satisfy the min.isr "
                                 f"requirement of {min_isr} for partition {topic}-{index}")
            try:
                h = read_header(records)
                if h.magic != 2:
                    raise InvalidRecordError(f"unsupported magic {h.magic}")
                if h.is_control:
                    raise KafkaError(E.INVALID_RECORD, "Control records are not allowed to be "
                                     "written by clients")
                dup = p.check_sequence(h)
                if dup is not None:
                    return AppendResult(0, dup, dup + h.last_offset_delta, -1,
                                        p.log_start_offset)
                now = self.now()
                lat = now if self.topic_config(t, "message.timestamp.type") == "LogAppendTime" else -1
                base, last, _ = p.leader_log.append_as_leader(records, p.leader_epoch, lat)
            except InvalidRecordError as e:
                code = E.CORRUPT_MESSAGE if e.corrupt else E.INVALID_RECORD
                raise KafkaError(code, str(e)) from e
            p.record_producer(h, base, last)
            self.mark_active(p)
            self.emit("append", topic=topic, partition=index, base=base, last=last)
            if len(p.isr) == 1:
                self.advance_hw(p)
            self.changed(partitions_only=True)
            return AppendResult(0, base, last, lat, p.log_start_offset,
                                leader_epoch=p.leader_epoch)
        except KafkaError as e:
            return AppendResult(e.code, message=e.message)

    def append_control(self, p: Partition, data: bytes) -> int:
        """Write a transaction marker on the leader (the coordinator's WriteTxnMarkers)."""
        base, _, _ = p.leader_log.append_as_leader(data, p.leader_epoch, -1)
        self.mark_active(p)
        if len(p.isr) == 1:
            self.advance_hw(p)
        self.changed(partitions_only=True)
        return base

    def acks_all_done(self, topic: str, index: int, last_offset: int,
                      leader_epoch: int = -1) -> tuple[bool, int]:
        """Has the ISR acknowledged up to last_offset? Returns (done, error code).

        Partition.checkEnoughReplicasReachOffset: done once the high watermark
        passes the offset, with NOT_ENOUGH_REPLICAS_AFTER_APPEND when the ISR is then
        below the effective min.insync.replicas. A leader change while waiting
        (another leader epoch) answers NOT_LEADER_OR_FOLLOWER, as the deposed
        leader's purgatory does: the append may have been truncated away.
        """
        t = self.topics.get(topic)
        if t is None or index >= len(t.partitions):
            return True, E.UNKNOWN_TOPIC_OR_PARTITION
        p = t.partitions[index]
        if (leader_epoch >= 0 and p.leader_epoch != leader_epoch) or p.leader < 0:
            return True, E.NOT_LEADER_OR_FOLLOWER
        if p.high_watermark > last_offset:
            if len(p.isr) < self.effective_min_isr(t, p):
                return True, E.NOT_ENOUGH_REPLICAS_AFTER_APPEND
            return True, 0
        if last_offset >= p.log_end_offset:
            return True, E.NOT_LEADER_OR_FOLLOWER  # the append was truncated away
        return False, 0

    def effective_min_isr(self, t: Topic, p: Partition) -> int:
        """min(min.insync.replicas, replication factor), Partition.effectiveMinIsr."""
        return min(int(self.topic_config(t, "min.insync.replicas")), max(1, len(p.replicas)))

    # ---- replication and ISR maintenance ---------------------------------------------
    def tick(self, full: bool = True) -> None:
        """Followers fetch, high watermarks move, ISRs expand; ISRs shrink every lag/2.

        Kafka's isr-expiration task runs every replica.lag.time.max.ms / 2, so a
        follower that stops fetching leaves the ISR between 1 and 1.5 lag times
        after it last caught up. A tick that is not ``full`` (the one the server runs
        right after a change) visits only partitions with replication to do.
        """
        now = self.now()
        lag_max = self.config_int("replica.lag.time.max.ms")
        expire = full and (self._next_isr_expiration is None
                           or now >= self._next_isr_expiration)
        if expire:
            self._next_isr_expiration = now + max(1, lag_max // 2)
        moved = False
        visit_all = full or self._needs_full
        self._needs_full = False
        active, seen = self._active, self._seen_epoch
        if self.pending_fence:
            self._fence_due(now)
        for t in self.topics.values():
            for p in t.partitions:
                if p.leader < 0 or not self.is_running(p.leader):
                    continue
                key = (p.topic, p.index)
                if not visit_all and key not in active and seen.get(key) == p.partition_epoch:
                    continue
                moved |= self.replicate_partition(p, now)
                if expire:
                    moved |= self.maintain_isr(p, now, lag_max)
                seen[key] = p.partition_epoch
                if self._replication_done(p):
                    active.discard(key)
                else:
                    active.add(key)
        other = False
        if self.controller is not None:
            other |= self.controller.tick(now)
        if self.faults is not None:
            other |= bool(self.faults.tick(now))
        if moved or other:
            self.changed(partitions_only=not other)
        for hook in self.tick_hooks:
            hook(now)

    def _fence_due(self, now: int) -> None:
        """Fence the crashed brokers whose session timed out (the controller notices)."""
        from emulator.cluster import controller as _controller

        for broker_id, deadline in sorted(self.pending_fence.items()):
            if now >= deadline:
                _controller.broker_stopped(self, broker_id)

    def mark_active(self, p: Partition) -> None:
        """The leader's log moved: the next tick must let the followers fetch."""
        self._active.add((p.topic, p.index))

    @staticmethod
    def _replication_done(p: Partition) -> bool:
        if p.leader < 0:
            return True
        leo = p.leader_log.log_end_offset
        if p.high_watermark != leo:
            return False
        for b, log in p.logs.items():
            if b != p.leader and (log.log_end_offset != leo
                                  or p.fetcher_epoch.get(b) != p.leader_epoch):
                return False
        return True

    def follower_can_fetch(self, p: Partition, follower: int) -> bool:
        """Is the follower's fetcher running and able to reach the leader? (faults)"""
        if not self.is_running(follower):
            return False
        if self.replication_quotas.follower_excluded(p, follower):
            return False  # follower throttle: left out of its fetcher's requests
        return self.faults is None or self.faults.follower_can_fetch(p, follower, self.now())

    def isr_eligible(self, broker_id: int) -> bool:
        """KRaft's isReplicaIsrEligible: unfenced and not in controlled shutdown."""
        return self.is_alive(broker_id) and broker_id not in self.shutting_down

    def replicate_partition(self, p: Partition, now: int) -> bool:
        """One fetch round for each follower of ``p``; shares the leader's batch bytes.

        A follower that has not yet fetched in the current leader epoch first
        truncates where its log diverges (OffsetForLeaderEpoch / DivergingEpoch).
        The leader updates its view of the follower from the fetch offset (the
        follower's LEO before the data it is about to get); a follower that got
        data fetches again at once, as Kafka's fetcher does.
        """
        leader_log = p.leader_log
        leader = p.leader
        moved = False
        fetched = []
        for b in p.replicas:
            if p.leader != leader:
                break  # a reassignment completed mid-round and moved the leader
            if b == p.leader or not self.follower_can_fetch(p, b):
                continue
            log = p.logs.get(b)
            if log is None:
                continue
            if p.fetcher_epoch.get(b) != p.leader_epoch:
                before = log.log_end_offset
                truncate_follower(p, b)
                p.fetcher_epoch[b] = p.leader_epoch
                moved |= log.log_end_offset != before
            if log.log_end_offset > leader_log.log_end_offset:
                log.truncate_to(leader_log.log_end_offset)
            if log.log_end_offset < leader_log.log_start_offset:  # OFFSET_OUT_OF_RANGE
                log.truncate_fully_and_start_at(leader_log.log_start_offset)
            moved |= self.follower_fetch(p, b, log.log_end_offset, now)
            budget = self.fetch_budget(p, b) \
                if log.log_end_offset < leader_log.log_end_offset else 0
            if budget > 0:
                for data, base, last, epoch, max_ts in leader_log.batches_from(
                    log.log_end_offset, budget
                ):
                    log.append_as_follower(data, base, last, epoch, max_ts)
                    self.consume_budget(p, b, len(data))
                moved = True
                if not self.replication_quotas.follower_excluded(p, b):
                    moved |= self.follower_fetch(p, b, log.log_end_offset, now)
            fetched.append(b)
            if log.log_start_offset < leader_log.log_start_offset:
                log.delete_before(leader_log.log_start_offset)
        # Each fetching follower learns the high watermark: a moved HW completes the
        # followers' fetches waiting in purgatory (tryCompleteDelayedRequests).
        for b in fetched:
            log = p.logs.get(b)  # a completed reassignment may have deleted it
            if log is not None:
                p.follower_hw[b] = min(p.high_watermark, log.log_end_offset)
        return moved

    def follower_fetch(self, p: Partition, b: int, fetch_offset: int, now: int) -> bool:
        """The leader's side of a follower fetch (Partition.updateFollowerFetchState):
        fetch state, then ISR expansion, then the high watermark."""
        p.update_follower(b, fetch_offset, now)
        if b in p.isr and p.high_watermark == p.log_end_offset:
            return False  # the common idle case: nothing can move
        changed = False
        if b not in p.isr and p.can_join_isr(b) and self.isr_eligible(b):
            self.expand_isr(p, b)
            changed = True
        changed |= self.advance_hw(p, now)
        return changed

    def expand_isr(self, p: Partition, b: int) -> None:
        p.isr.append(b)
        p.partition_epoch += 1
        self.isr_expands += 1
        self.isr_expands_by_broker[p.leader] = self.isr_expands_by_broker.get(p.leader, 0) + 1
        self.emit("isr_expand", topic=p.topic, partition=p.index, broker=b)
        self._isr_changed(p)

    def shrink_isr(self, p: Partition, out: list[int]) -> None:
        p.isr = [b for b in p.isr if b not in out]
        p.partition_epoch += 1
        self.isr_shrinks += 1
        self.isr_shrinks_by_broker[p.leader] = self.isr_shrinks_by_broker.get(p.leader, 0) + 1
        self.emit("isr_shrink", topic=p.topic, partition=p.index, brokers=list(out))
        self._isr_changed(p)

    def _isr_changed(self, p: Partition) -> None:
        from emulator.cluster import controller as _controller

        _controller.on_isr_change(self, p)

    def advance_hw(self, p: Partition, now: int | None = None) -> bool:
        """Move the leader's high watermark by Kafka's rules (Partition.maybe_advance_hw)."""
        t = self.topics.get(p.topic)
        min_isr = self.effective_min_isr(t, p) if t is not None else 1
        now = self.now() if now is None else now
        lag_max = self.config_int("replica.lag.time.max.ms")
        eligible = [b for b in p.replicas if self.isr_eligible(b)]
        return p.maybe_advance_hw(min_isr, now, lag_max, eligible)

    def fetch_budget(self, p: Partition, follower: int) -> int:
        """Bytes this follower may fetch now (throttles override this)."""
        budget = self.config_int("replica.fetch.max.bytes") * 64
        if self.faults is not None:
            budget = self.faults.fetch_budget(p, follower, budget)
        return self.replication_quotas.fetch_budget(p, follower, budget)

    def consume_budget(self, p: Partition, follower: int, n: int) -> None:
        """Account fetched bytes against the replication throttles (emulator.cluster.throttle)."""
        self.replication_quotas.record(p, follower, n)

    def maintain_isr(self, p: Partition, now: int, lag_max: int) -> bool:
        """Partition.maybeShrinkIsr (and a late expansion check): the isr-expiration task."""
        changed = False
        for b in p.replicas:
            if b != p.leader and p.can_join_isr(b) and self.isr_eligible(b):
                self.expand_isr(p, b)
                changed = True
        out = p.out_of_sync(now, lag_max)
        if out:
            self.shrink_isr(p, out)
            changed = True
        changed |= self.advance_hw(p, now)
        return changed

    # ---- reads ----------------------------------------------------------------------
    def list_offset(self, broker_id: int, topic: str, index: int, timestamp: int,
                    isolation: int, current_leader_epoch: int = -1,
                    client: bool = True) -> tuple[int, int, int]:
        """(offset, timestamp, leader epoch) for ListOffsets' special and real timestamps.

        A newly elected leader's high watermark is its last one as a follower, which
        can lag the offsets clients already saw. Like Kafka (KIP-207), a client's
        LATEST, or a timestamp lookup that finds nothing below the high watermark,
        gets the retriable OFFSET_NOT_AVAILABLE until the high watermark reaches the
        start of the leader's epoch; otherwise offsets seen by a consumer could go
        backwards, which Spark's connector reports as data loss.
        """
        p = self.get_partition(topic, index)
        p.check_leader(broker_id, current_leader_epoch)
        log = p.leader_log
        if client:
            limit = p.last_stable_offset() if isolation == 1 else p.high_watermark
        else:  # a replica's request reads up to the log end (isolation level undefined)
            limit = log.log_end_offset
        if timestamp in (-2, -4):  # EARLIEST, EARLIEST_LOCAL
            return log.log_start_offset, -1, p.leader_epoch
        if timestamp == -5:  # LATEST_TIERED (no tiered storage)
            return -1, -1, -1
        lagging = client and p.leader_epoch_start() > p.high_watermark
        if timestamp == -1:  # LATEST
            if lagging:
                raise KafkaError(E.OFFSET_NOT_AVAILABLE)
            return limit, -1, p.leader_epoch
        if timestamp == -3:  # MAX_TIMESTAMP
            found = self._exact_max_timestamp(log) if log.max_timestamp_offset >= 0 \
                else (-1, -1, -1)
        else:
            found = self._offset_for_time(log, timestamp, limit, p.leader_epoch)
        if lagging and (found[0] < 0 or found[0] >= limit):
            raise KafkaError(E.OFFSET_NOT_AVAILABLE)
        return found

    def _exact_max_timestamp(self, log) -> tuple[int, int, int]:
        from wire.records import decode_records

        batch = log.batch_at(log.max_timestamp_offset)
        if batch is None:
            return -1, -1, -1
        h = read_header(batch)
        best = max(decode_records(batch), key=lambda r: (r.timestamp, -r.offset))
        return best.offset, best.timestamp, h.partition_leader_epoch

    def _offset_for_time(self, log, ts: int, limit: int, epoch: int) -> tuple[int, int, int]:
        from wire.records import decode_records

        found = log.offset_for_timestamp(ts)
        while found is not None:
            base, _ = found
            if base >= limit:
                return -1, -1, -1
            batch = log.batch_at(base)
            h = read_header(batch)
            for r in decode_records(batch):
                if r.timestamp >= ts and r.offset >= log.log_start_offset and r.offset < limit:
                    return r.offset, r.timestamp, h.partition_leader_epoch
            found = self._next_batch(log, h.last_offset + 1, ts)
        return -1, -1, -1

    @staticmethod
    def _next_batch(log, offset: int, ts: int) -> tuple[int, int] | None:
        batch = log.batch_at(offset)
        if batch is None:
            return None
        h = read_header(batch)
        return h.base_offset, h.max_timestamp

    # ---- deletion and retention --------------------------------------------------------
    def delete_records(self, topic: str, index: int, offset: int) -> int:
        p = self.get_partition(topic, index)
        if p.leader < 0:
            raise KafkaError(E.LEADER_NOT_AVAILABLE)
        if offset == -1:
            offset = p.high_watermark
        if offset < 0 or offset > p.high_watermark:
            raise KafkaError(E.OFFSET_OUT_OF_RANGE)
        low = p.leader_log.delete_before(offset)
        for b, log in p.logs.items():
            if b != p.leader:
                log.delete_before(min(low, log.log_end_offset))
        self.changed()
        return low

    def apply_retention(self) -> None:
        now = self.now()
        for t in self.topics.values():
            rms = int(self.topic_config(t, "retention.ms"))
            rbytes = int(self.topic_config(t, "retention.bytes"))
            if rms < 0 and rbytes < 0:
                continue
            for p in t.partitions:
                if p.leader < 0:
                    continue
                if p.leader_log.apply_retention(now, rms, rbytes, p.high_watermark):
                    for b, log in p.logs.items():
                        if b != p.leader:
                            log.delete_before(p.leader_log.log_start_offset)
                    self.changed()


def truncate_follower(p: Partition, broker_id: int) -> None:
    """Truncate a follower where its log diverges from the leader's epoch history.

    AbstractFetcherThread.getOffsetTruncationState, repeated until done: ask the
    leader for the end of the follower's latest epoch; if the leader answers with
    an epoch the follower does not have, truncate to the end of the follower's
    largest epoch below it and ask again; otherwise truncate to the smaller of the
    two ends. An undefined answer truncates to the follower's high watermark.
    """
    log = p.logs[broker_id]
    leader_log = p.leader_log
    for _ in range(256):
        epoch = log.latest_epoch
        if epoch < 0:
            return
        l_epoch, l_end = epoch_end_offset(leader_log, epoch)
        if l_epoch < 0 or l_end < 0:
            log.truncate_to(min(p.follower_hw.get(broker_id, 0), log.log_end_offset))
            return
        f_epoch, f_end = epoch_end_offset(log, l_epoch)
        if f_epoch < 0:
            log.truncate_to(min(l_end, log.log_end_offset))
            return
        if f_epoch != l_epoch:
            before = log.log_end_offset
            log.truncate_to(min(f_end, log.log_end_offset))
            if log.log_end_offset == before:
                return
            continue
        log.truncate_to(min(f_end, l_end, log.log_end_offset))
        return
