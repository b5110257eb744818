"""Incremental fetch sessions (KIP-227) over TCP, with raw Fetch requests and a real
client that uses them (kafka-python's FetchSessionHandler)."""

from __future__ import annotations

import uuid

import pytest
from kafka import KafkaConsumer, KafkaProducer
from rawkafka import Conn, produce_body, topic_metadata

from emulator import Cluster
from emulator.testing import wait_for
from wire.records import build_batch

V = 12  # topic names (v13+ name topics by id; covered by the unit tests)


def _fetch(conn: Conn, session_id: int, epoch: int, parts: dict[int, int], topic: str,
           forgotten: list[int] | None = None, max_wait_ms: int = 0) -> dict:
    return conn.call(1, V, {
        "replica_id": -1, "max_wait_ms": max_wait_ms, "min_bytes": 1, "max_bytes": 1 << 20,
        "isolation_level": 0, "session_id": session_id, "session_epoch": epoch,
        "topics": [{"topic": topic, "partitions": [
            {"partition": i, "fetch_offset": off, "partition_max_bytes": 1 << 20}
            for i, off in parts.items()]}] if parts else [],
        "forgotten_topics_data": [{"topic": topic, "partitions": forgotten}]
        if forgotten else [],
        "rack_id": ""})


def _answered(resp: dict) -> dict[int, dict]:
    return {p["partition_index"]: p for t in resp["responses"] for p in t["partitions"]}


def _single_broker_topic(cluster: Cluster, partitions: int) -> tuple[str, Conn]:
    topic = f"fs-{uuid.uuid4().hex[:8]}"
    cluster.create_topic(topic, partitions, 1)
    leaders = {cluster.state.get_partition(topic, i).leader for i in range(partitions)}
    # Every partition on one broker: move them with a fresh topic per broker if needed.
    assert leaders, topic
    return topic, Conn(cluster, cluster.broker_ids.index(min(leaders)))


def _topic_on_one_broker(cluster: Cluster, partitions: int) -> tuple[str, int]:
    """A topic whose partitions all live on the first broker (a manual assignment through
    CreateTopics, so on either target), once every partition's leader is known."""
    topic = f"fs-{uuid.uuid4().hex[:8]}"
    first = cluster.broker_ids[0]
    admin = Conn(cluster)
    try:
        resp = admin.call(19, 5, {"topics": [{
            "name": topic, "num_partitions": -1, "replication_factor": -1, "configs": [],
            "assignments": [{"partition_index": i, "broker_ids": [first]}
                            for i in range(partitions)]}],
            "timeout_ms": 30000, "validate_only": False})
    finally:
        admin.close()
    assert resp["topics"][0]["error_code"] == 0, resp
    wait_for(lambda: sorted(p["leader_id"] for p in topic_metadata(cluster, topic)["partitions"])
             == [first] * partitions, f"{topic}'s leaders")
    # Kafka's metadata can name the leader before the broker leads (it applies the change
    # to its replica manager after its metadata cache): wait until a sessionless fetch
    # (epoch -1) is answered for every partition.
    probe = Conn(cluster)
    try:
        wait_for(lambda: all(p["error_code"] == 0 for p in _answered(_fetch(
            probe, 0, -1, dict.fromkeys(range(partitions), 0), topic)).values()),
            f"{topic}'s partitions to be led by broker {first}")
    finally:
        probe.close()
    return topic, 0


