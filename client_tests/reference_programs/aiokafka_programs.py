"""The reference programs with aiokafka (asyncio). aiokafka has no cooperative assignor
(its best is the eager protocol with commits after processing) and no KIP-447 (a
transaction's offsets go by group id only, OffsetFetch has no require_stable), so its
pipeline runs one instance on partitions it assigns itself: see ``_ctp``."""

from __future__ import annotations

import asyncio
import time

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.errors import KafkaError

from client_tests.reference_programs.confluent import BURSTS
from client_tests.reference_programs.log import ProgramLog
from emulator.history import Attempt

COMMON = {"retry_backoff_ms": 50}
# metadata_max_age_ms: aiokafka 0.14's offset reset retries a ListOffsets that met a moved
# leader at the old one until its next periodic metadata refresh (5 minutes by default;
# client_tests/test_aiokafka_reset_stall.py): a correct program sets it short
GROUP = {"session_timeout_ms": 3000, "heartbeat_interval_ms": 300,
         "enable_auto_commit": False, "auto_offset_reset": "earliest",
         "metadata_max_age_ms": 1000}
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
    """aiokafka's exactly-once pipeline as it can be written correctly: aiokafka's
    OffsetFetch (v3 at most) has no require_stable (KIP-447), so a member that reads
    its group's committed offsets while a committed transaction's markers are still
    being written gets the offsets before it, and processes that transaction's inputs
    again (the adversary's slow markers and rebalances showed it: outputs twice). So
    one instance, the input partitions assigned by hand (no rebalances), the committed
    offsets read once at start, and an aborted batch rewound to where it began, which
    the program knows, instead of to the committed offsets."""
    log = ProgramLog()
    stop_at = time.monotonic() + deadline_s
    assert instances == 1, "aiokafka's pipeline runs one instance (see the docstring)"
    tid = f"{group}-x0"

    async def new_producer() -> AIOKafkaProducer:
        p = AIOKafkaProducer(bootstrap_servers=bootstrap, transactional_id=tid,
                             linger_ms=5, **COMMON)
        await p.start()
        return p

    c = AIOKafkaConsumer(bootstrap_servers=bootstrap, group_id=group, client_id=tid,
                         isolation_level="read_committed", enable_auto_commit=False,
                         metadata_max_age_ms=GROUP["metadata_max_age_ms"], **COMMON)
    await c.start()
    p = await new_producer()
    done: set[str] = set()
    try:
        # the input's partitions: as many as the output's here (the application's
        # configuration; aiokafka's consumer learns partitions only of subscriptions)
        tps = [TopicPartition(src, q) for q in range(out_partitions)]
        c.assign(tps)
        for tp in tps:  # where the last committed transaction left off (0: none yet)
            at = await c.committed(tp)
            c.seek(tp, at or 0)
        n = 0
        idle_since = time.monotonic()
        while (len(done) < expected and time.monotonic() - idle_since < idle_s
               and time.monotonic() < stop_at):
            got = await c.getmany(timeout_ms=100, max_records=20)
            batch = [(tp, m) for tp, records in got.items() for m in records]
            if not batch:
                continue
            idle_since = time.monotonic()
            n += 1
            aid = f"x0.{n}"
            ids = tuple(m.value.decode() for _tp, m in batch)
            start = log.now()
            first: dict[TopicPartition, int] = {}
            nxt: dict[TopicPartition, int] = {}
            for tp, m in batch:
                first.setdefault(tp, m.offset)
                nxt[tp] = m.offset + 1
            outcome, note = "unknown", ""
            try:
                await p.begin_transaction()
                for (tp, _m), rid in zip(batch, ids, strict=True):
                    await p.send(dst, value=f"{rid}|{aid}".encode(),
                                 partition=tp.partition % out_partitions)
                await p.send_offsets_to_transaction(nxt, group)
                await p.commit_transaction()
                outcome = "committed"
            except KafkaError as e:
                note = repr(e)
                if type(e).__name__ in FATAL:
                    p = await _replace(p, new_producer, log)
                else:
                    try:
                        await p.abort_transaction()
                        outcome = "aborted"
                    except KafkaError as e2:
                        note += f"; abort failed: {e2!r}"
                        p = await _replace(p, new_producer, log)
                for tp, o in first.items():  # the batch again, from where it began
                    c.seek(tp, o)
            log.attempt(Attempt(aid, outcome, ids, start, log.now(), note))  # type: ignore[arg-type]
            if outcome == "committed":
                done.update(ids)
    finally:
        await c.stop()
        await p.stop()
    return log


async def _replace(p: AIOKafkaProducer, new, log: ProgramLog) -> AIOKafkaProducer:  # type: ignore[no-untyped-def]
    log.note("producer replaced")
    try:
        await p.stop()
    except Exception as e:  # noqa: BLE001 - the old producer is gone either way
        log.note(f"stop: {e!r}")
    return await new()
