"""A streams group's topology (KIP-1071) and its configuration against the cluster's topics.

Kafka Streams sends its topology once, when a member joins: subtopologies with their
source topics, the repartition topics they write to and read from, and the changelog
topics of their state stores. The coordinator then works out, as Kafka's
InternalTopicManager does, how many partitions each internal topic needs:

- a repartition source topic with no fixed count gets the largest partition count of
  the sources of the subtopology that writes it (iterated until nothing changes);
- topics of one copartition group get one count (the fixed repartition count, or the
  external sources' common count: a mismatch is INCORRECTLY_PARTITIONED_TOPICS);
- a changelog topic gets its subtopology's task count (the largest source count).

The outcome is a ``ConfiguredTopology``: the number of tasks per subtopology, the
internal topics still to create (MISSING_INTERNAL_TOPICS: the broker creates them),
or a status that keeps the group from assigning (MISSING_SOURCE_TOPICS,
INCORRECTLY_PARTITIONED_TOPICS). A topology whose repartition counts cannot be
derived is STREAMS_INVALID_TOPOLOGY, an error of the heartbeat itself.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from emulator.coordinators.streams.messages import (
    DescribedSubtopology,
    DescribedTopology,
    SubtopologyWire,
    TopicInfoWire,
    TopologyWire,
)
from wire.errors import ErrorCode as E
from wire.errors import KafkaError

# StreamsGroupHeartbeatResponse's status codes.
STALE_TOPOLOGY = 0
MISSING_SOURCE_TOPICS = 1
INCORRECTLY_PARTITIONED_TOPICS = 2
MISSING_INTERNAL_TOPICS = 3
SHUTDOWN_APPLICATION = 4
ASSIGNMENT_DELAYED = 5
MISSING_CLIENT_TAGS = 6


@dataclass(frozen=True)
class TopicInfo:
    """An internal topic as the topology declares it (0 partitions: the broker decides)."""

    name: str
    partitions: int = 0
    replication_factor: int = 0
    configs: tuple[tuple[str, str], ...] = ()

    @classmethod
    def from_wire(cls, d: TopicInfoWire) -> TopicInfo:
        return cls(d["name"], d["partitions"], d["replication_factor"],
                   tuple(sorted((c["key"], c["value"]) for c in d["topic_configs"] or [])))

    def to_wire(self, partitions: int | None = None) -> TopicInfoWire:
        return {"name": self.name,
                "partitions": self.partitions if partitions is None else partitions,
                "replication_factor": self.replication_factor,
                "topic_configs": [{"key": k, "value": v} for k, v in self.configs]}


@dataclass(frozen=True)
class Subtopology:
    subtopology_id: str
    source_topics: tuple[str, ...]
    repartition_sink_topics: tuple[str, ...]
    state_changelog_topics: tuple[TopicInfo, ...]
    repartition_source_topics: tuple[TopicInfo, ...]
    copartition_groups: tuple[frozenset[str], ...]

    @classmethod
    def from_wire(cls, d: SubtopologyWire) -> Subtopology:
        sources = list(d["source_topics"])
        reparts = [TopicInfo.from_wire(t) for t in d["repartition_source_topics"]]
        groups = []
        for g in d["copartition_groups"]:
            names = {sources[i] for i in g["source_topics"] if 0 <= i < len(sources)}
            names |= {reparts[i].name for i in g["repartition_source_topics"]
                      if 0 <= i < len(reparts)}
            groups.append(frozenset(names))
        return cls(d["subtopology_id"], tuple(sources), tuple(d["repartition_sink_topics"]),
                   tuple(TopicInfo.from_wire(t) for t in d["state_changelog_topics"]),
                   tuple(reparts), tuple(groups))

    def all_sources(self) -> list[str]:
        names = list(self.source_topics) + [t.name for t in self.repartition_source_topics]
        return list(dict.fromkeys(names))


@dataclass(frozen=True)
class StreamsTopology:
    epoch: int
    subtopologies: tuple[Subtopology, ...]

    @classmethod
    def from_wire(cls, d: TopologyWire) -> StreamsTopology:
        subs = sorted((Subtopology.from_wire(s) for s in d["subtopologies"]),
                      key=lambda s: s.subtopology_id)
        return cls(d["epoch"], tuple(subs))

    def required_topics(self) -> set[str]:
        out: set[str] = set()
        for s in self.subtopologies:
            out.update(s.source_topics, s.repartition_sink_topics)
            out.update(t.name for t in s.repartition_source_topics)
            out.update(t.name for t in s.state_changelog_topics)
        return out

    def source_topics(self) -> set[str]:
        return {t for s in self.subtopologies for t in s.all_sources()}

    def describe(self) -> DescribedTopology:
        """StreamsGroupDescribe's topology before it could be configured."""
        return {"epoch": self.epoch, "subtopologies": [{
            "subtopology_id": s.subtopology_id,
            "source_topics": sorted(s.source_topics),
            "repartition_sink_topics": sorted(s.repartition_sink_topics),
            "state_changelog_topics": [t.to_wire() for t in
                                       sorted(s.state_changelog_topics, key=lambda t: t.name)],
            "repartition_source_topics": [t.to_wire() for t in sorted(
                s.repartition_source_topics, key=lambda t: t.name)],
        } for s in self.subtopologies]}


