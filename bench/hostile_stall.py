"""Large but legal operations against the event loop (docs/hostile-input.md): prints the figures.

Runs ``kafka-emulator`` as its own process. While one client sends a large operation
Kafka accepts, two ordinary clients on their own connections time small requests
(Metadata for one small topic, and an acks=1 Produce of one small batch) every few
milliseconds; the figure is the worst latency of a small request that overlapped the
large one (the smaller of the two canaries' worst: an emulator stall delays both),
beside the large one's own duration. Target: < 50 ms.

- CreateTopics: one topic of 9,999 partitions, replication factor 3 (10,000 metadata
  records: the most MAX_RECORDS_PER_USER_OP allows);
- CreatePartitions: +10,000 partitions (MAX_PARTITIONS_PER_BATCH) to a topic;
- DeleteTopics: the 9,999-partition topic;
- Produce: one gzip batch inflating to just under 64 MiB (the decompression bound),
  which the leader must inflate and walk: 1 KB records (468 KB on the wire, under the
  default max.message.bytes) and 100-byte records (3 MB, to a topic whose
  max.message.bytes is 16 MiB);
- DescribeConfigs of 10,000 groups (Kafka has no cap; the answer is ~9 MB).

An idle window of the same canaries first gives the noise floor (the machine's other
load shows there). ``--loop-cpu`` runs the emulator in this process instead and prints
the longest event loop callback during each operation in CPU time, which the
machine's load does not inflate.

Asserts nothing. Usage: python bench/hostile_stall.py [--rounds 3] [--loop-cpu]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import statistics
import struct
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import cramjam  # noqa: E402
from emulator_process import emulator_process  # noqa: E402

from emulator.blocking_client import BlockingConnection  # noqa: E402
from wire.connection import ClientConnection  # noqa: E402
from wire.records import HEADER_SIZE, build_batch, crc32c  # noqa: E402


class Client(BlockingConnection):
    """One connection, one request at a time."""

    def __init__(self, addr: tuple[str, int]) -> None:
        super().__init__(socket.create_connection(addr, timeout=120), "stall")

    def call_encoded(self, request: tuple[bytes, int, int]) -> dict:
        """A request encoded once (``encoded``) and sent again as is: the canaries'
        own encoding stays out of their latencies."""
        frame, key, version = request
        self.protocol.expect(key, version, 1)
        self.send_raw(frame)
        return self.receive().body


def encoded(key: int, version: int, body: dict) -> tuple[bytes, int, int]:
    """A request's frame (correlation id 1), its key and version, for call_encoded."""
    frame = ClientConnection("stall").send_request(key, version, body, correlation_id=1)
    return frame, key, version


def create_topics_body(name: str, partitions: int, rf: int,
                       assignments: list | None = None) -> dict:
    return {"topics": [
        {"name": name, "num_partitions": partitions, "replication_factor": rf,
         "assignments": assignments or [], "configs": []}], "timeout_ms": 60000,
        "validate_only": False}


def produce_body(topic: str, batch: bytes) -> dict:
    return {"acks": 1, "timeout_ms": 60000, "topic_data": [
        {"name": topic, "partition_data": [{"index": 0, "records": batch}]}]}


def gzip_batch(inflated: int, record: int = 1000) -> bytes:
    """A gzip v2 batch of ``record``-byte values inflating to about ``inflated`` bytes."""
    now = int(time.time() * 1000)
    n = inflated // (record + 12)
    body = build_batch([(None, bytes([i % 251]) * record) for i in range(n)],
                       timestamp=now)[HEADER_SIZE:]
    comp = bytes(cramjam.gzip.compress(body))
    tail = struct.pack(">hiqqqhii", 1, n - 1, now, now, -1, -1, -1, n) + comp
    return struct.pack(">qiibI", 0, len(tail) + 9, -1, 2, crc32c(tail)) + tail


