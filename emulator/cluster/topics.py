"""CreateTopics, DeleteTopics, CreatePartitions and auto creation, as the controller does.

Validation with Kafka's messages, the replica assignment (``assign_replicas`` on the
cluster's data), then the controller takes each new partition through its state
machines and elects its first leader (``controller.on_new_partition``).
"""

from __future__ import annotations

from collections.abc import Mapping

from emulator.cluster import controller
from emulator.cluster.configs import ConfigError, validate_topic_configs
from emulator.cluster.events import TopicCreated, TopicDeleted
from emulator.cluster.metadata import (
    MAX_RECORDS_PER_USER_OP,
    ClusterMetadata,
    Topic,
    validate_topic_name,
)
from emulator.cluster.partition import Partition
from emulator.cluster.ports import ControllerRole
from emulator.cluster.steps import STEP_PARTITIONS, Steps, drain
from wire.errors import ErrorCode as E
from wire.errors import KafkaError

# ReplicationControlManager.MAX_PARTITIONS_PER_BATCH: the most partitions one CreateTopics
# or CreatePartitions request may create. Kafka added it after requests for millions of
# partitions ran its controller out of memory; here it also keeps one request from
# holding the event loop (10,000 partitions take well under a second to create).
MAX_PARTITIONS_PER_BATCH = 10_000

# How long after a Metadata request auto-created a topic Metadata first shows it, in
# every fidelity mode (docs/fidelity.md, ``auto-create-visibility``). Kafka's broker
# forwards the creation to the controller and answers at once (UNKNOWN_TOPIC_OR_PARTITION);
# the controller takes the name at once (a CreateTopics sent right after, to another
# broker, answered TOPIC_ALREADY_EXISTS in 19 of 20 trials), and the brokers learn the
# topic from the metadata log later. Measured on Kafka 4.4.0 (3 brokers, a shared
# 2-core machine; Metadata v12 polled on the broker that auto-created it, 20 trials):
# shown after 29-245 ms, median 31, never sooner than 29 (but once 7 ms or less, in a run
# at a load average of 19). A client that reads the topic's
# partitions the instant after creating it (kafka-go's partition watcher, started right
# after the group's leader created the topic) meets Kafka's answer here too. The floor
# is the KRaft controller's: it commits its records in batches it holds for
# controller.quorum.append.linger.ms (QuorumConfig.DEFAULT_QUORUM_LINGER_MS, 25 in
# kafka-raft 4.4.0) before the brokers can fetch them (a creation that joins a batch
# already waiting is presumably the rare sooner case). Not shortened for speed: 30 of
# the ~43 ms between the ready line and bench/start.py's first acknowledged produce,
# and a client can tell (docs/scale.md, start-up).
AUTO_CREATE_SHOWN_MS = 30


def check_create_topics_total(state: ClusterMetadata, requested: list[tuple[int, int]]) -> None:
    """Refuse a whole CreateTopics request that would create too many partitions.

    ``requested`` is (num_partitions, number of manual assignments) per topic. Kafka's
    validateTotalNumberOfPartitions counts the upper bound before looking at anything
    else: the default for -1, nothing for other non-positive counts, the assignments
    when given. Every topic of the request then fails with POLICY_VIOLATION.
    """
    total = 0
    for num_partitions, n_assignments in requested:
        if n_assignments:
            total += n_assignments
        elif num_partitions == -1:
            total += int(state.config["num.partitions"])
        elif num_partitions > 0:
            total += num_partitions
    if total > MAX_PARTITIONS_PER_BATCH:
        raise KafkaError(E.POLICY_VIOLATION, "Excessively large number of partitions per request.")


def topic_records(num_partitions: int, configs: dict[str, str | None]) -> int:
    """Metadata records Kafka's controller writes for one new topic: a TopicRecord, a
    PartitionRecord per partition and a ConfigRecord per config set."""
    return 1 + num_partitions + sum(1 for v in configs.values() if v is not None)


def check_records_per_user_op(records: int) -> None:
    """QuorumController.MAX_RECORDS_PER_USER_OP: one user operation writes at most 10,000
    records (its BoundedList), or the whole operation fails with POLICY_VIOLATION; so
    CreateTopics for one topic of 10,000 partitions (10,001 records) is refused."""
    if records > MAX_RECORDS_PER_USER_OP:
        raise KafkaError(E.POLICY_VIOLATION, "Unable to perform excessively large batch operation.")


