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

import pytest
from confluent_kafka import Consumer
from test_reassign_java import JVM, require_java

from emulator import Cluster

# Not run with --target kafka: reads the emulator's transaction coordinator (not yet target-neutral).
pytestmark = pytest.mark.emulator_only


def _run_txn_client(cluster: Cluster, tid: str, topic: str, group: str,
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


def test_java_producer_uses_transactions_v2(cluster: Cluster) -> None:
    require_java()
    topic, tid, group = (f"{p}-{uuid.uuid4().hex[:8]}" for p in ("txv2", "tid", "grp"))
    cluster.create_topic(topic, 2, 3)
    seen: Counter = Counter()
    cluster.server.frame_observers.append(lambda _b, key, ver, _req, _resp:
                                          seen.update([(key, ver)]))
    lines = _run_txn_client(cluster, tid, topic, group, "commit:3", "abort:2", "commit:3")
    assert lines[:4] == ["ok 0 commit", "ok 1 abort", "ok 2 commit", "done"]

    keys = {k for k, _ in seen}
    assert 24 not in keys and 25 not in keys, "v2 adds partitions and offsets implicitly"
    assert {v for k, v in seen if k == 26} == {5}, "EndTxn v5"
    assert min(v for k, v in seen if k == 0) >= 12, "Produce v12+"
    assert any(k == 28 and v >= 5 for k, v in seen), "TxnOffsetCommit v5+"

    tc = cluster.server.services["transactions"]
    txn = cluster.call(lambda: tc.txns[tid])
    # InitProducerId gave epoch 0; each of the three EndTxn bumped it once.
    assert (txn.producer_epoch, txn.state) == (3, "CompleteCommit")
    values = _committed_values(cluster.bootstrap_servers, topic, 6)
    assert sorted(values) == ["0-0", "0-1", "0-2", "2-0", "2-1", "2-2"]
    gc = cluster.server.services["groups"]
    committed = cluster.call(lambda: gc.offsets.get(group, {}).get((topic, 0)))
    assert committed is not None and committed.offset == 42


def test_java_producer_after_a_fencing_producer(cluster: Cluster) -> None:
    """A second producer with the same transactional id fences the first; its
    transactions still complete with epochs bumped from the fenced one's."""
    require_java()
    topic, tid, group = (f"{p}-{uuid.uuid4().hex[:8]}" for p in ("txf", "tid", "grp"))
    cluster.create_topic(topic, 2, 3)
    _run_txn_client(cluster, tid, topic, group, "commit:2")
    lines = _run_txn_client(cluster, tid, topic, group, "commit:1", "abort:1")
    assert lines[:3] == ["ok 0 commit", "ok 1 abort", "done"]
    tc = cluster.server.services["transactions"]
    txn = cluster.call(lambda: tc.txns[tid])
    # first run: 0 -> 1; second InitProducerId: 2; then two ends: 4
    assert txn.producer_epoch == 4 and txn.state == "CompleteAbort"
    values = _committed_values(cluster.bootstrap_servers, topic, 3)
    assert sorted(values) == ["0-0", "0-0", "0-1"]