class Canary(threading.Thread):
    """Times one small request every ``gap`` seconds on its own connection."""

    def __init__(self, addr: tuple[str, int], request: tuple[bytes, int, int],
                 name: str, gap: float = 0.005) -> None:
        super().__init__(daemon=True, name=name)
        self.client = Client(addr)
        self.request, self.gap = request, gap
        self.samples: list[tuple[float, float]] = []  # (sent, answered), perf_counter
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            t0 = time.perf_counter()
            self.client.call_encoded(self.request)
            self.samples.append((t0, time.perf_counter()))
            time.sleep(self.gap)
        self.client.close()

    def worst_during(self, start: float, end: float) -> tuple[float, int]:
        """The worst latency (ms) of requests overlapping [start, end], and their count."""
        hit = [(b - a) * 1000 for a, b in self.samples if a <= end and b >= start]
        return (max(hit) if hit else float("nan")), len(hit)

    def typical(self) -> float:
        return statistics.median((b - a) * 1000 for a, b in self.samples)


def run(name: str, canaries: list[Canary], op: Callable[[], str]) -> None:
    time.sleep(0.3)
    t0 = time.perf_counter()
    result = op()
    t1 = time.perf_counter()
    time.sleep(0.3)  # requests queued behind the operation finish
    worst = [(c.name, *c.worst_during(t0, t1)) for c in canaries]
    # A stall of the emulator delays both canaries; one canary alone slow is the
    # bench process's own scheduling (2 cores shared): the smaller worst is the stall.
    stall = min(w for _, w, _ in worst)
    print(f"{name:<30} {(t1 - t0) * 1000:7.0f} ms  {result:<8} stall {stall:6.1f} ms  (worst "
          + ", ".join(f"{n} {w:.1f} ms of {k}" for n, w, k in worst) + ")", flush=True)


def create(admin: Client, name: str) -> str:
    t = admin.call(19, 7, create_topics_body(name, 9_999, 3))["topics"][0]
    return f"error {t['error_code']}"


def grow(admin: Client, name: str) -> str:
    admin.call(19, 7, create_topics_body(name, 1, 3))
    res = admin.call(37, 3, {"topics": [
        {"name": name, "count": 10_001, "assignments": None}],
        "timeout_ms": 60000, "validate_only": False})["results"][0]
    return f"error {res['error_code']}"


def delete(admin: Client, name: str) -> str:
    res = admin.call(20, 6, {"topics": [
        {"name": name, "topic_id": bytes(16)}], "timeout_ms": 60000})["responses"][0]
    return f"error {res['error_code']}"


def describe_groups(admin: Client, n: int) -> str:
    """Read, not decoded: decoding ~9 MB here would hold this process's GIL for seconds
    and delay the canaries' own threads, which would then blame the emulator."""
    admin.send(32, 4, {"resources": [
        {"resource_type": 32, "resource_name": f"g{i}", "configuration_keys": None}
        for i in range(n)], "include_synonyms": False, "include_documentation": False})
    frame = admin.read_frame()
    assert frame is not None, "closed"
    return f"{len(frame) >> 20} MB"


def produce(addr: tuple[str, int], topic: str, batch: bytes) -> str:
    c = Client(addr)
    res = c.call(0, 9, produce_body(topic, batch))
    c.close()
    return f"error {res['responses'][0]['partition_responses'][0]['error_code']}"


def setup(addrs: list[tuple[str, int]]) -> Client:
    """Small topics led by broker 1 (manual assignment) for the canaries and the big
    batches; big-batch-16m takes batches up to 16 MiB on the wire (a legal config)."""
    admin = Client(addrs[1])
    on_1 = [{"partition_index": 0, "broker_ids": [1]}]
    admin.call(19, 7, create_topics_body("canary", -1, -1, on_1))
    admin.call(19, 7, create_topics_body("big-batch", -1, -1, on_1))
    admin.call(19, 7, {"topics": [
        {"name": "big-batch-16m", "num_partitions": -1, "replication_factor": -1,
         "assignments": on_1, "configs": [{"name": "max.message.bytes",
                                           "value": str(16 << 20)}]}],
        "timeout_ms": 60000, "validate_only": False})
    return admin


