"""--data-dir: a restart (SIGTERM or SIGKILL) brings back every acknowledged record.

The emulator runs as the command users run (``python -m emulator --data-dir``). An
idempotent acks=all producer keeps producing while the process is killed with
SIGKILL and started again on the same ports: afterwards every acknowledged record is
there exactly once (the restarted broker rebuilt the producer state from the log, so
the producer's retries of in-flight batches are recognised as duplicates). A torn
tail is truncated with one log line; a corrupted batch in the middle of a segment is
reported and cut there, and the emulator still starts.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from client_tests import process_guard
from client_tests.reading import latest_counts
from emulator import Cluster
from emulator.containers import free_port_block
from emulator.testing import wait_for
from wire.records import decode_records

# Not run with --target kafka: the emulator's --data-dir process and its crash recovery.
pytestmark = pytest.mark.emulator_only

PARTITIONS = 3
def free_ports(n: int) -> int:
    """A base port with ``n`` consecutive free ports after it (the brokers' ports),
    below Linux's ephemeral range: a port the OS hands out for port 0 can be taken by
    a client's outgoing connection while the emulator is down between restarts."""
    return free_port_block(n)


class Emulator:
    """``python -m emulator --data-dir DIR`` on fixed ports, its log in a file."""

    def __init__(self, data_dir: Path, port: int, log_path: Path) -> None:
        self.data_dir, self.port, self.log_path = data_dir, port, log_path
        self.proc: subprocess.Popen | None = None

    def start(self) -> str:
        self.log = open(self.log_path, "a")  # noqa: SIM115 - closed in stop
        self.proc = process_guard.start(
            [sys.executable, "-m", "emulator", "--port", str(self.port),
             "--data-dir", str(self.data_dir)],
            stdout=subprocess.PIPE, stderr=self.log, text=True)
        line = self.proc.stdout.readline()
        assert "kafka-emulator ready" in line, (line, self.log_path.read_text())
        return line.split("bootstrap servers ")[1].split()[0]

    def stop(self, sig: int) -> None:
        assert self.proc is not None
        self.proc.send_signal(sig)
        self.proc.wait(timeout=30)
        self.log.close()


def consume_all(bootstrap: str, topic: str, expected: int, timeout: float = 30,
                partitions: int = PARTITIONS):
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "check",
                  "enable.auto.commit": False, "auto.offset.reset": "earliest",
                  "enable.partition.eof": True})
    c.assign([TopicPartition(topic, i, 0) for i in range(partitions)])
    out = []
    eof: set[int] = set()

    def all_read() -> bool:
        m = c.poll(0.2)
        if m is not None and m.error() is not None:
            assert m.error().code() == KafkaError._PARTITION_EOF, m.error()
            eof.add(m.partition())
        elif m is not None:
            eof.discard(m.partition())
            out.append((m.partition(), m.offset(), m.value()))
        return len(out) >= expected and len(eof) >= partitions

    wait_for(all_read, f"{expected} records and the end of every partition", timeout=timeout,
             interval=0)
    c.close()
    return out


def create_topic(bootstrap: str, topic: str) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    fut = admin.create_topics([NewTopic(topic, PARTITIONS, 3, config={
        "min.insync.replicas": "2", "internal.segment.bytes": "20000"})])[topic]
    fut.result(30)


