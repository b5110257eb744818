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

Loading takes time on Kafka: a broker that became the partition's leader (a move, a
failover, a restart) reads the partition back before it serves it, and meanwhile
answers COORDINATOR_LOAD_IN_PROGRESS; before that, until the controller's change reaches
it, it still answers NOT_COORDINATOR. ``--fidelity fast`` (the default) serves at once;
under Kafka's timing (``state.fidelity.kafka_timing``) the new leader answers
NOT_COORDINATOR for ``learn_ms`` after the election, then COORDINATOR_LOAD_IN_PROGRESS
for ``load_ms`` (``loading``), within
the envelope measured on Kafka 4.4 (conformance/coordinator_timing.py;
emulator/fidelity/differences.py DIFFERENCES ``coordinator-loading``). The window is a
time compared with ``state.clock`` when a request comes: nothing waits, nothing needs
waking when it ends.
"""

from __future__ import annotations

from collections.abc import Callable

from emulator.cluster.events import Appended, DomainEvent, LeaderChanged, observes
from emulator.cluster.partition import Partition
from emulator.coordinators.runtime.host import ClusterHost
from wire.errors import ErrorCode as E
from wire.errors import KafkaError
from wire.records import Record, build_batch, decode_records, read_header

MAX_LONG = (1 << 63) - 1
# --fidelity kafka: after a broker became a coordinator partition's leader, how long it
# answers NOT_COORDINATOR (it has not learnt of the election yet) and then
# COORDINATOR_LOAD_IN_PROGRESS (it loads the partition). Kafka 4.4, three brokers, small
# partitions, 40 moves (conformance/coordinator_timing.py; the envelope is in
# emulator/fidelity/differences.py DIFFERENCES "coordinator-loading"): NOT_COORDINATOR
# until a median of 56 ms (transactions) and 85 ms (groups) after ElectLeaders answered,
# loading 5 and 30 ms (medians, up to 78 and 242 ms) in the 70-85 % of moves where it was
# seen at all.
LEARN_MS = 60
LOAD_MS = 20
# The first election, when FindCoordinator creates the topic (5 fresh clusters): for
# 45-1124 ms (median 198 groups, 85 transactions) FindCoordinator answers
# COORDINATOR_NOT_AVAILABLE while the topic is created; the coordinator it then names
# answers NOT_COORDINATOR until 58-1512 ms later (median 477 groups, 148 transactions),
# then COORDINATOR_LOAD_IN_PROGRESS for 25-550 ms (median 119 groups, 249 transactions).
CREATE_MS = 150
FIRST_LEARN_MS = 300
FIRST_LOAD_MS = 200


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

    def __init__(self, state: ClusterHost, name: str, partitions: Callable[[], int],
                 replication: Callable[[], int], configs: Callable[[], dict[str, str]]
                 ) -> None:
        self.state = state
        self.name = name
        self._partitions = partitions
        self._replication = replication
        self._configs = configs
        # Under Kafka's timing: how long a new leader loads (ms). An attribute, so that
        # adversarial mode or a test can make loads longer (0: never loading).
        self.learn_ms = LEARN_MS
        self.load_ms = LOAD_MS
        self.create_ms = CREATE_MS
        self.first_learn_ms = FIRST_LEARN_MS
        self.first_load_ms = FIRST_LOAD_MS
        # Kafka's timing: FindCoordinator answers COORDINATOR_NOT_AVAILABLE until then
        # (the topic it created is not yet known to the brokers).
        self.available_at = 0
        # partition -> (the new leader, NOT_COORDINATOR until, loading until): elections
        # seen under Kafka's timing whose load has not been found finished yet.
        self._loading: dict[int, tuple[int, int, int]] = {}
        state.hooks.append(self._on_event)

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
        self._first_election()

    def _first_election(self) -> None:
        """Under Kafka's timing, the topic just created is not usable at once:
        FindCoordinator answers COORDINATOR_NOT_AVAILABLE for ``create_ms``, then each
        partition's first leader answers NOT_COORDINATOR for ``first_learn_ms`` and
        COORDINATOR_LOAD_IN_PROGRESS for ``first_load_ms``, as Kafka's do."""
        t = self.state.topics.get(self.name)
        if not self.state.fidelity.kafka_timing or t is None:
            return
        self.available_at = self.state.now() + max(0, self.create_ms)
        learned = self.available_at + max(0, self.first_learn_ms)
        for p in t.partitions:
            if p.leader >= 0:
                self._loading[p.index] = (p.leader, learned,
                                          learned + max(0, self.first_load_ms))

    def coordinator_for(self, key: str, create: bool = True) -> int:
        """The broker id coordinating ``key``; raises COORDINATOR_NOT_AVAILABLE (also,
        under Kafka's timing, for ``create_ms`` after FindCoordinator created the
        topic: ``create``)."""
        if create:
            self.ensure()
            if self.available_at and self.state.now() < self.available_at:
                raise KafkaError(E.COORDINATOR_NOT_AVAILABLE,
                                 f"The coordinator is not available: {self.name} is being "
                                 "created")
        t = self.state.topics.get(self.name)
        if t is None:
            raise KafkaError(E.COORDINATOR_NOT_AVAILABLE)
        leader: int = t.partitions[partition_for(key, len(t.partitions))].leader
        if leader < 0 or not self.state.is_alive(leader):
            raise KafkaError(E.COORDINATOR_NOT_AVAILABLE)
        return leader

    def check(self, broker_id: int, key: str) -> None:
        """Raise NOT_COORDINATOR unless ``broker_id`` coordinates ``key`` (and
        COORDINATOR_NOT_AVAILABLE when nobody does, COORDINATOR_LOAD_IN_PROGRESS while
        it is still loading the key's partition)."""
        if self.name not in self.state.topics:
            raise KafkaError(E.NOT_COORDINATOR)
        if self.coordinator_for(key, create=False) != broker_id:
            raise KafkaError(E.NOT_COORDINATOR)
        if self._loading:
            code = self.loading_error(self.partition_for(key), broker_id)
            if code == E.NOT_COORDINATOR:
                raise KafkaError(E.NOT_COORDINATOR)
            if code:
                raise KafkaError(code, "The coordinator is loading partition "
                                 f"{self.partition_for(key)} of {self.name}")

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
    @observes(LeaderChanged)
    def _on_event(self, kind: str, event: DomainEvent) -> None:
        """A new leader of one of this topic's partitions starts loading it."""
        if isinstance(event, LeaderChanged) and event.topic == self.name:
            self.start_loading(event.partition, event.new)

    def start_loading(self, partition: int, leader: int) -> None:
        """``leader`` became ``partition``'s leader: under Kafka's timing it answers
        NOT_COORDINATOR for ``learn_ms``, then COORDINATOR_LOAD_IN_PROGRESS for
        ``load_ms``; under ``fast`` it serves at once."""
        if leader < 0 or not self.state.fidelity.kafka_timing \
                or self.learn_ms + self.load_ms <= 0:
            self._loading.pop(partition, None)
            return
        learned = self.state.now() + max(0, self.learn_ms)
        self._loading[partition] = (leader, learned, learned + max(0, self.load_ms))

    def loading_error(self, partition: int, broker_id: int) -> int:
        """What ``broker_id``, the leader of ``partition``, answers while the election
        is new to it: NOT_COORDINATOR (it has not learnt of it yet),
        COORDINATOR_LOAD_IN_PROGRESS (loading), 0 (serving). A finished load is
        forgotten here."""
        entry = self._loading.get(partition)
        if entry is None or entry[0] != broker_id:
            return E.NONE
        now = self.state.now()
        if now >= entry[2]:
            del self._loading[partition]
            return E.NONE
        return E.NOT_COORDINATOR if now < entry[1] else E.COORDINATOR_LOAD_IN_PROGRESS

    def loading_here(self, broker_id: int) -> bool:
        """Is ``broker_id`` loading any partition of the topic (it knows it leads one and
        has not finished reading it)? Kafka's coordinators then answer the listing APIs
        (ListGroups, ListTransactions) COORDINATOR_LOAD_IN_PROGRESS as a whole."""
        now = self.state.now()
        return any(leader == broker_id and learned <= now < until
                   for leader, learned, until in self._loading.values())

    def loading(self, partition: int, broker_id: int) -> bool:
        """Is ``broker_id`` not yet serving ``partition`` after becoming its leader?"""
        return self.loading_error(partition, broker_id) != E.NONE

    def loading_until(self, partition: int) -> int | None:
        """When the current load of ``partition`` ends (None: not loading)."""
        entry = self._loading.get(partition)
        return None if entry is None or self.state.now() >= entry[2] else entry[2]

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
