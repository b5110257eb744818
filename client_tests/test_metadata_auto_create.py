"""A Metadata request that auto-creates a topic (allow_auto_topic_creation, with the
brokers' auto.create.topics.enable): the same requests against both targets
(``pytest client_tests/test_metadata_auto_create.py --target kafka``).

Kafka 4.4's broker asks the controller to create the topic and answers the request that
did so with the topic's error and no partitions; the partitions appear in a later answer,
once the broker's metadata has the new topic. A client that reads partitions off the
answer that created the topic passes on an emulator that answers them at once and fails
on Kafka: the emulator answers as Kafka does. Measured on Kafka 4.4: the first answer is
UNKNOWN_TOPIC_OR_PARTITION (not LEADER_NOT_AVAILABLE) with a zero topic id, and the
broker that auto-created the topic showed it 29-245 ms later (median 31, 20 trials):
a client that asks again at once still gets the error (kafka-go's partition watcher
relies on it, client_tests/test_kafka_go.py; emulator/cluster/topics.py
AUTO_CREATE_SHOWN_MS).
"""

from __future__ import annotations

import time

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


def test_a_topic_just_auto_created_is_still_unknown_to_the_next_request(
        cluster: Target, topic_name: str) -> None:
    """The Metadata right after the one that auto-created a topic, on the same broker
    and on another, still answers it unknown (by name, and absent from all topics):
    asked within 15 ms of the creation (Kafka 4.4: 29 ms at the soonest).

    Each of the three answers counts only when it came within the window of its own
    creating request, and each try asks first the ones not yet seen in time: a loaded
    machine (the first pass beside the Kafka pass, a mutation run beside that: once no try
    of 60 brought four answers in 15 ms) only needs two round trips in 15 ms per answer,
    not four. A try slower than that is made again with a new topic, up to 60 times;
    an answer never seen in time fails the test."""
    conns = [Conn(cluster, 0), Conn(cluster, 1)]
    tries = 60

    def again(name: str) -> None:
        t = metadata(conns[0], name, True)
        assert (t["error_code"], t["partitions"]) == (E.UNKNOWN_TOPIC_OR_PARTITION, []), t

    def other(name: str) -> None:
        t = metadata(conns[1], name, False)
        assert (t["error_code"], t["partitions"]) == (E.UNKNOWN_TOPIC_OR_PARTITION, []), t

    def every(name: str) -> None:
        r = conns[1].call(3, 12, {"topics": None, "allow_auto_topic_creation": False,
                                  "include_topic_authorized_operations": False})
        assert name not in {t["name"] for t in r["topics"]}

    unseen = {"the same broker again": again, "another broker": other,
              "every topic": every}
    try:
        for attempt in range(tries):
            name = f"{topic_name}-{attempt}"
            t0 = time.monotonic()
            assert metadata(conns[0], name, True)["error_code"] == E.UNKNOWN_TOPIC_OR_PARTITION
            for what, ask in list(unseen.items()):
                try:
                    ask(name)
                except AssertionError:
                    if time.monotonic() - t0 <= 0.015:
                        raise  # shown within the window: Kafka never does
                    break  # too late to tell: a new topic
                if time.monotonic() - t0 > 0.015:
                    break  # answered too late to count
                del unseen[what]
            if not unseen:
                # and it is there a moment later, on both brokers
                for c in conns:
                    wait_for(lambda c=c, name=name: metadata(c, name, False)["error_code"] == E.NONE,
                             f"{name} shown")
                return
        raise AssertionError(f"not seen within 15 ms of the creation in {tries} tries: "
                             f"{', '.join(unseen)}: the machine is too slow to tell")
    finally:
        for c in conns:
            c.close()