def test_sigkill_during_idempotent_acks_all_produce_loses_and_duplicates_nothing(
        tmp_path: Path) -> None:
    data = tmp_path / "data"
    emu = Emulator(data, free_ports(3), tmp_path / "emulator.log")
    bootstrap = emu.start()
    topic = "crash"
    create_topic(bootstrap, topic)
    acked: list[bytes] = []
    failed: list[object] = []
    total = 6000

    def on_delivery(err: object, msg: object) -> None:
        (failed if err is not None else acked).append(err or msg.value())

    p = Producer({"bootstrap.servers": bootstrap, "acks": "all", "enable.idempotence": True,
                  "linger.ms": 1, "message.timeout.ms": 120000, "batch.num.messages": 20})
    done = threading.Event()

    def produce() -> None:
        for i in range(total):
            while True:
                try:
                    p.produce(topic, value=b"%d" % i, partition=i % PARTITIONS,
                              on_delivery=on_delivery)
                    break
                except BufferError:
                    p.poll(0.05)
            p.poll(0)
        p.flush(120)
        done.set()

    t = threading.Thread(target=produce, daemon=True)
    t.start()
    wait_for(lambda: len(acked) >= 1500, "1500 acknowledged records", timeout=60,
             interval=0.01)
    assert len(acked) >= 1500, "the producer did not get going"
    emu.stop(signal.SIGKILL)  # mid-produce: batches in flight, some written, some not
    acked_before = len(acked)
    emu.start()  # same ports: the producer reconnects and retries its in-flight batches
    assert done.wait(150), "the producer did not finish after the restart"
    t.join(5)
    assert failed == []
    assert len(acked) == total and acked_before < total
    got = consume_all(bootstrap, topic, total)
    values = [v for _, _, v in got]
    assert len(values) == len(set(values)), "duplicates after the restart"
    assert set(values) == set(acked)
    emu.stop(signal.SIGTERM)


def test_torn_tail_and_corrupt_batch_are_truncated_with_one_line(tmp_path: Path) -> None:
    data = tmp_path / "data"
    emu = Emulator(data, free_ports(3), tmp_path / "emulator.log")
    bootstrap = emu.start()
    topic = "torn"
    create_topic(bootstrap, topic)
    p = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 0})
    for i in range(300):
        p.produce(topic, value=b"%d" % i, partition=0)
        p.poll(0)
    assert p.flush(30) == 0
    emu.stop(signal.SIGKILL)
    part0 = data / f"{topic}-0"
    segs = sorted(part0.glob("*.log"))
    assert len(segs) >= 1
    with open(segs[-1], "ab") as f:
        f.write(b"\x00\x00\x00\x00\x00\x00\x01\x2c\x00\x00\x01")  # half a header: torn
    bootstrap = emu.start()
    got = consume_all(bootstrap, topic, 300)
    assert sorted(int(v) for part, _, v in got if part == 0) == list(range(300))
    lines = [ln for ln in emu.log_path.read_text().splitlines() if "Log recovery" in ln]
    assert len(lines) == 1 and f"{topic}-0" in lines[0] and "truncating" in lines[0]
    emu.stop(signal.SIGTERM)
    # flip a byte inside the first batch of the first segment: cut there, still starts
    first = sorted(part0.glob("*.log"))[0]
    raw = bytearray(first.read_bytes())
    raw[70] ^= 0xFF
    first.write_bytes(bytes(raw))
    bootstrap = emu.start()
    text = emu.log_path.read_text()
    assert "fails its CRC-32C" in text
    got = consume_all(bootstrap, topic, 0, timeout=10)
    assert all(part != 0 for part, _, _ in got)  # partition 0 was cut at its first batch
    emu.stop(signal.SIGTERM)


def test_python_api_restart_keeps_topics_configs_and_records(tmp_path: Path) -> None:
    d = str(tmp_path / "data")
    with Cluster(port=0, data_dir=d) as c:
        c.create_topic("kept", 2, 3, config={"retention.ms": "-1"})
        p = Producer({"bootstrap.servers": c.bootstrap_servers, "acks": "all"})
        for i in range(50):
            p.produce("kept", value=b"%d" % i, partition=i % 2)
        assert p.flush(20) == 0
        topic_id = c.call(lambda: c.state.topics["kept"].id)
    with Cluster(port=0, data_dir=d) as c:
        t = c.call(lambda: c.state.topics["kept"])
        assert t.id == topic_id and t.configs == {"retention.ms": "-1"}
        assert [c.call(lambda i=i: c.state.get_partition("kept", i).high_watermark)
                for i in range(2)] == [25, 25]
    with Cluster(port=0) as c:  # without a data dir: memory only
        assert "kept" not in c.call(lambda: dict(c.state.topics))
    assert os.path.exists(os.path.join(d, "meta.json"))


