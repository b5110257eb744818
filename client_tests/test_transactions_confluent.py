"""A confluent-kafka transactional producer against the emulator.

Committed transactions are visible to read_committed consumers, aborted ones never,
while read_uncommitted consumers see both; offsets sent with the transaction
(send_offsets_to_transaction) become the group's committed offsets only on commit; a
second producer with the same transactional.id fences the first.
"""

from __future__ import annotations

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition

from emulator import Cluster
from emulator.testing import wait_for

PARTS = 2


def txn_producer(bootstrap: str, tid: str) -> Producer:
    p = Producer({"bootstrap.servers": bootstrap, "transactional.id": tid, "linger.ms": 2,
                  "transaction.timeout.ms": 20000})
    p.init_transactions(20)
    return p


def one_transaction(p: Producer, topic: str, values: list[bytes], commit: bool) -> None:
    p.begin_transaction()
    for i, v in enumerate(values):
        p.produce(topic, value=v, partition=i % PARTS)
    p.flush(20)
    if commit:
        p.commit_transaction(20)
    else:
        p.abort_transaction(20)


def read_all(bootstrap: str, topic: str, isolation: str) -> list[bytes]:
    """Everything up to the end of each partition, under ``isolation``."""
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": f"reader-{isolation}",
                  "isolation.level": isolation, "enable.auto.commit": False,
                  "enable.partition.eof": True})
    c.assign([TopicPartition(topic, i, 0) for i in range(PARTS)])
    out: list[bytes] = []
    eof: set[int] = set()

    def at_every_end() -> bool:
        m = c.poll(0.2)
        if m is not None and m.error() is not None:
            assert m.error().code() == KafkaError._PARTITION_EOF, m.error()
            eof.add(m.partition())
        elif m is not None:
            out.append(m.value())
        return len(eof) >= PARTS

    wait_for(at_every_end, "the end of every partition", timeout=20, interval=0)
    c.close()
    assert len(eof) == PARTS, "did not reach the end of every partition"
    return out


def test_committed_visible_aborted_never(cluster: Cluster, topic_name: str) -> None:
    cluster.create_topic(topic_name, PARTS, 3)
    p = txn_producer(cluster.bootstrap_servers, "tx-visibility")
    committed = [b"c1-%d" % i for i in range(6)]
    aborted = [b"a-%d" % i for i in range(6)]
    committed2 = [b"c2-%d" % i for i in range(4)]
    one_transaction(p, topic_name, committed, commit=True)
    one_transaction(p, topic_name, aborted, commit=False)
    one_transaction(p, topic_name, committed2, commit=True)
    p.flush(10)
    rc = read_all(cluster.bootstrap_servers, topic_name, "read_committed")
    ru = read_all(cluster.bootstrap_servers, topic_name, "read_uncommitted")
    assert sorted(rc) == sorted(committed + committed2)
    assert sorted(ru) == sorted(committed + aborted + committed2)


def test_open_transaction_holds_back_read_committed(cluster: Cluster, topic_name: str) -> None:
    cluster.create_topic(topic_name, PARTS, 3)
    p = txn_producer(cluster.bootstrap_servers, "tx-open")
    p.begin_transaction()
    for i in range(4):
        p.produce(topic_name, value=b"open-%d" % i, partition=i % PARTS)
    p.flush(20)
    assert read_all(cluster.bootstrap_servers, topic_name, "read_committed") == []
    assert len(read_all(cluster.bootstrap_servers, topic_name, "read_uncommitted")) == 4
    p.commit_transaction(20)
    assert len(read_all(cluster.bootstrap_servers, topic_name, "read_committed")) == 4


def test_offsets_commit_with_the_transaction(cluster: Cluster, topic_name: str) -> None:
    cluster.create_topic(topic_name, PARTS, 3)
    group = "tx-group"
    c = Consumer({"bootstrap.servers": cluster.bootstrap_servers, "group.id": group,
                  "enable.auto.commit": False, "session.timeout.ms": 6000})
    p = txn_producer(cluster.bootstrap_servers, "tx-offsets")
    for commit, offset in ((False, 5), (True, 7)):
        p.begin_transaction()
        p.produce(topic_name, value=b"x", partition=0)
        p.send_offsets_to_transaction([TopicPartition(topic_name, 0, offset)],
                                      c.consumer_group_metadata(), 20)
        if commit:
            p.commit_transaction(20)
        else:
            p.abort_transaction(20)
    [tp] = c.committed([TopicPartition(topic_name, 0)], 10)
    assert tp.offset == 7  # the aborted transaction's offset 5 never became visible
    c.close()


