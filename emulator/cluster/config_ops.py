"""DescribeConfigs, AlterConfigs and IncrementalAlterConfigs on topics and brokers.

Kafka's semantics: a topic's value comes from its own override (DYNAMIC_TOPIC),
else the broker synonym (DYNAMIC_DEFAULT_BROKER or STATIC_BROKER), else the
default; a broker's from its per-broker dynamic config, the cluster-wide dynamic
default (resource name ""), the static config, or the default. AlterConfigs
replaces a resource's whole dynamic set; IncrementalAlterConfigs applies SET,
DELETE, APPEND and SUBTRACT per key. Throttle settings for reassignment
(leader/follower.replication.throttled.rate and .replicas) arrive this way.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TypedDict, TypeVar

from emulator.cluster.configs import (
    BROKER_CONFIGS,
    KAFKA_DYNAMIC_BROKER_KEYS,
    LIST,
    SENSITIVE_KEYS,
    SOURCE_DEFAULT,
    SOURCE_DYNAMIC_BROKER,
    SOURCE_DYNAMIC_DEFAULT_BROKER,
    SOURCE_DYNAMIC_TOPIC,
    SOURCE_STATIC_BROKER,
    TOPIC_CONFIGS,
    ConfigDef,
    ConfigError,
    validate_value,
)
from emulator.cluster.events import ConfigsChanged
from emulator.cluster.group_configs import GROUP, GROUP_CONFIGS, GroupConfigDef, group_value
from emulator.cluster.group_configs import validate as validate_group_value
from emulator.cluster.metadata import MAX_RECORDS_PER_USER_OP, Topic
from emulator.cluster.metadata_views import CURRENT
from emulator.cluster.state import ClusterState
from emulator.cluster.steps import Steps
from wire.errors import ErrorCode as E
from wire.errors import KafkaError

TOPIC, BROKER, BROKER_LOGGER = 2, 4, 8
SOURCE_DYNAMIC_GROUP = 8  # ConfigSource.DYNAMIC_GROUP_CONFIG
SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3

# Broker keys Kafka lets you change at run time (the rest are read-only): Kafka 4.4's
# (from its DescribeConfigs) and the cluster-wide ones the emulator has always taken.
DYNAMIC_BROKER_KEYS = KAFKA_DYNAMIC_BROKER_KEYS | frozenset({
    "leader.replication.throttled.rate", "follower.replication.throttled.rate",
    "replica.alter.log.dirs.io.max.bytes.per.second",
    "log.retention.ms", "log.retention.bytes", "log.retention.hours", "message.max.bytes",
    "min.insync.replicas", "unclean.leader.election.enable", "log.cleanup.policy",
    "compression.type", "log.message.timestamp.type", "log.segment.bytes",
    "num.partitions", "default.replication.factor", "auto.create.topics.enable",
    "replica.lag.time.max.ms", "replica.fetch.max.bytes", "log.retention.check.interval.ms",
})


# Listener-level connection limits a broker takes at run time, as Kafka's
# DynamicConnectionQuota does: listener.name.<listener>.<key>, checked as <key>.
LISTENER_DYNAMIC_KEYS = frozenset({"max.connections", "max.connection.creation.rate"})


def listener_base_key(key: str) -> str | None:
    """The key a listener-prefixed dynamic broker key stands for, else None."""
    listener, dot, base = key.removeprefix("listener.name.").partition(".")
    if key.startswith("listener.name.") and listener and dot and base in LISTENER_DYNAMIC_KEYS:
        return base
    return None


def _listener_defs(keys: set[str]) -> list[ConfigDef]:
    """ConfigDefs of the listener-prefixed keys set, named by the prefixed key, no
    default (Kafka lists one only where it is set)."""
    return [replace(BROKER_CONFIGS[base], name=k, default=None)
            for k in sorted(keys) if (base := listener_base_key(k)) is not None]


@dataclass
class ConfigEntry:
    name: str
    value: str | None
    source: int
    read_only: bool
    config_type: int
    synonyms: list[tuple[str, str | None, int]]
    sensitive: bool = False


def _broker_entry(state: ClusterState, broker_id: int | None, defn: ConfigDef) -> ConfigEntry:
    key = defn.name
    syn: list[tuple[str, str | None, int]] = []
    if broker_id is not None and key in state.broker_overrides.get(broker_id, {}):
        syn.append((key, state.broker_overrides[broker_id][key], SOURCE_DYNAMIC_BROKER))
    if key in state.dynamic_default:
        syn.append((key, state.dynamic_default[key], SOURCE_DYNAMIC_DEFAULT_BROKER))
    if key in state.static_overrides:
        syn.append((key, state.static_overrides[key], SOURCE_STATIC_BROKER))
    if key == "broker.id" and broker_id is not None:
        syn.append((key, str(broker_id), SOURCE_STATIC_BROKER))
    if defn.default is not None:
        syn.append((key, defn.default, SOURCE_DEFAULT))
    value, source = (syn[0][1], syn[0][2]) if syn else (None, SOURCE_DEFAULT)
    if key in SENSITIVE_KEYS:
        value = None
        syn = [(k, None, src) for k, _v, src in syn]
    # A listener-prefixed key counts as read-only although it was just set at run time:
    # Kafka 4.4 lists it so (its read-only flag knows only the plain names). The flag is
    # Kafka's even for the cluster-wide keys the emulator also takes at run time
    # (log.retention.hours, num.partitions...: read-only on Kafka 4.4, measured).
    return ConfigEntry(key, value, source, key not in KAFKA_DYNAMIC_BROKER_KEYS, defn.type,
                       syn, key in SENSITIVE_KEYS)


def _cluster_default_entry(state: ClusterState, key: str) -> ConfigEntry:
    """A key of the cluster-level broker resource (name ""): Kafka lists only the
    dynamic defaults set there, each its own only synonym (measured on a 4.4 broker)."""
    value: str | None = state.dynamic_default[key]
    defn = BROKER_CONFIGS.get(listener_base_key(key) or key)
    if key in SENSITIVE_KEYS:
        value = None
    return ConfigEntry(key, value, SOURCE_DYNAMIC_DEFAULT_BROKER, False,
                       defn.type if defn is not None else 2,
                       [(key, value, SOURCE_DYNAMIC_DEFAULT_BROKER)], key in SENSITIVE_KEYS)


# Kafka 4.x's controller keeps a cluster-level min.insync.replicas while eligible leader
# replicas (KIP-966) are enabled, as they are on a new 4.4 cluster: the cluster-level
# value cannot be removed and no broker may override it (ConfigurationControlManager;
# the messages are a 4.4 broker's).
MIN_ISR = "min.insync.replicas"
CLUSTER_MIN_ISR_REMOVED = "Cluster-level min.insync.replicas cannot be removed while ELR is enabled."
BROKER_MIN_ISR_ALTERED = "Broker-level min.insync.replicas cannot be altered while ELR is enabled."


def _check_elr_min_isr(rtype: int, name: str, removed: bool, touched: bool) -> None:
    """Refuse what Kafka's controller refuses of min.insync.replicas under ELR:
    ``removed`` - the change leaves the cluster level without it; ``touched`` - the change
    names it on a broker."""
    if rtype != BROKER:
        return
    if name == "" and removed:
        raise KafkaError(E.INVALID_CONFIG, CLUSTER_MIN_ISR_REMOVED)
    if name != "" and touched:
        raise KafkaError(E.INVALID_CONFIG, BROKER_MIN_ISR_ALTERED)


def _topic_entry(state: ClusterState, t: Topic, defn: ConfigDef) -> ConfigEntry:
    key = defn.name
    syn: list[tuple[str, str | None, int]] = []
    if key in t.configs:
        syn.append((key, t.configs[key], SOURCE_DYNAMIC_TOPIC))
    bkey = defn.broker_synonym
    if key == "retention.ms":
        for k in ("log.retention.ms", "log.retention.hours"):
            if k in state.dynamic_default:
                syn.append((k, state.dynamic_default[k], SOURCE_DYNAMIC_DEFAULT_BROKER))
            if k in state.static_overrides:
                syn.append((k, state.static_overrides[k], SOURCE_STATIC_BROKER))
    elif bkey:
        if bkey in state.dynamic_default:
            syn.append((bkey, state.dynamic_default[bkey], SOURCE_DYNAMIC_DEFAULT_BROKER))
        if bkey in state.static_overrides:
            syn.append((bkey, state.static_overrides[bkey], SOURCE_STATIC_BROKER))
    value = state.topic_config(t, key)
    source = syn[0][2] if syn else SOURCE_DEFAULT
    # The default is a synonym only where the broker key has one of its own: retention.ms
    # falls back to log.retention.ms, whose default is null (the 7 days come from
    # log.retention.hours), and Kafka 4.4 lists no default synonym for it (measured).
    broker_def = BROKER_CONFIGS.get(bkey) if bkey else None
    if (not syn or syn[-1][2] != SOURCE_DEFAULT) and not defn.internal and not (
            broker_def is not None and broker_def.default is None):
        syn.append((bkey or key, defn.default, SOURCE_DEFAULT))
    return ConfigEntry(key, value, source, False, defn.type, syn)


def check_resource(state: ClusterState, rtype: int, name: str, broker_id: int,
                   alter: bool = False) -> None:
    """Raise Kafka's error for a resource that cannot be described or altered here."""
    if rtype == TOPIC:
        if name not in state.topics:
            # DescribeConfigs answers it with an empty message (measured on Kafka 4.4)
            raise KafkaError(E.UNKNOWN_TOPIC_OR_PARTITION,
                             f"The topic '{name}' does not exist." if alter else "")
    elif rtype == GROUP:
        if not name:
            raise KafkaError(E.INVALID_REQUEST, "Group name must not be empty")
    elif rtype in (BROKER, BROKER_LOGGER):
        if name == "" and rtype == BROKER:
            return  # the cluster-level defaults (DYNAMIC_DEFAULT_BROKER_CONFIG)
        try:
            bid = int(name)
        except ValueError as e:
            raise KafkaError(E.INVALID_REQUEST, f"Broker id must be an integer, but it is: "
                             f"{name}") from e
        # A broker describes and alters only its own configs (clients send a broker
        # resource to that broker); Kafka's two wordings, measured.
        if bid != broker_id:
            if alter:
                raise KafkaError(E.INVALID_REQUEST, f"Unexpected broker id, expected "
                                 f"{broker_id}, but received {name}")
            raise KafkaError(E.INVALID_REQUEST, f"Unexpected broker id, expected {broker_id} "
                             f"or empty string, but received {name}")
    else:
        raise KafkaError(E.INVALID_REQUEST, f"Unsupported resource type {rtype}")


