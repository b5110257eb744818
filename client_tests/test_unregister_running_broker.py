"""UnregisterBroker of a running broker, on both targets.

Kafka 4.4's controller drops the registration and fences the broker as if it had
stopped: it leaves Metadata's broker list and every ISR, the partitions it led elect
other leaders (replica sets keep it), and it stays out until it restarts, while its
process keeps answering. The emulator does so under ``--fidelity kafka``
(docs/fidelity.md, unregister-running-broker); ``fast`` lets it register again at once
(tests/test_unregister_broker_fidelity.py shows both modes).
"""

from __future__ import annotations

import time
import uuid

from rawkafka import Conn

from client_tests.targets import KafkaTarget
from emulator import Cluster
from emulator.testing import wait_for


def metadata(c: Conn, topic: str) -> dict:
    return c.call(3, 12, {"topics": [{"name": topic, "topic_id": bytes(16)}],
                          "allow_auto_topic_creation": False,
                          "include_topic_authorized_operations": False})


def test_an_unregistered_running_broker_is_fenced_until_it_restarts(
        kafka_timing_cluster: Cluster | KafkaTarget) -> None:
    cluster = kafka_timing_cluster
    topic = f"unreg-{uuid.uuid4().hex[:8]}"
    ids = sorted(cluster.broker_ids)
    cluster.create_topic(topic, len(ids), len(ids))
    x = ids[-1]
    c0 = Conn(cluster, 0)
    cx = Conn(cluster, len(ids) - 1)
    try:
        assert c0.call(64, 0, {"broker_id": x})["error_code"] == 0

        def fenced() -> dict | None:
            m = metadata(c0, topic)
            parts = m["topics"][0]["partitions"]
            if x in [b["node_id"] for b in m["brokers"]] or any(
                    p["leader_id"] == x or x in p["isr_nodes"] for p in parts):
                return None
            return m
        m = wait_for(fenced, f"broker {x} fenced", 30, interval=0.1)
        assert all(x in p["replica_nodes"] for p in m["topics"][0]["partitions"])
        time.sleep(2)  # and it stays out (Kafka: still out after 20 s)
        assert fenced() is not None
        # the broker itself still answers, without itself in its broker list
        mx = metadata(cx, topic)
        assert x not in [b["node_id"] for b in mx["brokers"]]
        again = c0.call(64, 0, {"broker_id": x})
        assert again["error_code"] == 102, again  # BROKER_ID_NOT_REGISTERED
    finally:
        cx.close()
        c0.close()
    cluster.stop_broker(x)
    cluster.start_broker(x)  # registers again

    def back() -> bool:
        c = Conn(cluster, 0)
        try:
            return x in [b["node_id"] for b in metadata(c, topic)["brokers"]]
        finally:
            c.close()
    wait_for(back, f"broker {x} registered again", 60, interval=0.2)