def test_new_producer_fences_the_old_one(cluster: Cluster, topic_name: str) -> None:
    cluster.create_topic(topic_name, PARTS, 3)
    old = txn_producer(cluster.bootstrap_servers, "tx-fence")
    old.begin_transaction()
    old.produce(topic_name, value=b"zombie", partition=0)
    old.flush(20)
    new = txn_producer(cluster.bootstrap_servers, "tx-fence")  # aborts the open transaction
    one_transaction(new, topic_name, [b"fresh"], commit=True)
    with pytest.raises(KafkaException) as e:
        old.produce(topic_name, value=b"zombie-2", partition=0)
        old.commit_transaction(20)
    assert e.value.args[0].fatal() and e.value.args[0].code() in (
        KafkaError._FENCED, KafkaError.PRODUCER_FENCED, KafkaError.INVALID_PRODUCER_EPOCH)
    old.purge()  # the fenced producer's queued record goes nowhere
    assert read_all(cluster.bootstrap_servers, topic_name, "read_committed") == [b"fresh"]


def test_describe_list_and_timeout(cluster: Cluster, topic_name: str) -> None:
    """An open transaction shows in Describe/ListTransactions; past its timeout the
    coordinator aborts it and bumps the epoch (the producer is fenced)."""
    from client_tests.rawkafka import Conn, find_coordinator
    from emulator.testing import wait_for
    from wire.errors import ErrorCode as E

    cluster.create_topic(topic_name, PARTS, 3)
    tid = f"tx-timeout-{topic_name}"
    p = Producer({"bootstrap.servers": cluster.bootstrap_servers, "transactional.id": tid,
                  "transaction.timeout.ms": 1000, "linger.ms": 2})
    p.init_transactions(20)
    p.begin_transaction()
    p.produce(topic_name, value=b"doomed", partition=0)
    p.flush(20)
    coord = find_coordinator(cluster, tid, 1)
    conns = [Conn(cluster, i) for i in range(len(cluster.broker_ids))]
    try:
        listed = {b: conns[i].call(66, 1, {"state_filters": [], "producer_id_filters": [],
                                            "duration_filter": -1})["transaction_states"]
                  for i, b in enumerate(cluster.broker_ids)}
        # Only the coordinator lists it (on Kafka other tests' transactions may show too).
        assert [b for b in listed if tid in {t["transactional_id"] for t in listed[b]}] == \
            [coord]
        me = conns[cluster.broker_ids.index(coord)]
        [d] = me.call(65, 0, {"transactional_ids": [tid]})["transaction_states"]
        assert d["transaction_state"] == "Ongoing"
        assert d["topics"] == [{"topic": topic_name, "partitions": [0]}]
        epoch = d["producer_epoch"]

        def aborted() -> bool:
            [s] = me.call(65, 0, {"transactional_ids": [tid]})["transaction_states"]
            return s["transaction_state"] == "CompleteAbort" and s["producer_epoch"] > epoch

        # Kafka looks for timed-out transactions every 10 s (transaction.abort.timed.out.
        # transaction.cleanup.interval.ms).
        wait_for(aborted, "the coordinator to abort the timed-out transaction", 60)
        [other] = conns[(cluster.broker_ids.index(coord) + 1) % 3].call(
            65, 0, {"transactional_ids": [tid]})["transaction_states"]
        assert other["error_code"] == E.NOT_COORDINATOR
    finally:
        for c in conns:
            c.close()
    assert read_all(cluster.bootstrap_servers, topic_name, "read_committed") == []
    assert read_all(cluster.bootstrap_servers, topic_name, "read_uncommitted") == [b"doomed"]
    with pytest.raises(KafkaException):
        p.commit_transaction(10)
