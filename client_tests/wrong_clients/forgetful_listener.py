"""A rebalance listener that forgets the partitions it gave up.

Two instances of a service share a consumer group and commit by hand: each keeps the
next offset to commit per partition it processed, commits them every few records, and
commits them once more when partitions are revoked (as Kafka's documentation asks). But
it never drops the revoked partitions from its map. After a partition moves to the other
instance, this one keeps committing the partition's old offset beside its own: the
group's committed offset for a partition it no longer owns goes back, and whatever reads
the partition next (the new owner after another rebalance, or the service after a
restart) processes those records a second time.

The fix: in ``on_revoke``, after the last commit, forget the revoked partitions (and
commit only what you own).
"""

from __future__ import annotations

import threading
import time

from confluent_kafka import Consumer, KafkaException, TopicPartition

COMMIT_EVERY = 5  # records


class Instance(threading.Thread):
    """One instance of the service: a group member on its own thread."""

    def __init__(self, name: str, bootstrap: str, topic: str, group: str,
                 app: App, *, fixed: bool) -> None:
        super().__init__(name=name, daemon=True)
        self.topic, self.app, self.fixed = topic, app, fixed
        self.offsets: dict[int, int] = {}  # partition -> next offset to commit
        self.error: BaseException | None = None
        self.consumer = Consumer({
            "bootstrap.servers": bootstrap, "group.id": group, "client.id": name,
            "auto.offset.reset": "earliest", "enable.auto.commit": False,
            "session.timeout.ms": 2000, "heartbeat.interval.ms": 200,
            "partition.assignment.strategy": "range",
        })

    def on_assign(self, _c: Consumer, partitions: list[TopicPartition]) -> None:
        self.app.assigned(self.name, {p.partition for p in partitions})

    def on_revoke(self, _c: Consumer, partitions: list[TopicPartition]) -> None:
        self.app.assigned(self.name, set())
        self.commit()  # what we processed of them, before they go
        if self.fixed:
            for p in partitions:  # FIX: they are not ours any more
                self.offsets.pop(p.partition, None)
        # WRONG (fixed=False): the revoked partitions stay in self.offsets

    def commit(self) -> None:
        if not self.offsets:
            return
        offsets = [TopicPartition(self.topic, p, o) for p, o in self.offsets.items()]
        for _ in range(5):  # retriable failures are retried; the others left to the next
            try:
                self.consumer.commit(offsets=offsets, asynchronous=False)
                return
            except KafkaException as e:
                if not e.args[0].retriable():
                    return
                time.sleep(0.05)

    def run(self) -> None:
        try:
            self.consumer.subscribe([self.topic], on_assign=self.on_assign,
                                    on_revoke=self.on_revoke)
            since_commit = 0
            while not self.app.stopping.is_set():
                m = self.consumer.poll(0.05)
                if m is None or m.error():
                    continue
                self.app.process(m.value())
                self.offsets[m.partition()] = m.offset() + 1
                since_commit += 1
                if since_commit >= COMMIT_EVERY:
                    self.commit()
                    since_commit = 0
            self.commit()
        except BaseException as e:  # noqa: BLE001 - re-raised by App.stop()
            self.error = e
        finally:
            self.consumer.close()  # revokes: on_revoke commits once more


class App:
    """The service: two instances and what they processed."""

    def __init__(self, bootstrap: str, topic: str, group: str, *, fixed: bool) -> None:
        self.stopping = threading.Event()
        self.lock = threading.Lock()
        self.processed: list[bytes] = []
        self.assignments: dict[str, set[int]] = {}
        self.instances = [Instance(f"instance-{i}", bootstrap, topic, group, self,
                                   fixed=fixed) for i in (1, 2)]

    def assigned(self, name: str, partitions: set[int]) -> None:
        with self.lock:
            self.assignments[name] = partitions

    def process(self, value: bytes) -> None:
        with self.lock:
            self.processed.append(value)

    def start(self, partitions: int, timeout: float = 30.0) -> None:
        """Start both instances and wait until they share the ``partitions``."""
        for i in self.instances:
            i.start()
        deadline = time.monotonic() + timeout
        while True:
            with self.lock:
                shares = [self.assignments.get(i.name, set()) for i in self.instances]
            if all(shares) and len(set().union(*shares)) == partitions:
                return
            if time.monotonic() > deadline:
                raise TimeoutError(f"the two instances never shared the partitions: {shares}")
            time.sleep(0.05)

    def run_until(self, expected: int, idle_s: float = 15.0, deadline_s: float = 60.0) -> None:
        """Until ``expected`` distinct records are processed, or ``idle_s`` without one."""
        last, since = -1, time.monotonic()
        stop_at = time.monotonic() + deadline_s
        while time.monotonic() < stop_at:
            with self.lock:
                n, distinct = len(self.processed), len(set(self.processed))
            if distinct >= expected:
                break
            if n != last:
                last, since = n, time.monotonic()
            elif time.monotonic() - since > idle_s:
                break
            time.sleep(0.05)

    def stop(self) -> None:
        self.stopping.set()
        for i in self.instances:
            i.join(30)
        for i in self.instances:
            if i.error is not None:
                raise i.error
