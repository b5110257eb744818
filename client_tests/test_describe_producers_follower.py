"""DescribeProducers on a follower that has not fetched the leader's latest batches, on
both targets.

Kafka's Partition.activeProducerState reads the replica's own producer state, built
from its own log: a follower that has not fetched a producer's batch does not list the
producer yet, while the leader does. A replica added by a reassignment under a
replication throttle is such a follower, for as long as the throttle holds it back
(a throttle only holds back a replica out of the ISR, and its first fetch is free).
The emulator answers so under ``--fidelity kafka`` (docs/fidelity.md,
describe-producers-follower); ``fast`` answers every replica from the leader's state
(tests/test_describe_producers_fidelity.py shows both modes).
"""

from __future__ import annotations

import time
import uuid

from rawkafka import Conn, alter_reassignments, create_assigned, reassignment_results

from client_tests.targets import KafkaTarget
from emulator import Cluster
from emulator.testing import wait_for
from wire.records import build_batch

BROKER, TOPIC = 4, 2  # config resource types


def alter(c: Conn, rtype: int, name: str, key: str, value: str | None) -> None:
    """IncrementalAlterConfigs of one key: SET, or DELETE with None."""
    r = c.call(44, 1, {"resources": [{
        "resource_type": rtype, "resource_name": name, "configs": [
            {"name": key, "config_operation": 0 if value is not None else 1,
             "value": value}]}], "validate_only": False})
    assert r["responses"][0]["error_code"] == 0, r


def producers(c: Conn, topic: str) -> list[int]:
    r = c.call(61, 0, {"topics": [{"name": topic, "partition_indexes": [0]}]})
    p = r["topics"][0]["partitions"][0]
    assert p["error_code"] == 0, p
    return sorted(a["producer_id"] for a in p["active_producers"])


def test_a_throttled_new_replica_does_not_list_a_producer_it_has_not_fetched(
        kafka_timing_cluster: Cluster | KafkaTarget) -> None:
    cluster = kafka_timing_cluster
    ids = sorted(cluster.broker_ids)
    leader, follower = ids[0], ids[1]
    topic = f"dpf-{uuid.uuid4().hex[:8]}"
    create_assigned(cluster, topic, {0: [leader]})
    lc = Conn(cluster, ids.index(leader))
    fc = Conn(cluster, ids.index(follower))
    admin = Conn(cluster, ids.index(leader))
    try:
        # 3 MB: the new replica's first (free) fetch takes 1 MB (replica.fetch.max.bytes),
        # which puts it far over 1 B/s, and leaves it behind, out of the ISR, throttled
        for _ in range(30):
            r = lc.call(0, 9, {"acks": -1, "timeout_ms": 5000, "topic_data": [
                {"name": topic, "partition_data": [
                    {"index": 0, "records": build_batch([(None, b"x" * 100_000)])}]}]})
            assert r["responses"][0]["partition_responses"][0]["error_code"] == 0
        alter(fc, BROKER, str(follower), "follower.replication.throttled.rate", "1")
        alter(admin, TOPIC, topic, "follower.replication.throttled.replicas",
              f"0:{follower}")
        r = alter_reassignments(admin, [(topic, [(0, [leader, follower])])])
        assert reassignment_results(r)[(topic, 0)][0] == 0, r

        def fetched_once() -> bool:
            d = fc.call(35, 4, {"topics": [{"topic": topic, "partitions": [0]}]})
            sizes = [p["partition_size"] for res in d["results"] for t in res["topics"]
                     for p in t["partitions"]]
            return bool(sizes) and sizes[0] > 0
        wait_for(fetched_once, "the new replica's first fetch", 30, interval=0.1)

        def init_producer_id() -> dict | None:
            """Kafka may answer COORDINATOR_LOAD_IN_PROGRESS while it loads the
            transaction state (clients retry)."""
            r = lc.call(22, 4, {"transactional_id": None, "transaction_timeout_ms": 60000,
                                "producer_id": -1, "producer_epoch": -1})
            assert r["error_code"] in (0, 14, 15), r
            return r if r["error_code"] == 0 else None
        init = wait_for(init_producer_id, "a producer id", 30, interval=0.2)
        pid = init["producer_id"]
        batch = build_batch([(b"k", b"v")], producer_id=pid,
                            producer_epoch=init["producer_epoch"], base_sequence=0,
                            timestamp=int(time.time() * 1000))
        r = lc.call(0, 9, {"acks": 1, "timeout_ms": 5000, "topic_data": [
            {"name": topic, "partition_data": [{"index": 0, "records": batch}]}]})
        assert r["responses"][0]["partition_responses"][0]["error_code"] == 0
        assert pid in producers(lc, topic)
        time.sleep(1)  # the follower is held back: still without the producer
        assert pid not in producers(fc, topic)
    finally:
        alter(fc, BROKER, str(follower), "follower.replication.throttled.rate", None)
        alter(admin, TOPIC, topic, "follower.replication.throttled.replicas", None)
        lc.close()
        fc.close()
        admin.close()
    # the throttle lifted, the follower catches up and lists the producer as well
    fc = Conn(cluster, ids.index(follower))
    try:
        wait_for(lambda: pid in producers(fc, topic), "the follower's producer state", 60,
                 interval=0.2)
    finally:
        fc.close()