def check_create_partitions_total(state: ClusterMetadata, requested: list[tuple[str, int]]) -> None:
    """Refuse a whole CreatePartitions request adding more than MAX_PARTITIONS_PER_BATCH
    partitions over its topics (Kafka 4.4 checks this before anything else; every topic
    of the request then fails with POLICY_VIOLATION)."""
    total = 0
    for name, count in requested:
        t = state.topics.get(name)
        if t is not None and count > len(t.partitions):
            total += count - len(t.partitions)
    if total > MAX_PARTITIONS_PER_BATCH:
        raise KafkaError(E.POLICY_VIOLATION,
                         "Excessively large number of additional partitions per request.")


def create_topic(
    state: ClusterMetadata,
    name: str,
    num_partitions: int = -1,
    replication_factor: int = -1,
    assignments: dict[int, list[int]] | None = None,
    configs: Mapping[str, str | None] | None = None,
    validate_only: bool = False,
) -> Topic | None:
    """Validate and create a topic, as the controller's CreateTopics does."""
    return drain(create_topic_steps(state, name, num_partitions, replication_factor,
                                    assignments, configs, validate_only))


def _plan_topic(
    state: ClusterMetadata, name: str, num_partitions: int, replication_factor: int,
    assignments: dict[int, list[int]] | None, configs: dict[str, str],
) -> list[list[int]]:
    """CreateTopics' validation, in Kafka's order and words; the replicas of each new
    partition (the manual assignment, or the rack-unaware one)."""
    validate_topic_name(name)
    if name in state.topics or name in state.pending_topics:
        raise KafkaError(E.TOPIC_ALREADY_EXISTS, f"Topic '{name}' already exists.")
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
        rf: int | None = None  # the first partition's sets it for the rest (as Kafka)
        for i in range(len(assignments)):
            if i not in assignments:
                raise KafkaError(E.INVALID_REPLICA_ASSIGNMENT,
                                 "partitions should be a consecutive 0-based integer sequence")
            reps = assignments[i]
            validate_manual_assignment(state, reps, rf)
            rf = len(reps)
            plan.append(list(reps))
        return plan
    if num_partitions == -1:
        num_partitions = int(state.config["num.partitions"])
    if replication_factor == -1:
        replication_factor = int(state.config["default.replication.factor"])
    if num_partitions <= 0:
        raise KafkaError(E.INVALID_PARTITIONS, "Number of partitions was set to an "
                         "invalid non-positive value.")
    if replication_factor <= 0:
        raise KafkaError(E.INVALID_REPLICATION_FACTOR, "Replication factor must be "
                         "larger than 0, or -1 to use the default value.")
    return state.assign_replicas(num_partitions, replication_factor)


class _Building:
    """New partitions built between steps, before they are published.

    Between steps the rest of the cluster moves on. What a new partition took from it
    (the controller that registered it in its state machines, which brokers were alive
    or shutting down when its leader and ISR were chosen) is remembered; if any of it
    changed, the partitions built so far are taken back out of the controller and the
    operation starts again on the new state, as if it had arrived after the change
    (Kafka's controller would have handled the two in some order, too)."""

    def __init__(self, state: ClusterMetadata) -> None:
        self.state = state
        self.parts: list[Partition] = []
        self.seen = self._snapshot()

    def _snapshot(self) -> tuple[ControllerRole | None, tuple[bool, ...], frozenset[int]]:
        st = self.state
        return (st.controller, tuple(st.is_alive(b) for b in sorted(st.brokers)),
                frozenset(st.shutting_down))

    def stale(self) -> bool:
        return self._snapshot() != self.seen

    def add(self, p: Partition) -> None:
        controller.on_new_partition(self.state, p)
        self.parts.append(p)

    def undo(self) -> None:
        """Take the unpublished partitions out of the controller that registered them
        (a controller elected since never saw them)."""
        if self.state.controller is self.seen[0]:
            for p in self.parts:
                controller.on_partition_deletion(self.state, p)
        self.parts = []


# A stepped operation whose cluster keeps changing under it starts again at most this
# many times; the last attempt runs without yielding, so it always ends.
_ATTEMPTS = 3


