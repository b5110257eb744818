"""The share coordinator of KIP-932 (Kafka's ShareCoordinatorService): the durable
state of each share-partition (start offset, state epoch, state batches), answered by
the leader of its ``__share_group_state`` partition (Initialize/Read/Write/Delete/
ReadSummary ShareGroupState, API keys 83-87).

Where a key "group:topicId:partition" lives is the runtime's placement
(emulator/coordinators/runtime/placement.py); the records are written by
``share.state_log``. The state itself is the ``SharePartition`` the share coordinator
service (``share.coordinator``) keeps, so this part reads and writes through it.
"""

from __future__ import annotations

import base64
from typing import Protocol

from emulator.cluster.configs import segment_size_configs
from emulator.coordinators.runtime.host import ClusterHost
from emulator.coordinators.runtime.placement import InternalTopic
from emulator.coordinators.share.messages import StateBatch, StateSummary
from emulator.coordinators.share.partition import SharePartition
from wire.errors import ErrorCode as E
from wire.errors import KafkaError

SHARE_STATE_TOPIC = "__share_group_state"
# Kafka's messages for the share coordinator's fencing errors.
FENCED_STATE_MESSAGE = "The coordinator rejected the request because the state epoch did not match."
FENCED_LEADER_MESSAGE = "The leader epoch in the request is older than the epoch on the broker."


def kafka_uuid(raw: bytes) -> str:
    """Kafka's Uuid.toString."""
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


class ShareStateHost(Protocol):
    """What the share-group state RPCs ask of the share coordinator that composes them
    (emulator.coordinators.share.coordinator, which imports this module): its cluster
    and configs, and its share-partitions, which are the state. Typed here so that each
    call back up is one mypy checks and a reader sees listed."""

    @property
    def state(self) -> ClusterHost: ...

    @property
    def partitions(self) -> dict[tuple[str, bytes, int], SharePartition]: ...

    def cfg(self, key: str, default: int | None = None) -> int: ...

    def share_partition(self, group_id: str, topic_id: bytes, index: int) -> SharePartition: ...

    def persist(self, sp: SharePartition) -> None: ...

    def forget(self, key: tuple[str, bytes, int]) -> None: ...

    def mark_changed(self) -> None: ...


class ShareStateCoordinator:
    """The share-group state RPCs; a part of ``SharePartitionManager`` (``sc``), whose
    share-partitions are the state."""

    def __init__(self, sc: ShareStateHost) -> None:
        self.sc = sc
        self.state = sc.state
        self.topic = InternalTopic(
            sc.state, SHARE_STATE_TOPIC,
            lambda: self.sc.cfg("share.coordinator.state.topic.num.partitions"),
            self._state_topic_rf, self._state_topic_configs)

    def _state_topic_configs(self) -> dict[str, str]:
        # ShareCoordinatorService.shareGroupStateTopicConfigs (4.4): records are pruned by
        # the coordinator, not by time
        return {"cleanup.policy": "delete", "compression.type": "producer",
                **segment_size_configs(
                    self.sc.cfg("share.coordinator.state.topic.segment.bytes", 104857600)),
                "min.insync.replicas": str(self.sc.cfg("share.coordinator.state.topic.min.isr", 2)),
                "retention.ms": "-1"}

    def _state_topic_rf(self) -> int:
        rf: int = min(self.sc.cfg("share.coordinator.state.topic.replication.factor"),
                      max(1, len(self.state.alive_brokers())))
        return rf

    def ensure_state_topic(self) -> None:
        self.topic.ensure()

    def coordinator_for(self, key: str, create: bool = True) -> int:
        """The share coordinator for a "group:topicId:partition" key (FindCoordinator 2)."""
        parts = key.rsplit(":", 2)
        if len(parts) != 3 or not parts[0] or not parts[2].lstrip("-").isdigit():
            raise KafkaError(E.INVALID_REQUEST, f"Invalid share coordinator key {key}")
        return self.topic.coordinator_for(key, create)

    def check_state_coordinator(self, broker_id: int, group_id: str, topic_id: bytes,
                                index: int) -> None:
        """NOT_COORDINATOR unless ``broker_id`` coordinates the share-partition key,
        COORDINATOR_LOAD_IN_PROGRESS while it loads the key's partition (Kafka timing)."""
        self.topic.check(broker_id, f"{group_id}:{kafka_uuid(topic_id)}:{index}")

    def _stored(self, group_id: str, topic_id: bytes, index: int, op: str) -> SharePartition:
        sp: SharePartition | None = self.sc.partitions.get((group_id, topic_id, index))
        if sp is None or not sp.initialized:
            raise KafkaError(E.INVALID_REQUEST,
                             f"{op} operation on uninitialized share partition not allowed.")
        return sp

    def initialize_state(self, group_id: str, topic_id: bytes, index: int, state_epoch: int,
                         start_offset: int) -> None:
        """InitializeShareGroupState: a new snapshot at ``start_offset`` unless the stored
        state epoch is newer (an equal one initializes again, as in Kafka 4.4)."""
        sp = self.sc.partitions.get((group_id, topic_id, index))
        if sp is not None and sp.initialized and state_epoch < sp.state_epoch:
            raise KafkaError(E.FENCED_STATE_EPOCH, FENCED_STATE_MESSAGE)
        sp = self.sc.share_partition(group_id, topic_id, index)
        sp.initialize(start_offset, state_epoch)
        self.sc.persist(sp)
        self.sc.mark_changed()

    def read_state(self, group_id: str, topic_id: bytes, index: int, leader_epoch: int
                   ) -> SharePartition:
        sp = self._stored(group_id, topic_id, index, "Read")
        if leader_epoch < sp.leader_epoch:
            raise KafkaError(E.FENCED_LEADER_EPOCH, FENCED_LEADER_MESSAGE)
        sp.leader_epoch = leader_epoch
        return sp

    def state_summary(self, group_id: str, topic_id: bytes, index: int) -> StateSummary:
        """ReadShareGroupStateSummary: no leader-epoch check, and a share-partition without
        state is no error but Kafka's 'uninitialized' answer."""
        sp = self.sc.partitions.get((group_id, topic_id, index))
        if sp is None or not sp.initialized:
            return {"state_epoch": 0, "leader_epoch": 0, "start_offset": -1,
                    "delivery_complete_count": -1}
        return {"state_epoch": sp.state_epoch, "leader_epoch": sp.leader_epoch,
                "start_offset": sp.reported_start,
                "delivery_complete_count": sp.reported_complete_count()}

    def write_state(self, group_id: str, topic_id: bytes, index: int, state_epoch: int,
                    leader_epoch: int, start_offset: int, batches: list[StateBatch]) -> None:
        """WriteShareGroupState: the batches merge over the stored ones; Kafka 4.4 keeps
        the stored state epoch (only InitializeShareGroupState sets it) and the start
        offset as written (acknowledged records at the start stay listed)."""
        sp = self._stored(group_id, topic_id, index, "Write")
        if state_epoch < sp.state_epoch:
            raise KafkaError(E.FENCED_STATE_EPOCH, FENCED_STATE_MESSAGE)
        if leader_epoch < sp.leader_epoch:
            raise KafkaError(E.FENCED_LEADER_EPOCH, FENCED_LEADER_MESSAGE)
        sp.leader_epoch = max(sp.leader_epoch, leader_epoch)
        sp.write_state(start_offset, batches, advance=False)
        self.sc.persist(sp)
        self.sc.mark_changed()

    def delete_state(self, group_id: str, topic_id: bytes, index: int) -> None:
        self.sc.forget((group_id, topic_id, index))
        self.sc.mark_changed()
