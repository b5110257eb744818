"""Reliability under hostile load (docs/hostile-input.md's probe, repeated): prints the figures.

Runs ``kafka-emulator`` as its own process and, one scenario at a time, measures what an
ordinary client sees (Metadata latency on its own connection, p50/p99/max) and the
emulator's RSS:

- idle: 2,000 idle connections held open;
- burst: 500 connections each sending ApiVersions at the same moment;
- slowloris: 200 connections dribbling a request one byte at a time;
- stalled frames: 5 connections each announcing a 100 MB request and stalling after
  ~20 MB (how much is held, and for how long: the stall deadline is
  min(connections.max.idle.ms, 30 s); this run sets connections.max.idle.ms=10000);
- controller limits: CreatePartitions to 16,777,216 and CreateTopics with 1,000,000
  partitions (answer time, canary latency meanwhile);
- gzip bomb: a ~200 KB gzip batch inflating to 200 MB (refused past the decompression
  bound), then a timestamp lookup; RSS before and after;
- retention-bounded RSS: 200 MB produced into a topic with retention.bytes 8 MB per
  partition; RSS after each 50 MB.

Asserts nothing. Usage: python bench/reliability.py [--quick]
"""

from __future__ import annotations

import argparse
import socket
import statistics
import struct
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import cramjam  # noqa: E402
from emulator_process import emulator_process  # noqa: E402

from emulator.blocking_client import BlockingConnection  # noqa: E402
from wire.connection import ClientConnection  # noqa: E402
from wire.records import HEADER_SIZE, build_batch, crc32c  # noqa: E402

METADATA = {"topics": None, "allow_auto_topic_creation": False}
API_VERSIONS = {"client_software_name": "b", "client_software_version": "1"}


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def call(addr: tuple[str, int], key: int, version: int, body: dict,
         timeout: float = 120) -> dict:
    with BlockingConnection.connect(*addr, client_id="b", timeout=timeout) as c:
        return c.call(key, version, body)


class Canary(threading.Thread):
    """An ordinary client timing Metadata every 20 ms while a scenario runs."""

    def __init__(self, addr: tuple[str, int]) -> None:
        super().__init__(daemon=True)
        self.addr = addr
        self.ms: list[float] = []
        self.failures = 0
        self.stop = threading.Event()

    def run(self) -> None:
        conn = None
        while not self.stop.is_set():
            t0 = time.perf_counter()
            try:
                if conn is None:
                    conn = BlockingConnection.connect(*self.addr, client_id="canary",
                                                      timeout=60)
                conn.send(3, 12, METADATA)
                conn.read_frame()  # read, not decoded: the latency is the emulator's
                self.ms.append((time.perf_counter() - t0) * 1000)
            except OSError:
                self.failures += 1
                conn = None
            time.sleep(0.02)

    def summary(self) -> str:
        if not self.ms:
            return f"canary: no answers ({self.failures} failures)"
        s = sorted(self.ms)
        return (f"canary Metadata p50 {statistics.median(s):.1f} ms, p99 "
                f"{s[min(len(s) - 1, int(len(s) * 0.99))]:.1f} ms, max {s[-1]:.1f} ms, "
                f"failures {self.failures}")


def scenario(name: str, addr: tuple[str, int], pid: int, fn) -> None:  # noqa: ANN001
    canary = Canary(addr)
    canary.start()
    time.sleep(0.2)
    rss0 = rss_mb(pid)
    t0 = time.perf_counter()
    result = fn()
    dt = time.perf_counter() - t0
    canary.stop.set()
    canary.join()
    print(f"{name:<18} {dt:6.1f} s  RSS {rss0:5.0f} -> {rss_mb(pid):5.0f} MB  {result}")
    print(f"{'':<18} {canary.summary()}", flush=True)


def open_many(addr: tuple[str, int], n: int) -> list[socket.socket]:
    out = []
    for _ in range(n):
        try:
            out.append(socket.create_connection(addr, timeout=10))
        except OSError:
            break
    return out