def test_offsets_and_transactions_come_back_from_the_internal_topics(tmp_path: Path) -> None:
    """Committed offsets and transaction state are records of __consumer_offsets and
    __transaction_state: after SIGKILL and a restart the group's offsets are there, a
    committed transaction is readable, one left open is aborted (read_committed
    consumers reach the end), and the producer id space moved on."""
    data = tmp_path / "data"
    emu = Emulator(data, free_ports(3), tmp_path / "emulator.log")
    bootstrap = emu.start()
    create_topic(bootstrap, "tx")
    p = Producer({"bootstrap.servers": bootstrap, "transactional.id": "tx-1", "acks": "all"})
    p.init_transactions(30)
    p.begin_transaction()
    for i in range(10):
        p.produce("tx", value=b"committed-%d" % i, partition=0)
    p.commit_transaction(30)
    p.begin_transaction()
    for i in range(5):
        p.produce("tx", value=b"open-%d" % i, partition=0)
    p.flush(30)  # appended, never committed: open when the process dies
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "g1",
                  "enable.auto.commit": False, "auto.offset.reset": "earliest"})
    c.commit(offsets=[TopicPartition("tx", 1, 42), TopicPartition("tx", 2, 7)],
             asynchronous=False)
    c.close()
    emu.stop(signal.SIGKILL)
    bootstrap = emu.start()
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "g1",
                  "enable.auto.commit": False, "isolation.level": "read_committed",
                  "auto.offset.reset": "earliest", "enable.partition.eof": True})
    got = c.committed([TopicPartition("tx", 1), TopicPartition("tx", 2)], timeout=20)
    assert [(tp.partition, tp.offset) for tp in got] == [(1, 42), (2, 7)]
    c.assign([TopicPartition("tx", 0, 0)])
    values = []

    def at_the_end() -> bool:
        m = c.poll(0.2)
        if m is not None and m.error() is not None:
            assert m.error().code() == KafkaError._PARTITION_EOF, m.error()
            return True
        if m is not None:
            values.append(m.value())
        return False

    wait_for(at_the_end, "the end of tx-0", timeout=30, interval=0)
    c.close()
    assert values == [b"committed-%d" % i for i in range(10)]
    text = emu.log_path.read_text()
    assert "rebuilt 2 committed offsets and 1 transactional ids" in text
    # the same transactional id starts again: a bumped epoch, the old producer fenced
    p2 = Producer({"bootstrap.servers": bootstrap, "transactional.id": "tx-1"})
    p2.init_transactions(30)
    p2.begin_transaction()
    p2.produce("tx", value=b"after", partition=0)
    p2.commit_transaction(30)
    idem = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True})
    idem.produce("tx", value=b"idempotent", partition=0)
    assert idem.flush(20) == 0  # a fresh producer id: no clash with the restored state
    emu.stop(signal.SIGTERM)


def test_acls_and_scram_credentials_survive_a_restart(tmp_path: Path) -> None:
    from emulator.security.acl import (
        AclBinding,
        AclOperation,
        PatternType,
        PermissionType,
        ResourceType,
    )
    from emulator.security.scram import ScramMechanism

    d = str(tmp_path / "data")
    binding = AclBinding(ResourceType.TOPIC, "orders", PatternType.LITERAL, "User:alice", "*",
                         AclOperation.READ, PermissionType.ALLOW)
    with Cluster(port=0, data_dir=d) as c:
        c.call(lambda: c.security.acls.add(binding))
        c.call(lambda: c.security.credentials.add_user("alice", "secret", 4096))
    text = (tmp_path / "data" / "security.json").read_text()
    assert "secret" not in text  # salted credentials only
    with Cluster(port=0, data_dir=d) as c:
        assert c.call(lambda: list(c.security.acls.bindings)) == [binding]
        cred = c.call(lambda: c.security.credentials.get("alice",
                                                         ScramMechanism.SCRAM_SHA_512))
        assert cred is not None and cred.check_password(ScramMechanism.SCRAM_SHA_512, "secret")


