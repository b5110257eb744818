"""Topic and broker configuration with Kafka's names, types and defaults.

DescribeConfigs reports every known key with its source (default, dynamic topic,
dynamic broker, static broker); AlterConfigs and IncrementalAlterConfigs validate
against these tables so a typo gets INVALID_CONFIG as on Kafka.

The tables below define the keys whose type, default, broker synonym or minimum the
emulator states itself (with its fast test defaults where they differ, e.g.
group.initial.rebalance.delay.ms 0; ``FIDELITY_KAFKA`` restores Kafka's); every other key
Kafka 4.4 knows, from emulator/cluster/kafka_configs.py (generated from a real broker's
DescribeConfigs), is listed and accepted with Kafka's type and default too. Which keys
actually act, and where, is declared once in emulator/cluster/config_effects.py
(docs/configs.md is generated from it).
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Self, TypeVar, overload

import emulator.fidelity as _fidelity
from emulator.cluster import kafka_configs as _kafka
from emulator.cluster import kafka_validators as _validators

if TYPE_CHECKING:
    from _typeshed import SupportsKeysAndGetItem

# Kafka's ConfigEntry.ConfigType codes (DescribeConfigs v3+).
BOOLEAN, STRING, INT, SHORT, LONG, DOUBLE, LIST, CLASS, PASSWORD = range(1, 10)

# ConfigSource codes.
SOURCE_UNKNOWN = 0
SOURCE_DYNAMIC_TOPIC = 1
SOURCE_DYNAMIC_BROKER = 2
SOURCE_DYNAMIC_DEFAULT_BROKER = 3
SOURCE_STATIC_BROKER = 4
SOURCE_DEFAULT = 5


_D = TypeVar("_D")  # a default of ConfigDict.pop


class ConfigDict(dict[str, str]):
    """A dict of config values that counts its changes.

    Every mutation bumps ``ConfigDict.generation`` (one counter for the process), so a
    value resolved from configs - a topic's effective configs, looked up some thirteen
    times per produced batch - can be cached and still follow any change at once:
    AlterConfigs, IncrementalAlterConfigs, a broker default, or a test writing
    ``topic.configs[key]`` by hand. A change anywhere invalidates every cache (they are
    rebuilt lazily, on the next use); configs change rarely, batches often.
    """

    __slots__ = ()
    generation = 0

    def __setitem__(self, key: str, value: str) -> None:
        super().__setitem__(key, value)
        ConfigDict.generation += 1

    def __delitem__(self, key: str) -> None:
        super().__delitem__(key)
        ConfigDict.generation += 1

    def __ior__(self, other: SupportsKeysAndGetItem[str, str]  # type: ignore[override,misc]
                | Iterable[tuple[str, str]]) -> Self:
        r = super().__ior__(other)
        ConfigDict.generation += 1
        return r

    @overload
    def update(self, other: SupportsKeysAndGetItem[str, str], /, **kwargs: str) -> None: ...

    @overload
    def update(self, other: Iterable[tuple[str, str]], /, **kwargs: str) -> None: ...

    @overload
    def update(self, /, **kwargs: str) -> None: ...

    def update(self, other: SupportsKeysAndGetItem[str, str] | Iterable[tuple[str, str]] = (),
               /, **kwargs: str) -> None:
        super().update(other, **kwargs)
        ConfigDict.generation += 1

    def clear(self) -> None:
        super().clear()
        ConfigDict.generation += 1

    @overload
    def pop(self, key: str, /) -> str: ...

    @overload
    def pop(self, key: str, default: str, /) -> str: ...

    @overload
    def pop(self, key: str, default: _D, /) -> str | _D: ...

    def pop(self, key: str, *default: object) -> object:
        try:
            return super().pop(key, *default)
        finally:
            ConfigDict.generation += 1

    def popitem(self) -> tuple[str, str]:
        try:
            return super().popitem()
        finally:
            ConfigDict.generation += 1

    def setdefault(self, key: str, default: str | None = None) -> str:
        try:
            return super().setdefault(key, default)  # type: ignore[arg-type]
        finally:
            ConfigDict.generation += 1


@dataclass(frozen=True)
class Check:
    """How Kafka checks a key's value beyond its type: its ConfigDef validator, as
    emulator/cluster/kafka_validators.py has it (the broker keys')."""

    at_least: str | None = None  # Range: the bounds, as Kafka prints them
    at_most: str | None = None
    one_of: tuple[str, ...] = ()  # ValidString: the value (or each item of a list) one of
    any_case: bool = False  # CaseInsensitiveValidString
    is_list: bool = False  # ValidList: no item empty, none twice
    empty_allowed: bool = True  # ValidList: whether the list may be empty
    non_empty: bool = False  # NonEmptyString
    gzip_level: bool = False  # compression.gzip.level's own: 1 to 9, or -1


@dataclass(frozen=True)
class ConfigDef:
    name: str
    type: int
    default: str | None
    broker_synonym: str | None = None  # the broker-level key a topic key falls back to
    minimum: int | None = None  # Kafka's ConfigDef validator atLeast(minimum)
    # Kafka's internal configs (ConfigDef.defineInternal): accepted, but DescribeConfigs
    # lists one only where it is set.
    internal: bool = False
    # The broker key whose Kafka validator checks this key's value (beyond its type):
    # its own name for a broker key, the base key's for a listener-prefixed copy
    # (config_ops.py), None for a topic key. Read at the first check, not at import.
    checked_as: str | None = None

    @property
    def check(self) -> Check | None:
        """The rest of Kafka's validator (broker keys): kafka_validators.py's facts for
        this key, made into a Check when a value of it is first checked. A default
        start checks two keys (the replication factors the runtime sets), where
        building every key's Check at import made 207 (docs/scale.md, start-up)."""
        return None if self.checked_as is None else _check(self.checked_as)


# Kafka 4.0 raised segment.bytes' minimum to 1 MB; tests that want small segments set
# the internal topic config internal.segment.bytes instead, which takes precedence
# (LogConfig.segmentSize) and has no minimum.
MIN_SEGMENT_BYTES = 1024 * 1024


def segment_size_configs(size: int) -> dict[str, str]:
    """Topic configs that make a log's segments ``size`` bytes, for the internal topics
    (offsets.topic.segment.bytes and the like): ``segment.bytes``, or below its 1 MiB
    minimum ``segment.bytes`` at the minimum and ``internal.segment.bytes`` (which takes
    precedence, as Kafka's LogConfig.segmentSize) at ``size``."""
    if size >= MIN_SEGMENT_BYTES:
        return {"segment.bytes": str(size)}
    return {"segment.bytes": str(MIN_SEGMENT_BYTES), "internal.segment.bytes": str(size)}


TOPIC_CONFIGS: dict[str, ConfigDef] = {c.name: c for c in [
    ConfigDef("cleanup.policy", LIST, "delete", "log.cleanup.policy"),
    ConfigDef("compression.type", STRING, "producer", "compression.type"),
    ConfigDef("delete.retention.ms", LONG, "86400000", "log.cleaner.delete.retention.ms"),
    ConfigDef("file.delete.delay.ms", LONG, "60000", "log.segment.delete.delay.ms"),
    ConfigDef("flush.messages", LONG, "9223372036854775807", "log.flush.interval.messages"),
    ConfigDef("flush.ms", LONG, "9223372036854775807", None),
    ConfigDef("follower.replication.throttled.replicas", LIST, "", None),
    ConfigDef("index.interval.bytes", INT, "4096", "log.index.interval.bytes"),
    ConfigDef("leader.replication.throttled.replicas", LIST, "", None),
    ConfigDef("local.retention.bytes", LONG, "-2", "log.local.retention.bytes"),
    ConfigDef("local.retention.ms", LONG, "-2", "log.local.retention.ms"),
    ConfigDef("max.compaction.lag.ms", LONG, "9223372036854775807", "log.cleaner.max.compaction.lag.ms"),
    ConfigDef("max.message.bytes", INT, "1048588", "message.max.bytes"),
    ConfigDef("message.timestamp.after.max.ms", LONG, "3600000", "log.message.timestamp.after.max.ms"),
    ConfigDef("message.timestamp.before.max.ms", LONG, "9223372036854775807", "log.message.timestamp.before.max.ms"),
    ConfigDef("message.timestamp.type", STRING, "CreateTime", "log.message.timestamp.type"),
    ConfigDef("min.cleanable.dirty.ratio", DOUBLE, "0.5", "log.cleaner.min.cleanable.ratio"),
    ConfigDef("min.compaction.lag.ms", LONG, "0", "log.cleaner.min.compaction.lag.ms"),
    ConfigDef("min.insync.replicas", INT, "1", "min.insync.replicas"),
    ConfigDef("preallocate", BOOLEAN, "false", "log.preallocate"),
    ConfigDef("remote.storage.enable", BOOLEAN, "false", None),
    ConfigDef("retention.bytes", LONG, "-1", "log.retention.bytes"),
    ConfigDef("retention.ms", LONG, "604800000", "log.retention.ms"),
    ConfigDef("segment.bytes", INT, "1073741824", "log.segment.bytes",
              minimum=MIN_SEGMENT_BYTES),
    ConfigDef("internal.segment.bytes", INT, None, internal=True),
    ConfigDef("segment.index.bytes", INT, "10485760", "log.index.size.max.bytes"),
    ConfigDef("segment.jitter.ms", LONG, "0", "log.roll.jitter.ms"),
    ConfigDef("segment.ms", LONG, "604800000", "log.roll.ms"),
    ConfigDef("unclean.leader.election.enable", BOOLEAN, "false", "unclean.leader.election.enable"),
]}

def _broker(name: str, type: int, default: str | None) -> ConfigDef:
    """A broker key of the table below, checked as itself (``ConfigDef.checked_as``)."""
    return ConfigDef(name, type, default, checked_as=name)


BROKER_CONFIGS: dict[str, ConfigDef] = {c.name: c for c in [
    _broker("auto.create.topics.enable", BOOLEAN, "true"),
    _broker("auto.leader.rebalance.enable", BOOLEAN, "true"),
    _broker("broker.id", INT, None),
    _broker("compression.type", STRING, "producer"),
    _broker("default.replication.factor", INT, "1"),
    _broker("delete.topic.enable", BOOLEAN, "true"),
    _broker("follower.replication.throttled.rate", LONG, "9223372036854775807"),
    _broker("group.initial.rebalance.delay.ms", INT, "0"),
    _broker("group.max.session.timeout.ms", INT, "1800000"),
    _broker("group.min.session.timeout.ms", INT, "6000"),
    _broker("group.max.size", INT, "2147483647"),
    _broker("leader.imbalance.check.interval.seconds", LONG, "300"),
    _broker("leader.imbalance.per.broker.percentage", INT, "10"),
    _broker("leader.replication.throttled.rate", LONG, "9223372036854775807"),
    _broker("log.cleanup.policy", LIST, "delete"),
    _broker("log.retention.bytes", LONG, "-1"),
    _broker("log.retention.check.interval.ms", LONG, "300000"),
    _broker("log.retention.hours", INT, "168"),
    _broker("log.retention.ms", LONG, None),
    _broker("log.message.timestamp.type", STRING, "CreateTime"),
    _broker("log.segment.bytes", INT, "1073741824"),  # at least 1 MiB: its Check
    _broker("max.incremental.fetch.session.cache.slots", INT, "1000"),
    _broker("message.max.bytes", INT, "1048588"),
    _broker("min.incremental.fetch.session.eviction.ms", INT, "120000"),
    _broker("min.insync.replicas", INT, "1"),
    _broker("num.partitions", INT, "1"),
    _broker("offsets.retention.minutes", INT, "10080"),
    _broker("offsets.topic.num.partitions", INT, "50"),
    _broker("offsets.topic.replication.factor", SHORT, "3"),
    # The internal topics' segments: 100 KiB, not Kafka's 100 MiB, so that the cleaner,
    # which never touches the active segment, compacts them within minutes and a
    # long-running emulator's memory stays bounded (emulator/fidelity/differences.py
    # "internal-topic-segments"; --fidelity kafka restores Kafka's).
    _broker("offsets.topic.segment.bytes", INT, "102400"),
    _broker("replica.fetch.max.bytes", INT, "1048576"),
    _broker("replica.alter.log.dirs.io.max.bytes.per.second", LONG, "9223372036854775807"),
    _broker("replica.fetch.wait.max.ms", INT, "500"),
    # how soon an idle log dir with a failing storage fault fails (emulator/faults)
    _broker("replica.high.watermark.checkpoint.interval.ms", LONG, "5000"),
    _broker("replica.lag.time.max.ms", LONG, "30000"),
    _broker("socket.request.max.bytes", INT, "104857600"),
    _broker("transaction.max.timeout.ms", INT, "900000"),
    _broker("transaction.state.log.num.partitions", INT, "50"),
    _broker("transaction.state.log.replication.factor", SHORT, "3"),
    _broker("transaction.state.log.segment.bytes", INT, "102400"),
    _broker("share.coordinator.state.topic.segment.bytes", INT, "102400"),
    _broker("transactional.id.expiration.ms", INT, "604800000"),
    _broker("unclean.leader.election.enable", BOOLEAN, "false"),
]}


@functools.cache
def _check(name: str) -> Check | None:
    """The broker key's validator from kafka_validators.py, if it has one we model."""
    if name in _validators.RANGE:
        low, high = _validators.RANGE[name]
        return Check(at_least=low, at_most=high)
    if name in _validators.ONE_OF:
        values, case_matters = _validators.ONE_OF[name]
        return Check(one_of=values, any_case=not case_matters)
    if name in _validators.LIST:
        values, empty_allowed = _validators.LIST[name]
        return Check(one_of=values, is_list=True, empty_allowed=empty_allowed)
    if name in _validators.NON_EMPTY:
        return Check(non_empty=True)
    if name == "compression.gzip.level":  # a lambda of Kafka's (OTHER): "[1,...,9] or -1"
        return Check(gzip_level=True)
    # None, or one of OTHER's left unchecked: authorizer.class.name's non-null, which a
    # value from the command line always is, and the controller quorum's, keys of a
    # KRaft quorum the emulator has none of.
    return None


# The keys of the table above: the static config is built from their defaults (which keys
# act is config_effects.py's to say).
EMULATOR_BROKER_KEYS = frozenset(BROKER_CONFIGS)
# Each broker key checked as itself (``ConfigDef.check`` makes its Check when first
# asked: a replace() of all ~350 was ~1.4% of the start's instructions, and a Check
# for every key ~0.9%; docs/scale.md, start-up).
for _name, _type, _default, _sensitive, _read_only in _kafka.BROKER:
    if _name not in BROKER_CONFIGS:
        BROKER_CONFIGS[_name] = ConfigDef(_name, _type, _default, checked_as=_name)
for _name, _type, _default, _sensitive, _read_only in _kafka.TOPIC:
    TOPIC_CONFIGS.setdefault(_name, ConfigDef(_name, _type, _default))


# Broker keys Kafka can change without a restart (it reports the others read-only).
KAFKA_DYNAMIC_BROKER_KEYS = frozenset(r[0] for r in _kafka.BROKER if not r[4])
# Keys whose value DescribeConfigs never shows (passwords).
SENSITIVE_KEYS = frozenset(r[0] for r in (*_kafka.BROKER, *_kafka.TOPIC) if r[3])

# --fidelity kafka (and adversarial): Kafka's own default for every key whose fast default
# is one made for tests. The keys are the `configs` of emulator/fidelity/differences.py's
# DIFFERENCES (the one table: broker.session.timeout.ms, a crashed broker stays in metadata until
# fenced; group.initial.rebalance.delay.ms, a new classic group's first rebalance waits),
# the values Kafka 4.4's defaults from kafka_configs.py, so neither can drift.
# Computed on first use (emulator.fidelity gives the table then): a cluster in the fast
# mode never reads the table (docs/scale.md, start-up).
_KAFKA_DEFAULTS = {r[0]: r[2] for r in (*_kafka.BROKER, *_kafka.TOPIC)}
if TYPE_CHECKING:
    FIDELITY_KAFKA: dict[str, str]


def __getattr__(name: str) -> dict[str, str]:
    if name == "FIDELITY_KAFKA":
        value = {key: str(_KAFKA_DEFAULTS[key]) for d in _fidelity.DIFFERENCES
                 for key in d.configs}
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class ConfigError(ValueError):
    """An unknown key or a value of the wrong type (INVALID_CONFIG)."""


# The range of each integer type, as Java parses it (Integer.parseInt and the like).
_INT_RANGES = {INT: ("INT", 31), SHORT: ("SHORT", 15), LONG: ("LONG", 63)}


# A number as Java's Double.parseDouble reads it (no hexadecimal form): Python's float()
# also takes "inf", "nan" and "1_0", and not the d/f suffix.
_JAVA_DOUBLE = re.compile(r"[+-]?(NaN|Infinity|(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?[fFdD]?)")


def _java_double(x: float) -> str:
    """``x`` as Java's Double.toString prints it (a Range's message shows the parsed
    value): plain between 10^-3 and 10^7, else d.dddEn."""
    if math.isnan(x) or math.isinf(x):
        return "NaN" if math.isnan(x) else ("-" if x < 0 else "") + "Infinity"
    if x == 0 or 1e-3 <= abs(x) < 1e7:
        return repr(x)
    from decimal import Decimal  # rare (a Range's message): not on every start

    sign, digits, exponent = Decimal(repr(x)).normalize().as_tuple()
    assert isinstance(exponent, int)
    text = "".join(map(str, digits))
    return (f"{'-' if sign else ''}{text[0]}.{text[1:] or '0'}"
            f"E{exponent + len(text) - 1}")


def validate_value(defn: ConfigDef, value: str | None) -> None:
    """Check a value as Kafka's ConfigDef does: it parses as the key's type (the value
    trimmed, a number within the type's range), then the key's validator; the messages
    are ConfigException's, "Invalid value V for configuration K: ..." (V the parsed value
    where Kafka's validator reports it)."""
    if value is None:
        return

    def invalid(why: str, shown: object = value) -> ConfigError:
        return ConfigError(f"Invalid value {shown} for configuration {defn.name}: {why}")

    text = value.strip()
    number: int | float | None = None
    if defn.type in _INT_RANGES:
        kind, bits = _INT_RANGES[defn.type]
        try:
            number = None if "_" in text else int(text, 10)  # Python reads 1_000; Java not
        except ValueError:
            number = None
        if number is None or not -(1 << bits) <= number < (1 << bits):
            raise invalid(f"Not a number of type {kind}")
        if defn.minimum is not None and number < defn.minimum:
            raise invalid(f"Value must be at least {defn.minimum}")
    elif defn.type == DOUBLE:
        if not _JAVA_DOUBLE.fullmatch(text):
            raise invalid("Not a number of type DOUBLE")
        number = float(text.rstrip("fFdD") if text[-1:] in "fFdD" else text)
    elif defn.type == BOOLEAN and text.lower() not in ("true", "false"):
        raise invalid("Expected value to be either true or false")
    if defn.check is not None:
        _check_value(defn, defn.check, text, number, invalid)
    if defn.name == "message.timestamp.type" and value not in ("CreateTime", "LogAppendTime"):
        raise ConfigError(f"Invalid value {value} for configuration message.timestamp.type: "
                          "String must be one of: CreateTime, LogAppendTime")
    if defn.name == "min.insync.replicas" and int(value) < 1:
        raise ConfigError(f"Invalid value {value} for configuration min.insync.replicas: "
                          "Value must be at least 1")


def _check_value(defn: ConfigDef, check: Check, text: str, number: float | None,
                 invalid: Callable[[str, object], ConfigError]) -> None:
    """Kafka's validator of the key (its Check) over the parsed value, in the order and
    with the messages of ConfigDef's Range, ValidString, ValidList and NonEmptyString."""
    if number is not None:
        shown = _java_double(number) if defn.type == DOUBLE else number
        if check.at_least is not None and number < float(check.at_least):
            raise invalid(f"Value must be at least {check.at_least}", shown)
        if check.at_most is not None and number > float(check.at_most):
            raise invalid(f"Value must be no more than {check.at_most}", shown)
        if check.gzip_level and not (1 <= number <= 9 or number == -1):
            raise invalid("Value must be between 1 and 9 or equal to -1", shown)
    if check.non_empty and not text:
        raise invalid("String must be non-empty", text)
    items = ([i.strip() for i in text.split(",")] if text else []) if check.is_list else [text]
    if check.is_list:
        if len(set(items)) < len(items):
            raise ConfigError(f"Configuration '{defn.name}' values must not be duplicated.")
        if not items and not check.empty_allowed:
            include = f"[{', '.join(check.one_of)}]" if check.one_of else "any non-empty value"
            raise ConfigError(f"Configuration '{defn.name}' must not be empty. Valid values "
                              f"include: {include}")
    allowed = {v.upper() for v in check.one_of} if check.any_case else set(check.one_of)
    for item in items:  # in order: "a,,b" is refused for its a, "compact,,b" for its ""
        if check.is_list and not item:
            raise ConfigError(f"Configuration '{defn.name}' values must not be empty.")
        if allowed and (item.upper() if check.any_case else item) not in allowed:
            case = " (case insensitive)" if check.any_case else ""
            raise invalid(f"String must be one of{case}: {', '.join(check.one_of)}", item)


def validate_topic_configs(configs: Mapping[str, str | None]) -> None:
    for k, v in configs.items():
        defn = TOPIC_CONFIGS.get(k)
        if defn is None:
            raise ConfigError(f"Unknown topic config name: {k}")
        validate_value(defn, v)


def validate_broker_configs(configs: Mapping[str, str]) -> None:
    """A broker's static config checked as Kafka checks its server.properties at start
    (KafkaConfig): each known key's value parses as its type and passes its validator,
    else ConfigError with Kafka's message, and the broker does not start. A key Kafka does
    not know is let through (Kafka logs that it is unused and starts)."""
    for k, v in configs.items():
        defn = BROKER_CONFIGS.get(k)
        if defn is not None:
            validate_value(defn, v)


def default_broker_config(overrides: dict[str, str] | None = None) -> ConfigDict:
    """Static broker configuration: Kafka's defaults plus the command-line overrides,
    which must be valid (validate_broker_configs)."""
    validate_broker_configs(overrides or {})
    conf = ConfigDict({k: d.default for k, d in BROKER_CONFIGS.items()
                       if d.default is not None and k in EMULATOR_BROKER_KEYS})
    conf.update(overrides or {})
    return conf
