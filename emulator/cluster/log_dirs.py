"""Log directories, enough for DescribeLogDirs and AlterReplicaLogDirs.

Each broker has one log directory (``log.dirs``, else ``log.dir``, else Kafka's
default /tmp/kafka-logs), holding a log for every replica the broker hosts,
including replicas being added or removed by a reassignment. Moving a replica
between directories of one broker is not modelled: there is only one, so a move
to it is already done, and any other path is not a log directory of the broker.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from wire.errors import ErrorCode as E

if TYPE_CHECKING:
    from emulator.cluster.state import ClusterState

DEFAULT_LOG_DIR = "/tmp/kafka-logs"  # Kafka's log.dir default


def log_dir(state: ClusterState, broker_id: int) -> str:
    """The broker's (single) log directory."""
    value = None
    for key in ("log.dirs", "log.dir"):
        value = state.broker_overrides.get(broker_id, {}).get(key) or state.config.get(key)
        if value:
            break
    return (value or DEFAULT_LOG_DIR).split(",")[0].strip()


@dataclass
class ReplicaLog:
    partition: int
    size: int  # bytes
    offset_lag: int  # max(high watermark - log end offset, 0), as the replica sees it


@dataclass
class LogDirDescription:
    path: str
    topics: list[tuple[str, list[ReplicaLog]]] = field(default_factory=list)


def describe_log_dirs(state: ClusterState, broker_id: int,
                      topics: Sequence[tuple[str, Sequence[int]]] | None) -> LogDirDescription:
    """ReplicaManager.describeLogDirs for one broker; ``topics`` None means every
    partition. Topics with nothing on this broker are left out."""
    wanted = None if topics is None else {(n, i) for n, idx in topics for i in idx}
    out = LogDirDescription(log_dir(state, broker_id))
    for t in state.topics.values():
        logs = []
        for p in t.partitions:
            log = p.logs.get(broker_id)
            if log is None or (wanted is not None and (t.name, p.index) not in wanted):
                continue
            hw = p.high_watermark if broker_id == p.leader else p.follower_hw.get(broker_id, 0)
            logs.append(ReplicaLog(p.index, log.size_bytes, max(hw - log.log_end_offset, 0)))
        if logs:
            out.topics.append((t.name, logs))
    return out


def alter_replica_log_dir(state: ClusterState, broker_id: int, path: str, topic: str,
                          index: int) -> int:
    """ReplicaManager.alterReplicaLogDirs for one replica: the error code."""
    if path != log_dir(state, broker_id):
        return E.LOG_DIR_NOT_FOUND
    t = state.topics.get(topic)
    if t is None or not 0 <= index < len(t.partitions):
        return E.UNKNOWN_TOPIC_OR_PARTITION
    if broker_id not in t.partitions[index].logs:
        return E.REPLICA_NOT_AVAILABLE  # NOT_LEADER_OR_FOLLOWER, kept as before for this API
    return E.NONE
