"""Kafka's Java 4.4 transactional producer against the emulator: transactions v2.

With the ``transaction.version`` feature finalized at 2 (as a 4.4 broker has it) the
Java producer uses KIP-890 part 2: no AddPartitionsToTxn (Produce v12+ adds the
partition), no AddOffsetsToTxn (TxnOffsetCommit v5+ does it), EndTxn v5 with an epoch
bump per transaction. Run by client_tests/java/src/TxnClient.java (jars from Maven
Central through client_tests/java/pom.xml, scripts/setup.d/30-java.sh).
"""

from __future__ import annotations

import subprocess
import uuid
from collections import Counter

from confluent_kafka import Consumer
from test_reassign_java import JVM, require_java

from client_tests.rawkafka import Conn, find_coordinator
from client_tests.targets import KafkaTarget
from emulator import Cluster
from emulator.testing import wait_for

# Runs on both targets (--target kafka): the transaction's epoch and state read with
# DescribeTransactions at its coordinator, the group's offset with OffsetFetch; which
# requests the client sent is seen only on the emulator (its frame observers).
Target = Cluster | KafkaTarget


def _describe_txn(cluster: Target, tid: str) -> dict:
    conn = Conn(cluster, cluster.broker_ids.index(find_coordinator(cluster, tid, 1)))
    try:
        [d] = conn.call(65, 0, {"transactional_ids": [tid]})["transaction_states"]
    finally:
        conn.close()
    assert d["error_code"] == 0, d
    return d


def _state(cluster: Target, tid: str) -> tuple[int, str]:
    d = _describe_txn(cluster, tid)
    return d["producer_epoch"], d["transaction_state"]


def _committed_offset(cluster: Target, group: str, topic: str, partition: int) -> int:
    conn = Conn(cluster, cluster.broker_ids.index(find_coordinator(cluster, group)))
    try:
        r = conn.call(9, 8, {"groups": [{"group_id": group, "topics": [
            {"name": topic, "partition_indexes": [partition]}]}], "require_stable": True})
    finally:
        conn.close()
    return r["groups"][0]["topics"][0]["partitions"][0]["committed_offset"]


def _run_txn_client(cluster: Target, tid: str, topic: str, group: str,
                    *txns: str) -> list[str]:
    out = subprocess.run(JVM + ["TxnClient", cluster.bootstrap_servers, tid, topic, group,
                                *txns], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout.split("\n")


def _committed_values(bootstrap: str, topic: str, expected: int) -> list[str]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"rc-{topic}",
                         "auto.offset.reset": "earliest", "isolation.level": "read_committed",
                         "enable.auto.commit": False})
    consumer.subscribe([topic])
    values: list[str] = []
    try:
        for _ in range(200):
            msg = consumer.poll(0.2)
            if msg is not None and not msg.error():
                values.append(msg.value().decode())
            if len(values) >= expected and msg is None:
                break
    finally:
        consumer.close()
    return values


def test_java_producer_uses_transactions_v2(cluster: Target) -> None:
    require_java()
    topic, tid, group = (f"{p}-{uuid.uuid4().hex[:8]}" for p in ("txv2", "tid", "grp"))
    cluster.create_topic(topic, 2, 3)
    seen: Counter = Counter()
    if isinstance(cluster, Cluster):  # the requests the client sends, seen by the emulator
        cluster.server.frame_observers.append(lambda _b, key, ver, _req, _resp:
                                              seen.update([(key, ver)]))
    lines = _run_txn_client(cluster, tid, topic, group, "commit:3", "abort:2", "commit:3")
    assert lines[:4] == ["ok 0 commit", "ok 1 abort", "ok 2 commit", "done"]

    if isinstance(cluster, Cluster):
        keys = {k for k, _ in seen}
        assert 24 not in keys and 25 not in keys, "v2 adds partitions and offsets implicitly"
        assert {v for k, v in seen if k == 26} == {5}, "EndTxn v5"
        assert min(v for k, v in seen if k == 0) >= 12, "Produce v12+"
        assert any(k == 28 and v >= 5 for k, v in seen), "TxnOffsetCommit v5+"

    # InitProducerId gave epoch 0; each of the three EndTxn bumped it once (only
    # transactions v2 bumps the epoch per transaction).
    # (Kafka's coordinator moves from PrepareCommit on once the markers are written.)
    wait_for(lambda: _state(cluster, tid) == (3, "CompleteCommit"), "the last commit")
    values = _committed_values(cluster.bootstrap_servers, topic, 6)
    assert sorted(values) == ["0-0", "0-1", "0-2", "2-0", "2-1", "2-2"]
    assert _committed_offset(cluster, group, topic, 0) == 42


def test_java_producer_after_a_fencing_producer(cluster: Target) -> None:
    """A second producer with the same transactional id fences the first; its
    transactions still complete with epochs bumped from the fenced one's."""
    require_java()
    topic, tid, group = (f"{p}-{uuid.uuid4().hex[:8]}" for p in ("txf", "tid", "grp"))
    cluster.create_topic(topic, 2, 3)
    _run_txn_client(cluster, tid, topic, group, "commit:2")
    lines = _run_txn_client(cluster, tid, topic, group, "commit:1", "abort:1")
    assert lines[:3] == ["ok 0 commit", "ok 1 abort", "done"]
    # first run: 0 -> 1; second InitProducerId: 2; then two ends: 4
    wait_for(lambda: _state(cluster, tid) == (4, "CompleteAbort"), "the last abort")
    values = _committed_values(cluster.bootstrap_servers, topic, 3)
    assert sorted(values) == ["0-0", "0-0", "0-1"]