def describe(state: ClusterState, rtype: int, name: str, keys: list[str] | None,
             broker_id: int, broker_view: bool = False) -> list[ConfigEntry]:
    """The configs of one resource. ``broker_view``: as broker ``broker_id`` answers
    DescribeConfigs, a topic's from that broker's metadata (Kafka's broker reads its
    metadata image), which lags the controller's under Kafka's timing
    (emulator/cluster/metadata_views.py); else as the controller has them (CreateTopics'
    answer)."""
    topic: Topic | None = None
    if rtype == TOPIC and broker_view and state.metadata_views.active:
        img = state.metadata_views.view(broker_id, name)
        if img is None:
            raise KafkaError(E.UNKNOWN_TOPIC_OR_PARTITION, "")
        if img is not CURRENT:
            topic = Topic(img.name, img.id, [], dict(img.configs))
    if topic is None:
        check_resource(state, rtype, name, broker_id)
    if rtype == TOPIC:
        topic = topic or state.topics[name]
        entries = [_topic_entry(state, topic, d) for d in TOPIC_CONFIGS.values()
                   if not d.internal or d.name in topic.configs]
    elif rtype == BROKER and name == "":
        entries = [_cluster_default_entry(state, k) for k in sorted(state.dynamic_default)]
    elif rtype == BROKER:
        bid = int(name)
        prefixed = {*state.broker_overrides.get(bid, {}), *state.dynamic_default}
        entries = [_broker_entry(state, bid, d)
                   for d in (*BROKER_CONFIGS.values(), *_listener_defs(prefixed))]
    elif rtype == GROUP:
        entries = [_group_entry(state, name, key) for key in GROUP_CONFIGS]
    else:
        entries = [ConfigEntry("kafka", "INFO", SOURCE_DEFAULT, False, 2, [])]
    if keys is not None:
        wanted = set(keys)
        entries = [e for e in entries if e.name in wanted]
    return entries


