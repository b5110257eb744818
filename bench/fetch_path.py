"""The emulator's own cost per fetched record for the Java consumer's reads, in-process.

bench/java_perf.py and spark_validation/bench_read.py measure records/s with Java
clients that share the machine's two cores with the server. This runs the server's
Fetch path alone (``EmulatorServer._process``: decode, the fetch session, the reads,
encode; no sockets), one broker at replication factor 1, and prints the server's CPU
microseconds per record read, counting only the time inside ``_process``:

- ``java``: what Kafka's ConsumerPerformance sends over many partitions (the defaults:
  fetch.max.bytes 50 MiB, max.partition.fetch.bytes 1 MiB, Fetch v17 with topic ids and
  an incremental fetch session). As the Java consumer's fetcher does, a partition whose
  records came back leaves the session in the next request (its records are buffered
  client-side: ``forgotten_topics_data``) and comes back in the one after at its new
  offset. The topic is filled as ProducerPerformance's RoundRobinPartitioner fills it:
  small batches (``--records-per-batch``, 1 by default) in every partition.
- ``spark``: what Spark's connector sends (a KafkaConsumer per task, assign + seek to
  one partition, max.partition.fetch.bytes 1 MiB): a fetch session of one partition
  read to its end, partition after partition; the topic is filled as confluent-kafka
  fills it with batch.size 1 MiB (large batches: ``--records-per-batch 5000``).

- ``idle``: a caught-up consumer's incremental fetches, max.wait.ms 0 (the Java consumer
  and kafka-python send them while they wait; librdkafka 2.x opens no fetch session):
  ``--fetches`` with nothing new, then as many with ``--changed`` partitions of the
  session (10 by default) each given one new batch before the fetch (appends not
  counted), the client sending their new offsets in the next request as kafka-python
  does. It prints the server's
  CPU microseconds per fetch and the partitions the session read per fetch; then
  long polls (max.wait.ms 500) woken by records on one partition.

Every pass reads the whole topic with fresh sessions; ``--passes`` repeats it (for
callgrind: the difference of two pass counts is one pass's instructions, the fill
left out).

    python bench/fetch_path.py java [--partitions 1000] [--records 200000] [--passes 3]
    python bench/fetch_path.py spark [--partitions 4] [--records 1000000]
    python bench/fetch_path.py idle [--partitions 1000] [--fetches 2000] [--changed 10]
    valgrind --tool=callgrind --callgrind-out-file=/dev/null \\
        python bench/fetch_path.py java --records 100000 --passes 1   (then --passes 2)
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import os
import pstats
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from emulator.cli import GC_THRESHOLDS  # noqa: E402
from emulator.runtime import new_event_loop  # noqa: E402
from wire.connection import ClientConnection  # noqa: E402
from wire.records import build_batch  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from produce_path import setup  # noqa: E402

VALUE = b"v" * 100
VERSION = 17


async def fill(c, records: int, per_batch: int) -> int:
    """Round-robin batches of ``per_batch`` records over every partition until
    ``records`` are stored; returns the records stored."""
    batch = build_batch([(None, VALUE)] * per_batch, timestamp=int(time.time() * 1000))
    parts = [(t.name, p.index) for t in c.state.topics.values() for p in t.partitions]
    stored = 0
    leader = next(iter(c.state.brokers))
    while stored < records:
        for name, idx in parts:
            c.state.append(leader, name, idx, batch, 1)
            stored += per_batch
            if stored >= records:
                break
    c.state.tick()
    return stored


class Reader:
    """One consumer's fetch session, speaking as the Java client does."""

    def __init__(self, srv, topics: dict[str, bytes], max_bytes: int,
                 max_wait_ms: int = 0) -> None:
        self.srv = srv
        self.broker = next(iter(srv.listeners))
        self.bl = srv.listeners[self.broker]
        self.client = ClientConnection("fetch-path")
        self.ids = topics  # name -> topic id
        self.names = {v: k for k, v in topics.items()}
        self.max_bytes = max_bytes
        self.max_wait_ms = max_wait_ms
        self.session_id, self.epoch = 0, 0
        self.cpu = 0.0
        self.requests = 0

    async def fetch(self, parts: dict[tuple[str, int], int],
                    forget: list[tuple[str, int]]) -> dict[tuple[str, int], tuple[int, bytes]]:
        """One Fetch carrying ``parts`` (new or moved partitions: their offsets) and
        forgetting ``forget``; the answer per partition: (high watermark, records)."""
        by_topic: dict[str, list[dict]] = {}
        for (name, idx), off in parts.items():
            by_topic.setdefault(name, []).append(
                {"partition": idx, "current_leader_epoch": 0, "fetch_offset": off,
                 "last_fetched_epoch": -1, "log_start_offset": -1,
                 "partition_max_bytes": 1 << 20})
        gone: dict[str, list[int]] = {}
        for name, idx in forget:
            gone.setdefault(name, []).append(idx)
        frame = self.client.send_request(1, VERSION, {
            "replica_id": -1, "max_wait_ms": self.max_wait_ms, "min_bytes": 1,
            "max_bytes": self.max_bytes,
            "isolation_level": 0, "session_id": self.session_id, "session_epoch": self.epoch,
            "topics": [{"topic_id": self.ids[n], "partitions": ps} for n, ps in by_topic.items()],
            "forgotten_topics_data": [{"topic_id": self.ids[n], "partitions": ps}
                                      for n, ps in gone.items()],
            "rack_id": ""})[4:]
        c0 = time.process_time()
        out = await self.srv._process(self.bl, self.broker, "127.0.0.1", frame)
        self.cpu += time.process_time() - c0
        self.requests += 1
        self.client.receive_data(out if isinstance(out, bytes) else b"".join(out))
        body = self.client.next_response().body
        if body["error_code"]:
            raise RuntimeError(f"fetch session error {body['error_code']}")
        self.session_id = body["session_id"]
        self.epoch = self.epoch + 1
        got = {}
        for t in body["responses"]:
            for p in t["partitions"]:
                if p["error_code"]:
                    raise RuntimeError(f"partition error {p['error_code']}")
                got[(self.names[t["topic_id"]], p["partition_index"])] = (
                    p["high_watermark"], p["records"] or b"")
        return got


