"""Where a coordinator's key lives: a partition of its internal topic, whose leader is
the coordinator.

Kafka places every group id, transactional id and share-partition key the same way:
``abs(javaHashCode(key)) % partitions`` names a partition of the coordinator's internal
topic (``__consumer_offsets``, ``__transaction_state``, ``__share_group_state``),
created on first use; that partition's leader answers for the key, another broker says
NOT_COORDINATOR, a partition without a live leader COORDINATOR_NOT_AVAILABLE. The
coordinator's state is written as records of that same partition (the coordinator log:
``append``) and read back from it when a data directory is loaded (``records``). When
the partition's leader or leader epoch changes, the new leader loads the keys
(``epoch`` / ``moved``): here the state stays in memory, keyed by the key, not by the
broker, so loading is what the coordinator does to parked requests and sessions.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from emulator.cluster.events import Appended
from emulator.cluster.partition import Partition
from wire.errors import ErrorCode as E
from wire.errors import KafkaError
from wire.records import Record, build_batch, decode_records, read_header

MAX_LONG = (1 << 63) - 1


def java_hash(s: str) -> int:
    """Java's String.hashCode (over UTF-16 code units), as a signed 32-bit int."""
    h = 0
    data = s.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (31 * h + (data[i] << 8 | data[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def partition_for(key: str, partitions: int) -> int:
    """Kafka's Utils.abs(key.hashCode()) % partitions."""
    h = java_hash(key)
    return (0 if h == -(1 << 31) else abs(h)) % partitions


class InternalTopic:
    """One coordinator's internal topic: placement of keys, creation on first use, the
    records the coordinator writes to it and reads back.

    ``partitions``, ``replication`` and ``configs`` are called when the topic is created
    (they read the broker configs of the moment: offsets.topic.num.partitions, ...).
    """

    def __init__(self, state: Any, name: str, partitions: Callable[[], int],
                 replication: Callable[[], int], configs: Callable[[], dict[str, str]]
                 ) -> None:
        self.state = state
        self.name = name
        self._partitions = partitions
        self._replication = replication
        self._configs = configs

    def num_partitions(self) -> int:
        t = self.state.topics.get(self.name)
        return len(t.partitions) if t is not None else self._partitions()

    def partition_for(self, key: str) -> int:
        return partition_for(key, self.num_partitions())

    def exists(self) -> bool:
        return self.name in self.state.topics

    def ensure(self) -> None:
        """Create the topic (COORDINATOR_NOT_AVAILABLE when it cannot be, as Kafka says
        while too few brokers are alive for its replication factor)."""
        if self.name in self.state.topics:
            return
        try:
            self.state.create_topic(self.name, self._partitions(), self._replication(),
                                    configs=self._configs())
        except KafkaError as e:
            raise KafkaError(E.COORDINATOR_NOT_AVAILABLE,
                             f"The coordinator is not available: {e.message}") from e

    def coordinator_for(self, key: str, create: bool = True) -> int:
        """The broker id coordinating ``key``; raises COORDINATOR_NOT_AVAILABLE."""
        if create:
            self.ensure()
        t = self.state.topics.get(self.name)
        if t is None:
            raise KafkaError(E.COORDINATOR_NOT_AVAILABLE)
        leader: int = t.partitions[partition_for(key, len(t.partitions))].leader
        if leader < 0 or not self.state.is_alive(leader):
            raise KafkaError(E.COORDINATOR_NOT_AVAILABLE)
        return leader

    def check(self, broker_id: int, key: str) -> None:
        """Raise NOT_COORDINATOR unless ``broker_id`` coordinates ``key`` (and
        COORDINATOR_NOT_AVAILABLE when nobody does)."""
        if self.name not in self.state.topics:
            raise KafkaError(E.NOT_COORDINATOR)
        if self.coordinator_for(key, create=False) != broker_id:
            raise KafkaError(E.NOT_COORDINATOR)

    def error(self, broker_id: int, key: str) -> int:
        """The error code of ``check`` (0 when this broker coordinates ``key``)."""
        try:
            self.check(broker_id, key)
        except KafkaError as e:
            return e.code
        return E.NONE

    def coordinated_by(self, broker_id: int | None, key: str) -> bool:
        """Does ``broker_id`` coordinate ``key`` (None: any broker does)? What the
        listing APIs ask of each key, where a key without a coordinator is left out."""
        if broker_id is None:
            return True
        try:
            return self.coordinator_for(key, create=False) == broker_id
        except KafkaError:
            return False

    # ---- loading -----------------------------------------------------------------------
    def epoch(self, key: str) -> tuple[int, int] | None:
        """(leader, leader epoch) of ``key``'s partition: a coordinator that saw another
        pair last has moved, and the new one loads the key."""
        t = self.state.topics.get(self.name)
        if t is None:
            return None
        p = t.partitions[partition_for(key, len(t.partitions))]
        return p.leader, p.leader_epoch

    def epochs(self) -> object:
        """Every partition's (leader, leader epoch), and the topic's identity: equal to
        the last value when no coordinator moved (a cheap test before looking per key)."""
        t = self.state.topics.get(self.name)
        return None if t is None else (
            id(t), tuple((p.leader, p.leader_epoch) for p in t.partitions))

    # ---- the coordinator log -------------------------------------------------------------
    def append(self, key: str, records: list[Record]) -> None:
        """Write ``records`` to ``key``'s partition (nothing while the topic or its leader
        is missing: Kafka's coordinator would answer COORDINATOR_NOT_AVAILABLE)."""
        t = self.state.topics.get(self.name)
        if t is None or not records:
            return
        index = partition_for(key, len(t.partitions))
        p: Partition = t.partitions[index]
        if p.leader < 0:
            return
        self.state.append_control(p, build_batch(records, timestamp=self.state.now()))
        self.state.emit(Appended(topic=self.name, partition=index, base=-1, last=-1))

    def records(self) -> list[Record]:
        """Every record of the topic's partitions, oldest first per partition (control
        batches left out): what a coordinator loading the topic reads."""
        t = self.state.topics.get(self.name)
        out: list[Record] = []
        if t is None:
            return out
        for p in t.partitions:
            if p.leader < 0:
                continue
            for data, *_ in p.leader_log.batches_from(-1, MAX_LONG):
                if not read_header(data).is_control:
                    out.extend(decode_records(data))
        return out