def operations(admin: Client, addr: tuple[str, int], r: int, batch_1k: bytes,
               batch_100: bytes) -> list[tuple[str, Callable[[], str]]]:
    return [
        ("CreateTopics 9,999 x3", lambda: create(admin, f"big-{r}")),
        ("CreatePartitions +10,000", lambda: grow(admin, f"grow-{r}")),
        ("DeleteTopics 9,999 x3", lambda: delete(admin, f"big-{r}")),
        ("Produce 468 KB -> 63 MiB", lambda: produce(addr, "big-batch", batch_1k)),
        ("Produce 3 MB -> 63 MiB (16m)", lambda: produce(addr, "big-batch-16m", batch_100)),
        ("DescribeConfigs 10,000 groups", lambda: describe_groups(admin, 10_000)),
    ]


def loop_cpu(rounds: int, batch_1k: bytes, batch_100: bytes) -> None:
    """The emulator in this process, every event loop callback timed in CPU time of
    the loop's thread (the machine's other load does not count): the longest callback
    during an operation is how long it held everyone else up by itself. Runs on the
    standard asyncio loop (uvloop's callbacks cannot be timed from Python)."""
    from asyncio import events

    from emulator import Cluster

    longest = [0.0]
    run_handle = events.Handle._run

    def timed(handle: events.Handle) -> None:
        c0 = time.thread_time()
        run_handle(handle)
        longest[0] = max(longest[0], time.thread_time() - c0)

    events.Handle._run = timed  # type: ignore[method-assign]
    import emulator.runtime.cluster

    # The standard loop (its callbacks are the Handles timed here; uvloop's are not).
    emulator.runtime.cluster.new_event_loop = asyncio.new_event_loop
    with Cluster(port=0) as cluster:
        addrs = [(b.host, b.port) for b in sorted(cluster.state.brokers.values(),
                                                  key=lambda b: b.id)]
        admin = setup(addrs)
        print(f"in-process; load average {os.getloadavg()[0]:.2f}", flush=True)
        for r in range(rounds):
            for name, op in operations(admin, addrs[0], r, batch_1k, batch_100):
                time.sleep(0.3)
                longest[0] = 0.0
                t0 = time.perf_counter()
                result = op()
                dt = time.perf_counter() - t0
                time.sleep(0.3)  # what it left for the next loop turns (ticks)
                print(f"{name:<30} {dt * 1000:7.0f} ms  {result:<8} longest loop callback "
                      f"{longest[0] * 1000:6.1f} ms CPU", flush=True)
    events.Handle._run = run_handle  # type: ignore[method-assign]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--loop-cpu", action="store_true",
                    help="run the emulator in this process and report the longest event "
                         "loop callback (CPU time) during each operation instead")
    args = ap.parse_args()
    batch_1k = gzip_batch((64 << 20) - (1 << 20), 1000)
    batch_100 = gzip_batch((64 << 20) - (1 << 20), 100)
    if args.loop_cpu:
        loop_cpu(args.rounds, batch_1k, batch_100)
        return
    with emulator_process() as (proc, addrs):
        admin = setup(addrs)
        now = int(time.time() * 1000)
        small = build_batch([(b"k", b"v" * 100)], timestamp=now)
        md = Canary(addrs[0], encoded(3, 12, {
            "topics": [{"name": "canary", "topic_id": bytes(16)}],
            "allow_auto_topic_creation": False}), "Metadata")
        pr = Canary(addrs[0], encoded(0, 9, produce_body("canary", small)), "Produce")
        for c in (md, pr):
            c.start()
        print(f"kafka-emulator pid {proc.pid}; load average {os.getloadavg()[0]:.2f}; gzip "
              f"batches inflating to 63 MiB: {len(batch_1k) // 1024} KB (1 KB records), "
              f"{len(batch_100) // 1024} KB (100 B records)", flush=True)
        canaries = [md, pr]
        for r in range(args.rounds):
            run("idle 0.5 s (noise floor)", canaries, lambda: time.sleep(0.5) or "-")
            for name, op in operations(admin, addrs[0], r, batch_1k, batch_100):
                run(name, canaries, op)
        for c in canaries:
            c.stop.set()
            c.join()
        print(f"typical: Metadata {md.typical():.1f} ms, Produce {pr.typical():.1f} ms; "
              f"load average {os.getloadavg()[0]:.2f}", flush=True)


if __name__ == "__main__":
    main()
