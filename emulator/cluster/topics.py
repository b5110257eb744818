"""CreateTopics, DeleteTopics, CreatePartitions and auto creation, as the controller does.

Validation with Kafka's messages, the replica assignment (``assign_replicas`` on the
cluster's data), then the controller takes each new partition through its state
machines and elects its first leader (``controller.on_new_partition``).
"""

from __future__ import annotations

from emulator.cluster import controller
from emulator.cluster.configs import ConfigError, validate_topic_configs
from emulator.cluster.metadata import ClusterMetadata, Topic, validate_topic_name
from emulator.cluster.partition import KafkaError, Partition
from wire.errors import ErrorCode as E


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
            if not reps or len(set(reps)) != len(reps):
                raise KafkaError(E.INVALID_REPLICA_ASSIGNMENT,
                                 f"Duplicate brokers not allowed in replica assignment: "
                                 f"{', '.join(map(str, reps))} for partition id {i}.")
            for b in reps:
                if b not in state.brokers:
                    raise KafkaError(E.INVALID_REPLICA_ASSIGNMENT,
                                     f"The manual partition assignment includes broker {b}, "
                                     "but no such broker is registered.")
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
    state.topics[name] = topic
    state.topics_by_id[tid] = topic
    state.emit("topic_created", topic=name)
    state.changed()
    return topic


def delete_topic(state: ClusterMetadata, name: str) -> Topic:
    t = state.get_topic(name)
    for p in t.partitions:
        controller.on_partition_deletion(state, p)
    del state.topics[name]
    del state.topics_by_id[t.id]
    state.emit("topic_deleted", topic=name)
    state.changed()
    return t


def create_partitions(
    state: ClusterMetadata, name: str, count: int, assignments: list[list[int]] | None, validate_only: bool
) -> None:
    t = state.get_topic(name)
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
                if b not in state.brokers:
                    raise KafkaError(E.INVALID_REPLICA_ASSIGNMENT,
                                     f"The manual partition assignment includes broker {b}, "
                                     "but no such broker is registered.")
        plan = [list(r) for r in assignments]
    else:
        plan = state.assign_replicas(count - old, rf, start_partition=old)
    if validate_only:
        return
    for i, reps in enumerate(plan):
        p = Partition(name, t.id, old + i, reps)
        controller.on_new_partition(state, p)
        t.partitions.append(p)
    state.changed()


def auto_create(state: ClusterMetadata, name: str) -> Topic | None:
    """Metadata/Produce auto creation (auto.create.topics.enable)."""
    if not state.config_bool("auto.create.topics.enable"):
        return None
    rf = min(int(state.config["default.replication.factor"]), len(state.alive_brokers()) or 1)
    return create_topic(state, name, int(state.config["num.partitions"]), rf)
