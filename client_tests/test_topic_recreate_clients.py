"""A topic deleted and created again under its name while clients that knew it keep
refreshing their metadata, on both targets (``--target kafka`` runs it on Kafka 4.4).

confluent-kafka-python 2.15's own share-consumer integration test
test_topic_recreate_resumes_with_fresh_delivery deletes a topic while a producer that
wrote to it (and a share consumer) refresh their metadata every 500 ms, waits until
list_topics no longer names it, and creates it again; on the emulator CreateTopics
answered TOPIC_ALREADY_EXISTS. The cause, the same on both targets: librdkafka's producer
refreshes the topics it knows with allow_auto_topic_creation, so its next refresh after
the deletion (about 0.5 s later, on Kafka 4.4 as here: list_topics showed the topic back
0.48-0.52 s after DeleteTopics in 6 runs of 6) auto-creates the topic again, empty, with
a new id. That test passes only when its CreateTopics comes before that refresh - on
Kafka too, where list_topics right after the deletion may still name the topic (the
broker has not learned it yet), the test sleeps a second and the refresh wins (its steps
15 times with librdkafka 2.15: 3 failures on Kafka 4.4, none on the emulator). So:
``test_an_old_producer_s_refresh_brings_a_deleted_topic_back`` pins the refresh on both
targets, and ``test_a_recreated_topic_is_new_to_a_share_consumer`` does the upstream
test's steps with a producer that does not auto-create.
"""

from __future__ import annotations

import time

from confluent_kafka import (
    Consumer,
    KafkaError,
    KafkaException,
    Producer,
    ShareConsumer,
    TopicPartition,
)
from confluent_kafka.admin import AdminClient, NewTopic

from client_tests.rawkafka import set_group_config, topic_metadata, wait_for_topic
from client_tests.targets import KafkaTarget
from emulator import Cluster

Target = Cluster | KafkaTarget
REFRESH = {"topic.metadata.refresh.interval.ms": 500, "topic.metadata.propagation.max.ms": 0}


def _drain(sc: ShareConsumer, want: set[bytes], timeout: float) -> dict[bytes, int]:
    """{value: delivery count at first delivery} until ``want`` is seen or time is up."""
    first: dict[bytes, int] = {}
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and not want <= set(first):
        try:
            batch = sc.poll(0.5) or []
        except Exception:  # noqa: BLE001 - a share session recovering from the deletion
            continue
        for m in batch:
            if m.error() is None and m.value() not in first:
                first[m.value()] = m.delivery_count()
    return first


def _gone(admin: AdminClient, topic: str) -> None:
    """Until list_topics no longer names ``topic`` (Kafka's brokers learn a deletion a
    moment after DeleteTopics answers)."""
    deadline = time.monotonic() + 30
    while topic in admin.list_topics(timeout=5).topics:
        assert time.monotonic() < deadline, f"{topic} still listed 30 s after its deletion"
        time.sleep(0.05)


def test_a_recreated_topic_is_new_to_a_share_consumer(share_cluster: Target,
                                                       topic_name: str) -> None:
    """Deleted and created again, a topic is new: the share consumer that kept its
    subscription gets only the new records, each at delivery count 1."""
    c, topic, group, n = share_cluster, topic_name, "recreate-" + topic_name, 10
    set_group_config(c, group, "share.auto.offset.reset", "earliest")
    admin = AdminClient({"bootstrap.servers": c.bootstrap_servers})
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(30)
    wait_for_topic(c, topic, 1)
    sc = ShareConsumer({"bootstrap.servers": c.bootstrap_servers, "group.id": group,
                        **REFRESH})
    quiet = {"bootstrap.servers": c.bootstrap_servers, "allow.auto.create.topics": False,
             **REFRESH}
    try:
        sc.subscribe([topic])
        old = Producer(quiet)  # alive, refreshing, through the deletion
        for i in range(n):
            old.produce(topic, value=f"before-{i}".encode())
        assert old.flush(10) == 0
        before = _drain(sc, {f"before-{i}".encode() for i in range(n)}, 30)
        assert len(before) == n, f"first drain: {len(before)}/{n}"

        for f in admin.delete_topics([topic]).values():
            f.result(30)
        _gone(admin, topic)
        time.sleep(1.5)  # the old producer refreshes meanwhile: nothing comes back
        assert topic not in admin.list_topics(timeout=5).topics
        admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(30)
        wait_for_topic(c, topic, 1)

        new = Producer(quiet)
        for i in range(n):
            new.produce(topic, value=f"after-{i}".encode())
        assert new.flush(10) == 0
        after = {f"after-{i}".encode() for i in range(n)}
        first = _drain(sc, after, 45)
        assert after <= set(first), f"missing {sorted(after - set(first))}"
        assert not {v for v in first if v.startswith(b"before-")}
        assert {first[v] for v in after} == {1}
    finally:
        sc.close()


def test_an_old_producer_s_refresh_brings_a_deleted_topic_back(cluster: Target,
                                                               topic_name: str) -> None:
    """A producer that knew a deleted topic auto-creates it again at its next metadata
    refresh (librdkafka's producer default, allow.auto.create.topics): the topic is
    back, empty, with a new id, and CreateTopics of its name answers
    TOPIC_ALREADY_EXISTS."""
    c, topic = cluster, topic_name
    admin = AdminClient({"bootstrap.servers": c.bootstrap_servers})
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(30)
    wait_for_topic(c, topic, 1)
    old_id = topic_metadata(c, topic)["topic_id"]
    p = Producer({"bootstrap.servers": c.bootstrap_servers, **REFRESH})
    for i in range(5):
        p.produce(topic, value=f"before-{i}".encode())
    assert p.flush(10) == 0
    for f in admin.delete_topics([topic]).values():
        f.result(30)
    _gone(admin, topic)
    deadline = time.monotonic() + 10
    while topic not in admin.list_topics(timeout=5).topics:
        assert time.monotonic() < deadline, "the producer's refresh did not create it again"
        time.sleep(0.05)
    wait_for_topic(c, topic, 1)
    back = topic_metadata(c, topic)
    assert back["topic_id"] not in (old_id, bytes(16))
    assert [p["partition_index"] for p in back["partitions"]] == [0]  # num.partitions
    lo, hi = _watermarks(c, topic)
    assert (lo, hi) == (0, 0)  # a new, empty topic
    fut = admin.create_topics([NewTopic(topic, 1, 1)])[topic]
    try:
        fut.result(30)
        raise AssertionError("CreateTopics of the recreated name succeeded")
    except KafkaException as e:
        assert e.args[0].code() == KafkaError.TOPIC_ALREADY_EXISTS, e


def _watermarks(c: Target, topic: str) -> tuple[int, int]:
    cons = Consumer({"bootstrap.servers": c.bootstrap_servers, "group.id": "wm-" + topic})
    try:
        return cons.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)
    finally:
        cons.close()