def idle(addr: tuple[str, int], n: int) -> str:
    socks = open_many(addr, n)
    time.sleep(2)
    for s in socks:
        s.close()
    return f"{len(socks)} idle connections held 2 s"


def burst(addr: tuple[str, int], n: int) -> str:
    socks = open_many(addr, n)
    conns = [BlockingConnection(s, "burst") for s in socks]
    t0 = time.perf_counter()
    for c in conns:
        c.send(18, 3, API_VERSIONS)
    ok = 0
    for c in conns:
        c.read_frame()
        ok += 1
        c.close()
    return f"{ok}/{len(socks)} answered in {(time.perf_counter() - t0) * 1000:.0f} ms"


def slowloris(addr: tuple[str, int], n: int, seconds: float) -> str:
    socks = open_many(addr, n)
    frame = ClientConnection("canary").send_request(3, 12, METADATA)
    end = time.monotonic() + seconds
    i = 0
    while time.monotonic() < end and i < len(frame) - 1:
        for s in socks:
            try:
                s.send(frame[i:i + 1])
            except OSError:
                pass
        i += 1
        time.sleep(seconds / len(frame))
    closed = 0
    for s in socks:
        s.settimeout(0.01)
        try:
            closed += s.recv(1) == b""
        except (TimeoutError, ConnectionError):
            pass
        s.close()
    return f"{len(socks)} connections sent {i} of {len(frame)} bytes over {seconds:.0f} s"


def stalled(addr: tuple[str, int], pid: int, n: int, each_mb: int) -> str:
    socks = open_many(addr, n)
    chunk = b"\0" * (1 << 20)
    for s in socks:
        s.sendall(struct.pack(">i", 100 * (1 << 20)))
        for _ in range(each_mb):
            s.sendall(chunk)
    held = rss_mb(pid)
    t0 = time.monotonic()
    for s in socks:
        s.settimeout(60)
        try:
            s.recv(1)
        except OSError:
            pass
    closed_after = time.monotonic() - t0
    time.sleep(1)
    return (f"{n} x {each_mb} MB stalled: RSS {held:.0f} MB while held, closed after "
            f"{closed_after:.1f} s, RSS {rss_mb(pid):.0f} MB after")


def limits(addr: tuple[str, int]) -> str:
    call(addr, 19, 7, {"topics": [
        {"name": "lim", "num_partitions": 1, "replication_factor": 1, "assignments": [],
         "configs": []}], "timeout_ms": 10000})
    t0 = time.perf_counter()
    r = call(addr, 37, 3, {"topics": [
        {"name": "lim", "count": 16_777_216, "assignments": None}], "timeout_ms": 10000,
        "validate_only": False})["results"][0]
    t1 = time.perf_counter()
    r2 = call(addr, 19, 7, {"topics": [
        {"name": "big", "num_partitions": 1_000_000, "replication_factor": 3, "assignments": [],
         "configs": []}], "timeout_ms": 10000})["topics"][0]
    t2 = time.perf_counter()
    return (f"CreatePartitions 16,777,216: error {r['error_code']} in "
            f"{(t1 - t0) * 1000:.0f} ms; CreateTopics 1,000,000: error {r2['error_code']} in "
            f"{(t2 - t1) * 1000:.0f} ms")


def produce(addr: tuple[str, int], topic: str, batch: bytes) -> dict:
    body = {"acks": 1, "timeout_ms": 10000, "topic_data": [
        {"name": topic, "partition_data": [{"index": 0, "records": batch}]}]}
    return call(addr, 0, 9, body)["responses"][0][
        "partition_responses"][0]


def leader_addr(addrs: list[tuple[str, int]], topic: str) -> tuple[str, int]:
    md = call(addrs[0], 3, 12, {"topics": [{"name": topic,
              "topic_id": bytes(16)}], "allow_auto_topic_creation": False})
    leader = md["topics"][0]["partitions"][0]["leader_id"]
    b = next(b for b in md["brokers"] if b["node_id"] == leader)
    return b["host"], b["port"]


