"""The reference programs with kafka-python (its idempotent and transactional producer
since 2.1, KIP-447 group metadata, the cooperative-sticky assignor)."""

from __future__ import annotations

import threading
import time

from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.coordinator.assignors.cooperative_sticky import (
    CooperativeStickyAssignor,
)
from kafka.errors import KafkaError
from kafka.structs import OffsetAndMetadata

from client_tests.reference_programs.confluent import BURSTS, _run_all
from client_tests.reference_programs.log import ProgramLog
from emulator.history import Attempt

COMMON = {"reconnect_backoff_ms": 50, "reconnect_backoff_max_ms": 500,
          "retry_backoff_ms": 50}
GROUP = {"session_timeout_ms": 3000, "heartbeat_interval_ms": 300,
         "enable_auto_commit": False, "auto_offset_reset": "earliest",
         "partition_assignment_strategy": (CooperativeStickyAssignor,)}
# Errors after which the producer cannot go on (KafkaProducer's own fatal states).
FATAL = ("ProducerFencedError", "InvalidProducerEpochError", "UnsupportedVersionError",
         "TransactionalIdAuthorizationFailedError", "InvalidTxnStateError")


def producer(bootstrap: str, topic: str, values: list[str], partitions: int) -> ProgramLog:
    log = ProgramLog()
    p = KafkaProducer(bootstrap_servers=bootstrap, acks="all", enable_idempotence=True,
                      linger_ms=5, **COMMON)
    step = max(1, len(values) // BURSTS)
    try:
        for start in range(0, len(values), step):
            for i in range(start, min(start + step, len(values))):
                v = values[i]
                f = p.send(topic, value=v.encode(), partition=i % partitions)
                f.add_callback(lambda md, v=v: log.acked.append((v, md.partition, md.offset)))
                f.add_errback(lambda e, v=v: log.failed.append((v, repr(e))))
            p.flush(60)
    finally:
        p.close(30)
    return log


def consumer(bootstrap: str, topic: str, group: str, expected: int, members: int = 2,
             idle_s: float = 60.0, deadline_s: float = 60.0) -> ProgramLog:
    log = ProgramLog()
    seen: set[str] = set()
    stop = threading.Event()

    def member(name: str) -> None:
        c = KafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=group,
                          client_id=f"{group}-{name}", **GROUP, **COMMON)
        idle_since = time.monotonic()
        try:
            while not stop.is_set() and time.monotonic() - idle_since < idle_s:
                got = c.poll(timeout_ms=100, max_records=20)
                if not got:
                    continue
                idle_since = time.monotonic()
                nxt: dict[int, int] = {}
                for tp, records in got.items():
                    for m in records:
                        v = m.value.decode()
                        log.processed(name, tp.partition, m.offset, v)
                        with log.lock:
                            seen.add(v)
                        nxt[tp.partition] = m.offset + 1
                log.commit(name, nxt)
                try:
                    c.commit({TopicPartition(topic, q): OffsetAndMetadata(o, "", -1)
                              for q, o in nxt.items()})
                except KafkaError as e:
                    log.note(f"{name}: commit failed: {e!r}")
                if len(seen) >= expected:
                    stop.set()
        finally:
            c.close(autocommit=False)

    _run_all([lambda n=f"m{i}": member(n) for i in range(members)], deadline_s, stop)
    return log


def ctp(bootstrap: str, src: str, dst: str, group: str, expected: int,
        out_partitions: int, instances: int = 2, idle_s: float = 90.0,
        deadline_s: float = 90.0) -> ProgramLog:
    log = ProgramLog()
    done: set[str] = set()
    stop = threading.Event()

    def instance(name: str) -> None:
        tid = f"{group}-{name}"
        c = KafkaConsumer(src, bootstrap_servers=bootstrap, group_id=group, client_id=tid,
                          isolation_level="read_committed", **GROUP, **COMMON)

        def new_producer() -> KafkaProducer:
            p = KafkaProducer(bootstrap_servers=bootstrap, transactional_id=tid,
                              linger_ms=5, **COMMON)
            p.init_transactions()
            return p

        p = new_producer()
        n = 0
        idle_since = time.monotonic()
        try:
            while not stop.is_set() and time.monotonic() - idle_since < idle_s:
                got = c.poll(timeout_ms=100, max_records=20)
                batch = [(tp, m) for tp, records in got.items() for m in records]
                if not batch:
                    continue
                idle_since = time.monotonic()
                n += 1
                aid = f"{name}.{n}"
                ids = tuple(m.value.decode() for _tp, m in batch)
                start = log.now()
                nxt: dict[int, int] = {}
                for tp, m in batch:
                    nxt[tp.partition] = m.offset + 1
                outcome, note = "unknown", ""
                try:
                    p.begin_transaction()
                    for (tp, _m), rid in zip(batch, ids, strict=True):
                        p.send(dst, value=f"{rid}|{aid}".encode(),
                               partition=tp.partition % out_partitions)
                    p.send_offsets_to_transaction(
                        {TopicPartition(src, q): OffsetAndMetadata(o, "", -1)
                         for q, o in nxt.items()}, c.group_metadata())
                    p.commit_transaction()
                    outcome = "committed"
                except KafkaError as e:
                    note = repr(e)
                    if type(e).__name__ in FATAL:
                        p = _replace(p, new_producer, log)
                    else:
                        try:
                            p.abort_transaction()
                            outcome = "aborted"
                        except KafkaError as e2:
                            note += f"; abort failed: {e2!r}"
                            p = _replace(p, new_producer, log)
                    _rewind(c, log)
                log.attempt(Attempt(aid, outcome, ids, start, log.now(), note))  # type: ignore[arg-type]
                if outcome == "committed":
                    with log.lock:
                        done.update(ids)
                        if len(done) >= expected:
                            stop.set()
        finally:
            c.close(autocommit=False)
            p.close(10)

    _run_all([lambda n=f"x{i}": instance(n) for i in range(instances)], deadline_s, stop)
    return log


def _replace(p: KafkaProducer, new, log: ProgramLog) -> KafkaProducer:  # type: ignore[no-untyped-def]
    log.note("producer replaced")
    try:
        p.close(1)
    except Exception as e:  # noqa: BLE001 - the old producer is gone either way
        log.note(f"close: {e!r}")
    return new()


def _rewind(c: KafkaConsumer, log: ProgramLog) -> None:
    for tp in c.assignment():
        try:
            at = c.committed(tp)
            if at is None:
                c.seek_to_beginning(tp)
            else:
                c.seek(tp, at)
        except Exception as e:  # noqa: BLE001 - revoked meanwhile: its next owner reads it
            log.note(f"rewind {tp}: {e!r}")
