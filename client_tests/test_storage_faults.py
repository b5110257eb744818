"""Storage faults with real clients over TCP: a log dir that fills up, fails its
writes or fsyncs, or writes slowly, answered as Kafka 4.4 answers (docs/faults.md,
"Storage faults"), and recovery with nothing acknowledged lost.

What Kafka does was measured on a real 4.4 broker with a filled tmpfs as one of its
log.dirs (conformance/storage_faults.py; its output is in docs/storage.md): produce and
fetch to the broker for a partition in the failed dir answer KAFKA_STORAGE_ERROR (56),
DescribeLogDirs gives the dir KAFKA_STORAGE_ERROR and no partitions, the controller
moves leadership to the other replica (ISR without the broker, the broker in
offline_replicas), the broker keeps leading its partitions in its other dir, a broker
whose only (metadata) dir fails halts, and a restart on the freed dir brings the dir
and the ISR back with every acknowledged record. These tests hold the emulator to that;
they are emulator-only (injecting the fault on Kafka needs root and tmpfs mounts: the
conformance script does it).
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from kafka import KafkaProducer

from client_tests.process_guard import die_with_parent
from client_tests.rawkafka import fetch_body
from client_tests.reading import end_offsets
from emulator import Cluster
from emulator.blocking_client import BlockingConnection
from emulator.testing import wait_for
from wire.errors import ErrorCode as E
from wire.records import build_batch

# Not run with --target kafka: see the module docstring (conformance/storage_faults.py).
pytestmark = pytest.mark.emulator_only

META_DIR, DATA_DIR = "/var/kafka/meta-and-data", "/var/kafka/data-2"
TWO_DIRS = {"log.dirs": f"{META_DIR},{DATA_DIR}"}


# ---- raw requests, to see the exact codes -------------------------------------------------
def raw(c: Cluster, broker: int, key: int, version: int, body: dict) -> dict:
    b = c.state.brokers[broker]
    with BlockingConnection.connect("127.0.0.1", b.port) as conn:
        return conn.call(key, version, body)


def produce(c: Cluster, broker: int, topic: str, partition: int, acks: int = -1) -> int:
    batch = build_batch([(b"k", b"v")], timestamp=int(time.time() * 1000))
    r = raw(c, broker, 0, 9, {"transactional_id": None, "acks": acks, "timeout_ms": 10000,
                              "topic_data": [{"name": topic, "partition_data": [
                                  {"index": partition, "records": batch}]}]})
    return r["responses"][0]["partition_responses"][0]["error_code"]


def fetch(c: Cluster, broker: int, topic: str, partition: int) -> int:
    r = raw(c, broker, 1, 12, fetch_body(topic, partition=partition, max_bytes=1 << 20))
    return r["responses"][0]["partitions"][0]["error_code"]


def log_dirs(c: Cluster, broker: int) -> dict[str, tuple[int, list[tuple[str, int]]]]:
    """DescribeLogDirs of every partition: dir -> (error, the test's partitions there)."""
    r = raw(c, broker, 35, 4, {"topics": None})
    return {d["log_dir"]: (d["error_code"], sorted(
        (t["name"], p["partition_index"]) for t in d["topics"] for p in t["partitions"]
        if not t["name"].startswith("__")))
        for d in r["results"]}


def partitions(c: Cluster, broker: int, topic: str) -> dict[int, tuple[int, list, list]]:
    """partition -> (leader, isr, offline replicas), from Metadata v12."""
    r = raw(c, broker, 3, 12, {"topics": [{"topic_id": bytes(16), "name": topic}],
                               "allow_auto_topic_creation": False,
                               "include_topic_authorized_operations": False})
    return {p["partition_index"]: (p["leader_id"], sorted(p["isr_nodes"]),
                                   sorted(p["offline_replicas"]))
            for p in r["topics"][0]["partitions"]}


def settle(c: Cluster, broker: int, topic: str, expected: dict[int, tuple]) -> None:
    """Until Metadata from ``broker`` shows ``expected`` (partition -> (leader, isr,
    offline replicas)): at once by default, after the metadata propagates under
    --fidelity kafka (and after the session timeout for a halted broker)."""
    wait_for(lambda: all(partitions(c, broker, topic)[i] == v for i, v in expected.items()),
             f"{topic} settles to {expected}", timeout=30)


def create(c: Cluster, name: str, assignments: dict[int, list[int]],
           configs: dict[str, str] | None = None) -> None:
    """The topic, once every broker's metadata names its leaders (under --fidelity kafka
    the brokers learn it a little later, as on Kafka)."""
    c.call(lambda: c.state.create_topic(name, assignments=assignments, configs=configs))
    leaders = {i: r[0] for i, r in assignments.items()}
    wait_for(lambda: all({i: v[0] for i, v in _known(c, b, name).items()} == leaders
                         for b in c.state.alive_brokers()),
             f"every broker knows {name}", timeout=30, interval=0.02)


def _known(c: Cluster, broker: int, topic: str) -> dict[int, tuple[int, list, list]]:
    try:
        return partitions(c, broker, topic)
    except (IndexError, KeyError):
        return {}


def refused(c: Cluster, broker: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", c.state.brokers[broker].port), timeout=5).close()
    except ConnectionRefusedError:
        return True
    return False


def deliver(bootstrap: str, topic: str, count: int, acks: str = "all",
            timeout_ms: int = 30000, partitions: int | None = None) -> dict[int, int]:
    """confluent-kafka produces ``count`` records to each partition of ``topic``
    (retrying as it does by default); the records acknowledged, per partition."""
    p = Producer({"bootstrap.servers": bootstrap, "acks": acks,
                  "message.timeout.ms": timeout_ms, "linger.ms": 0})
    acked: dict[int, int] = {}

    def done(err: object, msg: object) -> None:
        if err is None:
            acked[msg.partition()] = acked.get(msg.partition(), 0) + 1  # type: ignore[attr-defined]

    n = partitions or len(p.list_topics(topic, timeout=10).topics[topic].partitions)
    for i in range(count):
        for part in range(n):
            p.produce(topic, f"{i}".encode(), partition=part, on_delivery=done)
        p.poll(0)
    p.flush(timeout_ms / 1000 + 10)
    return acked


@pytest.fixture
def two_dirs(tmp_path: Path) -> Iterator[Cluster]:
    """Three brokers with two log dirs each, on a data dir."""
    with Cluster(brokers=3, port=0, config=dict(TWO_DIRS), data_dir=str(tmp_path / "data")) as c:
        yield c


# ---- one dir of a broker fails --------------------------------------------------------
def test_disk_full_takes_one_dir_offline_and_leadership_moves(two_dirs: Cluster) -> None:
    c = two_dirs
    create(c, "sf", {i: [1, 2] for i in range(4)})
    # partition i lives in log dir i mod 2: 1 and 3 in DATA_DIR, 0 and 2 in META_DIR
    assert log_dirs(c, 1) == {META_DIR: (E.NONE, [("sf", 0), ("sf", 2)]),
                              DATA_DIR: (E.NONE, [("sf", 1), ("sf", 3)])}
    before = deliver(c.bootstrap_servers, "sf", 3)
    assert before == {0: 3, 1: 3, 2: 3, 3: 3}

    c.disk_full(1, log_dir=DATA_DIR)
    assert produce(c, 1, "sf", 1) == E.KAFKA_STORAGE_ERROR  # the write that failed
    # as on Kafka: the dir is offline, its replicas moved, the other dir serves on
    assert log_dirs(c, 1) == {META_DIR: (E.NONE, [("sf", 0), ("sf", 2)]),
                              DATA_DIR: (E.KAFKA_STORAGE_ERROR, [])}
    settle(c, 2, "sf", {1: (2, [2], [1]), 3: (2, [2], [1]), 0: (1, [1, 2], []),
                        2: (1, [1, 2], [])})
    assert produce(c, 1, "sf", 1) == E.KAFKA_STORAGE_ERROR  # not NOT_LEADER: Offline
    assert fetch(c, 1, "sf", 1) == E.KAFKA_STORAGE_ERROR
    assert produce(c, 1, "sf", 0) == E.NONE and fetch(c, 1, "sf", 0) == E.NONE
    assert produce(c, 2, "sf", 1) == E.NONE
    assert not refused(c, 1)  # the broker stays up for its other dir

    # a client retries KAFKA_STORAGE_ERROR (retriable, refreshes metadata): all delivered
    during = deliver(c.bootstrap_servers, "sf", 5)
    assert during == {0: 5, 1: 5, 2: 5, 3: 5}

    # recovery: the fault ends, the broker restarts: the dir is back, the ISR regrows
    c.heal_storage(1)
    c.stop_broker(1)
    c.start_broker(1)
    wait_for(lambda: all(v[1] == [1, 2] for v in partitions(c, 2, "sf").values()),
             "the ISR regrows after the restart", timeout=20)
    assert {d: e for d, (e, _) in log_dirs(c, 1).items()} == {META_DIR: E.NONE,
                                                               DATA_DIR: E.NONE}
    # +1 for the raw acks=all produces that were answered NONE above (0 and 1)
    expected = {0: 3 + 5 + 1, 1: 3 + 5 + 1, 2: 3 + 5, 3: 3 + 5}
    assert end_offsets(c.bootstrap_servers, "sf", 4) == expected


def test_failed_writes_on_a_followers_dir_shrink_the_isr(two_dirs: Cluster) -> None:
    c = two_dirs
    create(c, "fw", {0: [1, 2], 1: [1, 2]})
    c.fail_writes(2, log_dir=DATA_DIR)  # broker 2's replica of partition 1
    kp = KafkaProducer(bootstrap_servers=c.bootstrap_servers, acks="all", retries=5)
    try:
        for i in range(10):
            kp.send("fw", f"{i}".encode(), partition=i % 2).get(timeout=30)
    finally:
        kp.close()
    # the follower's dir failed at its first write
    settle(c, 1, "fw", {1: (1, [1], [2]), 0: (1, [1, 2], [])})
    assert log_dirs(c, 2)[DATA_DIR] == (E.KAFKA_STORAGE_ERROR, [])
    assert fetch(c, 2, "fw", 1) == E.KAFKA_STORAGE_ERROR
    assert end_offsets(c.bootstrap_servers, "fw", 2) == {0: 5, 1: 5}


def test_failed_fsyncs_take_the_dir_offline_at_its_next_checkpoint(tmp_path: Path) -> None:
    cfg = {**TWO_DIRS, "replica.high.watermark.checkpoint.interval.ms": "300"}
    with Cluster(brokers=3, port=0, config=cfg, data_dir=str(tmp_path / "d")) as c:
        create(c, "fs", {0: [2, 1], 1: [1, 2]})
        c.fail_fsyncs(1, log_dir=DATA_DIR)
        # the write itself succeeds (nothing is flushed on the produce path) ...
        assert produce(c, 1, "fs", 1) == E.NONE
        # ... the checkpoint's fsync fails soon after: the dir goes offline
        wait_for(lambda: log_dirs(c, 1)[DATA_DIR][0] == E.KAFKA_STORAGE_ERROR,
                 "the dir fails at its checkpoint", timeout=10)
        settle(c, 1, "fs", {1: (2, [2], [1])})
        assert deliver(c.bootstrap_servers, "fs", 3) == {0: 3, 1: 3}
        assert end_offsets(c.bootstrap_servers, "fs", 2) == {0: 3, 1: 4}


def test_failed_fsyncs_fail_the_produce_when_every_append_is_flushed(
        two_dirs: Cluster) -> None:
    c = two_dirs
    create(c, "fs1", {0: [1, 2], 1: [1, 2]}, {"flush.messages": "1"})
    c.fail_fsyncs(1, log_dir=DATA_DIR)
    assert produce(c, 1, "fs1", 1) == E.KAFKA_STORAGE_ERROR  # its flush failed
    settle(c, 2, "fs1", {1: (2, [2], [1])})
    assert produce(c, 1, "fs1", 0) == E.NONE  # the other dir flushes fine


# ---- the broker's last dir fails: it halts ------------------------------------------------
def test_a_broker_whose_only_dir_fails_halts_and_its_leaders_move(tmp_path: Path) -> None:
    with Cluster(brokers=3, port=0, data_dir=str(tmp_path / "d")) as c:
        create(c, "solo", {0: [3, 2], 1: [2, 3]})
        assert deliver(c.bootstrap_servers, "solo", 2) == {0: 2, 1: 2}
        c.disk_full(3)
        # its only dir holds the metadata log, written all the time: it halts at once,
        # as Kafka's broker did (its raft IO thread's fatal fault), with nothing produced
        wait_for(lambda: refused(c, 3), "broker 3 halts: its listener closes", timeout=10)
        settle(c, 2, "solo", {0: (2, [2], [3]), 1: (2, [2], [3])})
        assert deliver(c.bootstrap_servers, "solo", 3) == {0: 3, 1: 3}
        c.heal_storage(3)
        c.start_broker(3)
        wait_for(lambda: all(v[1] == [2, 3] for v in partitions(c, 2, "solo").values()),
                 "broker 3 back in the ISR", timeout=20)
        assert end_offsets(c.bootstrap_servers, "solo", 2) == {0: 5, 1: 5}


# ---- slow writes ---------------------------------------------------------------------
def test_slow_writes_delay_the_acknowledgement_not_other_brokers(two_dirs: Cluster) -> None:
    c = two_dirs
    create(c, "slow", {0: [1, 2], 1: [2, 1]})
    # both clients connected and warm first, so only the writes are timed
    p = Producer({"bootstrap.servers": c.bootstrap_servers, "acks": "1", "linger.ms": 0})
    p.produce("slow", b"warm", partition=0)
    assert p.flush(10) == 0
    kp = KafkaProducer(bootstrap_servers=c.bootstrap_servers, acks=1)
    try:
        kp.send("slow", b"warm", partition=1).get(timeout=10)
        c.slow_writes(1, 1500)
        order: list[str] = []
        # Timed on the broker's own clock, whole wall-clock milliseconds as Kafka's
        # time.milliseconds(): the write that starts in millisecond t is done at t + 1500,
        # up to a millisecond less than 1.5 s of a finer clock (one run measured 1.49984 s
        # with time.monotonic()); read before the request leaves and after its answer came,
        # the broker's clock brackets the write exactly.
        start = c.state.now()
        p.produce("slow", b"slow", partition=0,
                  on_delivery=lambda err, m: order.append(f"slow:{err}"))
        p.poll(0)
        for i in range(5):  # broker 2 answers meanwhile, while broker 1 writes
            kp.send("slow", f"fast{i}".encode(), partition=1).get(timeout=10)
            order.append("fast")
        p.flush(10)
        waited_ms = c.state.now() - start
    finally:
        kp.close()
    assert order == ["fast"] * 5 + ["slow:None"]
    assert waited_ms >= 1500  # the acknowledgement waited for the write
    c.slow_writes(1, 0)
    assert end_offsets(c.bootstrap_servers, "slow", 2) == {0: 2, 1: 6}


# ---- a single broker, acks=1, after clearing the fault ---------------------------------
def test_single_broker_restart_on_the_same_dir_loses_nothing_acknowledged(
        tmp_path: Path) -> None:
    data = str(tmp_path / "single")
    with Cluster(brokers=1, port=0, data_dir=data) as c:
        c.create_topic("one", partitions=2, replication_factor=1)
        assert deliver(c.bootstrap_servers, "one", 4, acks="1") == {0: 4, 1: 4}
        c.disk_full(1)  # its only dir, with the metadata log: it halts at once
        wait_for(lambda: refused(c, 1), "the broker halts", timeout=10)
        lost = deliver(c.bootstrap_servers, "one", 2, acks="1", timeout_ms=2000,
                       partitions=2)
        assert lost == {}  # nothing acknowledged while it is down
        c.clear_faults()
        c.start_broker(1)
        assert deliver(c.bootstrap_servers, "one", 3, acks="1") == {0: 3, 1: 3}
    with Cluster(brokers=1, port=0, data_dir=data) as c:  # the same dir, a new process
        assert end_offsets(c.bootstrap_servers, "one", 2) == {0: 7, 1: 7}
        consumer = Consumer({"bootstrap.servers": c.bootstrap_servers, "group.id": "r",
                             "auto.offset.reset": "earliest"})
        try:
            consumer.assign([TopicPartition("one", 0, 0)])
            got = []
            deadline = time.monotonic() + 20
            while len(got) < 7 and time.monotonic() < deadline:
                m = consumer.poll(1)
                if m is not None and not m.error():
                    got.append(m.value())
        finally:
            consumer.close()
        assert got == [b"0", b"1", b"2", b"3", b"0", b"1", b"2"]


# ---- every way in: control plane, command line, schedule --------------------------------
def test_storage_faults_through_the_control_plane_cli_and_schedule(tmp_path: Path) -> None:
    with Cluster(brokers=3, port=0, control_port=0, config=dict(TWO_DIRS),
                 data_dir=str(tmp_path / "d")) as c:
        create(c, "cp", {0: [1, 2], 1: [1, 2]})
        base = f"http://127.0.0.1:{c.control.port}"
        r = subprocess.run([sys.executable, "-m", "emulator", "fault", "--control", base,
                            "fail-writes", "1", "--log-dir", DATA_DIR],
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        r = subprocess.run([sys.executable, "-m", "emulator", "fault", "--control", base,
                            "disk-full", "1", "--log-dir", "/nope"],
                           capture_output=True, text=True, timeout=60)
        assert r.returncode != 0 and "not a log dir of broker 1" in r.stdout + r.stderr
        assert produce(c, 1, "cp", 1) == E.KAFKA_STORAGE_ERROR
        r = subprocess.run([sys.executable, "-m", "emulator", "fault", "--control", base,
                            "list"], capture_output=True, text=True, timeout=60)
        assert '"offline_log_dirs"' in r.stdout and DATA_DIR in r.stdout
        r = subprocess.run([sys.executable, "-m", "emulator", "fault", "--control", base,
                            "cluster"], capture_output=True, text=True, timeout=60)
        b1 = next(b for b in json.loads(r.stdout)["brokers"] if b["id"] == 1)
        assert b1["offline_log_dirs"] == [DATA_DIR] and b1["alive"]
        # the seeded schedule: broker 2's only-data dir fails at 0 ms
        step = {"at_ms": 0, "op": "disk_full", "broker": 2, "log_dir": DATA_DIR}
        result = c.run_fault_schedule(json.dumps(step) + "\n")
        assert result is not None
        create(c, "cp2", {0: [3, 2], 1: [3, 2]})
        assert produce(c, 3, "cp2", 1) == E.NONE
        wait_for(lambda: partitions(c, 3, "cp2")[1] == (3, [3], [2]),
                 "broker 2's replica in the failed dir leaves the ISR", timeout=10)


def test_many_writers_while_a_dir_fails_lose_nothing_acknowledged(tmp_path: Path) -> None:
    """Producers keep writing (acks=all, idempotent) while the leader's dir fails:
    every acknowledged record is in the log exactly once, also after the whole process
    restarts on the same data directory."""
    data = str(tmp_path / "race")
    acked: list[tuple[int, bytes]] = []
    with Cluster(brokers=3, port=0, config=dict(TWO_DIRS), data_dir=data) as c:
        create(c, "race", {i: [1, 2, 3] for i in range(4)})
        stop = threading.Event()

        def write() -> None:
            p = Producer({"bootstrap.servers": c.bootstrap_servers, "acks": "all",
                          "enable.idempotence": True, "linger.ms": 1})
            i = 0
            while not stop.is_set():
                p.produce("race", f"{i}".encode(), partition=i % 4,
                          on_delivery=lambda e, m: e is None and acked.append(
                              (m.partition(), m.value())))
                p.poll(0)
                i += 1
                time.sleep(0.001)
            p.flush(30)

        t = threading.Thread(target=write)
        t.start()
        time.sleep(0.5)
        c.disk_full(1, log_dir=DATA_DIR)
        time.sleep(1.0)
        stop.set()
        t.join(60)
        wait_for(lambda: partitions(c, 2, "race")[1][0] != 1, "race-1 moved", timeout=30)
    counts: dict[int, int] = {}
    for part, _ in acked:
        counts[part] = counts.get(part, 0) + 1
    assert len(counts) == 4
    with Cluster(brokers=3, port=0, config=dict(TWO_DIRS), data_dir=data) as c:
        assert end_offsets(c.bootstrap_servers, "race", 4) == counts
        consumer = Consumer({"bootstrap.servers": c.bootstrap_servers, "group.id": "race",
                             "auto.offset.reset": "earliest"})
        try:
            consumer.assign([TopicPartition("race", 1, 0)])
            got: list[bytes] = []
            deadline = time.monotonic() + 30
            while len(got) < counts[1] and time.monotonic() < deadline:
                m = consumer.poll(1)
                if m is not None and not m.error():
                    got.append(m.value())
        finally:
            consumer.close()
        assert got == [v for part, v in acked if part == 1]  # once each, in order


# ---- a real write error from the data directory (not an injected fault) -------------------
FILE_LIMIT = 64 * 1024  # RLIMIT_FSIZE of the emulator's process: no file may grow past it


def _limit_file_size() -> None:
    """In the child: files stop growing at FILE_LIMIT (writes past it fail with EFBIG,
    the way a full disk fails them with ENOSPC), and it dies with this process."""
    import resource
    import signal

    resource.setrlimit(resource.RLIMIT_FSIZE, (FILE_LIMIT, FILE_LIMIT))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    die_with_parent()


def _start(data: Path, limited: bool) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "emulator", "--brokers", "1", "--port", "0", "--data-dir",
         str(data)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=_limit_file_size if limited else None)
    line = proc.stdout.readline()  # type: ignore[union-attr]
    assert "kafka-emulator ready" in line, (line, proc.stderr.read())  # type: ignore[union-attr]
    return proc, line.split("bootstrap servers ")[1].split()[0]


def test_a_write_the_data_dir_refuses_fails_the_dir_and_loses_nothing_acknowledged(
        tmp_path: Path) -> None:
    data = tmp_path / "data"
    proc, bootstrap = _start(data, limited=True)
    try:
        p = Producer({"bootstrap.servers": bootstrap, "acks": "1", "linger.ms": 0,
                      "message.timeout.ms": 5000, "retries": 0})
        acked: list[bytes] = []
        errors: list[str] = []

        def done(err: object, msg: object) -> None:
            if err is None:
                acked.append(msg.value())  # type: ignore[attr-defined]
            else:
                errors.append(str(err))

        value = b"x" * 1000
        for i in range(200):  # ~200 KB into one partition: past the file limit
            p.produce("full", f"{i:04d}".encode() + value, partition=0, on_delivery=done)
            p.flush(10)
            if errors:
                break
        assert errors and 0 < len(acked) < 200
        assert "KAFKA_STORAGE_ERROR" in errors[0] or "storage" in errors[0].lower(), errors
        # the broker's only dir failed: it halted (its listener is gone)
        wait_for(lambda: proc.poll() is not None or _refused_at(bootstrap),
                 "the broker halts", timeout=10)
    finally:
        proc.kill()
        stderr = proc.stderr.read()  # type: ignore[union-attr]
        proc.wait(10)
    assert "data directory write failed" in stderr and "File too large" in stderr, stderr
    proc, bootstrap = _start(data, limited=False)  # the same dir, room again
    try:
        c = Consumer({"bootstrap.servers": bootstrap, "group.id": "after",
                      "auto.offset.reset": "earliest"})
        c.assign([TopicPartition("full", 0, 0)])
        got: list[bytes] = []
        deadline = time.monotonic() + 30
        while len(got) < len(acked) and time.monotonic() < deadline:
            m = c.poll(1)
            if m is not None and not m.error():
                got.append(m.value())
        lo, hi = c.get_watermark_offsets(TopicPartition("full", 0), timeout=10)
        c.close()
    finally:
        proc.kill()
        proc.wait(10)
    assert got == acked and hi == len(acked)  # every acknowledged record, nothing torn


def _refused_at(bootstrap: str) -> bool:
    host, port = bootstrap.rsplit(":", 1)
    try:
        socket.create_connection((host, int(port)), timeout=5).close()
    except ConnectionRefusedError:
        return True
    return False


# ---- the pytest plugin's handle ---------------------------------------------------------
@pytest.mark.kafka_brokers(3, config=dict(TWO_DIRS))
def test_the_pytest_handle_offers_storage_faults(kafka_control: Cluster,
                                                 kafka_bootstrap: str) -> None:
    c = kafka_control
    create(c, "handle", {0: [1, 2], 1: [1, 2]})
    c.fail_writes(1, log_dir=DATA_DIR)
    assert produce(c, 1, "handle", 1) == E.KAFKA_STORAGE_ERROR
    assert deliver(kafka_bootstrap, "handle", 2) == {0: 2, 1: 2}
    assert c.faults.model.describe()["offline_log_dirs"] == [
        {"broker": 1, "log_dirs": [DATA_DIR]}]
