"""The emulator's own cost per produced record, without a client (docs/scale.md).

bench/scale.py measures records/s with confluent-kafka, whose CPU shares the machine
and grows with the partition count on its own (librdkafka 2.x sends one partition
per ProduceRequest and its broker threads look at every partition they lead at each
wake-up). This runs the server's request path in-process instead: for every
partition, one ProduceRequest v10 frame (one 100-byte record, acks=all) through
``EmulatorServer._process`` (emulator/server/dispatch.py: decode, authorize, append,
the acks=all wait woken by the replication tick, encode), three connections at once
as the three brokers' clients, no sockets. ``--multi`` sends instead what kafka-python and the Java client send: one
request per broker carrying all its partitions. ``--brokers 1`` runs one broker at
replication factor 1 (bench/scale.py's like-for-like headline against one Kafka node).
``--fetch`` measures the consumer's side instead: the topics are filled first, then
every round is one Fetch request (v12, no session) per broker carrying all its
partitions, each reading one batch (bench/scale.py's per-broker fetch). It prints CPU microseconds per
record at each size and the cyclic GC's share, so what the emulator does per record
at 10,000 partitions can be set beside 100. The emulator process's GC thresholds
(emulator.cli.GC_THRESHOLDS) apply unless ``--default-gc``.

    python bench/produce_path.py [--sizes 100,10000] [--rounds 3] [--multi]
                                 [--brokers 3] [--fetch] [--default-gc] [--profile]
                                 [--value-bytes 100]
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
from emulator.runtime import Cluster, new_event_loop  # noqa: E402
from emulator.server.app import EmulatorServer  # noqa: E402
from emulator.services import build_services  # noqa: E402
from wire.connection import ClientConnection  # noqa: E402
from wire.records import build_batch  # noqa: E402

PER_TOPIC = 100
_CLIENT = ClientConnection("produce-path")
VALUE = b"v" * 100


def setup(n: int, brokers: int = 3) -> tuple[Cluster, EmulatorServer]:
    c = Cluster(brokers=brokers, port=0)
    services = build_services(c.state)
    i = 0
    while n > 0:
        c.state.create_topic(f"scale-{i:05d}", min(PER_TOPIC, n), min(3, brokers))
        n -= PER_TOPIC
        i += 1
    c.state.tick()
    srv = EmulatorServer(c.state, "127.0.0.1", c.kafka_version, services)
    model = c.faults.model
    srv.faults.inject_error = model.inject_error
    srv.faults.latency = model.latency_s
    srv.faults.drop_response = model.drop_response
    return c, srv


def _frame(topic_data: list[dict], corr: int) -> bytes:
    body = {"transactional_id": None, "acks": -1, "timeout_ms": 30000,
            "topic_data": topic_data}
    # without the size, as the server's connection hands a frame to _process
    return _CLIENT.send_request(0, 10, body, correlation_id=corr, expect_response=False)[4:]


def frames(c: Cluster, multi: bool, value: bytes = VALUE) -> dict[int, list[bytes]]:
    """Per leader broker: one produce frame per partition (librdkafka), or one frame
    with all the broker's partitions (``multi``: kafka-python, Java)."""
    batch = build_batch([(None, value)], timestamp=int(time.time() * 1000))
    led: dict[int, dict[str, list[dict]]] = {b: {} for b in c.state.brokers}
    for t in c.state.topics.values():
        for p in t.partitions:
            led[p.leader].setdefault(t.name, []).append({"index": p.index, "records": batch})
    if multi:
        return {b: [_frame([{"name": n, "partition_data": parts}
                            for n, parts in topics.items()], 0)]
                for b, topics in led.items()}
    return {b: [_frame([{"name": n, "partition_data": [pd]}], i)
                for i, (n, pd) in enumerate((n, pd) for n, parts in topics.items()
                                            for pd in parts)]
            for b, topics in led.items()}