def create_topic_steps(
    state: ClusterMetadata,
    name: str,
    num_partitions: int = -1,
    replication_factor: int = -1,
    assignments: dict[int, list[int]] | None = None,
    configs: Mapping[str, str | None] | None = None,
    validate_only: bool = False,
) -> Steps[Topic | None]:
    """create_topic in steps (emulator/cluster/steps.py): the partitions are built
    STEP_PARTITIONS at a time and the topic is published at once at the end, as
    Kafka's controller commits a CreateTopics atomically: until then nobody sees it,
    and its name is taken (``pending_topics``: a second create of it gets
    TOPIC_ALREADY_EXISTS, as it would had it come after)."""
    given: dict[str, str] = {k: v for k, v in (configs or {}).items() if v is not None}
    plan = _plan_topic(state, name, num_partitions, replication_factor, assignments, given)
    if validate_only:
        return None
    state.pending_topics.add(name)
    building = _Building(state)
    try:
        for attempt in range(_ATTEMPTS):
            if attempt:
                state.pending_topics.discard(name)
                plan = _plan_topic(state, name, num_partitions, replication_factor,
                                   assignments, given)
                state.pending_topics.add(name)
                building = _Building(state)
            tid = state.new_topic_id()
            restart = False
            for i, reps in enumerate(plan):
                if i % STEP_PARTITIONS == 0 and i and attempt < _ATTEMPTS - 1:
                    yield
                    if building.stale():
                        building.undo()
                        restart = True
                        break
                building.add(Partition(name, tid, i, reps))
            if restart:
                continue
            topic = Topic(name, tid, building.parts, dict(given))
            state.touch_in_order(building.parts)
            state.add_topic(topic)
            building.parts = []  # published: no longer ours to undo
            state.emit(TopicCreated(topic=name))
            state.changed(partitions_only=True)
            return topic
        raise AssertionError("unreachable: the last attempt does not yield")
    finally:
        # Abandoned (the server stopped) or failed: nothing half-built stays behind.
        building.undo()
        state.pending_topics.discard(name)


def delete_topic(state: ClusterMetadata, name: str) -> Topic:
    return drain(delete_topic_steps(state, name))


def delete_topic_steps(state: ClusterMetadata, name: str) -> Steps[Topic]:
    """DeleteTopics for one topic, in steps: it disappears at once (Kafka commits the
    deletion atomically), then its partitions go Offline and NonExistent in the
    controller STEP_PARTITIONS at a time; the name stays taken (``pending_topics``)
    until the last one has, so that a new topic of that name never meets them.

    Each step also lets go of its partitions (the returned Topic keeps none): freeing
    10,000 partitions' objects at once took 25-35 ms on its own."""
    if name in state.pending_topics:
        raise KafkaError(E.UNKNOWN_TOPIC_OR_PARTITION)  # handlers wait for it first
    t = state.get_topic(name)
    state.remove_topic(t)
    state.pending_topics.add(name)
    parts: list[Partition | None] = list(t.partitions)
    try:
        state.emit(TopicDeleted(topic=name))
        state.changed(partitions_only=True)
        t.partitions = []
        for start in range(0, len(parts), STEP_PARTITIONS):
            if start:
                yield
            for i in range(start, min(start + STEP_PARTITIONS, len(parts))):
                # A controller elected meanwhile never saw them: nothing to do there.
                p = parts[i]
                assert p is not None  # each is let go of only here, after its deletion
                controller.on_partition_deletion(state, p)
                parts[i] = None
        return t
    finally:
        # Abandoned (the server stopped): the rest leave the controller now.
        for p in parts:
            if p is not None:
                controller.on_partition_deletion(state, p)
        state.pending_topics.discard(name)


def validate_manual_assignment(state: ClusterMetadata, replicas: list[int],
                               rf: int | None = None) -> None:
    """ReplicationControlManager.validateManualPartitionAssignment, in its order: an empty
    list, then each broker in id order (unregistered, then repeated), then the size. A
    broker an UnregisterBroker took out while it runs (--fidelity kafka) is unregistered:
    Kafka's controller dropped its registration."""
    if not replicas:
        raise KafkaError(E.INVALID_REPLICA_ASSIGNMENT,
                         "The manual partition assignment includes an empty replica list.")
    prev = None
    for b in sorted(replicas):
        if b not in state.brokers or state.brokers[b].unregistered:
            raise KafkaError(E.INVALID_REPLICA_ASSIGNMENT, f"The manual partition assignment "
                             f"includes broker {b}, but no such broker is registered.")
        if b == prev:
            raise KafkaError(E.INVALID_REPLICA_ASSIGNMENT, f"The manual partition assignment "
                             f"includes the broker {b} more than once.")
        prev = b
    if rf is not None and len(replicas) != rf:
        raise KafkaError(E.INVALID_REPLICA_ASSIGNMENT,
                         f"The manual partition assignment includes a partition with "
                         f"{len(replicas)} replica(s), but this is not consistent with "
                         f"previous partitions, which have {rf} replica(s).")