JAVA_DIR = Path(__file__).resolve().parent / "java"
STREAMS_CP = f"{JAVA_DIR / '.tools-jars'}/*:{JAVA_DIR / '.classes-streams'}"


def require_streams() -> None:
    if not (JAVA_DIR / ".classes-streams" / "WordCount.class").exists():
        raise RuntimeError("client_tests/java/.classes-streams/WordCount.class is missing: "
                           "run scripts/setup.d/30-java.sh and 34-java-streams.sh")


class WordCountApp:
    """client_tests/java/streams/WordCount.java: a KTable word count, exactly_once_v2."""

    def __init__(self, bootstrap: str, state_dir: Path, log_path: Path) -> None:
        require_streams()
        self.log = open(log_path, "a")  # noqa: SIM115 - closed in close
        self.proc = process_guard.start(
            ["java", "-Xmx256m", "-cp", STREAMS_CP, "WordCount", bootstrap, "wordcount",
             str(state_dir), "words-in", "counts-out"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log, text=True)
        self.states: list[str] = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.states.append(line.strip())

    def wait_running(self, timeout: float = 90) -> None:
        def running() -> bool:
            if "STATE RUNNING" in self.states:
                return True
            assert not any(s.startswith("ERROR") for s in self.states), self.states
            return False

        wait_for(running, "streams RUNNING", timeout=timeout, interval=0.1)

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=60)
        self.log.close()
        assert "CLOSED" in self.states, self.states


def test_streams_word_count_resumes_from_its_changelog_after_restarts(tmp_path: Path) -> None:
    """A KTable word count with exactly_once_v2 counts a first batch; then the emulator
    restarts (SIGTERM, data dir) and the app restarts with its local state wiped, so its
    counts come back from the compacted changelog and its position from the committed
    offsets; a second batch must give the totals of both, nothing counted twice."""
    require_streams()  # before anything starts
    data = tmp_path / "data"
    emu = Emulator(data, free_ports(3), tmp_path / "emulator.log")
    bootstrap = emu.start()
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for name in ("words-in", "counts-out"):
        admin.create_topics([NewTopic(name, 2, 3)])[name].result(30)
    p = Producer({"bootstrap.servers": bootstrap, "acks": "all"})
    first = ["the cat sat", "the dog sat", "a cat"]
    second = ["the cat ran", "dog"]
    for line in first:
        p.produce("words-in", value=line.encode())
    assert p.flush(20) == 0
    app = WordCountApp(bootstrap, tmp_path / "state1", tmp_path / "streams.log")
    app.wait_running()
    want1 = {"the": 2, "cat": 2, "sat": 2, "dog": 1, "a": 1}
    assert latest_counts(bootstrap, "counts-out", want1) == want1
    app.close()
    emu.stop(signal.SIGTERM)
    bootstrap = emu.start()
    changelog = [ln for ln in (data / "meta.json").read_text().split('"')
                 if ln.endswith("-changelog")]
    assert changelog == ["wordcount-counts-store-changelog"]
    p = Producer({"bootstrap.servers": bootstrap, "acks": "all"})
    for line in second:
        p.produce("words-in", value=line.encode())
    assert p.flush(20) == 0
    app = WordCountApp(bootstrap, tmp_path / "state2", tmp_path / "streams.log")
    app.wait_running()
    want2 = {"the": 3, "cat": 3, "sat": 2, "dog": 2, "a": 1, "ran": 1}
    assert latest_counts(bootstrap, "counts-out", want2) == want2
    app.close()
    emu.stop(signal.SIGTERM)


