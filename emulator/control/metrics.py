"""Views of the cluster for people and monitors: the control plane's JSON and
Prometheus text with Kafka's metric names.

Kafka's JMX names map to Prometheus as ``<domain>_<type>_<name>`` (the shape a JMX
exporter gives them, case kept), one sample per live broker:

- kafka_server_ReplicaManager_UnderReplicatedPartitions: partitions the broker
  leads whose ISR is smaller than the replica set
- kafka_server_ReplicaManager_UnderMinIsrPartitionCount: led partitions whose ISR
  is below min.insync.replicas
- kafka_server_ReplicaManager_PartitionCount / LeaderCount
- kafka_server_ReplicaManager_IsrShrinksPerSec_total / IsrExpandsPerSec_total: the
  meters' counts (a rate is the monitor's to compute)
- kafka_server_ReplicaManager_OfflineReplicaCount: the broker's replicas in a failed
  log dir; kafka_log_LogManager_OfflineLogDirectoryCount: its failed log dirs (storage
  faults, docs/faults.md)
- kafka_controller_KafkaController_ActiveControllerCount: 1 on the controller
- kafka_controller_KafkaController_OfflinePartitionsCount: partitions without a
  live leader, reported by the active controller (0 elsewhere), as in Kafka
- the log cleaner (kafka.log:type=LogCleaner / LogCleanerManager, dashes as
  underscores): kafka_log_LogCleaner_cleaner_recopy_percent,
  _max_buffer_utilization_percent, _max_clean_time_secs, _max_compaction_delay_secs,
  _DeadThreadCount; kafka_log_LogCleanerManager_max_dirty_percent,
  _time_since_last_run_ms, _uncleanable_partitions_count; and the emulator's own
  counters kafka_log_LogCleaner_passes_total, _bytes_read_total,
  _bytes_written_total, _records_removed_total
"""

from __future__ import annotations

from emulator.cluster.state import ClusterState


def cluster_view(state: ClusterState) -> dict:
    """GET /cluster: controller, brokers, and every partition's replication state."""
    topics = {}
    for name, t in sorted(state.topics.items()):
        parts = []
        for p in t.partitions:
            parts.append({
                "partition": p.index,
                "leader": p.leader,
                "leader_epoch": p.leader_epoch,
                "partition_epoch": p.partition_epoch,
                "replicas": list(p.replicas),
                "isr": list(p.isr),
                "adding_replicas": list(p.adding_replicas),
                "removing_replicas": list(p.removing_replicas),
                "high_watermark": p.high_watermark,
                "log_end_offsets": {str(b): log.log_end_offset
                                    for b, log in sorted(p.logs.items())},
            })
        topics[name] = {"partitions": parts}
    return {
        "cluster_id": state.cluster_id,
        "controller": state.controller_id,
        "controller_epoch": state.controller_epoch,
        # fast / kafka / adversarial and its seed (docs/fidelity.md): which greens to trust
        "fidelity": {"mode": state.fidelity.mode, "seed": state.fidelity.seed},
        "brokers": [{"id": b.id, "host": b.host, "port": b.port, "alive": b.alive,
                     "crashed": b.crashed, "shutting_down": b.id in state.shutting_down,
                     # failed log dirs (storage faults), until the broker restarts
                     "offline_log_dirs": sorted(state.offline_log_dirs.get(b.id, ()))}
                    for b in sorted(state.brokers.values(), key=lambda b: b.id)],
        "topics": topics,
    }


def replication_view(state: ClusterState) -> dict:
    """The part of the cluster that faults change: for comparing runs of a schedule."""
    view = cluster_view(state)
    return {"controller": view["controller"], "controller_epoch": view["controller_epoch"],
            "alive": [b["id"] for b in view["brokers"] if b["alive"]],
            "partitions": {f"{t}-{p['partition']}": [p["leader"], p["leader_epoch"],
                                                      p["isr"], p["replicas"]]
                           for t, v in view["topics"].items() for p in v["partitions"]}}