def create_partitions(
    state: ClusterMetadata, name: str, count: int, assignments: list[list[int]] | None,
    validate_only: bool
) -> None:
    """ReplicationControlManager.createPartitions for one topic, with Kafka's messages."""
    drain(create_partitions_steps(state, name, count, assignments, validate_only))


def _plan_partitions(state: ClusterMetadata, name: str, count: int,
                     assignments: list[list[int]] | None) -> tuple[Topic, list[list[int]]]:
    """CreatePartitions' validation: the topic and the replicas of each new partition."""
    if name in state.pending_topics:
        # Being created or grown by a stepped operation: as Kafka's controller queue
        # would, the caller waits for it (handlers check ``pending_topics`` first).
        raise KafkaError(E.UNKNOWN_TOPIC_OR_PARTITION)
    t = state.get_topic(name)
    old = len(t.partitions)
    if count == old:
        raise KafkaError(E.INVALID_PARTITIONS, f"Topic already has {old} partition(s).")
    if count < old:
        raise KafkaError(E.INVALID_PARTITIONS, f"The topic {name} currently has {old} "
                         f"partition(s); {count} would not be an increase.")
    additional = count - old
    if assignments is not None and len(assignments) != additional:
        raise KafkaError(E.INVALID_REPLICA_ASSIGNMENT, f"Attempted to add {additional} "
                         f"additional partition(s), but only {len(assignments)} assignment(s) "
                         "were specified.")
    rf = len(t.partitions[0].replicas)
    if assignments is not None:
        for reps in assignments:
            validate_manual_assignment(state, reps, rf)
        return t, [list(r) for r in assignments]
    return t, state.assign_replicas(additional, rf, start_partition=old)


def create_partitions_steps(
    state: ClusterMetadata, name: str, count: int, assignments: list[list[int]] | None,
    validate_only: bool
) -> Steps[None]:
    """create_partitions in steps: the new partitions are built STEP_PARTITIONS at a
    time and appended to the topic at once at the end (Kafka commits them
    atomically). The topic's name is taken meanwhile (``pending_topics``); a topic
    deleted under it fails the request as it would had the deletion come first."""
    t, plan = _plan_partitions(state, name, count, assignments)
    if validate_only:
        return
    state.pending_topics.add(name)
    building = _Building(state)
    try:
        for attempt in range(_ATTEMPTS):
            if attempt:
                state.pending_topics.discard(name)
                t, plan = _plan_partitions(state, name, count, assignments)
                state.pending_topics.add(name)
                building = _Building(state)
            old = len(t.partitions)
            restart = False
            for i, reps in enumerate(plan):
                if i % STEP_PARTITIONS == 0 and i and attempt < _ATTEMPTS - 1:
                    yield
                    if state.topics.get(name) is not t:
                        raise KafkaError(E.UNKNOWN_TOPIC_OR_PARTITION)  # deleted meanwhile
                    if building.stale() or len(t.partitions) != old:
                        building.undo()
                        restart = True
                        break
                building.add(Partition(name, t.id, old + i, reps))
            if restart:
                continue
            state.before_metadata_change()
            t.partitions.extend(building.parts)
            state.touch_in_order(building.parts)
            state.topic_metadata_changed(name)
            building.parts = []
            state.changed(partitions_only=True)
            return
        raise AssertionError("unreachable: the last attempt does not yield")
    finally:
        building.undo()
        state.pending_topics.discard(name)


def auto_create(state: ClusterMetadata, name: str) -> Topic | None:
    """Metadata/Produce auto creation (auto.create.topics.enable)."""
    if not state.config_bool("auto.create.topics.enable"):
        return None
    if name in state.pending_topics:
        # Being created or deleted in steps: clients see what they see of a topic
        # whose creation is not committed yet, and retry.
        raise KafkaError(E.LEADER_NOT_AVAILABLE)
    rf = min(int(state.config["default.replication.factor"]), len(state.alive_brokers()) or 1)
    t = create_topic(state, name, int(state.config["num.partitions"]), rf)
    if t is not None:
        state.auto_created[name] = state.now() + AUTO_CREATE_SHOWN_MS
    return t
