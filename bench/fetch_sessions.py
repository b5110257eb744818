"""What incremental fetch sessions (KIP-227) save: consume MB/s and emulator CPU.

For 1, 100 and 1000 partitions, with and without a fetch session, a consumer speaking
the protocol directly (our codec, Fetch v12 as a consumer sends it: fetch.max.bytes
50 MiB, max.partition.fetch.bytes 1 MiB) reads a topic from the start to its end, then
keeps polling once caught up. It prints, per case:

- catch-up: MB/s and the emulator's CPU seconds to read everything;
- caught up: the emulator's CPU milliseconds per poll and the request and response
  bytes per poll (a sessionless consumer names every partition in every request and
  gets every partition back; a session sends and gets only what changed).

The emulator runs as its own process (one broker, so that one connection reads every
partition) and its CPU time comes from /proc. Asserts nothing; figures are noisy on a
shared machine.

    python bench/fetch_sessions.py [--mb 32] [--partitions 1,100,1000] [--polls 300]
"""

from __future__ import annotations

import argparse
import os
import socket
import struct
import subprocess
import sys
import time

from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from emulator.blocking_client import BlockingConnection  # noqa: E402

VERSION = 12
FETCH_MAX_BYTES = 50 * 1024 * 1024
PARTITION_MAX_BYTES = 1024 * 1024
RECORD_BYTES = 1024


def start_emulator() -> tuple[subprocess.Popen, str]:
    """``kafka-emulator --port 0`` as its own process; the bootstrap from its ready line."""
    proc = subprocess.Popen([sys.executable, "-m", "emulator", "--brokers", "1", "--port", "0",
                             "--log-level", "WARNING"], stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": ROOT})
    line = proc.stdout.readline() if proc.stdout else ""
    if "kafka-emulator ready: bootstrap servers " not in line:
        proc.kill()
        raise RuntimeError(f"kafka-emulator did not start: {line!r}")
    return proc, line.rsplit(" ", 1)[1].strip()


def cpu_s(proc: subprocess.Popen) -> float:
    with open(f"/proc/{proc.pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def fill(bootstrap: str, topic: str, partitions: int, mb: int) -> int:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, partitions, 1)])[topic].result()
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20,
                         "batch.size": 1 << 20, "compression.type": "none"})
    value = os.urandom(RECORD_BYTES)
    records = mb * 1024 * 1024 // RECORD_BYTES
    for i in range(records):
        while True:
            try:
                producer.produce(topic, value, partition=i % partitions)
                break
            except BufferError:
                producer.poll(0.05)
    producer.flush()
    return records


class Consumer:
    """A fetch loop over every partition of one topic, with or without a session."""

    def __init__(self, bootstrap: str, topic: str, partitions: int, session: bool) -> None:
        host, port = bootstrap.split(",")[0].rsplit(":", 1)
        self.conn = BlockingConnection(socket.create_connection((host, int(port))),
                                       "fetch-session-bench")
        self.topic = topic
        self.offsets = dict.fromkeys(range(partitions), 0)
        self.session = session
        self.session_id, self.epoch = 0, (0 if session else -1)
        self.changed = set(self.offsets)  # positions the broker has not been told yet
        self.sent_bytes = self.received_bytes = 0

    def _call(self, body: dict) -> dict:
        frame = self.conn.protocol.send_request(1, VERSION, body)
        self.conn.send_raw(frame)
        self.sent_bytes += len(frame)
        resp = self.conn.receive()
        self.received_bytes += resp.size
        return resp.body

    def poll(self) -> tuple[int, dict[int, int]]:
        """One Fetch: (record bytes, high watermark per answered partition)."""
        names = self.offsets if not self.session or self.epoch == 0 else self.changed
        body = {"replica_id": -1, "max_wait_ms": 0, "min_bytes": 1,
                "max_bytes": FETCH_MAX_BYTES, "isolation_level": 0,
                "session_id": self.session_id, "session_epoch": self.epoch,
                "topics": [{"topic": self.topic, "partitions": [
                    {"partition": i, "fetch_offset": self.offsets[i],
                     "partition_max_bytes": PARTITION_MAX_BYTES} for i in sorted(names)]}],
                "forgotten_topics_data": [], "rack_id": ""}
        resp = self._call(body)
        if resp["error_code"]:
            raise RuntimeError(f"fetch error {resp['error_code']}")
        if self.session:
            self.session_id = resp["session_id"]
            self.epoch = self.epoch + 1 if self.session_id else 0
        self.changed = set()
        size, hws = 0, {}
        for t in resp["responses"]:
            for p in t["partitions"]:
                hws[p["partition_index"]] = p["high_watermark"]
                records = p["records"] or b""
                size += len(records)
                end = _next_offset(records)
                if end is not None and end != self.offsets[p["partition_index"]]:
                    self.offsets[p["partition_index"]] = end
                    self.changed.add(p["partition_index"])
        return size, hws

    def close(self) -> None:
        self.conn.close()


def _next_offset(records: bytes) -> int | None:
    """The offset after the last whole batch in a fetched record set."""
    pos, end = 0, None
    while pos + 27 <= len(records):
        base, length = struct.unpack_from(">qi", records, pos)
        if pos + 12 + length > len(records):
            break
        end = base + struct.unpack_from(">i", records, pos + 23)[0] + 1
        pos += 12 + length
    return end


def run_case(proc: subprocess.Popen, bootstrap: str, topic: str, partitions: int,
             session: bool, polls: int) -> dict:
    consumer = Consumer(bootstrap, topic, partitions, session)
    hws: dict[int, int] = {}
    total = 0
    cpu0, t0 = cpu_s(proc), time.perf_counter()
    while True:
        size, answered = consumer.poll()
        total += size
        hws.update(answered)
        if len(hws) == partitions and all(consumer.offsets[i] >= hws[i] for i in hws):
            break
    wall, cpu = time.perf_counter() - t0, cpu_s(proc) - cpu0
    sent0, recv0 = consumer.sent_bytes, consumer.received_bytes
    cpu1 = cpu_s(proc)
    for _ in range(polls):
        consumer.poll()
    idle_cpu = cpu_s(proc) - cpu1
    out = {"mb_s": total / wall / 1e6, "catchup_cpu_s": cpu, "mb": total / 1e6,
           "poll_cpu_ms": idle_cpu * 1000 / polls,
           "req_bytes": (consumer.sent_bytes - sent0) / polls,
           "resp_bytes": (consumer.received_bytes - recv0) / polls}
    consumer.close()
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mb", type=int, default=32, help="MB per topic (default 32)")
    ap.add_argument("--partitions", default="1,100,1000")
    ap.add_argument("--polls", type=int, default=300, help="polls once caught up")
    args = ap.parse_args()
    proc, bootstrap = start_emulator()
    rows = []
    try:
        for n in (int(x) for x in args.partitions.split(",")):
            topic = f"fetch-sessions-{n}"
            fill(bootstrap, topic, n, args.mb)
            for session in (False, True):
                r = run_case(proc, bootstrap, topic, n, session, args.polls)
                rows.append((n, "session" if session else "no session", r))
                print(f"{n:>5} partitions, {rows[-1][1]:<10}: {r['mb_s']:7.1f} MB/s, "
                      f"catch-up CPU {r['catchup_cpu_s']:5.2f} s; caught up: "
                      f"{r['poll_cpu_ms']:6.2f} ms CPU/poll, {r['req_bytes']:8.0f} B request, "
                      f"{r['resp_bytes']:8.0f} B response", flush=True)
    finally:
        proc.terminate()
        proc.wait(10)
    return 0


if __name__ == "__main__":
    sys.exit(main())
