"""A Metadata request that auto-creates a topic (allow_auto_topic_creation, with the
brokers' auto.create.topics.enable): the same requests against both targets
(``pytest client_tests/test_metadata_auto_create.py --target kafka``).

Kafka 4.4's broker asks the controller to create the topic and answers the request that
did so with the topic's error and no partitions; the partitions appear in a later answer,
once the broker's metadata has the new topic. A client that reads partitions off the
answer that created the topic passes on an emulator that answers them at once and fails
on Kafka: the emulator answers as Kafka does. Measured on Kafka 4.4: the first answer is
UNKNOWN_TOPIC_OR_PARTITION (not LEADER_NOT_AVAILABLE) with a zero topic id.
"""

from __future__ import annotations

from client_tests.rawkafka import Conn, topic_metadata
from client_tests.targets import KafkaTarget
from emulator import Cluster
from emulator.testing import wait_for
from wire.errors import ErrorCode as E

Target = Cluster | KafkaTarget


def metadata(conn: Conn, topic: str, auto: bool) -> dict:
    r = conn.call(3, 12, {"topics": [{"topic_id": bytes(16), "name": topic}],
                          "allow_auto_topic_creation": auto,
                          "include_topic_authorized_operations": False})
    (t,) = r["topics"]
    return t


def test_auto_created_topic_answers_its_error_first(cluster: Target, topic_name: str) -> None:
    conn = Conn(cluster, 0)
    try:
        assert metadata(conn, topic_name, False)["error_code"] == E.UNKNOWN_TOPIC_OR_PARTITION
        first = metadata(conn, topic_name, True)
        assert (first["error_code"], first["topic_id"], first["partitions"]) == (
            E.UNKNOWN_TOPIC_OR_PARTITION, bytes(16), [])
        # a moment later the topic is there, with its partitions (num.partitions: 1)
        t = wait_for(lambda: (m := metadata(conn, topic_name, True))["error_code"] == E.NONE
                     and m["partitions"] and m, f"{topic_name} with partitions")
        assert [p["partition_index"] for p in t["partitions"]] == [0]
        assert topic_metadata(cluster, topic_name)["topic_id"] == t["topic_id"] != bytes(16)
    finally:
        conn.close()
