"""Incremental fetch sessions (KIP-227) over TCP, with raw Fetch requests and a real
client that uses them (kafka-python's FetchSessionHandler)."""

from __future__ import annotations

import uuid

import pytest
from kafka import KafkaConsumer, KafkaProducer
from rawkafka import Conn, produce_body, topic_metadata, wait_for_topic

from emulator import Cluster
from emulator.testing import wait_for
from wire.records import build_batch

V = 12  # topic names (v13+ name topics by id; covered by the unit tests)


def _fetch(conn: Conn, session_id: int, epoch: int, parts: dict[int, int], topic: str,
           forgotten: list[int] | None = None, max_wait_ms: int = 0, isolation: int = 0
           ) -> dict:
    """One Fetch of ``topic``'s ``parts`` (partition -> offset); ``isolation`` 1 is
    read_committed."""
    return conn.call(1, V, {
        "replica_id": -1, "max_wait_ms": max_wait_ms, "min_bytes": 1, "max_bytes": 1 << 20,
        "isolation_level": isolation, "session_id": session_id, "session_epoch": epoch,
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
    wait_for_topic(cluster, topic, partitions)  # on Kafka: until broker `first` leads them
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


def test_idle_partitions_answer_hw_lso_and_log_start_changes(cluster: Cluster) -> None:
    """A caught-up read_committed session: an open transaction on an idle partition
    answers its new high watermark (the LSO stays, no records), then nothing; the commit
    answers its records; DeleteRecords on another idle partition answers its new log
    start offset. No other partition answers meanwhile. Run on both targets."""
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient

    topic, index = _topic_on_one_broker(cluster, 6)
    p = Conn(cluster, index)
    for i in range(6):
        assert p.call(0, 9, produce_body(topic, i, build_batch([(b"k", b"v")])))
    conn = Conn(cluster, index)
    producer = Producer({"bootstrap.servers": cluster.bootstrap_servers,
                         "transactional.id": f"fs-{uuid.uuid4().hex[:8]}"})
    try:
        full = _fetch(conn, 0, 0, dict.fromkeys(range(6), 1), topic, isolation=1)
        sid, epoch = full["session_id"], 1
        assert sid and len(_answered(full)) == 6

        def incremental() -> dict[int, dict]:
            nonlocal epoch
            resp = _fetch(conn, sid, epoch, {}, topic, isolation=1)
            epoch += 1
            assert resp["error_code"] == 0 and resp["session_id"] == sid
            return _answered(resp)

        assert incremental() == {}
        producer.init_transactions(30)
        producer.begin_transaction()
        producer.produce(topic, b"txn", partition=2)
        producer.flush(30)
        seen: dict[int, dict] = {}
        wait_for(lambda: bool(seen.update(incremental()) or seen), "the open transaction's HW")
        assert set(seen) == {2}
        assert seen[2]["high_watermark"] == 2 and seen[2]["last_stable_offset"] == 1
        assert not seen[2]["records"]
        assert incremental() == {}  # said once
        producer.commit_transaction(30)
        seen = {}
        wait_for(lambda: bool(seen.update(incremental()) or seen.get(2, {}).get("records")),
                 "the committed records")
        assert set(seen) == {2} and seen[2]["last_stable_offset"] == 3
        # the client moves past them; then DeleteRecords on idle partition 4
        assert _answered(_fetch(conn, sid, epoch, {2: 3}, topic, isolation=1)) == {}
        epoch += 1
        admin = AdminClient({"bootstrap.servers": cluster.bootstrap_servers})
        from confluent_kafka import TopicPartition
        for f in admin.delete_records([TopicPartition(topic, 4, 1)]).values():
            f.result(30)
        seen = {}
        wait_for(lambda: bool(seen.update(incremental()) or seen), "the new log start offset")
        assert set(seen) == {4} and seen[4]["log_start_offset"] == 1 and not seen[4]["records"]
        assert incremental() == {}
    finally:
        producer.flush(5)
        conn.close()
        p.close()


def test_kafka_python_idle_read_committed_consumer_sees_hw_then_records(
        cluster: Cluster) -> None:
    """kafka-python's incremental sessions over 40 idle partitions: an open transaction
    on one moves the consumer's known high watermark without delivering a record; the
    commit delivers it; records on three others arrive; nothing else does."""
    from confluent_kafka import Producer
    from kafka import TopicPartition

    topic = f"fs-kp-{uuid.uuid4().hex[:8]}"
    cluster.create_topic(topic, 40, 1)
    tps = [TopicPartition(topic, i) for i in range(40)]
    consumer = KafkaConsumer(bootstrap_servers=cluster.bootstrap_servers,
                             isolation_level="read_committed", group_id=None,
                             enable_auto_commit=False, fetch_max_wait_ms=50)
    producer = Producer({"bootstrap.servers": cluster.bootstrap_servers,
                         "transactional.id": f"fs-{uuid.uuid4().hex[:8]}"})
    try:
        consumer.assign(tps)
        consumer.seek_to_beginning()
        for _ in range(10):  # idle: incremental fetches with nothing to say
            assert not consumer.poll(timeout_ms=100)
        producer.init_transactions(30)
        producer.begin_transaction()
        producer.produce(topic, b"txn", partition=7)
        producer.flush(30)

        def polled_hw() -> bool:
            assert not consumer.poll(timeout_ms=100)  # uncommitted: not delivered
            return consumer.highwater(tps[7]) == 1

        wait_for(polled_hw, "the open transaction's high watermark")
        producer.commit_transaction(30)
        producer.begin_transaction()
        for i in (3, 11, 39):
            producer.produce(topic, f"r{i}".encode(), partition=i)
        producer.commit_transaction(30)
        got: dict[int, list[bytes]] = {}

        def delivered() -> bool:
            for tp, msgs in consumer.poll(timeout_ms=100).items():
                got.setdefault(tp.partition, []).extend(m.value for m in msgs)
            return sum(len(v) for v in got.values()) >= 4

        wait_for(delivered, "the committed and later records")
        for _ in range(3):
            delivered()
        assert got == {7: [b"txn"], 3: [b"r3"], 11: [b"r11"], 39: [b"r39"]}
        if isinstance(cluster, Cluster):  # kafka-python fetched through a session
            caches = cluster.server.services.fetch_sessions.caches
            assert any(s.epoch > 10 for c in caches.values() for s in c.sessions.values())
    finally:
        consumer.close()
        producer.flush(5)


def _fetch_ids(conn: Conn, session_id: int, epoch: int, topic_id: bytes,
               parts: dict[int, int], version: int = 13) -> dict:
    """A Fetch v13+ (topics named by id) of ``parts`` of one topic."""
    return conn.call(1, version, {
        "replica_id": -1, "max_wait_ms": 0, "min_bytes": 1, "max_bytes": 1 << 20,
        "isolation_level": 0, "session_id": session_id, "session_epoch": epoch,
        "topics": [{"topic_id": topic_id, "partitions": [
            {"partition": i, "fetch_offset": off, "partition_max_bytes": 1 << 20}
            for i, off in parts.items()]}] if parts else [],
        "forgotten_topics_data": [], "rack_id": ""})


def _recreate_on_first_broker(cluster: Cluster, topic: str, old_id: bytes) -> bytes:
    """``topic`` (one partition) created on the first broker once more; its new id once
    that broker answers a fetch of it."""
    first = cluster.broker_ids[0]
    admin = Conn(cluster)
    try:
        resp = admin.call(19, 5, {"topics": [{
            "name": topic, "num_partitions": -1, "replication_factor": -1, "configs": [],
            "assignments": [{"partition_index": 0, "broker_ids": [first]}]}],
            "timeout_ms": 30000, "validate_only": False})
    finally:
        admin.close()
    assert resp["topics"][0]["error_code"] == 0, resp
    new_id = b""

    def led_under_new_id() -> bool:  # a broker may still describe the old topic a while
        nonlocal new_id
        t = topic_metadata(cluster, topic)
        new_id = bytes(t["topic_id"])
        return new_id != old_id and [p["leader_id"] for p in t["partitions"]] == [first]

    wait_for(led_under_new_id, f"{topic}'s leader under a new id")
    # the old partition is gone from that broker (the caller waited for it), so the one
    # its leader now serves under the name is the new one
    wait_for_topic(cluster, topic, 1)
    return new_id


def test_stale_topic_id_after_delete_and_recreate(cluster: Cluster) -> None:
    """A session (Fetch v13, topics by id) keeps the topic ids it was given. Once the
    topic is deleted, its partition answers UNKNOWN_TOPIC_OR_PARTITION (the session still
    knows the name); once a topic of the same name replaces it, INCONSISTENT_TOPIC_ID
    on every incremental fetch - never the new topic's records - whether the request
    names the partition or not, and whether the session fetched in between or not.
    Sessionless and full fetches of the old id answer UNKNOWN_TOPIC_ID (the broker no
    longer knows it), Fetch v12 (by name) of the deleted topic UNKNOWN_TOPIC_OR_PARTITION,
    and a v12 session reads the new topic. Measured on Kafka 4.4; run on both targets."""
    _stale_topic_id(cluster)


@pytest.mark.emulator_only  # the same on Kafka (the test above)
def test_stale_topic_id_under_kafka_timing(kafka_timing_cluster: Cluster) -> None:
    """As above, each broker learning the deletion and the creation a little late."""
    _stale_topic_id(kafka_timing_cluster)


def _stale_topic_id(cluster: Cluster) -> None:
    topic, index = _topic_on_one_broker(cluster, 1)
    old_id = bytes(topic_metadata(cluster, topic)["topic_id"])
    conn = Conn(cluster, index)

    def errors(resp: dict) -> dict[int, tuple[int, int, bool]]:
        assert resp["error_code"] == 0, resp
        return {i: (a["error_code"], a["high_watermark"], bool(a["records"]))
                for i, a in _answered(resp).items()}

    try:
        assert conn.call(0, 9, produce_body(topic, 0, build_batch([(b"k", b"old")])))
        full = _fetch_ids(conn, 0, 0, old_id, {0: 0})
        sid = full["session_id"]
        assert sid and _answered(full)[0]["records"]
        assert _answered(_fetch_ids(conn, sid, 1, old_id, {0: 1})) == {}
        # one session names the partition again after the deletion, one stays quiet
        # until the topic is back, one names it by name (v12)
        sid2 = _fetch_ids(conn, 0, 0, old_id, {0: 1})["session_id"]
        sid3 = _fetch_ids(conn, 0, 0, old_id, {0: 1})["session_id"]
        sid12 = _fetch(conn, 0, 0, {0: 1}, topic)["session_id"]
        assert sid2 and sid3 and sid12

        r = conn.call(20, 6, {"topics": [{"name": topic, "topic_id": bytes(16)}],
                              "timeout_ms": 30000})
        assert r["responses"][0]["error_code"] == 0, r
        wait_for(lambda: _answered(_fetch_ids(conn, 0, -1, old_id, {0: 1}))[0]["error_code"]
                 != 0, f"{topic} deleted on its broker")
        gone = {0: (3, -1, False)}  # UNKNOWN_TOPIC_OR_PARTITION
        assert errors(_fetch_ids(conn, sid, 2, old_id, {})) == gone
        assert errors(_fetch_ids(conn, sid2, 1, old_id, {0: 1})) == gone
        assert errors(_fetch_ids(conn, 0, -1, old_id, {0: 1})) == {0: (100, -1, False)}
        assert errors(_fetch(conn, 0, -1, {0: 1}, topic)) == gone

        new_id = _recreate_on_first_broker(cluster, topic, old_id)
        p = Conn(cluster, index)
        try:
            for v in (b"new0", b"new1"):
                assert p.call(0, 9, produce_body(topic, 0, build_batch([(b"k", v)])))
        finally:
            p.close()
        inconsistent = {0: (103, -1, False)}  # INCONSISTENT_TOPIC_ID
        assert errors(_fetch_ids(conn, sid, 3, old_id, {})) == inconsistent
        assert errors(_fetch_ids(conn, sid2, 2, old_id, {0: 1})) == inconsistent
        assert errors(_fetch_ids(conn, sid3, 1, old_id, {})) == inconsistent
        unknown_id = {0: (100, -1, False)}  # UNKNOWN_TOPIC_ID
        assert errors(_fetch_ids(conn, 0, -1, old_id, {0: 1})) == unknown_id
        assert errors(_fetch_ids(conn, 0, 0, old_id, {0: 1})) == unknown_id
        assert errors(_fetch_ids(conn, 0, -1, new_id, {0: 1})) == {0: (0, 2, True)}
        assert errors(_fetch_ids(conn, sid, 4, old_id, {})) == inconsistent  # every time
        # by name (v12), the session reads whatever topic has the name now
        assert errors(_fetch(conn, sid12, 1, {}, topic)) == {0: (0, 2, True)}
    finally:
        conn.close()
