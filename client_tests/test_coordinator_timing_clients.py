"""Correct clients through Kafka's coordinator and transaction timing, on both targets.

Kafka 4.4 (conformance/coordinator_timing.py): after a coordinator moves, the new one
answers NOT_COORDINATOR until it learns of its election, then
COORDINATOR_LOAD_IN_PROGRESS while it loads; after EndTxn a transaction shows
PrepareCommit until its markers are written (some 10-20 ms), read_committed consumers
see its records only then, and the same transactional id gets CONCURRENT_TRANSACTIONS
meanwhile. ``kafka_timing_cluster`` is the emulator under ``--fidelity kafka`` (which
reproduces both) or, with --target kafka, Kafka itself: the same tests show that a
client that handles those answers works, and that the answers are there to handle
(under ``--fidelity fast`` a coordinator serves at once and EndTxn completes at once).
"""

from __future__ import annotations

import time
import uuid
from typing import Any

from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition

from client_tests.producing import produce
from conformance.coordinator_timing import (
    Brokers,
    add_partitions_v3,
    elect_preferred,
    find_coordinator,
    move_leader,
    partition_info,
)
from emulator.coordinators.runtime.placement import partition_for
from emulator.testing import wait_for
from wire.errors import ErrorCode as E
from wire.records import build_batch

OFFSETS = "__consumer_offsets"


def brokers_of(target: Any) -> Brokers:
    """Raw connections to each broker of either target."""
    if getattr(target, "kind", "") == "kafka":
        kafka = target.kafka
        return Brokers(lambda: {n: kafka.listener_port(n) for n in kafka.broker_ids})
    ports = {b.id: b.port for b in target.state.brokers.values()}
    return Brokers(lambda: ports)


def internal_partition(b: Brokers, topic: str, key: str) -> int:
    md = b.any_call(3, 12, {"topics": [{"name": topic}], "allow_auto_topic_creation": False})
    count = len(next(t for t in md["topics"] if t["name"] == topic)["partitions"])
    return partition_for(key, count)


def commit(c: Consumer) -> None:
    """A synchronous commit, retried on retriable errors as a correct client does."""
    def done() -> bool:
        try:
            c.commit(asynchronous=False)
        except KafkaException as e:
            if e.args[0].retriable() or e.args[0].code() in (
                    KafkaError.NOT_COORDINATOR, KafkaError.COORDINATOR_LOAD_IN_PROGRESS):
                return False
            raise
        return True
    wait_for(done, "the offsets committed", timeout=30, interval=0.1)


def consume(c: Consumer, n: int) -> list[bytes]:
    out: list[bytes] = []

    def enough() -> bool:
        m = c.poll(0.2)
        if m is not None and m.error() is None:
            out.append(m.value())
        return len(out) >= n
    wait_for(enough, f"{n} records", timeout=60, interval=0)
    return out


def probe_new_coordinator(b: Brokers, node: int, group: str, seconds: float = 2.0) -> list[int]:
    """What ``node`` answers an OffsetFetch for ``group`` until it serves it."""
    codes: list[int] = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        r = b.call(node, 9, 9, {"groups": [{"group_id": group, "topics": None}]})
        codes.append(int(r["groups"][0]["error_code"]))
        if codes[-1] == E.NONE:
            break
    return codes


def test_consumer_group_commits_through_a_coordinator_move(
        kafka_timing_cluster: Any, topic_name: str) -> None:
    target = kafka_timing_cluster
    bootstrap = target.bootstrap_servers
    target.create_topic(topic_name, 3)
    group = f"move-{uuid.uuid4().hex[:8]}"
    first = [f"a{i}".encode() for i in range(30)]
    produce(bootstrap, topic_name, first, partitions=None, timeout=20,
            config={"linger.ms": 1})
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": group,
                  "auto.offset.reset": "earliest", "enable.auto.commit": False,
                  "session.timeout.ms": 10000})
    c.subscribe([topic_name])
    try:
        got = consume(c, len(first))
        commit(c)
        b = brokers_of(target)
        index = internal_partition(b, OFFSETS, group)
        seen: list[int] = []
        for _ in range(2):  # there and back: each move makes a new coordinator load
            _, new = move_leader(b, OFFSETS, index)
            elect_preferred(b, OFFSETS, index)
            seen += probe_new_coordinator(b, new, group)
            second = [f"b{len(seen)}-{i}".encode() for i in range(30)]
            produce(bootstrap, topic_name, second, partitions=None, timeout=20,
                    config={"linger.ms": 1})
            got += consume(c, len(second))
            commit(c)
            first += second
        # the new coordinator was not serving at once, on Kafka as here
        assert {E.NOT_COORDINATOR, E.COORDINATOR_LOAD_IN_PROGRESS} & set(seen), seen
        assert sorted(got) == sorted(first)
        committed = c.committed([TopicPartition(topic_name, i) for i in range(3)], 20)
        ends = [c.get_watermark_offsets(TopicPartition(topic_name, i), 20)[1]
                for i in range(3)]
        # a partition the sticky partitioner left empty has nothing to commit
        assert [tp.offset if end else 0 for tp, end in zip(committed, ends, strict=True)] \
            == ends
    finally:
        c.close()


def txn_producer(bootstrap: str, tid: str) -> Producer:
    p = Producer({"bootstrap.servers": bootstrap, "transactional.id": tid, "linger.ms": 1,
                  "transaction.timeout.ms": 30000})
    p.init_transactions(30)
    return p


