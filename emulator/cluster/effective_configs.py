"""A topic's effective configs, resolved once per config change, and typed for the
produce path (split out of metadata.py, where ``ClusterMetadata.topic_config``,
``produce_configs`` and ``retention_configs`` still answer: this module is how, that
one is where they are kept).

A key resolves through the topic's own override, the brokers' dynamic default, the
static config and Kafka's default (Kafka's LogConfig with its broker synonyms); what
Produce and retention read of it is built once into ``ProduceConfigs`` and a tuple.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from emulator.cluster.configs import TOPIC_CONFIGS, ConfigDict
from emulator.log.validator import TopicRules


class EffectiveConfigs:
    """A topic's effective configs, resolved once and kept until any config changes.

    ``topic_config`` resolves a key through the topic's override, the broker's dynamic
    default, its static config and Kafka's default; a produced batch asked that some
    thirteen times. This keeps the resolved strings (``values``) and, for the produce
    path, the typed values it needs. It is valid while ``ConfigDict.generation`` is the
    one it was built at (any config change anywhere bumps it) and the topic still has
    the same ``configs`` object: a change takes effect at the next lookup.
    """

    __slots__ = ("generation", "configs", "values", "produce", "retention")

    def __init__(self, configs: dict[str, str]) -> None:
        self.generation = ConfigDict.generation
        self.configs = configs
        self.values: dict[str, str] = {}
        self.produce: ProduceConfigs | None = None
        # (cleanup.policy has delete, retention.ms, retention.bytes)
        self.retention: tuple[bool, int, int] | None = None


@dataclass(slots=True, frozen=True)
class ProduceConfigs:
    """What an append reads of its topic's configs, typed (EffectiveConfigs)."""

    rules: TopicRules  # what the produce validator applies
    log_append_time: bool
    max_message_bytes: int
    min_insync_replicas: int
    segment_bytes: int
    segment_ms: int
    # The codec the topic's compression.type asks for (wire.records NONE..ZSTD), or -1
    # for "producer": under --fidelity kafka the leader recompresses a batch in another
    # codec to it, as Kafka's LogValidator does (docs/fidelity.md, topic-compression-type).
    codec: int = -1


# compression.type's values -> the codec id of a batch's attributes (-1: keep the
# producer's); Kafka's BrokerCompressionType.
TOPIC_CODECS = {"producer": -1, "uncompressed": 0, "gzip": 1, "snappy": 2, "lz4": 3,
                "zstd": 4}


def produce_configs_of(configs: Mapping[str, str], c: Callable[[str], str]) -> ProduceConfigs:
    """What an append reads of a topic whose own overrides are ``configs`` and whose
    effective value of a key is ``c(key)``."""
    ts_type = c("message.timestamp.type")
    return ProduceConfigs(
        rules=TopicRules(
            compacted="compact" in c("cleanup.policy").replace(" ", "").split(","),
            create_time=ts_type == "CreateTime",
            before_max_ms=int(c("message.timestamp.before.max.ms")),
            after_max_ms=int(c("message.timestamp.after.max.ms")),
        ),
        log_append_time=ts_type == "LogAppendTime",
        max_message_bytes=int(c("max.message.bytes")),
        min_insync_replicas=int(c("min.insync.replicas")),
        # internal.segment.bytes, where set, is the segment size (Kafka's
        # LogConfig.segmentSize): the way to segments under segment.bytes' 1 MB
        segment_bytes=int(configs.get("internal.segment.bytes") or c("segment.bytes")),
        segment_ms=int(c("segment.ms")),
        codec=TOPIC_CODECS.get(c("compression.type").strip().lower(), -1),
    )


def retention_configs_of(c: Callable[[str], str]) -> tuple[bool, int, int]:
    """(cleanup.policy includes delete, retention.ms, retention.bytes) of a topic whose
    effective value of a key is ``c(key)``."""
    return ("delete" in c("cleanup.policy").replace(" ", "").split(","),
            int(c("retention.ms")), int(c("retention.bytes")))


def resolve_topic_config(configs: Mapping[str, str], key: str,
                         broker_value: Callable[[str], str | None],
                         broker_config: Callable[[str], str]) -> str:
    """A topic's value of ``key``: its override, else the broker synonym's dynamic or
    static value (``broker_value``), else Kafka's default; retention.ms falls back on
    log.retention.hours (``broker_config``, which always answers)."""
    if key in configs:
        return configs[key]
    defn = TOPIC_CONFIGS[key]
    if key == "retention.ms":
        ms = broker_value("log.retention.ms")
        return ms if ms is not None else str(int(broker_config("log.retention.hours"))
                                             * 3600000)
    if defn.broker_synonym:
        v = broker_value(defn.broker_synonym)
        if v is not None:
            return v
    return defn.default or ""


__all__ = ["TOPIC_CODECS", "EffectiveConfigs", "ProduceConfigs", "produce_configs_of",
           "resolve_topic_config", "retention_configs_of"]
