"""kafka-python 3.x: admin, its default idempotent producer, consumers by assign/seek and group.

Every record read back is checked for key, value, headers, partition and offset.
"""

from __future__ import annotations

from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import ConfigResource, ConfigResourceType, KafkaAdminClient, NewTopic

from client_tests.rawkafka import wait_for_topic
from emulator import Cluster
from emulator.testing import wait_for

N = 50


def test_admin_create_describe_and_configs(cluster: Cluster, topic_name: str) -> None:
    admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap_servers)
    admin.create_topics([NewTopic(topic_name, 3, 2, topic_configs={"retention.ms": "1000000"})])
    # Kafka answers CreateTopics once the controller has the topic; the brokers learn of it
    # from the metadata log a moment later, so a describe sent at once may meet a broker
    # that answers UNKNOWN_TOPIC_OR_PARTITION: wait until every broker has it (DescribeTopics
    # and DescribeConfigs may go to any broker; the emulator knows it at once).
    wait_for_topic(cluster, topic_name, 3)
    desc = admin.describe_topics([topic_name])
    assert desc[0]["error_code"] == 0, desc
    assert desc[0]["name"] == topic_name
    parts = sorted(desc[0]["partitions"], key=lambda p: p["partition_index"])
    assert [p["partition_index"] for p in parts] == [0, 1, 2]
    for p in parts:
        assert len(p["replica_nodes"]) == 2 and p["leader_id"] == p["replica_nodes"][0]
        assert sorted(p["isr_nodes"]) == sorted(p["replica_nodes"])
    res = admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, topic_name)])
    configs = res["topic"][topic_name]
    assert configs["retention.ms"]["value"] == "1000000"
    assert configs["retention.ms"]["config_source"] == "DYNAMIC_TOPIC_CONFIG"
    assert topic_name in admin.list_topics()
    admin.delete_topics([topic_name])
    # Kafka deletes asynchronously: the topic leaves every broker's metadata soon after.
    wait_for(lambda: topic_name not in admin.list_topics(), "the deleted topic to go",
             timeout=30, interval=0.1)
    admin.close()


def test_idempotent_producer_and_assign_seek(cluster: Cluster, topic_name: str) -> None:
    cluster.create_topic(topic_name, 2, 3)
    producer = KafkaProducer(bootstrap_servers=cluster.bootstrap_servers)
    assert producer.config["enable_idempotence"] is True  # kafka-python 3's default
    futures = [
        producer.send(topic_name, key=f"k{i}".encode(), value=f"v{i}".encode(),
                      partition=i % 2, headers=[("i", str(i).encode())])
        for i in range(N)
    ]
    metas = [f.get(timeout=20) for f in futures]
    producer.close()
    for i, md in enumerate(metas):
        assert (md.partition, md.offset) == (i % 2, i // 2)

    consumer = KafkaConsumer(bootstrap_servers=cluster.bootstrap_servers,
                             enable_auto_commit=False, consumer_timeout_ms=5000)
    tp = TopicPartition(topic_name, 1)
    consumer.assign([tp])
    consumer.seek(tp, 10)
    got = []
    for m in consumer:
        got.append(m)
        if len(got) == N // 2 - 10:
            break
    consumer.close()
    assert [m.offset for m in got] == list(range(10, N // 2))
    for m in got:
        i = 2 * m.offset + 1
        assert (m.key, m.value, m.partition) == (f"k{i}".encode(), f"v{i}".encode(), 1)
        assert m.headers == [("i", str(i).encode())]


def test_group_consumer_reads_everything_once(cluster: Cluster, topic_name: str) -> None:
    cluster.create_topic(topic_name, 3, 3)
    producer = KafkaProducer(bootstrap_servers=cluster.bootstrap_servers)
    for i in range(N):
        producer.send(topic_name, key=str(i).encode(), value=b"x%d" % i)
    producer.flush(20)
    producer.close()
    consumer = KafkaConsumer(topic_name, bootstrap_servers=cluster.bootstrap_servers,
                             group_id="kp-group", auto_offset_reset="earliest",
                             consumer_timeout_ms=8000)
    seen = {}
    for m in consumer:
        seen[(m.partition, m.offset)] = m.key
        if len(seen) == N:
            break
    consumer.commit()
    consumer.close()
    assert sorted(int(k) for k in seen.values()) == list(range(N))