def next_offset(records: bytes, offset: int) -> tuple[int, int]:
    """(offset after the whole batches in ``records``, records in them)."""
    pos, n = 0, 0
    while pos + 61 <= len(records):
        base = int.from_bytes(records[pos:pos + 8], "big")
        size = int.from_bytes(records[pos + 8:pos + 12], "big", signed=True) + 12
        if pos + size > len(records):
            break
        offset = base + int.from_bytes(records[pos + 23:pos + 27], "big") + 1
        n += int.from_bytes(records[pos + 57:pos + 61], "big")
        pos += size
    return offset, n


async def java_pass(srv, topics: dict[str, bytes], parts: list[tuple[str, int]],
                    total: int) -> tuple[float, int]:
    """ConsumerPerformance's reads: (server CPU seconds, requests)."""
    r = Reader(srv, topics, 50 << 20)
    offsets = dict.fromkeys(parts, 0)
    send = dict(offsets)  # the first, full fetch names every partition
    forget: list[tuple[str, int]] = []
    buffered: list[tuple[str, int]] = []
    read = 0
    while read < total:
        got = await r.fetch(send, forget)
        send = {tp: offsets[tp] for tp in buffered}  # drained: back at the new offset
        forget, buffered = [], []
        for tp, (_, records) in got.items():
            if records:
                offsets[tp], n = next_offset(records, offsets[tp])
                read += n
                forget.append(tp)  # buffered in the client: not fetched next time
                buffered.append(tp)
        if not got and not send:
            raise RuntimeError(f"stuck at {read} of {total}")
    return r.cpu, r.requests


async def spark_pass(srv, topics: dict[str, bytes], parts: list[tuple[str, int]],
                     total: int) -> tuple[float, int]:
    """Spark's reads: one session per partition, read to its end."""
    cpu, requests, read = 0.0, 0, 0
    for tp in parts:
        r = Reader(srv, topics, 50 << 20)
        off, hw = 0, 1
        send = {tp: 0}
        while off < hw:
            got = await r.fetch(send, [])
            if tp in got:
                hw, records = got[tp]
                if records:
                    off, n = next_offset(records, off)
                    read += n
                    send = {tp: off}
                    continue
            send = {}
        cpu += r.cpu
        requests += r.requests
    if read != total:
        raise RuntimeError(f"read {read} of {total}")
    return cpu, requests


