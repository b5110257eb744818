"""Group configs (the GROUP config resource, KIP-848) acting on a consumer group, on the
wire and on both targets (``--target kafka`` runs it on a real Kafka 4.4): an
IncrementalAlterConfigs of consumer.heartbeat.interval.ms on the group changes the
interval its ConsumerGroupHeartbeat answers, a value outside the broker's bounds is
refused INVALID_CONFIG, and deleting the override brings the broker's value back."""

from __future__ import annotations

import uuid

from rawkafka import Conn, find_coordinator

from client_tests.targets import KafkaTarget
from emulator import Cluster
from emulator.testing import wait_for
from wire.errors import ErrorCode as E

GROUP_RESOURCE = 32


def alter(conn: Conn, group: str, name: str, value: str | None, op: int = 0) -> dict:
    """IncrementalAlterConfigs v1 of one group key (op 0 SET, 1 DELETE)."""
    r = conn.call(44, 1, {"resources": [{
        "resource_type": GROUP_RESOURCE, "resource_name": group,
        "configs": [{"name": name, "config_operation": op, "value": value}]}],
        "validate_only": False})
    return r["responses"][0]


def test_heartbeat_interval_follows_the_groups_override(cluster: Cluster | KafkaTarget,
                                                        topic_name: str) -> None:
    group = f"gcfg-{topic_name}"
    cluster.create_topic(topic_name, 2, 3)
    conns: list[Conn] = []
    admin = Conn(cluster)
    member = uuid.uuid4().hex[:22]
    state = {"epoch": 0, "owned": []}

    def heartbeat() -> dict:
        joining = state["epoch"] == 0
        r = conns[-1].call(68, 1, {
            "group_id": group, "member_id": member, "member_epoch": state["epoch"],
            "instance_id": None, "rack_id": None,
            "rebalance_timeout_ms": 30000 if joining else -1,
            "subscribed_topic_names": [topic_name] if joining else None,
            "subscribed_topic_regex": None, "server_assignor": None,
            "topic_partitions": state["owned"]})
        if r["error_code"] == E.NONE:
            state["epoch"] = r["member_epoch"]
            if r["assignment"] is not None:
                state["owned"] = r["assignment"]["topic_partitions"]
        return r

    try:
        # (find_coordinator returns once the coordinator has loaded the group's partition)
        conns.append(Conn(cluster, sorted(cluster.broker_ids).index(
            find_coordinator(cluster, group))))
        first = heartbeat()
        assert first["error_code"] == E.NONE, first
        broker_interval = first["heartbeat_interval_ms"]
        assert broker_interval != 7000

        bad = alter(admin, group, "consumer.session.timeout.ms", "1000")
        assert bad["error_code"] == E.INVALID_CONFIG, bad
        assert alter(admin, group, "consumer.heartbeat.interval.ms", "7000")["error_code"] == 0
        # Kafka's brokers learn of the change from the metadata log: wait for it
        wait_for(lambda: heartbeat()["heartbeat_interval_ms"] == 7000,
                 "the group's heartbeat interval", 30, interval=0.2)
        assert alter(admin, group, "consumer.heartbeat.interval.ms", None,
                     op=1)["error_code"] == 0
        wait_for(lambda: heartbeat()["heartbeat_interval_ms"] == broker_interval,
                 "the broker's heartbeat interval again", 30, interval=0.2)
    finally:
        state["owned"] = None
        state["epoch"] = -1
        if conns:
            heartbeat()  # leave
        for c in [*conns, admin]:
            c.close()
