"""The reference programs with aiokafka (asyncio). aiokafka has no cooperative assignor
(its best is the eager protocol with commits after processing) and sends a
transaction's offsets by group id only (no KIP-447 generation), so its pipeline runs one
instance: with two, a deposed instance could still commit offsets for partitions it
lost, which only KIP-447's generation check would refuse."""

from __future__ import annotations

import asyncio
import time

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.errors import KafkaError

from client_tests.reference_programs.confluent import BURSTS
from client_tests.reference_programs.log import ProgramLog
from emulator.history import Attempt

COMMON = {"retry_backoff_ms": 50}
GROUP = {"session_timeout_ms": 3000, "heartbeat_interval_ms": 300,
         "enable_auto_commit": False, "auto_offset_reset": "earliest"}
FATAL = ("ProducerFenced", "InvalidProducerEpoch", "UnsupportedVersionError",
         "TransactionalIdAuthorizationFailed", "InvalidTxnState")


def producer(bootstrap: str, topic: str, values: list[str], partitions: int) -> ProgramLog:
    return asyncio.run(_producer(bootstrap, topic, values, partitions))


async def _producer(bootstrap: str, topic: str, values: list[str],
                    partitions: int) -> ProgramLog:
    log = ProgramLog()
    p = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all", enable_idempotence=True,
                         linger_ms=5, request_timeout_ms=10000, **COMMON)
    await p.start()
    step = max(1, len(values) // BURSTS)
    try:
        for start in range(0, len(values), step):
            futures = []
            for i in range(start, min(start + step, len(values))):
                fut = await p.send(topic, value=values[i].encode(), partition=i % partitions)
                futures.append((values[i], fut))
            for v, fut in futures:
                try:
                    md = await fut
                    log.acked.append((v, md.partition, md.offset))
                except KafkaError as e:
                    log.failed.append((v, repr(e)))
    finally:
        await p.stop()
    return log


def consumer(bootstrap: str, topic: str, group: str, expected: int, members: int = 2,
             idle_s: float = 60.0, deadline_s: float = 60.0) -> ProgramLog:
    return asyncio.run(_consumer(bootstrap, topic, group, expected, members, idle_s,
                                 deadline_s))


async def _consumer(bootstrap: str, topic: str, group: str, expected: int, members: int,
                    idle_s: float, deadline_s: float) -> ProgramLog:
    log = ProgramLog()
    seen: set[str] = set()
    stop = asyncio.Event()
    stop_at = time.monotonic() + deadline_s

    async def member(name: str) -> None:
        c = AIOKafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=group,
                             client_id=f"{group}-{name}", **GROUP, **COMMON)
        await c.start()
        idle_since = time.monotonic()
        try:
            while (not stop.is_set() and time.monotonic() - idle_since < idle_s
                   and time.monotonic() < stop_at):
                got = await c.getmany(timeout_ms=100, max_records=20)
                if not got:
                    continue
                idle_since = time.monotonic()
                nxt: dict[int, int] = {}
                for tp, records in got.items():
                    for m in records:
                        v = m.value.decode()
                        log.processed(name, tp.partition, m.offset, v)
                        seen.add(v)
                        nxt[tp.partition] = m.offset + 1
                log.commit(name, nxt)
                try:
                    await c.commit({TopicPartition(topic, q): o for q, o in nxt.items()})
                except KafkaError as e:
                    log.note(f"{name}: commit failed: {e!r}")
                if len(seen) >= expected:
                    stop.set()
        finally:
            await c.stop()

    await asyncio.wait_for(asyncio.gather(*(member(f"m{i}") for i in range(members))),
                           deadline_s + 30)
    return log


def ctp(bootstrap: str, src: str, dst: str, group: str, expected: int,
        out_partitions: int, instances: int = 1, idle_s: float = 90.0,
        deadline_s: float = 90.0) -> ProgramLog:
    return asyncio.run(_ctp(bootstrap, src, dst, group, expected, out_partitions,
                            instances, idle_s, deadline_s))


async def _ctp(bootstrap: str, src: str, dst: str, group: str, expected: int,
               out_partitions: int, instances: int, idle_s: float,
               deadline_s: float) -> ProgramLog:
    log = ProgramLog()
    done: set[str] = set()
    stop = asyncio.Event()
    stop_at = time.monotonic() + deadline_s

    async def new_producer(tid: str) -> AIOKafkaProducer:
        p = AIOKafkaProducer(bootstrap_servers=bootstrap, transactional_id=tid,
                             linger_ms=5, **COMMON)
        await p.start()
        return p

    async def instance(name: str) -> None:
        tid = f"{group}-{name}"
        c = AIOKafkaConsumer(src, bootstrap_servers=bootstrap, group_id=group,
                             client_id=tid, isolation_level="read_committed",
                             **GROUP, **COMMON)
        await c.start()
        p = await new_producer(tid)
        n = 0
        idle_since = time.monotonic()
        try:
            while (not stop.is_set() and time.monotonic() - idle_since < idle_s
                   and time.monotonic() < stop_at):
                got = await c.getmany(timeout_ms=100, max_records=20)
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
                    await p.begin_transaction()
                    for (tp, _m), rid in zip(batch, ids, strict=True):
                        await p.send(dst, value=f"{rid}|{aid}".encode(),
                                     partition=tp.partition % out_partitions)
                    await p.send_offsets_to_transaction(
                        {TopicPartition(src, q): o for q, o in nxt.items()}, group)
                    await p.commit_transaction()
                    outcome = "committed"
                except KafkaError as e:
                    note = repr(e)
                    if type(e).__name__ in FATAL:
                        p = await _replace(p, lambda: new_producer(tid), log)
                    else:
                        try:
                            await p.abort_transaction()
                            outcome = "aborted"
                        except KafkaError as e2:
                            note += f"; abort failed: {e2!r}"
                            p = await _replace(p, lambda: new_producer(tid), log)
                    await _rewind(c, log)
                log.attempt(Attempt(aid, outcome, ids, start, log.now(), note))  # type: ignore[arg-type]
                if outcome == "committed":
                    done.update(ids)
                    if len(done) >= expected:
                        stop.set()
        finally:
            await c.stop()
            await p.stop()

    await asyncio.gather(*(instance(f"x{i}") for i in range(instances)))
    return log


async def _replace(p: AIOKafkaProducer, new, log: ProgramLog) -> AIOKafkaProducer:  # type: ignore[no-untyped-def]
    log.note("producer replaced")
    try:
        await p.stop()
    except Exception as e:  # noqa: BLE001 - the old producer is gone either way
        log.note(f"stop: {e!r}")
    return await new()


async def _rewind(c: AIOKafkaConsumer, log: ProgramLog) -> None:
    for tp in c.assignment():
        try:
            at = await c.committed(tp)
            if at is None:
                await c.seek_to_beginning(tp)
            else:
                c.seek(tp, at)
        except Exception as e:  # noqa: BLE001 - revoked meanwhile: its next owner reads it
            log.note(f"rewind {tp}: {e!r}")
