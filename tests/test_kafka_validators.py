"""A broker config is checked as Kafka 4.4 checks its server.properties at start: the
value parses as the key's type, then passes the key's ConfigDef validator (a range, the
values it may take, a list's rules, a non-empty string), else the broker refuses to start
with Kafka's ConfigException message (emulator/cluster/configs.py ``validate_value``, the
validators from emulator/cluster/kafka_validators.py).

The cases below hold Kafka's own answers; tests/test_kafka_validators_oracle.py asks
Kafka's ConfigDef itself, for these and for an invalid value of every kind of every
validated key.
"""

from __future__ import annotations

import pytest

from emulator.cluster.configs import (
    ConfigError,
    validate_broker_configs,
)
from emulator.runtime import Cluster

# (key, value, Kafka's message; None: Kafka starts with it)
CASES: list[tuple[str, str, str | None]] = [
    (
        "log.retention.ms",
        "abc",
        "Invalid value abc for configuration log.retention.ms: Not a number of type LONG",
    ),
    (
        "num.partitions",
        "0",
        "Invalid value 0 for configuration num.partitions: Value must be at least 1",
    ),
    (
        "num.partitions",
        " -0 ",
        "Invalid value 0 for configuration num.partitions: Value must be at least 1",
    ),
    ("num.partitions", " 3 ", None),
    (
        "offsets.topic.replication.factor",
        "40000",
        "Invalid value 40000 for configuration "
        "offsets.topic.replication.factor: Not a number of type SHORT",
    ),
    (
        "log.segment.bytes",
        "100",
        "Invalid value 100 for configuration log.segment.bytes: Value must be at least 1048576",
    ),
    (
        "log.cleaner.min.cleanable.ratio",
        "1e10",
        "Invalid value 1.0E10 for configuration "
        "log.cleaner.min.cleanable.ratio: Value must be no more than 1",
    ),
    (
        "log.cleaner.min.cleanable.ratio",
        "-0.5",
        "Invalid value -0.5 for configuration "
        "log.cleaner.min.cleanable.ratio: Value must be at least 0",
    ),
    ("log.cleaner.min.cleanable.ratio", "1d", None),  # Java's double suffix
    (
        "log.cleaner.min.cleanable.ratio",
        "inf",
        "Invalid value inf for configuration "
        "log.cleaner.min.cleanable.ratio: Not a number of type DOUBLE",
    ),
    (
        "compression.type",
        "GZIP",
        "Invalid value GZIP for configuration compression.type: "
        "String must be one of: uncompressed, zstd, lz4, snappy, gzip, producer",
    ),
    ("compression.type", " gzip ", None),
    (
        "group.consumer.migration.policy",
        "sideways",
        "Invalid value sideways for "
        "configuration group.consumer.migration.policy: String must be one of (case "
        "insensitive): DISABLED, DOWNGRADE, UPGRADE, BIDIRECTIONAL",
    ),
    ("group.consumer.migration.policy", " Upgrade ", None),
    (
        "compression.gzip.level",
        "0",
        "Invalid value 0 for configuration "
        "compression.gzip.level: Value must be between 1 and 9 or equal to -1",
    ),
    ("compression.gzip.level", "-1", None),
    (
        "auto.create.topics.enable",
        "yes",
        "Invalid value yes for configuration "
        "auto.create.topics.enable: Expected value to be either true or false",
    ),
    (
        "log.cleanup.policy",
        "compact,foo",
        "Invalid value foo for configuration "
        "log.cleanup.policy: String must be one of: compact, delete",
    ),
    (
        "log.cleanup.policy",
        "compact,,delete",
        "Configuration 'log.cleanup.policy' values must not be empty.",
    ),
    (
        "log.cleanup.policy",
        "delete, delete",
        "Configuration 'log.cleanup.policy' values must not be duplicated.",
    ),
    (
        "log.cleanup.policy",
        "foo,,delete",
        "Invalid value foo for configuration "
        "log.cleanup.policy: String must be one of: compact, delete",
    ),  # items in order
    ("log.cleanup.policy", "compact , delete", None),
    ("log.cleanup.policy", "", None),
    (
        "process.roles",
        "",
        "Configuration 'process.roles' must not be empty. Valid values "
        "include: [broker, controller]",
    ),
    (
        "log.dirs",
        " ",
        "Configuration 'log.dirs' must not be empty. Valid values include: any non-empty value",
    ),
    (
        "remote.log.storage.manager.class.name",
        "  ",
        "Invalid value  for configuration "
        "remote.log.storage.manager.class.name: String must be non-empty",
    ),
    ("a.key.kafka.does.not.know", "anything", None),  # Kafka logs it unused and starts
]


def verdict(key: str, value: str) -> str:
    """The emulator's verdict, worded as the oracle's."""
    try:
        validate_broker_configs({key: value})
    except ConfigError as e:
        return str(e)
    return "OK"


@pytest.mark.parametrize(("key", "value", "says"), CASES)
def test_a_broker_config_is_checked_as_kafka_checks_it(
    key: str, value: str, says: str | None
) -> None:
    assert verdict(key, value) == (says or "OK")


def test_a_cluster_with_an_invalid_broker_config_does_not_start() -> None:
    with pytest.raises(ConfigError, match="num.partitions: Value must be at least 1"):
        Cluster(brokers=1, port=0, config={"num.partitions": "0"})
