"""Two brokers, broker 1 with two log dirs, one of which can fail: the emulator (a
``disk_full`` storage fault) or a real Kafka cluster of its own whose second log dir of
broker 1 is a 16 MiB tmpfs filled to the last block (needs root to mount it). The
``log_dir_cluster`` fixture of client_tests/conftest.py gives one or the other;
client_tests/test_log_dir_failure.py runs on both."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from confluent_kafka import Producer

from client_tests.kafka_cluster import KafkaCluster, request
from client_tests.rawkafka import fetch_body
from emulator import Cluster
from emulator.testing import wait_for
from wire.errors import ErrorCode as E
from wire.records import build_batch

TOPIC = "ldf"


@dataclass
class Side:
    """One target, seen through what the test needs."""

    bootstrap: str
    port: Callable[[int], int]
    failing_dir: str  # broker 1's log dir that fails
    fail: Callable[[], None]
    heal_and_restart: Callable[[], None]
    broker_up: Callable[[int], bool]


def call(side: Side, broker: int, key: int, version: int, body: dict) -> dict:
    with socket.create_connection(("127.0.0.1", side.port(broker)), timeout=30) as s:
        return request(s, key, version, body, "log-dir-failure-test")


def produce(side: Side, broker: int, partition: int) -> int:
    batch = build_batch([(b"k", b"v")], timestamp=int(time.time() * 1000))
    r = call(side, broker, 0, 9, {"transactional_id": None, "acks": -1, "timeout_ms": 10000,
                                  "topic_data": [{"name": TOPIC, "partition_data": [
                                      {"index": partition, "records": batch}]}]})
    return r["responses"][0]["partition_responses"][0]["error_code"]


def fetch(side: Side, broker: int, partition: int) -> int:
    r = call(side, broker, 1, 12,
             fetch_body(TOPIC, partition=partition, max_bytes=1 << 20))
    return r["responses"][0]["partitions"][0]["error_code"]


def log_dirs(side: Side, broker: int) -> dict[str, tuple[int, list[int]]]:
    r = call(side, broker, 35, 4, {"topics": [{"topic": TOPIC, "partitions": [0, 1, 2, 3]}]})
    return {d["log_dir"]: (d["error_code"], sorted(
        p["partition_index"] for t in d["topics"] for p in t["partitions"]))
        for d in r["results"]}


def partitions(side: Side, broker: int) -> dict[int, tuple[int, list[int], list[int]]]:
    r = call(side, broker, 3, 12, {"topics": [{"topic_id": bytes(16), "name": TOPIC}],
                                   "allow_auto_topic_creation": False,
                                   "include_topic_authorized_operations": False})
    return {p["partition_index"]: (p["leader_id"], sorted(p["isr_nodes"]),
                                   sorted(p["offline_replicas"]))
            for p in r["topics"][0]["partitions"]}


def create(side: Side) -> None:
    r = call(side, 1, 19, 7, {"topics": [{
        "name": TOPIC, "num_partitions": -1, "replication_factor": -1,
        "assignments": [{"partition_index": i, "broker_ids": [1, 2]} for i in range(4)],
        "configs": []}], "timeout_ms": 30000})
    assert r["topics"][0]["error_code"] == E.NONE
    wait_for(lambda: len(partitions(side, 2)) == 4 and all(
        v[0] == 1 and v[1] == [1, 2] for v in partitions(side, 2).values()),
        "the topic's leaders and ISRs", timeout=30)


def deliver(side: Side, count: int) -> dict[int, int]:
    p = Producer({"bootstrap.servers": side.bootstrap, "acks": "all", "linger.ms": 0,
                  "message.timeout.ms": 60000})
    acked: dict[int, int] = {}

    def done(err: object, msg: object) -> None:
        if err is None:
            acked[msg.partition()] = acked.get(msg.partition(), 0) + 1  # type: ignore[attr-defined]

    for i in range(count):
        for part in range(4):
            p.produce(TOPIC, f"{i}".encode(), partition=part, on_delivery=done)
        p.poll(0)
    p.flush(70)
    return acked


# ---- the two targets ----------------------------------------------------------------------
@contextlib.contextmanager
def emulator_side() -> Iterator[Side]:
    dirs = ("/var/kafka/a", "/var/kafka/b")
    with Cluster(brokers=2, port=0, config={"log.dirs": ",".join(dirs)}) as c:
        def heal_and_restart() -> None:
            c.heal_storage(1)
            c.stop_broker(1)
            c.start_broker(1)

        def up(b: int) -> bool:
            return c.state.is_alive(b)

        yield Side(c.bootstrap_servers, lambda b: c.state.brokers[b].port, dirs[1],
                   lambda: c.disk_full(1, log_dir=dirs[1]), heal_and_restart, up)


def _fill(path: Path) -> None:
    fd = os.open(path / "filler", os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    try:
        for size in (1 << 16, 512):
            with contextlib.suppress(OSError):
                while os.write(fd, b"\0" * size):
                    pass
    finally:
        os.close(fd)


@contextlib.contextmanager
def kafka_side() -> Iterator[Side]:
    if os.geteuid() != 0:
        pytest.fail("--target kafka: this test mounts a tmpfs as a broker's log dir and "
                    "needs root")
    work = Path(tempfile.mkdtemp(prefix="log-dir-failure-"))
    small = work / "tmpfs-1"
    small.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", str(small)],
                   check=True)
    try:
        (work / "kafka").mkdir()
        dirs = {1: f"{work / 'data-1'},{small}", 2: str(work / "data-2")}
        with KafkaCluster(brokers=2, workdir=work / "kafka",
                          broker_config=lambda i: {"log.dirs": dirs[i]}) as kafka:
            def heal_and_restart() -> None:
                os.unlink(small / "filler")
                kafka.kill_broker(1)
                kafka.start_broker(1)

            yield Side(kafka.bootstrap_servers, kafka.listener_port, str(small),
                       lambda: _fill(small), heal_and_restart,
                       lambda b: kafka.brokers[b].alive)
    finally:
        subprocess.run(["umount", "-l", str(small)], check=False)
        subprocess.run(["rm", "-rf", str(work)], check=False)
