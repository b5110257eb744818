"""CreateTopics, DeleteTopics, CreatePartitions and auto creation, as the controller does.

Validation with Kafka's messages, the replica assignment (``assign_replicas`` on the
cluster's data), then the controller takes each new partition through its state
machines and elects its first leader (``controller.on_new_partition``).
"""

from __future__ import annotations

from emulator.cluster import controller
from emulator.cluster.configs import ConfigError, validate_topic_configs
from emulator.cluster.metadata import (
    MAX_RECORDS_PER_USER_OP,
    ClusterMetadata,
    Topic,
    validate_topic_name,
)
from emulator.cluster.partition import KafkaError, Partition
from wire.errors import ErrorCode as E

# ReplicationControlManager.MAX_PARTITIONS_PER_BATCH: the most partitions one CreateTopics
# or CreatePartitions request may create. Kafka added it after requests for millions of
# partitions ran its controller out of memory; here it also keeps one request from
# holding the event loop (10,000 partitions take well under a second to create).
MAX_PARTITIONS_PER_BATCH = 10_000


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
    configs: dict[str, str | None] | None = None,
    validate_only: bool = False,
) -> Topic | None:
    """Validate and create a topic, as the controller's CreateTopics does."""
    validate_topic_name(name)
    if name in state.topics:
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
            validate_manual_assignment(state, reps)
            plan.append(list(reps))
    else:
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
        plan = state.assign_replicas(num_partitions, replication_factor)
    if validate_only:
        return None
    tid = state.new_topic_id()
    parts = [Partition(name, tid, i, reps) for i, reps in enumerate(plan)]
    topic = Topic(name, tid, parts, dict(configs))
    for p in parts:
        controller.on_new_partition(state, p)
        state.touch(p)
    state.add_topic(topic)
    state.emit("topic_created", topic=name)
    state.changed(partitions_only=True)
    return topic


def delete_topic(state: ClusterMetadata, name: str) -> Topic:
    t = state.get_topic(name)
    for p in t.partitions:
        controller.on_partition_deletion(state, p)
    state.remove_topic(t)
    state.emit("topic_deleted", topic=name)
    state.changed(partitions_only=True)
    return t


def validate_manual_assignment(state: ClusterMetadata, replicas: list[int],
                               rf: int | None = None) -> None:
    """ReplicationControlManager.validateManualPartitionAssignment, in its order: an empty
    list, then each broker in id order (unregistered, then repeated), then the size."""
    if not replicas:
        raise KafkaError(E.INVALID_REPLICA_ASSIGNMENT,
                         "The manual partition assignment includes an empty replica list.")
    prev = None
    for b in sorted(replicas):
        if b not in state.brokers:
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
        plan = [list(r) for r in assignments]
    else:
        plan = state.assign_replicas(additional, rf, start_partition=old)
    if validate_only:
        return
    for i, reps in enumerate(plan):
        p = Partition(name, t.id, old + i, reps)
        controller.on_new_partition(state, p)
        t.partitions.append(p)
        state.touch(p)
    state.changed(partitions_only=True)


def auto_create(state: ClusterMetadata, name: str) -> Topic | None:
    """Metadata/Produce auto creation (auto.create.topics.enable)."""
    if not state.config_bool("auto.create.topics.enable"):
        return None
    rf = min(int(state.config["default.replication.factor"]), len(state.alive_brokers()) or 1)
    return create_topic(state, name, int(state.config["num.partitions"]), rf)