@dataclass
class ConfiguredSubtopology:
    num_tasks: int
    source_topics: set[str]
    repartition_source_topics: dict[str, int]  # name -> partitions
    repartition_sink_topics: set[str]
    state_changelog_topics: dict[str, int]
    topology: Subtopology


# The internal topics a heartbeat found missing: name -> (partitions, replication factor,
# configs), for the handler to create.
ToCreate = dict[str, tuple[int, int, dict[str, str]]]


@dataclass
class ConfiguredTopology:
    """The topology against the cluster's topics at one moment (``metadata_key``)."""

    epoch: int
    metadata_key: MetadataKey
    subtopologies: dict[str, ConfiguredSubtopology] | None
    to_create: ToCreate = field(default_factory=dict)
    status: tuple[int, str] | None = None  # (status code, detail)

    @property
    def is_ready(self) -> bool:
        return self.status is None

    def describe(self) -> DescribedTopology:
        subs: list[DescribedSubtopology] = []
        for sid, s in sorted((self.subtopologies or {}).items()):
            t = s.topology
            subs.append({
                "subtopology_id": sid, "source_topics": sorted(s.source_topics),
                "repartition_sink_topics": sorted(s.repartition_sink_topics),
                "state_changelog_topics": [i.to_wire(s.state_changelog_topics[i.name]) for i in
                                           sorted(t.state_changelog_topics,
                                                  key=lambda i: i.name)],
                "repartition_source_topics": [
                    i.to_wire(s.repartition_source_topics[i.name]) for i in
                    sorted(t.repartition_source_topics, key=lambda i: i.name)],
            })
        return {"epoch": self.epoch, "subtopologies": subs}


PartitionCount = Callable[[str], int | None]


def summarize(topics: Iterable[str]) -> str:
    """Kafka's InternalTopicManager.summarizeTopics: at most three names."""
    names = list(topics)
    if not names:
        return "<none>"
    text = ", ".join(names[:3])
    return text + (f" and {len(names) - 3} additional topics" if len(names) > 3 else "")


# the required topics' partition counts, by name (-1: missing)
MetadataKey = tuple[tuple[str, int], ...]


def metadata_key(topology: StreamsTopology, count: PartitionCount) -> MetadataKey:
    """What the configuration depends on: the partition counts of the required topics."""
    return tuple(sorted((t, count(t) or -1) for t in topology.required_topics()))


