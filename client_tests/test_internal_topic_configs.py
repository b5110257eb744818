"""The internal topics are created with the topic configs Kafka 4.4's coordinators give
them, on both targets (``--target kafka``): DescribeConfigs of __consumer_offsets,
__transaction_state and __share_group_state lists, as topic overrides, exactly what
GroupCoordinatorService, TransactionLog and ShareCoordinatorService set, each value
read from the broker config the target describes (the segment sizes differ between
the emulator's fast mode and Kafka: docs/fidelity.md, ``internal-topic-segments``).

The emulator gave __transaction_state no min.insync.replicas (Kafka: from
transaction.state.log.min.isr, 2) and __share_group_state min(2, its replicas) instead
of share.coordinator.state.topic.min.isr (docs/fidelity.md,
``internal-topic-min-isr``).
"""

from __future__ import annotations

from client_tests.rawkafka import Conn, find_coordinator
from client_tests.targets import KafkaTarget
from emulator import Cluster
from emulator.cluster.configs import segment_size_configs
from emulator.testing import wait_for

Target = Cluster | KafkaTarget
TOPIC, BROKER, TOPIC_OVERRIDE = 2, 4, 1  # resource types; the config source of an override


def describe(c: Target, resource_type: int, name: str) -> dict[str, dict]:
    conn = Conn(c)
    try:
        r = conn.call(32, 4, {"resources": [{"resource_type": resource_type,
                                             "resource_name": name,
                                             "configuration_keys": None}],
                              "include_synonyms": False, "include_documentation": False})
    finally:
        conn.close()
    (res,) = r["results"]
    assert res["error_code"] == 0, res
    return {x["name"]: x for x in res["configs"]}


def overrides(c: Target, topic: str) -> dict[str, str]:
    return {k: v["value"] for k, v in describe(c, TOPIC, topic).items()
            if v["config_source"] == TOPIC_OVERRIDE}


def test_internal_topics_carry_kafkas_topic_configs(cluster: Target) -> None:
    c = cluster
    broker = describe(c, BROKER, str(c.broker_ids[0]))

    def b(key: str) -> str:
        return str(broker[key]["value"])

    def segments(key: str) -> dict[str, str]:
        # segment.bytes, or under its 1 MiB minimum (the emulator's fast 100 KiB) the
        # minimum with internal.segment.bytes beside it, which Kafka's log obeys first
        return segment_size_configs(int(b(key)))

    # FindCoordinator creates each internal topic (a group, a transactional id, a
    # share-partition key)
    find_coordinator(c, "internal-configs-g")
    find_coordinator(c, "internal-configs-txn", 1)
    find_coordinator(c, "internal-configs-g:AAAAAAAAAAAAAAAAAAAAAQ:0", 2)
    want = {
        "__consumer_offsets": {
            "cleanup.policy": "compact", "compression.type": "producer",
            **segments("offsets.topic.segment.bytes")},
        "__transaction_state": {
            "cleanup.policy": "compact", "compression.type": "uncompressed",
            "min.insync.replicas": b("transaction.state.log.min.isr"),
            "unclean.leader.election.enable": "false",
            **segments("transaction.state.log.segment.bytes")},
        "__share_group_state": {
            "cleanup.policy": "delete", "compression.type": "producer",
            "min.insync.replicas": b("share.coordinator.state.topic.min.isr"),
            "retention.ms": "-1",
            **segments("share.coordinator.state.topic.segment.bytes")},
    }
    for topic, configs in want.items():
        # Kafka's brokers learn the topic (and its configs) a moment after its creation
        wait_for(lambda topic=topic, configs=configs: overrides(c, topic) == configs,
                 f"{topic}'s configs {configs} (have {overrides(c, topic)})", 30)
