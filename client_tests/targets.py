"""What the client tests run against: the emulator (default) or Apache Kafka itself.

``pytest client_tests --target kafka`` (or KAFKA_EMULATOR_TARGET=kafka) runs every client
test about Kafka's behaviour against a real Kafka cluster (client_tests/kafka_cluster.py,
release DEFAULT_VERSION, or KAFKA_EMULATOR_KAFKA_VERSION). A test sees the cluster
through the same few calls either way - ``bootstrap_servers``, ``broker_ids``,
``create_topic``, ``stop_broker``/``start_broker`` (a crash: SIGKILL of the broker's JVM
on Kafka, the emulator's stop_broker) - so one test checks both.

Tests of the emulator itself (fault injection, the control plane, the emulator's own
timing, or reaching into its state) carry the ``emulator_only`` marker and are
deselected on Kafka, which docs/conformance.md lists.

One Kafka cluster serves a whole test session (per xdist worker): starting one costs
seconds, and unique topic and group names keep tests apart. Its group timeouts are the
fast ones the emulator's group tests use (GROUP_CONFIG), so the same waits hold.
"""

from __future__ import annotations

import os
import socket
import time

from confluent_kafka.admin import AdminClient, NewTopic

from client_tests.kafka_cluster import DEFAULT_VERSION, KafkaCluster, request
from emulator.testing import wait_for

TARGET_ENV = "KAFKA_EMULATOR_TARGET"
VERSION_ENV = "KAFKA_EMULATOR_KAFKA_VERSION"

# Kafka's group timeouts brought down to what the emulator's group tests use
# (client_tests/group_members.py GROUP_CONFIG); Kafka also needs its minimums lowered.
KAFKA_TEST_CONFIG = {
    "group.min.session.timeout.ms": "1000",
    "group.consumer.min.session.timeout.ms": "1000",
    "group.consumer.min.heartbeat.interval.ms": "500",
    "group.consumer.heartbeat.interval.ms": "500",
    "group.consumer.session.timeout.ms": "6000",
    "auto.create.topics.enable": "true",
    "num.partitions": "1",
    # The log cleaner looks for work every second, the emulator's pace, instead of every
    # 15 s (client_tests/test_compaction_clients.py waits for it to compact).
    "log.cleaner.backoff.ms": "1000",
}
# Share groups at test pace, on both targets (the emulator's ``share_cluster`` fixture has
# it as well): a group may set share.record.lock.duration.ms down to 1 s (the minimum is
# 15 s by default, in Kafka and the emulator), and members heartbeat every 500 ms instead
# of 5 s - a member's first heartbeat on a topic is assigned nothing until the
# share-partitions are initialized, and it learns them at its next heartbeat.
SHARE_TEST_CONFIG = {
    "group.share.min.record.lock.duration.ms": "1000",
    "group.share.min.heartbeat.interval.ms": "500",
    "group.share.heartbeat.interval.ms": "500",
}
KAFKA_TEST_CONFIG.update(SHARE_TEST_CONFIG)