def test_session_lifecycle_partial_responses_and_errors(cluster: Cluster) -> None:
    """Run on both targets: Kafka's FetchManager and the emulator's answer alike."""
    topic, index = _topic_on_one_broker(cluster, 3)
    conn = Conn(cluster, index)
    try:
        full = _fetch(conn, 0, 0, {0: 0, 1: 0, 2: 0}, topic)
        sid = full["session_id"]
        assert full["error_code"] == 0 and sid != 0
        assert set(_answered(full)) == {0, 1, 2}  # a full response names every partition
        # Nothing changed: the incremental answer is empty.
        inc = _fetch(conn, sid, 1, {}, topic)
        assert inc["error_code"] == 0 and inc["session_id"] == sid and _answered(inc) == {}
        # A record on partition 1: only partition 1 answers (records and a new HW).
        p1 = Conn(cluster, index)
        assert p1.call(0, 9, produce_body(topic, 1, build_batch([(b"k", b"v")])))
        inc = _fetch(conn, sid, 2, {}, topic)
        got = _answered(inc)
        assert set(got) == {1} and got[1]["records"] and got[1]["high_watermark"] == 1
        # The client moves its position: partition 1 at offset 1 answers nothing new.
        assert _answered(_fetch(conn, sid, 3, {1: 1}, topic)) == {}
        # Wrong epoch, unknown session.
        assert _fetch(conn, sid, 3, {}, topic)["error_code"] == 71  # INVALID_..._EPOCH
        assert _fetch(conn, sid + 1, 1, {}, topic)["error_code"] == 70  # ..._NOT_FOUND
        # The session survived the bad requests; forgetting every partition ends it.
        closing = _fetch(conn, sid, 4, {}, topic, forgotten=[0, 1, 2])
        assert closing["error_code"] == 0 and closing["session_id"] == 0
        assert _fetch(conn, sid, 5, {}, topic)["error_code"] == 70
        # epoch -1 closes a session and answers a sessionless full fetch.
        sid2 = _fetch(conn, 0, 0, {0: 0}, topic)["session_id"]
        closed = _fetch(conn, sid2, -1, {0: 0}, topic)
        assert closed["session_id"] == 0 and set(_answered(closed)) == {0}
        assert _fetch(conn, sid2, 1, {}, topic)["error_code"] == 70
        p1.close()
    finally:
        conn.close()


@pytest.mark.emulator_only  # needs max.incremental.fetch.session.cache.slots=2 (static)
def test_cache_full_sessionless_answer_and_eviction_of_smaller_sessions() -> None:
    config = {"max.incremental.fetch.session.cache.slots": "2"}
    with Cluster(brokers=1, port=0, config=config) as cluster:
        topic, conn = _single_broker_topic(cluster, 4)
        try:
            a = _fetch(conn, 0, 0, {0: 0, 1: 0}, topic)["session_id"]
            b = _fetch(conn, 0, 0, {0: 0, 1: 0}, topic)["session_id"]
            assert a and b and a != b
            # No bigger than the sessions it would replace: no session (id 0).
            assert _fetch(conn, 0, 0, {0: 0, 1: 0}, topic)["session_id"] == 0
            # Bigger: takes the slot of the smallest (ties: the lowest id).
            c = _fetch(conn, 0, 0, {0: 0, 1: 0, 2: 0}, topic)["session_id"]
            assert c != 0
            evicted = min(a, b)
            assert _fetch(conn, evicted, 1, {}, topic)["error_code"] == 70
            assert _fetch(conn, max(a, b), 1, {}, topic)["error_code"] == 0
        finally:
            conn.close()


@pytest.mark.emulator_only  # checks the sessions in the emulator's fetch-session cache
def test_kafka_python_consumes_through_incremental_sessions(bootstrap: str,
                                                            cluster: Cluster) -> None:
    topic = f"fs-kp-{uuid.uuid4().hex[:8]}"
    cluster.create_topic(topic, 12, 3)
    producer = KafkaProducer(bootstrap_servers=bootstrap)
    for i in range(600):
        producer.send(topic, key=str(i).encode(), value=b"x" * 100, partition=i % 12)
    producer.flush()
    producer.close()
    consumer = KafkaConsumer(topic, bootstrap_servers=bootstrap, auto_offset_reset="earliest",
                             group_id=None, consumer_timeout_ms=20000)
    seen = set()
    try:
        for msg in consumer:
            seen.add(msg.key)
            if len(seen) == 600:
                break
    finally:
        consumer.close()
    assert len(seen) == 600
    caches = cluster.server.services.fetch_sessions.caches
    # kafka-python opened a session on each leader it fetched from and moved on to
    # incremental fetches (epochs past 1).
    wait_for(lambda: any(s.epoch > 1 for c in list(caches.values())
                         for s in list(c.sessions.values())), "incremental fetch sessions")
