"""The cluster as the server, the handlers and the tests see it: one facade.

``ClusterState`` is the cluster's data (``ClusterMetadata``) with the operations
clients ask for attached. It holds no logic of its own: each method forwards to
the module that owns the work (docs/CONTRIBUTING.md shows the layers):

- ``emulator.cluster.metadata``: brokers, topics, partitions, configs (the bottom);
- ``emulator.cluster.replication``: produce, follower fetch, ISR, high watermark;
- ``emulator.cluster.reads`` / ``retention``: ListOffsets, DeleteRecords, retention;
- ``emulator.cluster.controller`` (with ``leadership`` and ``reassignment`` below
  it): the only writer of leadership and replica sets;
- ``emulator.cluster.topics``: CreateTopics, DeleteTopics, CreatePartitions.

This module sits on top and wires them: replication's ISR news (AlterPartition)
goes to the controller's side through ``Followers.isr_listeners``, a log dir a fault
check found failing to the controller through ``Followers.log_dir_listeners``. It never awaits,
never touches sockets, and reads time from the injected clock. The server calls
``tick`` to let replication and expiry happen; every change bumps ``version`` and
calls ``on_change`` so the server can wake waiters (Kafka's purgatory).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from emulator.cluster import controller, reads, reassignment, retention, topics
from emulator.cluster.clock import Clock
from emulator.cluster.compaction import LogCleaner
from emulator.cluster.followers import Followers, advance_hw, truncate_follower
from emulator.cluster.metadata import (
    INTERNAL_TOPICS,
    LEGAL_TOPIC,
    MAX_TOPIC_LENGTH,
    Broker,
    ClusterMetadata,
    Topic,
    validate_topic_name,
)
from emulator.cluster.partition import Partition
from emulator.cluster.ports import LogDirFailure
from emulator.cluster.replication import AppendResult, Replication
from emulator.cluster.steps import Steps
from emulator.fidelity import Fidelity
from emulator.log.validator import Checked


class ClusterState(ClusterMetadata):
    """All state of one emulated cluster. Owned by one event loop: no locks."""

    def __init__(
        self,
        brokers: list[Broker],
        *,
        clock: Clock | None = None,
        seed: int = 0,
        broker_config: dict[str, str] | None = None,
        cluster_id: str = "kafka-emulator-cluster",
        fidelity: Fidelity | None = None,
    ) -> None:
        super().__init__(brokers, clock=clock, seed=seed, broker_config=broker_config,
                         cluster_id=cluster_id, fidelity=fidelity)
        self.followers = Followers(self)
        self.followers.isr_listeners.append(self._on_isr_change)
        self.followers.log_dir_listeners.append(self._on_log_dir_failed)
        self.replication = Replication(self, self.followers)
        self.cleaner = LogCleaner(self)
        self.retention_schedule = retention.RetentionSchedule()
        controller.elect_controller(self)

    def _on_isr_change(self, p: Partition) -> None:
        reassignment.on_isr_change(self, p)

    def _on_log_dir_failed(self, failure: LogDirFailure) -> None:
        controller.log_dir_failed(self, failure.broker, failure.log_dir, failure.reason)

    def tell_log_dir_failures(self) -> None:
        """Tell the controller the log dirs reported failing to the channel (by the data
        directory, emulator.storage) and not yet told: for a writer that is not inside
        an event observer (the data directory's sync), and each tick."""
        if self.log_dir_failure_channel.pending:
            self.followers.tell_log_dir_failures(self.log_dir_failure_channel)

    # ---- controller ----------------------------------------------------------------------
    def elect_controller(self) -> None:
        controller.elect_controller(self)

    # ---- topics --------------------------------------------------------------------------
    def create_topic(
        self,
        name: str,
        num_partitions: int = -1,
        replication_factor: int = -1,
        assignments: dict[int, list[int]] | None = None,
        configs: Mapping[str, str | None] | None = None,
        validate_only: bool = False,
    ) -> Topic | None:
        return topics.create_topic(self, name, num_partitions, replication_factor, assignments,
                                   configs, validate_only)

    def delete_topic(self, name: str) -> Topic:
        return topics.delete_topic(self, name)

    def create_partitions(
        self, name: str, count: int, assignments: list[list[int]] | None, validate_only: bool
    ) -> None:
        topics.create_partitions(self, name, count, assignments, validate_only)

    def create_topic_steps(
        self, name: str, num_partitions: int = -1, replication_factor: int = -1,
        assignments: dict[int, list[int]] | None = None,
        configs: Mapping[str, str | None] | None = None, validate_only: bool = False,
    ) -> Steps[Topic | None]:
        """create_topic as steps the server runs between other requests (steps.py)."""
        return topics.create_topic_steps(self, name, num_partitions, replication_factor,
                                         assignments, configs, validate_only)

    def create_partitions_steps(
        self, name: str, count: int, assignments: list[list[int]] | None, validate_only: bool
    ) -> Steps[None]:
        return topics.create_partitions_steps(self, name, count, assignments, validate_only)

    def delete_topic_steps(self, name: str) -> Steps[Topic]:
        return topics.delete_topic_steps(self, name)

    def auto_create(self, name: str) -> Topic | None:
        return topics.auto_create(self, name)

    # ---- produce -------------------------------------------------------------------------
    def append(self, broker_id: int, topic: str, index: int, records: bytes | None,
               acks: int, checked: Checked | None = None) -> AppendResult:
        return self.replication.append(broker_id, topic, index, records, acks, checked)

    def append_many(self, broker_id: int, topic: str,
                    parts: Iterable[tuple[int, bytes | None, Checked | None]],
                    acks: int) -> list[AppendResult]:
        return self.replication.append_many(broker_id, topic, parts, acks)

    def append_control(self, p: Partition, data: bytes) -> int:
        return self.replication.append_control(p, data)

    def acks_all_done(self, topic: str, index: int, last_offset: int,
                      leader_epoch: int = -1, topic_id: bytes | None = None
                      ) -> tuple[bool, int]:
        return self.replication.acks_all_done(topic, index, last_offset, leader_epoch,
                                              topic_id)

    def deposed_by(self, topic: str, index: int, leader_epoch: int) -> tuple[int, int] | None:
        """(leader, leader epoch) that took over from the leader of ``leader_epoch``
        (``Partition.deposed``): the current-leader hint of an acks=all append refused
        because its broker stopped leading while it waited, named as of that moment."""
        t = self.topics.get(topic)
        if t is None or not 0 <= index < len(t.partitions):
            return None
        return t.partitions[index].deposed(leader_epoch)

    # ---- time ----------------------------------------------------------------------------
    def tick(self, full: bool = True, budget: int | None = None) -> None:
        """Fence due crashed brokers, replicate, let the controller and faults act on
        time, then the domain services (group and transaction coordinators).

        The server's ticks (``full=False``) visit only the partitions with replication
        to do (touched, not finished, or due); a ``full`` one (the default, for tests
        and tools that change partitions by hand, without ``touch``) visits every one.
        The server also gives a ``budget`` of partition visits per tick and ticks again
        soon while ``followers.backlog`` is not zero.
        """
        now = self.now()
        self.tell_log_dir_failures()  # a write that failed since, reported by no append
        expire, visit_all = self.followers.plan_tick(now, full)
        if self.pending_fence:
            controller.fence_due(self, now)
        moved = self.followers.run_tick(now, expire, visit_all, budget)
        other = False
        if self.controller is not None:
            other |= self.controller.tick(now)
        if self.faults is not None:
            other |= bool(self.faults.tick(now))
            self.followers.tell_log_dir_failures(self.faults)  # the checkpoint's, after it
        if other:
            self.changed()
        elif moved:
            self.changed(partitions_only=True, keys=moved)
        for hook in self.tick_hooks:
            hook(now)

    # ---- replication (tests and tools step it by hand) -----------------------------------
    def mark_active(self, p: Partition) -> None:
        self.followers.mark_active(p)

    def follower_can_fetch(self, p: Partition, follower: int) -> bool:
        return self.followers.follower_can_fetch(p, follower)

    def replicate_partition(self, p: Partition, now: int) -> bool:
        return self.followers.replicate_partition(p, now)

    def follower_fetch(self, p: Partition, b: int, fetch_offset: int, now: int) -> bool:
        return self.followers.follower_fetch(p, b, fetch_offset, now)

    def expand_isr(self, p: Partition, b: int) -> None:
        self.followers.expand_isr(p, b)

    def shrink_isr(self, p: Partition, out: list[int]) -> None:
        self.followers.shrink_isr(p, out)

    def advance_hw(self, p: Partition, now: int | None = None) -> bool:
        return advance_hw(self, p, now)

    def maintain_isr(self, p: Partition, now: int, lag_max: int) -> bool:
        return self.followers.maintain_isr(p, now, lag_max)

    # ---- reads, deletion and retention ---------------------------------------------------
    def list_offset(self, broker_id: int, topic: str, index: int, timestamp: int,
                    isolation: int, current_leader_epoch: int = -1,
                    client: bool = True) -> tuple[int, int, int]:
        return reads.list_offset(self, broker_id, topic, index, timestamp, isolation,
                                 current_leader_epoch, client)

    def delete_records(self, topic: str, index: int, offset: int) -> int:
        return retention.delete_records(self, topic, index, offset)

    def apply_retention(self, full: bool = True) -> None:
        """Time and size retention: over every partition (``full``, the default for
        tests and tools), or, as the server's periodic pass, over the partitions whose
        logs moved or whose deadline came (retention.RetentionSchedule)."""
        retention.apply_retention(self, self.retention_schedule, full)

    def run_cleaner(self) -> object:
        """One log-cleaner pass over the most urgent compacted partition (or None)."""
        return self.cleaner.run()


__all__ = [
    "INTERNAL_TOPICS", "LEGAL_TOPIC", "MAX_TOPIC_LENGTH", "AppendResult", "Broker",
    "ClusterState", "Topic", "truncate_follower", "validate_topic_name",
]
