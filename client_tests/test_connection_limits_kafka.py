"""The connection-limit scenarios of test_connection_limits.py against a real Apache
Kafka 4.4 (client_tests/kafka_cluster.py) configured with the same limits: one cluster
whose brokers each carry one scenario's limits (broker_config by node id), so the
whole module costs one start. Every broker has three listeners: PLAINTEXT and OTHER
for clients, and INTERNAL as the inter-broker listener, because Kafka exempts the
inter-broker listener from the broker-wide max.connections and connection rate
(ConnectionQuotas' protected listener) and the emulator's PLAINTEXT is a client's."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable, Iterator

import pytest
from kafka_cluster import KafkaCluster, small_cluster_config
from test_connection_limits import (
    CREATION_RATE,
    IDLE,
    IP_RATE,
    LISTENER_MAX,
    MAX_CONNECTIONS,
    PER_IP,
    PER_IP_OVERRIDES,
    QUEUED,
    REFUSED_BUDGET,
    Connect,
    alter_ip_rate,
    call,
    creation_rate_scenario,
    dynamic_listener_max_scenario,
    dynamic_per_ip_scenario,
    idle_scenario,
    ip_rate_scenario,
    listener_max_scenario,
    long_poll_idle_scenario,
    max_connections_scenario,
    per_ip_override_scenario,
    per_ip_scenario,
    queued_bytes_scenario,
    stalled_frame_scenario,
    waiting_for_the_budget_idle_scenario,
)

from emulator.testing import wait_for

# node id -> the limits of the scenario(s) run on that broker
NODES: dict[int, dict[str, str]] = {
    1: PER_IP, 2: PER_IP_OVERRIDES, 3: MAX_CONNECTIONS, 4: IDLE, 5: QUEUED,
    6: CREATION_RATE, 7: {**LISTENER_MAX, **IP_RATE},
}


@pytest.fixture(scope="module")
def kafka() -> Iterator[KafkaCluster]:
    def config(node: int) -> dict[str, str]:
        return {**small_cluster_config(len(NODES)), "inter.broker.listener.name": "INTERNAL",
                **NODES[node]}
    with KafkaCluster(len(NODES), broker_config=config,
                      listeners={"OTHER": "PLAINTEXT", "INTERNAL": "PLAINTEXT"}) as k:
        yield k
        # Nothing to keep: SIGKILL the brokers rather than wait for seven controlled
        # shutdowns (one took 20 s, KafkaCluster's limit, on a loaded machine).
        for node in k.broker_ids:
            k.kill_broker(node)


def _connect(kafka: KafkaCluster, node: int, listener: str = "PLAINTEXT") -> Connect:
    port = kafka.listener_port(node, listener)
    return lambda: socket.create_connection(("127.0.0.1", port), timeout=10)


def test_max_connections_per_ip_closes_the_extra_one_on_real_kafka(
        kafka: KafkaCluster) -> None:
    per_ip_scenario(_connect(kafka, 1), 2)


def test_max_connections_per_ip_changes_at_run_time_on_real_kafka(kafka: KafkaCluster) -> None:
    dynamic_per_ip_scenario(_connect(kafka, 1), 1, 2)


def test_max_connections_per_ip_overrides_name_their_own_limit_on_real_kafka(
        kafka: KafkaCluster) -> None:
    per_ip_override_scenario(_connect(kafka, 2), 3)


def test_max_connections_waits_for_a_slot_on_real_kafka(kafka: KafkaCluster) -> None:
    max_connections_scenario(_connect(kafka, 3), 2)


def test_idle_connections_are_closed_busy_ones_are_not_on_real_kafka(
        kafka: KafkaCluster) -> None:
    idle_scenario(_connect(kafka, 4), 1000)


def test_a_long_poll_longer_than_the_idle_time_is_closed_on_real_kafka(
        kafka: KafkaCluster) -> None:
    long_poll_idle_scenario(_connect(kafka, 4), 4, 1000)


def test_a_stalled_frame_is_closed_and_its_bytes_freed_on_real_kafka(
        kafka: KafkaCluster) -> None:
    stalled_frame_scenario(_connect(kafka, 4))


def test_queued_max_request_bytes_bounds_requests_in_flight_on_real_kafka(
        kafka: KafkaCluster) -> None:
    # Kafka's pool is not visible to a client: give each stalled request's size 0.5 s to
    # be read (its network thread polls at least every 300 ms).
    queued_bytes_scenario(_connect(kafka, 5), 100_000, lambda n: time.sleep(0.5))


def test_a_connection_waiting_for_the_budget_is_closed_when_idle_on_real_kafka(
        kafka: KafkaCluster) -> None:
    waiting_for_the_budget_idle_scenario(_connect(kafka, 5), 3000)


def test_queued_max_request_bytes_under_socket_request_max_bytes_is_refused_on_real_kafka(
        ) -> None:
    """Kafka refuses the config before it starts (kafka-storage format already)."""
    with pytest.raises(RuntimeError, match=REFUSED_BUDGET), KafkaCluster(
            1, broker_config={**small_cluster_config(1), "queued.max.request.bytes": "100000"}):
        pass


def test_max_connection_creation_rate_delays_new_connections_on_real_kafka(
        kafka: KafkaCluster) -> None:
    # The cluster's start probed this broker's Metadata; let those connections leave the
    # rate's two 1 s windows so that the scenario starts from no connections, as a new
    # emulator does.
    time.sleep(2.1)
    creation_rate_scenario(_connect(kafka, 6))


def test_listener_max_connections_limits_that_listener_only_on_real_kafka(
        kafka: KafkaCluster) -> None:
    listener_max_scenario(_connect(kafka, 7), _connect(kafka, 7, "OTHER"))


def test_listener_max_connections_changes_at_run_time_on_real_kafka(
        kafka: KafkaCluster) -> None:
    dynamic_listener_max_scenario(_connect(kafka, 7), _connect(kafka, 7, "OTHER"), 7)


def _ip_rate_on(admin: socket.socket) -> bool:
    """Does the broker describe a connection_creation_rate for 127.0.0.1?"""
    resp = call(admin, 48, 1, {"components": [
        {"entity_type": "ip", "match_type": 0, "match": "127.0.0.1"}], "strict": False})
    return any(v["key"] == "connection_creation_rate"
               for e in resp["entries"] or [] for v in e["values"])


def test_an_ip_connection_creation_rate_closes_the_extra_connection_on_real_kafka(
        kafka: KafkaCluster) -> None:
    """The quota goes through the controller to every broker (and is for the whole
    cluster, so it is removed again before the next test)."""
    conn: Callable[[], socket.socket] = _connect(kafka, 7)
    admin = conn()

    def applied() -> None:
        wait_for(lambda: _ip_rate_on(admin), "the quota on broker 7")
        time.sleep(0.3)  # describe answers from the image the quota publisher also reads

    try:
        ip_rate_scenario(conn, admin, applied)
    finally:
        assert alter_ip_rate(admin, None) == 0
        wait_for(lambda: not _ip_rate_on(admin), "the quota removed on broker 7")
        admin.close()