def _group_entry(state: ClusterState, group: str, key: str) -> ConfigEntry:
    """A GROUP resource's key: its override (DYNAMIC_GROUP_CONFIG), else the broker's."""
    overrides = state.group_configs.get(group, {})
    d = GROUP_CONFIGS[key]
    value = group_value(state.config, overrides, key)
    source = SOURCE_DYNAMIC_GROUP if key in overrides else SOURCE_DEFAULT
    syn: list[tuple[str, str | None, int]] = [(key, value, source)]
    if key in overrides and d.broker_synonym:
        syn.append((d.broker_synonym, group_value(state.config, {}, key), SOURCE_DEFAULT))
    return ConfigEntry(key, value, source, False, d.type, syn)


def _def_for(rtype: int, key: str) -> ConfigDef | GroupConfigDef | None:
    """The definition of ``key`` for the resource type; a listener-prefixed broker key
    (listener.name.<listener>.max.connections) is defined by the key it stands for."""
    if rtype == GROUP:
        return GROUP_CONFIGS.get(key)
    if rtype == TOPIC:
        return TOPIC_CONFIGS.get(key)
    base = listener_base_key(key)
    return BROKER_CONFIGS.get(key if base is None else base)


def _validated(rtype: int, changes: dict[str, str | None], state: ClusterState | None = None
               ) -> None:
    if rtype == GROUP:
        for k, v in changes.items():
            try:
                if v is not None:
                    validate_group_value(state.config if state else {}, k, v)
                elif k not in GROUP_CONFIGS:
                    raise KeyError(f"Unknown group config name: {k}")
            except (KeyError, ValueError) as e:
                raise KafkaError(E.INVALID_CONFIG, str(e.args[0])) from e
        return
    for k, v in changes.items():
        d = _def_for(rtype, k)
        if d is None:
            kind = "topic" if rtype == TOPIC else "broker"
            raise KafkaError(E.INVALID_CONFIG, f"Unknown {kind} config name: {k}")
        assert isinstance(d, ConfigDef)  # a group's keys were checked above
        if rtype == BROKER and d.name not in DYNAMIC_BROKER_KEYS:
            raise KafkaError(E.INVALID_REQUEST, f"Cannot update these configs dynamically: "
                             f"Set({k})")
        try:
            validate_value(d, v)
        except ConfigError as e:
            # A broker's dynamic config is checked by the broker's DynamicBrokerConfig,
            # whose ConfigException Kafka answers as INVALID_REQUEST; a topic's by the
            # controller, INVALID_CONFIG.
            code = E.INVALID_REQUEST if rtype == BROKER else E.INVALID_CONFIG
            raise KafkaError(code, str(e)) from e


