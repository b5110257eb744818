"""The reference programs with confluent-kafka (librdkafka)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from confluent_kafka import (
    OFFSET_BEGINNING,
    Consumer,
    KafkaError,
    KafkaException,
    Message,
    Producer,
    TopicPartition,
)

from client_tests.librdkafka_hang import StallWatch
from client_tests.reference_programs.log import ProgramLog
from emulator.history import Attempt

BURSTS = 10
# OffsetFetch errors librdkafka reports as not retriable that a coordinator moving or
# loading answers: asked again
RETRY_COMMITTED = (KafkaError.NOT_COORDINATOR, KafkaError.COORDINATOR_LOAD_IN_PROGRESS,
                   KafkaError.COORDINATOR_NOT_AVAILABLE, KafkaError._TIMED_OUT)
COMMON = {"reconnect.backoff.ms": 50, "reconnect.backoff.max.ms": 500,
          "retry.backoff.ms": 50, "retry.backoff.max.ms": 500}
GROUP = {"session.timeout.ms": 3000, "heartbeat.interval.ms": 300,
         "partition.assignment.strategy": "cooperative-sticky",
         "enable.auto.commit": False, "auto.offset.reset": "earliest"}


def producer(bootstrap: str, topic: str, values: list[str], partitions: int) -> ProgramLog:
    """Idempotent acks=all: ``values[i]`` to partition ``i % partitions``, in bursts."""
    log = ProgramLog()
    p = Producer({"bootstrap.servers": bootstrap, "acks": "all",
                  "enable.idempotence": True, "linger.ms": 5, **COMMON})

    def delivered(err: KafkaError | None, msg: Message) -> None:
        v = msg.value().decode()
        if err is None:
            log.acked.append((v, msg.partition(), msg.offset()))
        else:
            log.failed.append((v, str(err)))

    step = max(1, len(values) // BURSTS)
    for start in range(0, len(values), step):
        for i in range(start, min(start + step, len(values))):
            p.produce(topic, value=values[i].encode(), partition=i % partitions,
                      on_delivery=delivered)
            p.poll(0)
        p.flush(60)
    if p.flush(60):
        log.note("still undelivered after 60 s")
    return log


def consumer(bootstrap: str, topic: str, group: str, expected: int, members: int = 2,
             idle_s: float = 60.0, deadline_s: float = 60.0) -> ProgramLog:
    """``members`` cooperative group members; each processes a polled batch, then
    commits the offsets after it (synchronously)."""
    log = ProgramLog()
    seen: set[str] = set()
    stop = threading.Event()

    def member(name: str) -> None:
        c = Consumer({"bootstrap.servers": bootstrap, "group.id": group,
                      "client.id": f"{group}-{name}", **GROUP, **COMMON})
        # librdkafka's OffsetFetch hang (client_tests/librdkafka_hang.py)
        watch = StallWatch(topic, cooperative=True, note=log.note, name=name)
        watch.subscribe(c)
        idle_since = time.monotonic()
        try:
            while not stop.is_set() and time.monotonic() - idle_since < idle_s:
                batch = [m for m in c.consume(20, timeout=0.1) if not m.error()]
                if not batch:
                    watch.check(c)
                    continue
                idle_since = time.monotonic()
                nxt: dict[int, int] = {}
                for m in batch:
                    watch.consumed(m.partition())
                    v = m.value().decode()
                    log.processed(name, m.partition(), m.offset(), v)
                    with log.lock:
                        seen.add(v)
                    nxt[m.partition()] = m.offset() + 1
                log.commit(name, nxt)
                try:
                    c.commit(offsets=[TopicPartition(topic, p, o) for p, o in nxt.items()],
                             asynchronous=False)
                except KafkaException as e:
                    log.note(f"{name}: commit failed: {e}")
                if len(seen) >= expected:
                    stop.set()
        finally:
            c.close()

    _run_all([lambda n=f"m{i}": member(n) for i in range(members)], deadline_s, stop)
    return log


def ctp(bootstrap: str, src: str, dst: str, group: str, expected: int,
        out_partitions: int, instances: int = 2, idle_s: float = 90.0,
        deadline_s: float = 90.0) -> ProgramLog:
    """``instances`` exactly-once consume-transform-produce instances: read_committed,
    one transaction per polled batch with its offsets (KIP-447 group metadata), abort
    and rewind on an abortable error, a new producer (fencing the old) on a fatal one."""
    log = ProgramLog()
    done: set[str] = set()
    stop = threading.Event()

    def instance(name: str) -> None:
        tid = f"{group}-{name}"
        c = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "client.id": tid,
                      "isolation.level": "read_committed", **GROUP, **COMMON})

        def new_producer() -> Producer:
            p = Producer({"bootstrap.servers": bootstrap, "transactional.id": tid,
                          "linger.ms": 5, **COMMON})
            p.init_transactions(60)
            return p

        p = new_producer()
        # librdkafka's OffsetFetch hang (client_tests/librdkafka_hang.py)
        watch = StallWatch(src, cooperative=True, note=log.note, name=name)
        watch.subscribe(c)
        n = 0
        idle_since = time.monotonic()
        try:
            while not stop.is_set() and time.monotonic() - idle_since < idle_s:
                batch = [m for m in c.consume(20, timeout=0.1) if not m.error()]
                if not batch:
                    watch.check(c)
                    continue
                idle_since = time.monotonic()
                for m in batch:
                    watch.consumed(m.partition())
                n += 1
                aid = f"{name}.{n}"
                ids = tuple(m.value().decode() for m in batch)
                start = log.now()
                nxt: dict[int, int] = {}
                for m in batch:
                    nxt[m.partition()] = m.offset() + 1
                outcome, note = "unknown", ""
                try:
                    p.begin_transaction()
                    for m, rid in zip(batch, ids, strict=True):
                        p.produce(dst, value=f"{rid}|{aid}".encode(),
                                  partition=m.partition() % out_partitions)
                    p.send_offsets_to_transaction(
                        [TopicPartition(src, q, o) for q, o in nxt.items()],
                        c.consumer_group_metadata(), 30)
                    _commit(p)
                    outcome = "committed"
                except KafkaException as e:
                    err = e.args[0]
                    note = str(err)
                    if err.txn_requires_abort():
                        try:
                            p.abort_transaction(30)
                            outcome = "aborted"
                            # librdkafka 2.16 reuses the aborted batches' sequence
                            # numbers at the same epoch (SEQUENCE_REUSE below): a new
                            # producer's InitProducerId bumps the epoch instead
                            p = _replace(p, new_producer, log)
                        except KafkaException as e2:
                            note += f"; abort failed: {e2}"
                            p = _replace(p, new_producer, log)
                    else:  # fatal, or a commit whose outcome is unknown
                        p = _replace(p, new_producer, log)
                    _rewind(c, log)
                log.attempt(Attempt(aid, outcome, ids, start, log.now(), note))  # type: ignore[arg-type]
                if outcome == "committed":
                    with log.lock:
                        done.update(ids)
                        if len(done) >= expected:
                            stop.set()
        finally:
            c.close()
            p.flush(10)

    _run_all([lambda n=f"x{i}": instance(n) for i in range(instances)], deadline_s, stop)
    return log


# SEQUENCE_REUSE: why the pipeline replaces its producer after every abort. A batch the
# leader appended and replicated can still be answered NOT_LEADER_OR_FOLLOWER (the
# leader moved while the acks=all produce waited in its purgatory: Kafka's
# DelayedProduce answers so, the adversary's leader_move_after_append). librdkafka 2.16
# takes that answer as "not persisted"; when the transaction then aborts (a rebalance
# fences its TxnOffsetCommit: ILLEGAL_GENERATION), it rewinds the partition's sequence
# to the aborted batch's first sequence ("advancing epoch base msgid ... due to N
# message(s) in aborted transaction") without bumping the epoch. The next transaction's
# batch of the same size then carries the same sequence range at the same epoch, which
# a Kafka broker takes for a duplicate of the aborted batch: answered with its offset,
# not appended. commit_transaction succeeds and the committed transaction's records
# are not in the log (seen under seeds 7, 28 and 83: "1 committed missing", 20 lost;
# librdkafka's debug=eos,msg log shows the reused BaseSeq). The Java client bumps the
# epoch on such an abort; with librdkafka the application does, by replacing the
# producer (InitProducerId with the same transactional.id: a new epoch, sequences from 0).


def _commit(p: Producer, attempts: int = 10) -> None:
    """commit_transaction, retried while retriable (a retried commit completes the same
    transaction)."""
    for attempt in range(attempts):
        try:
            p.commit_transaction(30)
            return
        except KafkaException as e:
            if not e.args[0].retriable() or attempt == attempts - 1:
                raise
            time.sleep(0.05)


def _replace(p: Producer, new: Callable[[], Producer], log: ProgramLog) -> Producer:
    """A producer whose state is lost: a new one's init_transactions fences it and ends
    its open transaction (committing it if its commit had reached the coordinator)."""
    log.note("producer replaced")
    p.flush(1)
    return new()


def _rewind(c: Consumer, log: ProgramLog) -> None:
    """Back to the committed offsets of the assignment."""
    assignment = c.assignment()
    if not assignment:
        return
    deadline = time.monotonic() + 30
    while True:  # asked again while the coordinator moves or loads
        try:
            committed = c.committed(assignment, timeout=10)
            break
        except KafkaException as e:
            if not e.args[0].retriable() and e.args[0].code() not in RETRY_COMMITTED \
                    or time.monotonic() > deadline:
                raise RuntimeError(f"rewind: the committed offsets are unknown: {e}") from e
            log.note(f"rewind: {e}")
            time.sleep(0.1)
    for tp in committed:
        try:
            c.seek(TopicPartition(tp.topic, tp.partition,
                                  tp.offset if tp.offset >= 0 else OFFSET_BEGINNING))
        except KafkaException as e:  # not fetched yet: it starts from the committed offset
            log.note(f"rewind {tp.partition}: {e}")


def _run_all(fns: list[Callable[[], None]], deadline_s: float,
             stop: threading.Event) -> None:
    errors: list[BaseException] = []

    def wrap(fn: Callable[[], None]) -> None:
        try:
            fn()
        except BaseException as e:  # noqa: BLE001 - reported by the caller
            errors.append(e)
            stop.set()

    threads = [threading.Thread(target=wrap, args=(fn,), daemon=True) for fn in fns]
    for t in threads:
        t.start()
    end = time.monotonic() + deadline_s
    for t in threads:
        t.join(max(0.0, end - time.monotonic()))
    stop.set()
    for t in threads:
        t.join(30)
    if errors:
        raise errors[0]
