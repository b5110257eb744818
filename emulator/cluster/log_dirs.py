"""Log directories: where each replica of a broker lives, which ones failed, and the
answers of DescribeLogDirs and AlterReplicaLogDirs.

A broker's log directories are ``log.dirs`` (comma-separated), else ``log.dir``, else
Kafka's default /tmp/kafka-logs. Each replica the broker hosts lives in one of them:
partition ``i`` in the ``i mod n``-th (Kafka puts a new log in the directory holding
the fewest, which spreads one topic's partitions the same way on a fresh broker), or
where AlterReplicaLogDirs moved it (the move is done at once: no future replica).
The directories are names only: the emulator's data lives in memory, and with
``--data-dir`` in one directory for the whole cluster (docs/storage.md).

A directory fails (Kafka's LogDirFailureChannel) when a storage fault makes a write to
it fail (emulator/faults, docs/faults.md); what follows is ``controller.log_dir_failed``.
It stays offline until its broker restarts. Sans I/O: only names and sets.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from wire.errors import ErrorCode as E

if TYPE_CHECKING:
    from emulator.cluster.metadata import ClusterMetadata

DEFAULT_LOG_DIR = "/tmp/kafka-logs"  # Kafka's log.dir default


def log_dirs(state: ClusterMetadata, broker_id: int) -> list[str]:
    """The broker's log directories, in the order configured."""
    value = None
    for key in ("log.dirs", "log.dir"):
        value = state.broker_overrides.get(broker_id, {}).get(key) or state.config.get(key)
        if value:
            break
    dirs = [d.strip() for d in (value or DEFAULT_LOG_DIR).split(",") if d.strip()]
    return list(dict.fromkeys(dirs)) or [DEFAULT_LOG_DIR]


def log_dir(state: ClusterMetadata, broker_id: int) -> str:
    """The broker's first log directory."""
    return log_dirs(state, broker_id)[0]


def metadata_log_dir(state: ClusterMetadata, broker_id: int) -> str:
    """Where a KRaft broker keeps the cluster metadata log (``metadata.log.dir``, else
    the first log directory): its failure halts the broker whatever else is left."""
    value = (state.broker_overrides.get(broker_id, {}).get("metadata.log.dir")
             or state.config.get("metadata.log.dir"))
    return value.strip() if value else log_dir(state, broker_id)


def replica_log_dir(state: ClusterMetadata, broker_id: int, topic: str, index: int) -> str:
    """The log directory of ``broker_id``'s replica of ``topic``-``index``."""
    moved = state.replica_dir_moves.get((topic, index, broker_id)) \
        if state.replica_dir_moves else None
    if moved is not None:
        return moved
    dirs = log_dirs(state, broker_id)
    return dirs[index % len(dirs)]


def is_offline(state: ClusterMetadata, broker_id: int, path: str) -> bool:
    failed = state.offline_log_dirs.get(broker_id)
    return bool(failed) and path in failed  # type: ignore[operator]


def live_log_dirs(state: ClusterMetadata, broker_id: int) -> list[str]:
    failed = state.offline_log_dirs.get(broker_id, set())
    return [d for d in log_dirs(state, broker_id) if d not in failed]


@dataclass
class ReplicaLog:
    partition: int
    size: int  # bytes
    offset_lag: int  # max(high watermark - log end offset, 0), as the replica sees it


@dataclass
class LogDirDescription:
    path: str
    error: int = E.NONE  # KAFKA_STORAGE_ERROR for a failed directory (and no topics)
    topics: list[tuple[str, list[ReplicaLog]]] = field(default_factory=list)


def describe_log_dirs(state: ClusterMetadata, broker_id: int,
                      topics: Sequence[tuple[str, Sequence[int]]] | None
                      ) -> list[LogDirDescription]:
    """ReplicaManager.describeLogDirs: every log directory of the broker, a failed one
    with KAFKA_STORAGE_ERROR and nothing else; ``topics`` None means every partition.
    Topics with nothing in a directory are left out of it."""
    wanted = None if topics is None else {(n, i) for n, idx in topics for i in idx}
    out = {d: LogDirDescription(d) for d in log_dirs(state, broker_id)}
    for d in out.values():
        if is_offline(state, broker_id, d.path):
            d.error = E.KAFKA_STORAGE_ERROR
    found: dict[str, dict[str, list[ReplicaLog]]] = {d: {} for d in out}
    for t in state.topics.values():
        for p in t.partitions:
            log = p.logs.get(broker_id)
            if log is None or (wanted is not None and (t.name, p.index) not in wanted):
                continue
            path = replica_log_dir(state, broker_id, t.name, p.index)
            if path not in out or out[path].error:
                continue
            hw = p.high_watermark if broker_id == p.leader else p.follower_hw.get(broker_id, 0)
            found[path].setdefault(t.name, []).append(
                ReplicaLog(p.index, log.size_bytes, max(hw - log.log_end_offset, 0)))
    for path, by_topic in found.items():
        out[path].topics = list(by_topic.items())
    return list(out.values())


def alter_replica_log_dir(state: ClusterMetadata, broker_id: int, path: str, topic: str,
                          index: int) -> int:
    """ReplicaManager.alterReplicaLogDirs for one replica: the error code. The move is
    done at once (the emulator's logs are in memory)."""
    if path not in log_dirs(state, broker_id):
        return E.LOG_DIR_NOT_FOUND
    if is_offline(state, broker_id, path):
        return E.KAFKA_STORAGE_ERROR
    t = state.topics.get(topic)
    if t is None or not 0 <= index < len(t.partitions):
        return E.UNKNOWN_TOPIC_OR_PARTITION
    p = t.partitions[index]
    if broker_id not in p.logs:
        return E.REPLICA_NOT_AVAILABLE  # NOT_LEADER_OR_FOLLOWER, kept as before for this API
    if broker_id in p.offline:
        return E.KAFKA_STORAGE_ERROR
    state.replica_dir_moves[(topic, index, broker_id)] = path
    return E.NONE