def fetch_frames(c: Cluster, offsets: int) -> dict[int, list[bytes]]:
    """Per leader broker: one Fetch frame (v12, sessionless) per offset in
    ``range(offsets)``, every partition it leads reading the one batch at that offset
    (partition_max_bytes is the batch's size)."""
    size = len(build_batch([(None, VALUE)], timestamp=int(time.time() * 1000)))
    led: dict[int, dict[str, list[int]]] = {b: {} for b in c.state.brokers}
    for t in c.state.topics.values():
        for p in t.partitions:
            led[p.leader].setdefault(t.name, []).append(p.index)
    out: dict[int, list[bytes]] = {}
    for b, topics in led.items():
        out[b] = [_CLIENT.send_request(1, 12, {
            "replica_id": -1, "max_wait_ms": 0, "min_bytes": 1, "max_bytes": 50 << 20,
            "isolation_level": 0, "session_id": 0, "session_epoch": -1,
            "topics": [{"topic": n, "partitions": [
                {"partition": i, "fetch_offset": off, "partition_max_bytes": size}
                for i in idx]} for n, idx in topics.items()],
            "forgotten_topics_data": [], "rack_id": ""},
            correlation_id=off, expect_response=False)[4:] for off in range(offsets)]
    return out


async def connection(srv: EmulatorServer, broker: int, work: list[bytes], rounds: int) -> None:
    bl = srv.listeners[broker]
    for _ in range(rounds):
        for frame in work:
            out = await srv._process(bl, broker, "127.0.0.1", frame)
            if out is None or len(out) < 20:
                raise RuntimeError("no produce response")


async def run(c: Cluster, srv: EmulatorServer, work: dict[int, list[bytes]], rounds: int) -> None:
    await asyncio.gather(*(connection(srv, b, w, rounds) for b, w in work.items()))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="100,10000")
    ap.add_argument("--rounds", type=int, default=3, help="rounds at 10,000 (more when smaller)")
    ap.add_argument("--multi", action="store_true",
                    help="one request per broker with all its partitions")
    ap.add_argument("--brokers", type=int, default=3,
                    help="brokers (replication factor min(3, brokers))")
    ap.add_argument("--fetch", action="store_true",
                    help="Fetch instead: one request per broker, one batch per partition")
    ap.add_argument("--default-gc", action="store_true",
                    help="CPython's GC thresholds, not the emulator process's")
    ap.add_argument("--profile", action="store_true", help="cProfile: the top functions")
    ap.add_argument("--value-bytes", type=int, default=len(VALUE),
                    help="the produced record's value size (costs that grow with the batch)")
    args = ap.parse_args()
    if not args.default_gc:
        gc.set_threshold(*GC_THRESHOLDS)
    gc_cpu = [0.0, 0.0]

    def on_gc(phase: str, _info: dict) -> None:
        if phase == "start":
            gc_cpu[1] = time.process_time()
        else:
            gc_cpu[0] += time.process_time() - gc_cpu[1]

    gc.callbacks.append(on_gc)
    for n in (int(x) for x in args.sizes.split(",")):
        c, srv = setup(n, args.brokers)
        work = frames(c, args.multi, b"v" * args.value_bytes)
        rounds = max(args.rounds, args.rounds * 10_000 // n)
        loop = new_event_loop()
        prof = cProfile.Profile() if args.profile else None
        try:
            if args.fetch:  # fill the topics, then fetch them: 50 offsets, cycled
                loop.run_until_complete(run(c, srv, frames(c, True), 50))
                reads = fetch_frames(c, 50)
                work = {b: [f[i % 50] for i in range(rounds)] for b, f in reads.items()}
                rounds = 1
            warm = {b: w[:50] for b, w in work.items()}  # the fetch's work is its rounds
            loop.run_until_complete(run(c, srv, warm, 1))  # warm up
            gc_cpu[0] = 0.0
            t0, c0 = time.perf_counter(), time.process_time()
            if prof:
                prof.enable()
            loop.run_until_complete(run(c, srv, work, rounds))
            if prof:
                prof.disable()
            dt, dc = time.perf_counter() - t0, time.process_time() - c0
        finally:
            loop.close()
        recs = (len(next(iter(work.values()))) if args.fetch else rounds) * n
        print(f"{n:>7,} partitions: {recs:,} records, {dc / recs * 1e6:.1f} us CPU/record "
              f"({gc_cpu[0] / recs * 1e6:.1f} in the cyclic GC), {recs / dt:,.0f} records/s",
              flush=True)
        if prof:
            pstats.Stats(prof).sort_stats(os.environ.get("PROFILE_SORT", "tottime")).print_stats(int(os.environ.get("PROFILE_TOP", "30")))


if __name__ == "__main__":
    main()