def _target(state: ClusterState, rtype: int, name: str) -> dict[str, str]:
    if rtype == TOPIC:
        return state.topics[name].configs
    if rtype == GROUP:
        return state.group_configs.setdefault(name, {})
    if name == "":
        return state.dynamic_default
    return state.broker_overrides.setdefault(int(name), {})


def _current(state: ClusterState, rtype: int, name: str) -> dict[str, str]:
    """The resource's dynamic configs, read only (``_target`` makes a group's or a
    broker's dict on first use, which a validate-only pass must not)."""
    if rtype == GROUP:
        return state.group_configs.get(name, {})
    if rtype == BROKER and name != "":
        return state.broker_overrides.get(int(name), {})
    return _target(state, rtype, name)


def alter(state: ClusterState, rtype: int, name: str, configs: dict[str, str | None],
          validate_only: bool, broker_id: int) -> int:
    """AlterConfigs: replace the resource's whole dynamic config. Returns the metadata
    records Kafka's controller writes for it (legacyAlterConfigResource: a ConfigRecord
    per key set to a new value, every key for a broker, and one per key it removes)."""
    check_resource(state, rtype, name, broker_id, alter=True)
    if rtype == BROKER_LOGGER:
        return 0
    _validated(rtype, configs, state)
    _check_elr_min_isr(rtype, name, removed=configs.get(MIN_ISR) is None,
                       touched=MIN_ISR in configs)
    current = _current(state, rtype, name)
    records = sum(1 for k, v in configs.items() if rtype == BROKER or current.get(k) != v) \
        + sum(1 for k in current if k not in configs)
    if validate_only:
        return records
    if rtype == TOPIC and records:  # no ConfigRecord, no metadata change
        state.before_metadata_change()
    target = _target(state, rtype, name)
    target.clear()
    target.update({k: v for k, v in configs.items() if v is not None})
    if rtype == TOPIC and records:
        state.topic_metadata_changed(name)
    state.emit(ConfigsChanged(resource_type=rtype, name=name))
    state.changed()
    return records


