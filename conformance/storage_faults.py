"""What Apache Kafka answers when a log directory fails: the check behind the emulator's
storage faults (docs/storage.md, "Storage faults"), run on a real Kafka broker.

    sudo python -m conformance.storage_faults [--version 4.4.0]

Needs root (it mounts two 16 MiB tmpfs, and unmounts them at the end, whatever
happens) and Kafka's jars (client_tests/kafka_cluster.py). A KRaft cluster of three
brokers:

- broker 1: ``log.dirs = data-1,tmpfs-1`` (the metadata log lives in the first dir,
  so only the second one is filled: failing the metadata dir halts a broker);
- broker 2: ``log.dirs = data-2``;
- broker 3: ``log.dirs = tmpfs-3``, its only dir (and its metadata dir).

Topic ``sf`` (4 partitions, replicas [1, 2], broker 1 leading) spreads over broker 1's
two dirs; topic ``solo`` (1 partition, replicas [3, 2]) lives on broker 3. Then:

1. tmpfs-1 is filled (a file written until ENOSPC) and, at once, a record is produced
   (acks=all, raw Produce v9) to broker 1 for a partition in tmpfs-1 and one in data-1:
   the error codes Kafka answers;
2. a Fetch to broker 1 for both partitions; DescribeLogDirs of broker 1; Metadata
   (leader, ISR) of ``sf``: polled until the leadership moved, with the time it took;
3. a produce to broker 1 again for the failed partition (KAFKA_STORAGE_ERROR, or
   NOT_LEADER_OR_FOLLOWER once it knows the new leader?), and to the new leader;
4. tmpfs-3 is filled with no produce at all: how long until broker 3 notices (its
   checkpoints write every few seconds) and whether its process exits, with the
   fatal log line;
5. tmpfs-1 freed, broker 1 restarted (SIGKILL and start): its dirs online again,
   and every acknowledged record still there (ListOffsets end offsets).

Everything Kafka answered is printed, one line per observation; nothing is asserted
(client_tests/test_storage_faults.py holds the emulator to these answers).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from client_tests.kafka_cluster import DEFAULT_VERSION, KafkaCluster, request
from wire.errors import ErrorCode
from wire.records import build_batch

TMPFS_SIZE = "16m"


def name(code: int) -> str:
    try:
        return f"{ErrorCode(code).name} ({code})"
    except ValueError:
        return str(code)


def say(what: str, **facts: object) -> None:
    print(f"{time.strftime('%H:%M:%S')} {what}: "
          + ", ".join(f"{k}={v}" for k, v in facts.items()), flush=True)


@contextlib.contextmanager
def tmpfs(path: Path) -> Iterator[Path]:
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={TMPFS_SIZE}", "tmpfs", str(path)],
                   check=True)
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


def fill(path: Path) -> int:
    """Write zeros into ``path``/filler until the file system is full: bytes written."""
    written = 0
    chunk = b"\0" * 65536
    fd = os.open(path / "filler", os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    try:
        while True:
            try:
                n = os.write(fd, chunk)
            except OSError:
                try:
                    n = os.write(fd, b"\0" * 512)
                except OSError:
                    break
            written += n
    finally:
        os.close(fd)
    return written


class Raw:
    """Raw requests to one broker of the cluster, decoded with wire/."""

    def __init__(self, kafka: KafkaCluster) -> None:
        self.kafka = kafka

    def call(self, broker: int, key: int, version: int, body: dict) -> dict:
        port = self.kafka.listener_port(broker)
        with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
            return request(s, key, version, body, "storage-faults-check")

    def produce(self, broker: int, topic: str, partition: int, acks: int = -1) -> int:
        batch = build_batch([(b"k", b"v" * 100)], timestamp=int(time.time() * 1000))
        r = self.call(broker, 0, 9, {"transactional_id": None, "acks": acks,
                                     "timeout_ms": 10000, "topic_data": [
            {"name": topic, "partition_data": [{"index": partition, "records": batch}]}]})
        return r["responses"][0]["partition_responses"][0]["error_code"]

    def fetch(self, broker: int, topic: str, partition: int) -> int:
        r = self.call(broker, 1, 12, {
            "replica_id": -1, "max_wait_ms": 0, "min_bytes": 0, "max_bytes": 1 << 20,
            "isolation_level": 0, "session_id": 0, "session_epoch": -1,
            "topics": [{"topic": topic, "partitions": [
                {"partition": partition, "fetch_offset": 0, "partition_max_bytes": 1 << 20,
                 "current_leader_epoch": -1, "log_start_offset": -1}]}],
            "forgotten_topics_data": [], "rack_id": ""})
        return r["responses"][0]["partitions"][0]["error_code"]

    def log_dirs(self, broker: int) -> dict[str, tuple[int, list[tuple[str, int]]]]:
        r = self.call(broker, 35, 4, {"topics": None})
        return {d["log_dir"]: (d["error_code"], sorted(
            (t["name"], p["partition_index"]) for t in d["topics"] for p in t["partitions"]))
            for d in r["results"]}

    def partitions(self, broker: int, topic: str) -> dict[int, tuple[int, list[int], list[int]]]:
        """partition -> (leader, isr, offline replicas)."""
        r = self.call(broker, 3, 12, {"topics": [{"topic_id": bytes(16), "name": topic}],
                                      "allow_auto_topic_creation": False,
                                      "include_topic_authorized_operations": False})
        return {p["partition_index"]: (p["leader_id"], sorted(p["isr_nodes"]),
                                       sorted(p["offline_replicas"]))
                for p in r["topics"][0]["partitions"]}

    def end_offsets(self, broker: int, topic: str, partitions: list[int]) -> dict[int, object]:
        r = self.call(broker, 2, 7, {"replica_id": -1, "isolation_level": 0, "topics": [
            {"name": topic, "partitions": [{"partition_index": i, "current_leader_epoch": -1,
                                            "timestamp": -1} for i in partitions]}]})
        return {p["partition_index"]: (p["offset"] if p["error_code"] == 0
                                       else name(p["error_code"]))
                for p in r["topics"][0]["partitions"]}

    def create(self, topic: str, assignments: dict[int, list[int]]) -> None:
        r = self.call(1, 19, 7, {"topics": [{
            "name": topic, "num_partitions": -1, "replication_factor": -1,
            "assignments": [{"partition_index": i, "broker_ids": b}
                            for i, b in assignments.items()], "configs": []}],
            "timeout_ms": 30000})
        say("CreateTopics", topic=topic, error=name(r["topics"][0]["error_code"]))


def wait(cond, timeout: float, interval: float = 0.2):  # noqa: ANN001, ANN201
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        v = cond()
        if v:
            return v
        time.sleep(interval)
    return None


def run(version: str) -> None:
    work = Path(tempfile.mkdtemp(prefix="storage-faults-"))
    t1, t3 = work / "tmpfs-1", work / "tmpfs-3"
    with tmpfs(t1), tmpfs(t3):
        (work / "kafka").mkdir()
        dirs = {1: f"{work / 'data-1'},{t1}", 2: str(work / "data-2"), 3: str(t3)}
        kafka = KafkaCluster(brokers=3, version=version, workdir=work / "kafka",
                             broker_config=lambda i: {"log.dirs": dirs[i]})
        try:
            kafka.start()
            check(kafka, t1, t3)
        finally:
            kafka.stop()
    subprocess.run(["rm", "-rf", str(work)], check=False)


def processes(kafka: KafkaCluster) -> str:
    nodes = [kafka.controller, *kafka.brokers.values()]
    return ", ".join(f"{n.node_id}:{'up' if n.alive else f'exit {n.proc.returncode}'}"
                     for n in nodes if n is not None and n.proc is not None)


def check(kafka: KafkaCluster, t1: Path, t3: Path) -> None:
    raw = Raw(kafka)
    say("started", processes=processes(kafka))
    raw.create("sf", {i: [1, 2] for i in range(4)})
    raw.create("solo", {0: [3, 2]})
    wait(lambda: len(raw.partitions(1, "sf")) == 4 and all(
        v[0] >= 0 for v in raw.partitions(1, "sf").values())
         and raw.partitions(1, "solo").get(0, (-1,))[0] >= 0, 30)
    say("topics created", processes=processes(kafka))
    dirs = raw.log_dirs(1)
    for d, (err, parts) in sorted(dirs.items()):
        say("broker 1 log dir", dir=d, error=name(err), partitions=parts)
    on_t1 = [p for _, p in dirs.get(str(t1), (0, []))[1] if _ == "sf"]
    on_d1 = [p for p in range(4) if p not in on_t1]
    say("placement", tmpfs_partitions=on_t1, other_partitions=on_d1)
    acked = {p: 0 for p in range(4)}
    for p in range(4):
        for _ in range(3):
            if raw.produce(1, "sf", p) == 0:
                acked[p] += 1
    say("before the fault", acked=acked, end_offsets=raw.end_offsets(1, "sf", list(range(4))))

    # 1. disk full under a produce
    filled = fill(t1)
    t0 = time.monotonic()
    fp, ok = on_t1[0], on_d1[0]
    e_full = raw.produce(1, "sf", fp)
    e_other = raw.produce(1, "sf", ok)
    acked[ok] += e_other == 0
    acked[fp] += e_full == 0
    say("disk full: produce acks=all to broker 1", bytes_filled=filled,
        failed_dir_partition=f"{fp}: {name(e_full)}", other_dir_partition=f"{ok}: {name(e_other)}")
    say("fetch from broker 1", failed_dir_partition=name(raw.fetch(1, "sf", fp)),
        other_dir_partition=name(raw.fetch(1, "sf", ok)))
    moved = wait(lambda: raw.partitions(2, "sf")[fp][0] == 2, 30)
    say("leadership moved", after_s=f"{time.monotonic() - t0:.2f}", moved=bool(moved),
        metadata=raw.partitions(2, "sf"))
    for d, (err, parts) in sorted(raw.log_dirs(1).items()):
        say("broker 1 log dir after", dir=d, error=name(err), partitions=parts)
    e_again = raw.produce(1, "sf", fp)
    say("produce to broker 1 again", failed_dir_partition=name(e_again),
        fetch=name(raw.fetch(1, "sf", fp)))
    e_new = raw.produce(2, "sf", fp)
    acked[fp] += e_new == 0
    say("produce to the new leader (broker 2)", error=name(e_new),
        broker_1_alive=kafka.brokers[1].alive)
    for p in on_d1:
        e = raw.produce(1, "sf", p)
        acked[p] += e == 0
        say("broker 1 still leads its other dir", partition=p, produce=name(e))

    # 2. a broker's only dir full, nothing produced
    filled = fill(t3)
    t0 = time.monotonic()
    noticed = wait(lambda: raw.partitions(2, "solo").get(0, (-1,))[0] == 2, 60)
    say("broker 3 (one dir) filled, no produce", bytes_filled=filled,
        leadership_moved_after_s=f"{time.monotonic() - t0:.2f}" if noticed else "never (60 s)",
        metadata=raw.partitions(2, "solo"))
    exited = wait(lambda: not kafka.brokers[3].alive, 30)
    node3 = kafka.brokers[3]
    say("broker 3 process", exited=bool(exited),
        exit_code=node3.proc.returncode if node3.proc else None)
    for line in kafka.log_tail(3, 400).splitlines():
        if any(w in line for w in ("ERROR", "FATAL", "Halting", "Shutdown broker",
                                   "offline", "Stopping serving")):
            print("   broker 3 log:", line[:300])
    for line in kafka.log_tail(1, 400).splitlines():
        if any(w in line for w in ("Stopping serving", "offline", "FATAL", "Shutdown")):
            print("   broker 1 log:", line[:300])

    # 3. recovery: free the dir, restart broker 1
    os.unlink(t1 / "filler")
    kafka.kill_broker(1)
    kafka.start_broker(1)
    back = wait(lambda: all(v[1] == [1, 2] for v in raw.partitions(1, "sf").values()), 60)
    for d, (err, parts) in sorted(raw.log_dirs(1).items()):
        say("broker 1 log dir after restart", dir=d, error=name(err), partitions=parts)
    say("after restart", isr_back=bool(back), metadata=raw.partitions(1, "sf"),
        acked=acked, end_offsets=raw.end_offsets(2, "sf", list(range(4))))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--version", default=DEFAULT_VERSION, help="Kafka release (default "
                    f"{DEFAULT_VERSION})")
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("storage_faults: needs root (it mounts tmpfs file systems)")
    # a SIGTERM unwinds like Ctrl-C: the JVMs stop and the tmpfs are unmounted
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("storage_faults: terminated"))
    run(args.version)


if __name__ == "__main__":
    main()