class KafkaTarget:
    """A real Kafka cluster behind the calls the target-neutral client tests make."""

    kind = "kafka"

    def __init__(self, kafka: KafkaCluster) -> None:
        self.kafka = kafka
        self.version = kafka.version
        # A broker crashed during the test (restarted by the test or not): restore then
        # brings the cluster back to balance.
        self.crashed = False

    @property
    def bootstrap_servers(self) -> str:
        return self.kafka.bootstrap_servers

    @property
    def broker_ids(self) -> list[int]:
        return self.kafka.broker_ids

    def create_topic(self, name: str, partitions: int = 1, replication_factor: int = -1,
                     config: dict[str, str] | None = None) -> None:
        """CreateTopics through an Admin client, then ``wait_for_topic``: Kafka answers
        CreateTopics once the controller has the topic, and every broker applies it later."""
        rf = replication_factor if replication_factor > 0 else min(3, len(self.broker_ids))
        admin = AdminClient({"bootstrap.servers": self.bootstrap_servers})
        fut = admin.create_topics([NewTopic(name, partitions, rf, config=config or {})])
        fut[name].result(30)
        self.wait_for_topic(name, partitions)

    def wait_for_topic(self, topic: str, partitions: int | None = None,
                       timeout: float = 60.0) -> None:
        """Until every broker has applied the topic (KafkaCluster.wait_for_topic: the
        leaders in each broker's Metadata, each replica's log in its broker's
        DescribeLogDirs, each leader answering ListOffsets), as a careful tool waits
        after CreateTopics."""
        self.kafka.wait_for_topic(topic, partitions, timeout)

    # The name docs/fidelity.md gives it (emulator/fidelity/differences.py).
    wait_for_leaders = wait_for_topic

    def stop_broker(self, broker_id: int) -> None:
        """A crash: SIGKILL of the broker's JVM (the emulator's stop_broker is one too)."""
        self.crashed = True
        self.kafka.kill_broker(broker_id)

    def start_broker(self, broker_id: int) -> None:
        self.kafka.start_broker(broker_id)

    def restore(self, timeout: float = 60.0) -> None:
        """After a test: every broker running again (a crash test may have left one down)
        and, if one crashed (whether the test or this restarted it), the cluster as balanced as a fresh one - every replica
        back in its ISR and each partition led by its preferred replica - so that the
        next test does not meet leaders moving back (Kafka's own auto rebalance waits
        leader.imbalance.check.interval.seconds, 300 s)."""
        restarted, self.crashed = self.crashed, False
        for bid, node in self.kafka.brokers.items():
            if not node.alive:
                self.kafka.start_broker(bid)
                restarted = True
        if not restarted:
            return
        port = self.kafka.listener_port(self.broker_ids[0])
        deadline = time.monotonic() + timeout
        with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
            def in_sync() -> bool:
                md = request(sock, 3, 12, {"topics": None, "allow_auto_topic_creation": False})
                parts = [p for t in md["topics"] for p in t["partitions"]]
                return all(sorted(p["isr_nodes"]) == sorted(p["replica_nodes"]) for p in parts)

            def preferred_leaders() -> bool:
                # A preferred election of every partition (null: all); ELECTION_NOT_NEEDED
                # for those already led by their first replica.
                request(sock, 43, 2, {"election_type": 0, "topic_partitions": None,
                                      "timeout_ms": 30000})
                md = request(sock, 3, 12, {"topics": None, "allow_auto_topic_creation": False})
                return all(p["leader_id"] == p["replica_nodes"][0]
                           for t in md["topics"] for p in t["partitions"])

            wait_for(in_sync, "every replica back in its ISR", timeout=timeout, interval=0.2)
            wait_for(preferred_leaders, "the preferred leaders back",
                     timeout=max(0.0, deadline - time.monotonic()), interval=0.5)


_session: KafkaTarget | None = None


def kafka_target() -> KafkaTarget:
    """The session's Kafka cluster, started on first use (stopped by ``close_session``)."""
    global _session
    if _session is None:
        version = os.environ.get(VERSION_ENV, DEFAULT_VERSION)
        # the controller validates GROUP configs (share.record.lock.duration.ms against
        # group.share.min.record.lock.duration.ms), so it has the share minimums too
        kafka = KafkaCluster(brokers=3, version=version, broker_config=KAFKA_TEST_CONFIG,
                             controller_config=SHARE_TEST_CONFIG)
        kafka.start()
        _session = KafkaTarget(kafka)
    return _session


def close_session() -> None:
    """Kill the brokers, then stop the controller: nothing of a test cluster needs a clean
    shutdown, and brokers sent SIGTERM together with their controller wait out its absence
    (KafkaCluster.stop's 20 s) before they exit."""
    global _session
    if _session is not None:
        for bid in _session.broker_ids:
            _session.kafka.kill_broker(bid)
        _session.kafka.stop()
        _session = None