def configure(topology: StreamsTopology, count: PartitionCount) -> ConfiguredTopology:
    """Kafka's InternalTopicManager.configureTopics. Raises STREAMS_INVALID_TOPOLOGY."""
    key = metadata_key(topology, count)
    missing = sorted({t for s in topology.subtopologies for t in s.source_topics
                      if count(t) is None})
    if missing:
        return ConfiguredTopology(topology.epoch, key, None, status=(
            MISSING_SOURCE_TOPICS, f"Source topics {summarize(missing)} are missing."))
    decided: dict[str, int] = {}

    def known(t: str) -> int | None:
        n = count(t)
        return n if n is not None else decided.get(t)

    try:
        decided.update(_repartition_counts(topology, known))
        _enforce_copartitioning(topology, known, decided)
    except _Incorrect as e:
        return ConfiguredTopology(topology.epoch, key, None,
                                  status=(INCORRECTLY_PARTITIONED_TOPICS, str(e)))
    subs: dict[str, ConfiguredSubtopology] = {}
    for s in topology.subtopologies:
        counts = [known(t) for t in s.all_sources()]
        if not counts or any(c is None for c in counts):
            raise KafkaError(E.STREAMS_INVALID_TOPOLOGY, f"No source topics found for "
                             f"subtopology {s.subtopology_id}")
        tasks = max(c for c in counts if c is not None)
        reparts = {t.name: t.partitions or decided[t.name] for t in s.repartition_source_topics}
        changelogs = {t.name: tasks for t in s.state_changelog_topics}
        subs[s.subtopology_id] = ConfiguredSubtopology(
            tasks, set(s.source_topics), reparts, set(s.repartition_sink_topics), changelogs, s)
    to_create: dict[str, tuple[int, int, dict[str, str]]] = {}
    for cs in subs.values():
        for info in cs.topology.repartition_source_topics:
            to_create[info.name] = (cs.repartition_source_topics[info.name],
                                    info.replication_factor or -1, dict(info.configs))
        for info in cs.topology.state_changelog_topics:
            to_create[info.name] = (cs.state_changelog_topics[info.name],
                                    info.replication_factor or -1, dict(info.configs))
    for name in sorted(topology.required_topics()):
        n = count(name)
        if n is None or name not in to_create:
            continue
        expected = to_create.pop(name)[0]
        if n != expected:
            return ConfiguredTopology(topology.epoch, key, None, status=(
                INCORRECTLY_PARTITIONED_TOPICS, f"Existing topic {name} has different number "
                f"of partitions: expected {expected}, found {n}"))
    status = None
    if to_create:
        status = (MISSING_INTERNAL_TOPICS, f"Internal topics are missing: {summarize(to_create)}")
    return ConfiguredTopology(topology.epoch, key, subs, to_create, status)


class _Incorrect(Exception):
    """INCORRECTLY_PARTITIONED_TOPICS while deciding partition counts."""


def _repartition_counts(topology: StreamsTopology, known: PartitionCount) -> dict[str, int]:
    """Kafka's RepartitionTopics.setup: counts of repartition topics without a fixed one."""
    counts = {t.name: t.partitions for s in topology.subtopologies
              for t in s.repartition_source_topics if t.partitions}
    while True:
        needed = progress = False
        for s in topology.subtopologies:
            for sink in s.repartition_sink_topics:
                if sink in counts:
                    continue
                maybe = [counts.get(t.name) for t in s.repartition_source_topics]
                maybe += [known(t) for t in s.source_topics if t not in counts]
                cands = [c for c in maybe if c is not None]
                if not cands:
                    needed = True
                    continue
                counts[sink] = max(cands)
                progress = True
        if not needed:
            break
        if not progress:
            raise KafkaError(E.STREAMS_INVALID_TOPOLOGY, "Failed to compute number of partitions "
                             "for all repartition topics. There may be loops in the topology "
                             "that cannot be resolved.")
    for s in topology.subtopologies:
        if any(t.name not in counts for t in s.repartition_source_topics):
            raise KafkaError(E.STREAMS_INVALID_TOPOLOGY, "Failed to compute number of partitions "
                             "for all repartition topics, because a repartition source topic is "
                             "never used as a sink topic.")
    return counts


def _enforce_copartitioning(topology: StreamsTopology, known: PartitionCount,
                            decided: dict[str, int]) -> None:
    """Kafka's CopartitionedTopicsEnforcer over every copartition group."""
    fixed = {t.name for s in topology.subtopologies for t in s.repartition_source_topics
             if t.partitions}
    flexible = {t.name for s in topology.subtopologies for t in s.repartition_source_topics
                if not t.partitions}
    for s in topology.subtopologies:
        for group in s.copartition_groups:
            if not group:
                continue
            reparts = {t: decided.get(t) or known(t) or 0 for t in group
                       if t in fixed or t in flexible}
            others = {t: known(t) or 0 for t in group if t not in reparts}
            if set(reparts) == set(group):
                fixed_here = {reparts[t] for t in reparts if t in fixed}
                if len(fixed_here) > 1:
                    raise _Incorrect("Following topics do not have the same number of "
                                     f"partitions: [{', '.join(sorted(reparts))}]")
                n = fixed_here.pop() if fixed_here else max(reparts.values())
            else:
                if len(set(others.values())) > 1:
                    raise _Incorrect("Following topics do not have the same number of "
                                     f"partitions: [{', '.join(sorted(others))}]")
                n = next(iter(others.values()))
            for t in reparts:
                if t in fixed and reparts[t] != n:
                    raise _Incorrect(f"Number of partitions [{reparts[t]}] of repartition "
                                     f"topic [{t}] doesn't match number of partitions [{n}] "
                                     "of the source topic.")
                decided[t] = n
