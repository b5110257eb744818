"""Group-level configs (the GROUP config resource, KIP-848/KIP-932): per-group overrides
of the broker's group.* settings, with Kafka's names, defaults and bounds.

A group's value is its own override (``ClusterMetadata.group_configs``, set through
IncrementalAlterConfigs/AlterConfigs on resource type 32 or ``kafka-configs
--entity-type groups``), else the broker key it stands for (``broker_synonym``), else the
default. Kafka checks the overrides against the broker's min/max bounds
(group.share.min.record.lock.duration.ms ...), so do we.

Served: every group key Kafka 4.4 knows (emulator/cluster/kafka_configs.py): the share.*
keys act on share groups, the streams.* keys on streams groups, consumer.session.timeout.ms
and consumer.heartbeat.interval.ms on KIP-848 consumer groups (read per heartbeat, as
Kafka's coordinator does), consumer.assignment.interval.ms on them under --fidelity kafka
(fast computes assignments at once; docs/fidelity.md); the dead-letter-queue keys are
listed, validated against their broker bounds and stored, and act on nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import cast

from emulator.cluster import kafka_configs as _kafka
from emulator.cluster.configs import BOOLEAN, INT, STRING

GROUP = 32  # ConfigResource.Type.GROUP

# Broker keys of share groups, with Kafka 4.4's defaults (ShareGroupConfig,
# GroupCoordinatorConfig, ShareCoordinatorConfig).
SHARE_BROKER_DEFAULTS: dict[str, int] = {
    "group.share.record.lock.duration.ms": 30000,
    "group.share.min.record.lock.duration.ms": 15000,
    "group.share.max.record.lock.duration.ms": 60000,
    "group.share.delivery.count.limit": 5,
    "group.share.min.delivery.count.limit": 2,
    "group.share.max.delivery.count.limit": 10,
    "group.share.partition.max.record.locks": 2000,
    "group.share.min.partition.max.record.locks": 100,
    "group.share.max.partition.max.record.locks": 4000,
    "group.share.max.share.sessions": 2000,
    "group.share.max.size": 200,
    "group.share.session.timeout.ms": 45000,
    "group.share.min.session.timeout.ms": 45000,
    "group.share.max.session.timeout.ms": 60000,
    "group.share.heartbeat.interval.ms": 5000,
    "group.share.min.heartbeat.interval.ms": 5000,
    "group.share.max.heartbeat.interval.ms": 15000,
    "share.coordinator.state.topic.num.partitions": 50,
    "share.coordinator.state.topic.replication.factor": 3,
}


@dataclass(frozen=True)
class GroupConfigDef:
    name: str
    type: int
    default: str | None  # used when there is no broker synonym
    broker_synonym: str | None = None  # group.share.X, bounded by group.share.{min,max}.X


GROUP_CONFIGS: dict[str, GroupConfigDef] = {d.name: d for d in [
    GroupConfigDef("share.session.timeout.ms", INT, None, "group.share.session.timeout.ms"),
    GroupConfigDef("share.heartbeat.interval.ms", INT, None,
                   "group.share.heartbeat.interval.ms"),
    GroupConfigDef("share.record.lock.duration.ms", INT, None,
                   "group.share.record.lock.duration.ms"),
    GroupConfigDef("share.delivery.count.limit", INT, None, "group.share.delivery.count.limit"),
    GroupConfigDef("share.partition.max.record.locks", INT, None,
                   "group.share.partition.max.record.locks"),
    GroupConfigDef("share.auto.offset.reset", STRING, "latest"),
    GroupConfigDef("share.isolation.level", STRING, "read_uncommitted"),
    GroupConfigDef("share.renew.acknowledge.enable", BOOLEAN, "true"),
]}
# The rest of Kafka's group keys; a group.consumer.X / group.streams.X broker key stands
# for consumer.X / streams.X, bounded by group.<kind>.min.X and group.<kind>.max.X.
_KAFKA_BROKER = {r[0]: r for r in _kafka.BROKER}
for _name, _type, _default, _sensitive, _read_only in _kafka.GROUP:
    if _name not in GROUP_CONFIGS:
        _syn = f"group.{_name}" if f"group.{_name}" in _KAFKA_BROKER else None
        GROUP_CONFIGS[_name] = GroupConfigDef(_name, _type, None if _syn else _default, _syn)
_DURATION = re.compile(r"^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$")


def parse_duration_ms(spec: str) -> int:
    """ISO-8601 PnDTnHnMn.nS, as share.auto.offset.reset=by_duration:<duration> takes it."""
    s = spec.strip().upper()
    m = _DURATION.match(s)
    if not m or s in ("P", "PT") or s.endswith("T"):
        raise ValueError(f"Invalid duration {spec}")
    d, h, mi, sec = (float(x) if x else 0.0 for x in m.groups())
    return int((((d * 24 + h) * 60 + mi) * 60 + sec) * 1000)


def broker_value(config: dict[str, str], key: str) -> int:
    v = config.get(key)
    if v is not None:
        return int(v)
    if key in SHARE_BROKER_DEFAULTS:
        return SHARE_BROKER_DEFAULTS[key]
    return int(cast(str, _KAFKA_BROKER[key][2]))  # a group.* key has a default


def _bounds(syn: str) -> tuple[str, str] | None:
    """group.consumer.session.timeout.ms -> its min and max broker keys, if Kafka has them."""
    kind, _, suffix = syn[len("group."):].partition(".")
    lo, hi = f"group.{kind}.min.{suffix}", f"group.{kind}.max.{suffix}"
    known = (lo in _KAFKA_BROKER or lo in SHARE_BROKER_DEFAULTS) and (
        hi in _KAFKA_BROKER or hi in SHARE_BROKER_DEFAULTS)
    return (lo, hi) if known else None


def validate(config: dict[str, str], key: str, value: str) -> None:
    """Raise ValueError with Kafka's kind of message for a bad group config value."""
    d = GROUP_CONFIGS.get(key)
    if d is None:
        raise KeyError(f"Unknown group config name: {key}")
    if d.type == INT:
        try:
            n = int(value)
        except ValueError as e:
            raise ValueError(f"Invalid value {value} for configuration {key}: Not a number "
                             "of type INT") from e
        syn = d.broker_synonym
        bounds = _bounds(syn) if syn is not None else None
        if bounds is not None:
            lo, hi = broker_value(config, bounds[0]), broker_value(config, bounds[1])
            if not lo <= n <= hi:  # Kafka 4.4's wording (measured)
                raise ValueError(f"{key} must be in the range {lo} to {hi} inclusive.")
    elif d.type == BOOLEAN:
        if value.lower() not in ("true", "false"):
            raise ValueError(f"Invalid value {value} for configuration {key}: Expected value "
                             "to be either true or false")
    elif key == "share.auto.offset.reset":
        if value.startswith("by_duration:"):
            parse_duration_ms(value[len("by_duration:"):])
        elif value not in ("earliest", "latest"):
            raise ValueError(f"Invalid value {value} for configuration {key}: must be "
                             "earliest, latest or by_duration:<ISO-8601 duration>")
    elif key == "share.isolation.level" and value not in ("read_committed", "read_uncommitted"):
        raise ValueError(f"Invalid value {value} for configuration {key}: String must be one "
                         "of: read_committed, read_uncommitted")


def group_value(config: dict[str, str], overrides: dict[str, str], key: str) -> str:
    """The effective value of a group key: override, broker synonym, default."""
    if key in overrides:
        return overrides[key]
    d = GROUP_CONFIGS[key]
    syn = d.broker_synonym
    if syn is not None and d.type == INT:
        return str(broker_value(config, syn))
    if syn is not None:
        v = config.get(syn)
        return v if v is not None else (_KAFKA_BROKER[syn][2] or "")
    assert d.default is not None
    return d.default