def incremental_alter(state: ClusterState, rtype: int, name: str,
                      ops: list[tuple[str, int, str | None]], validate_only: bool,
                      broker_id: int) -> int:
    """IncrementalAlterConfigs: SET, DELETE, APPEND, SUBTRACT per key. Returns the
    metadata records Kafka's controller writes for it (incrementalAlterConfigResource:
    a ConfigRecord per key whose value changes, every key for a broker)."""
    check_resource(state, rtype, name, broker_id, alter=True)
    if rtype == BROKER_LOGGER:
        return 0
    seen = set()
    for key, _, _ in ops:
        if key in seen:
            raise KafkaError(E.INVALID_REQUEST, f"Error due to duplicate config keys : {key}")
        seen.add(key)
    new = dict(_current(state, rtype, name))
    for key, op, value in ops:
        d = _def_for(rtype, key)
        if d is None:
            kind = {TOPIC: "topic", GROUP: "group"}.get(rtype, "broker")
            raise KafkaError(E.INVALID_CONFIG, f"Unknown {kind} config name: {key}")
        if key == MIN_ISR:
            _check_elr_min_isr(rtype, name, removed=op == DELETE, touched=True)
        if op == SET:
            _validated(rtype, {key: value}, state)
            if value is None:
                raise KafkaError(E.INVALID_REQUEST, f"Null value not supported for : {key}")
            new[key] = value
        elif op == DELETE:
            new.pop(key, None)
        elif op in (APPEND, SUBTRACT):
            if d.type != LIST:
                raise KafkaError(E.INVALID_CONFIG, f"Config value append is not allowed for "
                                 f"config key: {key}")
            current = new.get(key)
            if current is None:
                current = describe_value(state, rtype, name, key) or ""
            items = [x for x in current.split(",") if x]
            given = [x for x in (value or "").split(",") if x]
            if op == APPEND:
                items += [x for x in given if x not in items]
            else:
                items = [x for x in items if x not in given]
            new[key] = ",".join(items)
        else:
            raise KafkaError(E.INVALID_REQUEST, f"Unknown alter config operation {op}")
    old = _current(state, rtype, name)
    records = sum(1 for key, _, _ in ops if rtype == BROKER or old.get(key) != new.get(key))
    if validate_only:
        return records
    if rtype == TOPIC and records:  # no ConfigRecord, no metadata change
        state.before_metadata_change()
    target = _target(state, rtype, name)
    target.clear()
    target.update(new)
    if rtype == TOPIC and records:
        state.topic_metadata_changed(name)
    state.emit(ConfigsChanged(resource_type=rtype, name=name))
    state.changed()
    return records


def dynamic_count(state: ClusterState, rtype: int, name: str) -> int:
    """How many dynamic configs the resource has now (0 for one that does not exist)."""
    if rtype == TOPIC:
        t = state.topics.get(name)
        return len(t.configs) if t is not None else 0
    if rtype == GROUP:
        return len(state.group_configs.get(name, {}))
    if rtype == BROKER:
        if name == "":
            return len(state.dynamic_default)
        return len(state.broker_overrides.get(int(name), {})) if name.isdigit() else 0
    return 0


POLICY_VIOLATION_MESSAGE = "Unable to perform excessively large batch operation."


class ResourceRef(TypedDict):
    """A resource of an AlterConfigs or IncrementalAlterConfigs request, as decoded
    (the fields read here)."""

    resource_type: int
    resource_name: str


class ResourceAnswer(TypedDict):
    """A resource's entry of an AlterConfigs or IncrementalAlterConfigs response."""

    error_code: int
    error_message: str | None
    resource_type: int
    resource_name: str


def refuse_all(resources: list[ResourceRef]) -> list[ResourceAnswer]:
    """Every resource of a request over the cap: POLICY_VIOLATION (Kafka's controller
    fails the whole forwarded request); broker loggers are the broker's own business."""
    return [{"error_code": E.NONE if r["resource_type"] == BROKER_LOGGER
             else E.POLICY_VIOLATION,
             "error_message": None if r["resource_type"] == BROKER_LOGGER
             else POLICY_VIOLATION_MESSAGE,
             "resource_type": r["resource_type"], "resource_name": r["resource_name"]}
            for r in resources]


# Resources validated or altered per step when a request is answered in steps.
STEP_RESOURCES = 32
R = TypeVar("R")  # a resource of the request, as the caller holds it


def over_records_per_user_op(resources: list[R], upper_bound: int,
                             records_of: Callable[[R], int]) -> Steps[bool]:
    """QuorumController.MAX_RECORDS_PER_USER_OP for (Incremental)AlterConfigs: Kafka's
    ConfigurationControlManager collects the records of every resource that validates in
    one BoundedList of 10,000, and more fail the whole request. ``upper_bound`` (the
    records the request could make at most) spares the exact count, ``records_of``
    (a validate-only pass over one resource; 0 if it fails) in the common case. In
    steps (emulator/cluster/steps.py): that pass over 10,000 resources takes a while."""
    if upper_bound <= MAX_RECORDS_PER_USER_OP:
        return False
    total = 0
    for i, r in enumerate(resources):
        if i and i % STEP_RESOURCES == 0:
            yield
        try:
            total += records_of(r)
        except KafkaError:
            continue  # a resource that fails validation writes nothing
        if total > MAX_RECORDS_PER_USER_OP:
            return True
    return False


def describe_value(state: ClusterState, rtype: int, name: str, key: str) -> str | None:
    if rtype == TOPIC:
        return state.topic_config(state.topics[name], key)
    if rtype == GROUP:
        return group_value(state.config, state.group_configs.get(name, {}), key)
    return state.broker_config(key, int(name) if name else None)