def read_committed(bootstrap: str, topic: str) -> list[bytes]:
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": f"rc-{uuid.uuid4().hex[:6]}",
                  "isolation.level": "read_committed", "enable.auto.commit": False,
                  "enable.partition.eof": True})
    c.assign([TopicPartition(topic, 0, 0)])
    out: list[bytes] = []
    at_end = []

    def done() -> bool:
        m = c.poll(0.2)
        if m is not None and m.error() is not None:
            assert m.error().code() == KafkaError._PARTITION_EOF, m.error()
            at_end.append(True)
        elif m is not None:
            out.append(m.value())
        return bool(at_end)
    wait_for(done, "the end of the partition", timeout=30, interval=0)
    c.close()
    return out


def test_back_to_back_transactions_through_the_prepare_window(
        kafka_timing_cluster: Any, topic_name: str) -> None:
    """Each transaction begins right after the last commit returned, while that one may
    still be PrepareCommit (its AddPartitionsToTxn then meets CONCURRENT_TRANSACTIONS,
    which the producer retries): every committed record arrives once, no aborted one."""
    target = kafka_timing_cluster
    bootstrap = target.bootstrap_servers
    target.create_topic(topic_name, 1)
    p = txn_producer(bootstrap, f"b2b-{uuid.uuid4().hex[:8]}")
    want: list[bytes] = []
    for n in range(8):
        values = [f"t{n}-{i}".encode() for i in range(5)]
        p.begin_transaction()
        for v in values:
            p.produce(topic_name, value=v, partition=0)
        if n % 4 == 3:
            p.abort_transaction(30)
        else:
            p.commit_transaction(30)
            want += values
    # read_committed sees every committed record, in order, once the last markers are in
    wait_for(lambda: read_committed(bootstrap, topic_name) == want,
             "every committed record, and no aborted one", timeout=30, interval=0.2)


def test_end_txn_answers_before_the_markers(kafka_timing_cluster: Any,
                                            topic_name: str) -> None:
    """Raw requests: right after EndTxn the transaction shows PrepareCommit (in at least
    one of five transactions: the window is 10-20 ms on Kafka), the same transactional
    id gets CONCURRENT_TRANSACTIONS or, once complete, NONE, and the states go
    PrepareCommit -> CompleteCommit while the read_committed LSO passes the records."""
    target = kafka_timing_cluster
    target.create_topic(topic_name, 1)
    b = brokers_of(target)
    tid = f"raw-{uuid.uuid4().hex[:8]}"
    wait_for(lambda: find_coordinator(b, tid, 1)[0] == E.NONE, "a transaction coordinator",
             timeout=30, interval=0.1)
    node = find_coordinator(b, tid, 1)[1]
    leader = partition_info(b, topic_name, 0)["leader_id"]
    prepare_seen = sum("PrepareCommit" in one_transaction(b, node, leader, tid, topic_name)
                       for _ in range(5))
    assert prepare_seen >= 1


def one_transaction(b: Brokers, node: int, leader: int, tid: str, topic: str) -> list[str]:
    """One committed transaction of one record; the states DescribeTransactions showed
    from EndTxn until CompleteCommit."""
    r: dict = {}

    def initialized() -> bool:
        r.update(b.call(node, 22, 5, {"transactional_id": tid,
                                      "transaction_timeout_ms": 30000}))
        return r["error_code"] == E.NONE
    wait_for(initialized, "InitProducerId", timeout=30, interval=0.01)
    pid, epoch = r["producer_id"], r["producer_epoch"]
    assert add_partitions_v3(b, node, tid, pid, epoch, topic) == E.NONE
    batch = build_batch([(b"k", b"v")], producer_id=pid, producer_epoch=epoch,
                        base_sequence=0, transactional=True, timestamp=int(time.time() * 1000))
    pr = b.call(leader, 0, 11, {"transactional_id": tid, "acks": -1, "timeout_ms": 30000,
                                "topic_data": [{"name": topic, "partition_data": [
                                    {"index": 0, "records": batch}]}]})
    part = pr["responses"][0]["partition_responses"][0]
    assert part["error_code"] == E.NONE
    end = {"transactional_id": tid, "producer_id": pid, "producer_epoch": epoch,
           "committed": True}
    assert b.call(node, 26, 4, end)["error_code"] == E.NONE
    states: list[str] = []
    again: list[int] = []
    while not states or states[-1] != "CompleteCommit":
        d = b.call(node, 65, 0, {"transactional_ids": [tid]})["transaction_states"][0]
        states.append(d["transaction_state"])
        again.append(int(b.call(node, 26, 4, end)["error_code"]))  # the same EndTxn again
        assert len(states) < 100_000
    assert set(states) <= {"PrepareCommit", "CompleteCommit"}, states
    assert states == sorted(states, key=lambda s: s != "PrepareCommit"), states
    assert set(again) <= {E.CONCURRENT_TRANSACTIONS, E.NONE}, again

    def lso_past() -> bool:
        lo = b.call(leader, 2, 9, {"replica_id": -1, "isolation_level": 1, "topics": [
            {"name": topic, "partitions": [{"partition_index": 0, "timestamp": -1}]}]})
        return int(lo["topics"][0]["partitions"][0]["offset"]) > part["base_offset"]
    wait_for(lso_past, "the last stable offset past the records", timeout=10, interval=0.01)
    return states