def bomb_batches(now: int) -> list[tuple[int, bytes]]:
    """(inflated MB, batch) for the gzip bomb scenario, built before it starts: building
    and compressing 200 MB holds this process's GIL for a second, which would show as the
    canary's latency (the canary is a thread here), not the emulator's."""
    out = []
    for mb in (200, 30):
        body = build_batch([(b"k", b"\0" * (mb << 20))], timestamp=now)[HEADER_SIZE:]
        comp = bytes(cramjam.gzip.compress(body))
        tail = struct.pack(">hiqqqhii", 1, 0, now, now, -1, -1, -1, 1) + comp
        out.append((mb, struct.pack(">qiibI", 0, len(tail) + 9, -1, 2, crc32c(tail)) + tail))
    return out


def gzip_bomb(addrs: list[tuple[str, int]], pid: int, now: int,
              batches: list[tuple[int, bytes]]) -> str:
    call(addrs[0], 19, 7, {"topics": [
        {"name": "bomb", "num_partitions": 1, "replication_factor": 3, "assignments": [],
         "configs": []}], "timeout_ms": 10000})
    time.sleep(0.5)
    addr = leader_addr(addrs, "bomb")
    out = []
    for mb, batch in batches:
        r = produce(addr, "bomb", batch)
        out.append(f"{len(batch) // 1024} KB -> {mb} MB: error {r['error_code']}")
    lookup = call(addr, 2, 7, {"replica_id": -1, "topics": [
        {"name": "bomb", "partitions": [{"partition_index": 0, "timestamp": now - 1}]}]})
    part = lookup["topics"][0]["partitions"][0]
    return "; ".join(out) + (f"; timestamp lookup -> offset {part['offset']}, RSS after "
                             f"{rss_mb(pid):.0f} MB")


def retention(addrs: list[tuple[str, int]], pid: int, total_mb: int) -> str:
    call(addrs[0], 19, 7, {"topics": [
        {"name": "ret", "num_partitions": 1, "replication_factor": 3, "assignments": [],
         "configs": [{"name": "retention.bytes", "value": str(8 << 20)},
                     {"name": "segment.bytes", "value": str(1 << 20)}]}],
        "timeout_ms": 10000})
    time.sleep(0.5)
    addr = leader_addr(addrs, "ret")
    batch = build_batch([(b"k", b"x" * 1000)] * 500, timestamp=int(time.time() * 1000))
    sent, marks = 0, []
    while sent < total_mb << 20:
        produce(addr, "ret", batch)
        sent += len(batch)
        if sent // (50 << 20) > len(marks):
            time.sleep(1.2)  # a retention pass (every second)
            marks.append(f"{sent >> 20} MB: {rss_mb(pid):.0f} MB")
    return "RSS after " + ", ".join(marks)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="smaller counts")
    args = ap.parse_args()
    q = args.quick
    with emulator_process("--config", "connections.max.idle.ms=10000",
                          log_level="ERROR") as (proc, addrs):
        a, pid = addrs[0], proc.pid
        print(f"kafka-emulator pid {pid}, idle RSS {rss_mb(pid):.0f} MB", flush=True)
        scenario("idle", a, pid, lambda: idle(addrs[1], 200 if q else 2000))
        scenario("burst", a, pid, lambda: burst(addrs[1], 100 if q else 500))
        scenario("slowloris", a, pid, lambda: slowloris(addrs[1], 50 if q else 200, 5))
        scenario("stalled frames", a, pid, lambda: stalled(addrs[1], pid, 5, 5 if q else 20))
        scenario("controller limits", a, pid, lambda: limits(addrs[1]))
        now = int(time.time() * 1000)
        batches = bomb_batches(now)
        scenario("gzip bomb", a, pid, lambda: gzip_bomb(addrs, pid, now, batches))
        scenario("retention", a, pid, lambda: retention(addrs, pid, 100 if q else 200))


if __name__ == "__main__":
    main()