def test_a_compacted_topic_is_rewritten_on_disk_and_reloads_with_its_gaps(
        tmp_path: Path) -> None:
    d = str(tmp_path / "data")
    with Cluster(port=0, data_dir=d) as c:
        c.create_topic("cc", 1, 3, config={"cleanup.policy": "compact", "internal.segment.bytes": "500",
                                           "min.cleanable.dirty.ratio": "0.01"})
        p = Producer({"bootstrap.servers": c.bootstrap_servers, "acks": "all",
                      "linger.ms": 0})
        for i in range(120):
            p.produce("cc", key=b"k%d" % (i % 5), value=b"v%d" % i, partition=0)
            if i % 4 == 3:
                assert p.flush(20) == 0  # small batches: many segments of 500 bytes
        assert p.flush(20) == 0

        def clean_all() -> list:
            while c.state.run_cleaner() is not None:
                pass
            c.store.sync(c.state)
            return [(e[1], bytes(e[0])) for e in
                    c.state.get_partition("cc", 0).leader_log.batches_from(-1, 1 << 40)]
        before = c.call(clean_all)
        assert 2 < len(before) < 30  # cleaned: gaps
        records_left = sum(len(decode_records(b)) for _, b in before)
        files = sorted(os.listdir(os.path.join(d, "cc-0")))
        assert not any(f.endswith(".cleaned") for f in files)
    with Cluster(port=0, data_dir=d) as c:
        after = c.call(lambda: [(e[1], bytes(e[0])) for e in c.state.get_partition(
            "cc", 0).leader_log.batches_from(-1, 1 << 40)])
        assert after == before
        got = consume_all(c.bootstrap_servers, "cc", records_left, timeout=20, partitions=1)
        offsets = [o for part, o, _ in got if part == 0]
        assert len(offsets) == records_left < 120 and offsets[-1] == 119


def test_a_transaction_marker_is_on_disk_when_it_is_written(tmp_path: Path) -> None:
    """A COMMIT marker reaches the data directory as it is appended, not at the next
    tick: the directory copied at that very moment (what a SIGKILL right after the
    EndTxn answer leaves) reloads with the transaction committed. Before, the marker
    waited for the tick, and recovery aborted the committed transaction as one left
    open (found by client_tests/test_eos_history.py: a committed transaction's output
    lost while its offsets stayed committed)."""
    import shutil

    from wire.records import control_batch

    d, snapshot = tmp_path / "data", tmp_path / "snapshot"
    with Cluster(port=0, data_dir=str(d)) as c:
        c.create_topic("m", 1, 3)
        p = Producer({"bootstrap.servers": c.bootstrap_servers, "transactional.id": "m-1"})
        p.init_transactions(30)
        p.begin_transaction()
        for i in range(3):
            p.produce("m", value=b"v%d" % i, partition=0)
        assert p.flush(20) == 0  # appended, the transaction open

        def commit_and_copy() -> None:
            part = c.state.get_partition("m", 0)
            [(pid, entry)] = list(part.producers.items())
            base = c.state.append_control(part, control_batch(True, pid, entry.epoch,
                                                              c.state.now()))
            part.complete_txn(pid, entry.epoch, base, True)
            shutil.copytree(d, snapshot)  # on the loop: no tick in between

        c.call(commit_and_copy)
    with Cluster(port=0, data_dir=str(snapshot)) as c:
        cons = Consumer({"bootstrap.servers": c.bootstrap_servers, "group.id": "m",
                         "isolation.level": "read_committed", "enable.partition.eof": True})
        cons.assign([TopicPartition("m", 0, 0)])
        got: list[bytes] = []

        def at_the_end() -> bool:
            m = cons.poll(0.2)
            if m is not None and m.error() is not None:
                assert m.error().code() == KafkaError._PARTITION_EOF, m.error()
                return True
            if m is not None:
                got.append(m.value())
            return False

        wait_for(at_the_end, "the end of m-0", timeout=30, interval=0)
        cons.close()
    assert got == [b"v0", b"v1", b"v2"]


