"""confluent-kafka's ShareConsumer (librdkafka's KIP-932 share consumer, "Preview" in
2.16) against share groups, on both targets (``--target kafka`` runs them on Kafka 4.4):
two consumers on one partition never get the same record, and in explicit mode released
records come back with delivery count 2 and rejected ones never do. Consumers are polled
in turn from one thread (one instance per consumer, as librdkafka asks)."""

from __future__ import annotations

from confluent_kafka import AcknowledgeType, ShareConsumer

from client_tests import producing
from client_tests.producing import numbered
from client_tests.rawkafka import set_group_config, share_all_finished
from client_tests.targets import KafkaTarget
from emulator import Cluster
from emulator.testing import wait_for

Target = Cluster | KafkaTarget


def produce(c: Target, topic: str, n: int, per_flush: int = 5) -> None:
    producing.produce(c.bootstrap_servers, topic, numbered(n), per_flush=per_flush,
                      timeout=10, config={"acks": "all", "linger.ms": 0})


def share_consumer(c: Target, group: str, topic: str, **extra: str) -> ShareConsumer:
    cons = ShareConsumer({"bootstrap.servers": c.bootstrap_servers, "group.id": group,
                          "max.poll.records": 10, **extra})
    cons.subscribe([topic])
    return cons


def poll(cons: ShareConsumer, timeout: float = 0.2) -> list:
    out = []
    for m in cons.poll(timeout) or []:
        assert m.error() is None, m.error()
        out.append(m)
    return out


def test_two_share_consumers_one_partition(cluster: Target, topic_name: str) -> None:
    c, group, n = cluster, "ck-" + topic_name, 60
    c.create_topic(topic_name, partitions=1, replication_factor=3)
    set_group_config(c, group, "share.auto.offset.reset", "earliest")
    produce(c, topic_name, n)
    consumers = [share_consumer(c, group, topic_name) for _ in range(2)]
    got: list[list[tuple[int, int]]] = [[], []]
    try:
        def step() -> bool:
            for i, cons in enumerate(consumers):
                got[i] += [(m.offset(), m.delivery_count()) for m in poll(cons)]
            return share_all_finished(c, group, topic_name, n)  # the implicit accepts came back

        wait_for(step, f"all {n} records delivered and accepted", 60)
    finally:
        for cons in consumers:
            cons.close()
    offsets = sorted(o for g in got for o, _ in g)
    assert offsets == list(range(n))  # no record delivered to both
    assert {d for g in got for _, d in g} == {1}


def test_share_consumer_release_and_reject(cluster: Target, topic_name: str) -> None:
    c, group = cluster, "ck-" + topic_name
    c.create_topic(topic_name, partitions=1, replication_factor=3)
    set_group_config(c, group, "share.auto.offset.reset", "earliest")
    produce(c, topic_name, 10, per_flush=10)
    cons = share_consumer(c, group, topic_name, **{"share.acknowledgement.mode": "explicit"})
    seen: dict[int, list[int]] = {}
    try:
        def step() -> bool:
            msgs = poll(cons)
            for m in msgs:
                seen.setdefault(m.offset(), []).append(m.delivery_count())
                if m.offset() % 2:
                    cons.acknowledge(m, AcknowledgeType.REJECT)  # odd: archived at once
                elif m.delivery_count() == 1:
                    cons.acknowledge(m, AcknowledgeType.RELEASE)  # even: once more
                else:
                    cons.acknowledge(m, AcknowledgeType.ACCEPT)
            if msgs:
                cons.commit_sync()
            return share_all_finished(c, group, topic_name, 10)

        wait_for(step, "every record finished", 60)
    finally:
        cons.close()
    assert seen == {o: [1] if o % 2 else [1, 2] for o in range(10)}