async def idle_pass(srv, c, topics: dict[str, bytes], parts: list[tuple[str, int]],
                    fetches: int, changed: int) -> None:
    """A caught-up session's empty incremental fetches, then fetches with ``changed``
    partitions given new records (module docstring, ``idle``)."""
    from emulator.handlers import api_001_fetch as fetch_handler

    reads = [0]
    real = fetch_handler._read_partition

    def counted(*a, **k):
        reads[0] += 1
        return real(*a, **k)

    r = Reader(srv, topics, 50 << 20)
    offsets = {tp: c.state.get_partition(*tp).high_watermark for tp in parts}
    await r.fetch(dict(offsets), [])  # the full fetch: caught up
    await r.fetch({}, [])  # the first incremental one answers the HWs once
    batch = build_batch([(None, VALUE)], timestamp=int(time.time() * 1000))
    leader = next(iter(c.state.brokers))
    fetch_handler._read_partition = counted
    try:
        send: dict[tuple[str, int], int] = {}
        for label, n in (("nothing new", 0), (f"{changed} of {len(parts)} with new records",
                                                changed)):
            r.cpu, r.requests, reads[0] = 0.0, 0, 0
            for i in range(fetches):
                for j in range(n):
                    tp = parts[(i * n + j) % len(parts)]
                    c.state.append(leader, tp[0], tp[1], batch, 1)
                got = await r.fetch(send, [])
                send = {}
                for tp, (_, records) in got.items():
                    if records:
                        offsets[tp], _ = next_offset(records, offsets[tp])
                        send[tp] = offsets[tp]
                if n and len(send) != n:
                    raise RuntimeError(f"{len(send)} partitions answered records, not {n}")
                if not n and got:
                    raise RuntimeError(f"{len(got)} partitions answered an empty fetch")
            print(f"  {label}: {r.requests} fetches, server {r.cpu / r.requests * 1e6:.1f} us "
                  f"CPU/fetch, {reads[0] / r.requests:.1f} partitions read/fetch", flush=True)
        # Long polls (max.wait.ms 500): each parks, then records on one partition of the
        # session wake it. CPU of the whole round, the append and its wake-up included.
        if await r.fetch(send, []):  # the last positions: nothing new after them
            raise RuntimeError("a fetch at the log ends answered")
        reads[0] = 0
        rounds = max(1, fetches // 4)
        c0 = time.process_time()
        for i in range(rounds):
            tp = parts[(i * 7) % len(parts)]
            r.max_wait_ms = 500
            task = asyncio.ensure_future(r.fetch({}, []))
            for _ in range(3):
                await asyncio.sleep(0)
            c.state.append(leader, tp[0], tp[1], batch, 1)
            got = await task
            if set(got) != {tp}:
                raise RuntimeError(f"long poll answered {sorted(got)}, not {tp}")
            offsets[tp], _ = next_offset(got[tp][1], offsets[tp])
            r.max_wait_ms = 0
            await r.fetch({tp: offsets[tp]}, [])  # the new position (answered at once)
        cpu = time.process_time() - c0
        print(f"  long poll woken by records on 1 partition: {rounds} rounds of a parked fetch "
              f"and the next one, {cpu / rounds * 1e6:.1f} us CPU/round (the append "
              f"included), {reads[0] / rounds:.1f} partitions read/round", flush=True)
    finally:
        fetch_handler._read_partition = real


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("load", choices=("java", "spark", "idle"))
    ap.add_argument("--partitions", type=int, default=None, help="java: 1000, spark: 4")
    ap.add_argument("--records", type=int, default=None, help="java: 200,000, spark: 1 M")
    ap.add_argument("--records-per-batch", type=int, default=None, help="java: 1, spark: 5000")
    ap.add_argument("--passes", type=int, default=3)
    ap.add_argument("--fetches", type=int, default=2000, help="idle: fetches per case")
    ap.add_argument("--changed", type=int, default=10,
                    help="idle: partitions with new records per fetch")
    ap.add_argument("--profile", action="store_true", help="cProfile the last pass")
    args = ap.parse_args()
    java = args.load in ("java", "idle")
    partitions = args.partitions or (1000 if java else 4)
    records = args.records or ((partitions if args.load == "idle" else 200_000) if java
                               else 1_000_000)
    per_batch = args.records_per_batch or (1 if java else 5000)
    gc.set_threshold(*GC_THRESHOLDS)
    c, srv = setup(partitions, 1)
    if partitions > 100 and len(c.state.topics) > 1 and not java:
        raise SystemExit("spark: at most 100 partitions (one topic)")
    t0 = time.process_time()
    loop = new_event_loop()
    stored = loop.run_until_complete(fill(c, records, per_batch))
    topics = {t.name: t.id for t in c.state.topics.values()}
    parts = [(t.name, p.index) for t in c.state.topics.values() for p in t.partitions]
    print(f"{args.load}: {partitions:,} partitions, {stored:,} records in batches of "
          f"{per_batch} (filled in {time.process_time() - t0:.1f} s CPU)", flush=True)
    try:
        if args.load == "idle":
            loop.run_until_complete(idle_pass(srv, c, topics, parts, args.fetches,
                                              args.changed))
            return
        for i in range(args.passes):
            run = java_pass if java else spark_pass
            prof = cProfile.Profile() if args.profile and i == args.passes - 1 else None
            if prof:
                prof.enable()
            cpu, requests = loop.run_until_complete(run(srv, topics, parts, stored))
            if prof:
                prof.disable()
                pstats.Stats(prof).sort_stats("tottime").print_stats(25)
            print(f"  pass {i + 1}: {requests} requests, server {cpu / stored * 1e6:.3f} us "
                  f"CPU/record ({cpu:.3f} s)", flush=True)
    finally:
        loop.close()


if __name__ == "__main__":
    main()