def test_internal_topics_take_their_segment_size_from_the_broker_configs() -> None:
    """offsets.topic.segment.bytes and transaction.state.log.segment.bytes, as on Kafka:
    the way to bound a long-running emulator's __consumer_offsets, whose active segment
    is never compacted (at Kafka's 100 MiB, bench/soak.py measured it growing ~40 KB/min
    under one group committing every second; the emulator's fast default is 100 KiB)."""
    from confluent_kafka.admin import ConfigResource

    with Cluster(port=0, config={"offsets.topic.segment.bytes": "2097152",
                                 "transaction.state.log.segment.bytes": "3145728"}) as c:
        cons = Consumer({"bootstrap.servers": c.bootstrap_servers, "group.id": "seg"})
        cons.commit(offsets=[TopicPartition("__consumer_offsets", 0, 0)], asynchronous=False)
        cons.close()
        p = Producer({"bootstrap.servers": c.bootstrap_servers, "transactional.id": "seg"})
        p.init_transactions(30)
        admin = AdminClient({"bootstrap.servers": c.bootstrap_servers})
        got = {}
        for topic in ("__consumer_offsets", "__transaction_state"):
            res = ConfigResource(ConfigResource.Type.TOPIC, topic)
            got[topic] = admin.describe_configs([res])[res].result(30)["segment.bytes"].value
    assert got == {"__consumer_offsets": "2097152", "__transaction_state": "3145728"}


def test_rolled_segments_are_mapped_and_trim_the_heap_leaving_nothing_growing(
        tmp_path: Path) -> None:
    """Each closed segment's batches become views of its file (their heap bytes freed)
    and the store hands freed heap pages back to the OS (glibc malloc_trim, at most once
    a second: bench/soak.py saw RssAnon step up by MBs of free heap without it), while
    retention keeps the store's own per-segment structures as few as the log's."""
    import emulator.storage.disk as disk

    d = str(tmp_path / "data")
    with Cluster(port=0, data_dir=d) as c:
        c.create_topic("roll", 1, 3, config={"internal.segment.bytes": "2000",
                                             "retention.bytes": "6000"})
        p = Producer({"bootstrap.servers": c.bootstrap_servers, "acks": "all",
                      "linger.ms": 0})
        for i in range(200):
            p.produce("roll", value=b"v" * 100, partition=0)
            if i % 4 == 3:
                assert p.flush(20) == 0
        assert p.flush(20) == 0

        def after() -> tuple:
            c.state.apply_retention()
            c.store.sync(c.state)
            part = c.state.get_partition("roll", 0)
            pf = c.store.parts[("roll", 0)]
            closed = pf.segments[:-1]
            views = [e for e in part.leader_log.batches_from(-1, 1 << 40)
                     if isinstance(e[0], memoryview)]
            return (len(part.leader_log.segments.bases), len(pf.segments),
                    sum(s.mapped is not None for s in closed), len(closed), len(views),
                    c.store.heap_trims, len(os.listdir(os.path.join(d, "roll-0"))),
                    part.leader_log.log_start_offset, pf.segments[0].base)
        log_segs, file_segs, mapped, closed, views, trims, files, start, first = wait_for(
            lambda: (r := c.call(after)) and r[0] == r[1] and r[2] == r[3] and r,
            "the files' segments as the log's, every closed one mapped", timeout=20)
    # retention dropped the oldest segments and their files, mmaps and offset indexes
    assert start > 0 and first <= start and 2 <= file_segs == log_segs
    assert files == file_segs + 1  # one .log per segment and partition.json
    assert mapped == closed and views > 0  # closed segments' batches are file views
    assert trims >= (1 if disk._libc_malloc_trim() is not None else 0)