def broker_gauges(state: ClusterState) -> dict[str, dict[int, int]]:
    """Kafka's per-broker replication gauges, by metric name then broker id."""
    alive = state.alive_brokers()
    g: dict[str, dict[int, int]] = {k: {b: 0 for b in alive} for k in (
        "kafka_server_ReplicaManager_UnderReplicatedPartitions",
        "kafka_server_ReplicaManager_UnderMinIsrPartitionCount",
        "kafka_server_ReplicaManager_PartitionCount",
        "kafka_server_ReplicaManager_LeaderCount",
        "kafka_server_ReplicaManager_OfflineReplicaCount",
        "kafka_log_LogManager_OfflineLogDirectoryCount",
        "kafka_controller_KafkaController_ActiveControllerCount",
        "kafka_controller_KafkaController_OfflinePartitionsCount",
    )}
    offline = 0
    for t in state.topics.values():
        for p in t.partitions:
            for b in p.replicas:
                if b in g["kafka_server_ReplicaManager_PartitionCount"]:
                    g["kafka_server_ReplicaManager_PartitionCount"][b] += 1
            for b in p.offline:
                if b in g["kafka_server_ReplicaManager_OfflineReplicaCount"]:
                    g["kafka_server_ReplicaManager_OfflineReplicaCount"][b] += 1
            if p.leader < 0 or not state.is_alive(p.leader):
                offline += 1
                continue
            g["kafka_server_ReplicaManager_LeaderCount"][p.leader] += 1
            if len(p.isr) < len(p.replicas):
                g["kafka_server_ReplicaManager_UnderReplicatedPartitions"][p.leader] += 1
            if len(p.isr) < state.effective_min_isr(t, p):
                g["kafka_server_ReplicaManager_UnderMinIsrPartitionCount"][p.leader] += 1
    for b, dirs in state.offline_log_dirs.items():
        if b in g["kafka_log_LogManager_OfflineLogDirectoryCount"]:
            g["kafka_log_LogManager_OfflineLogDirectoryCount"][b] = len(dirs)
    c = state.controller_id
    if c in alive:
        g["kafka_controller_KafkaController_ActiveControllerCount"][c] = 1
        g["kafka_controller_KafkaController_OfflinePartitionsCount"][c] = offline
    return g


def prometheus(state: ClusterState) -> str:
    """GET /metrics: Prometheus text exposition format 0.0.4."""
    lines: list[str] = []
    for name, values in broker_gauges(state).items():
        lines.append(f"# TYPE {name} gauge")
        lines.extend(f'{name}{{broker="{b}"}} {v}' for b, v in sorted(values.items()))
    alive = state.alive_brokers()
    for name, counts in (("kafka_server_ReplicaManager_IsrShrinksPerSec_total",
                          state.isr_shrinks_by_broker),
                         ("kafka_server_ReplicaManager_IsrExpandsPerSec_total",
                          state.isr_expands_by_broker)):
        lines.append(f"# TYPE {name} counter")
        lines.extend(f'{name}{{broker="{b}"}} {counts.get(b, 0)}' for b in alive)
    lines.append("# TYPE kafka_controller_KafkaController_ControllerEpoch gauge")
    lines.append(f"kafka_controller_KafkaController_ControllerEpoch {state.controller_epoch}")
    lines.extend(cleaner_lines(state))
    return "\n".join(lines) + "\n"


def cleaner_lines(state: ClusterState) -> list[str]:
    """The log cleaner's progress under Kafka's metric names."""
    s = state.cleaner.stats
    since = state.now() - s.last_run_ms if s.last_run_ms >= 0 else 0
    gauges = {
        "kafka_log_LogCleaner_cleaner_recopy_percent": round(s.recopy_percent, 3),
        "kafka_log_LogCleaner_max_buffer_utilization_percent":
            round(s.max_buffer_utilization, 3),
        "kafka_log_LogCleaner_max_clean_time_secs": s.max_clean_time_ms // 1000,
        "kafka_log_LogCleaner_max_compaction_delay_secs": s.max_compaction_delay_ms // 1000,
        "kafka_log_LogCleaner_DeadThreadCount": 0,
        "kafka_log_LogCleanerManager_max_dirty_percent": round(s.max_dirty_percent, 3),
        "kafka_log_LogCleanerManager_time_since_last_run_ms": since,
        "kafka_log_LogCleanerManager_uncleanable_partitions_count":
            len(s.uncleanable_partitions),
    }
    counters = {
        "kafka_log_LogCleaner_passes_total": s.passes,
        "kafka_log_LogCleaner_bytes_read_total": s.bytes_read,
        "kafka_log_LogCleaner_bytes_written_total": s.bytes_written,
        "kafka_log_LogCleaner_records_removed_total": s.records_removed,
    }
    out = []
    for kind, table in (("gauge", gauges), ("counter", counters)):
        for name, v in table.items():
            out += [f"# TYPE {name} {kind}", f"{name} {v}"]
    return out


__all__ = ["broker_gauges", "cluster_view", "prometheus", "replication_view"]
