"""The admin keys a 4.4 broker serves beyond the core ones, over TCP with raw requests:
DescribeProducers (61), ListConfigResources (74), DescribeQuorum (55), client quotas
(48/49)."""

from __future__ import annotations

import time
import uuid

import pytest
from confluent_kafka import Producer
from rawkafka import Conn, fetch_body, leader_conn, partition_leader

from client_tests.targets import KafkaTarget
from emulator import Cluster
from emulator.testing import wait_for

# Runs on both targets (--target kafka): the controller is learnt from DescribeQuorum, the
# cluster id from Metadata; what a test changes in the (shared, on Kafka) cluster - quotas,
# feature levels, registrations - it puts back.
Target = Cluster | KafkaTarget

METADATA_ALL = {"topics": None, "allow_auto_topic_creation": False,
                "include_topic_authorized_operations": False}


def quorum_leader(conn: Conn) -> int:
    """The active controller's id, as DescribeQuorum (v2) names the metadata log's leader."""
    body = conn.call(55, 2, {"topics": [{"topic_name": "__cluster_metadata",
                                         "partitions": [{"partition_index": 0}]}]})
    return body["topics"][0]["partitions"][0]["leader_id"]


def test_describe_producers_lists_idempotent_and_transactional_producers(
        cluster: Target) -> None:
    topic = f"dp-{uuid.uuid4().hex[:8]}"
    cluster.create_topic(topic, 1, 3)
    idem = Producer({"bootstrap.servers": cluster.bootstrap_servers,
                     "enable.idempotence": True})
    # stamped now, not in 2023: records past retention.ms (7 days) go at a retention check
    now = int(time.time() * 1000)
    for i in range(3):
        idem.produce(topic, b"v%d" % i, partition=0, timestamp=now + i)
    idem.flush(10)
    txn = Producer({"bootstrap.servers": cluster.bootstrap_servers,
                    "transactional.id": f"dp-{topic}"})
    txn.init_transactions(10)
    txn.begin_transaction()
    txn.produce(topic, b"t", partition=0)
    txn.flush(10)  # the transaction stays open
    conn = leader_conn(cluster, topic)
    try:
        body = conn.call(61, 0, {"topics": [{"name": topic, "partition_indexes": [0, 5]},
                                            {"name": "nope", "partition_indexes": [0]}]})
        p0, p5 = body["topics"][0]["partitions"]
        assert p0["error_code"] == 0 and p5["error_code"] == 3
        assert body["topics"][1]["partitions"][0]["error_code"] == 3
        producers = sorted(p0["active_producers"], key=lambda p: p["current_txn_start_offset"])
        assert len(producers) == 2
        plain, open_txn = producers
        assert plain["last_sequence"] == 2 and plain["current_txn_start_offset"] == -1
        assert plain["last_timestamp"] == now + 2
        assert open_txn["current_txn_start_offset"] == 3 and open_txn["last_sequence"] == 0
        # A follower answers from its own log's producer state (Kafka's
        # Partition.activeProducerState), the leader's once it has fetched the batches.
        follower = next(b for b in cluster.broker_ids
                        if b != partition_leader(cluster, topic)[0])
        other = Conn(cluster, cluster.broker_ids.index(follower))

        def on_follower() -> dict:
            r = other.call(61, 0, {"topics": [{"name": topic, "partition_indexes": [0]}]})
            return r["topics"][0]["partitions"][0]

        wait_for(lambda: on_follower()["error_code"] == 0 and sorted(
            on_follower()["active_producers"],
            key=lambda p: p["current_txn_start_offset"]) == producers,
            "the follower's producer state")
        other.close()
    finally:
        conn.close()
        txn.abort_transaction(10)


def test_list_config_resources_as_a_4_4_broker_answers(cluster: Target) -> None:
    topic = f"lcr-{uuid.uuid4().hex[:8]}"
    cluster.create_topic(topic, 1, 3)
    conn = Conn(cluster)
    try:
        assert conn.call(74, 0, {})["config_resources"] == []  # no client metrics
        everything = conn.call(74, 1, {"resource_types": []})["config_resources"]
        brokers = [str(b) for b in sorted(cluster.broker_ids)]
        by_type: dict[int, list[str]] = {}
        for r in everything:
            by_type.setdefault(r["resource_type"], []).append(r["resource_name"])
        assert by_type[8] == brokers and by_type[4] == brokers and topic in by_type[2]
        # broker loggers, then brokers (groups other tests gave configs may come first)
        assert [r["resource_type"] for r in everything
                if r["resource_type"] in (8, 4)] == [8] * len(brokers) + [4] * len(brokers)
        only_topics = conn.call(74, 1, {"resource_types": [2]})["config_resources"]
        assert {r["resource_type"] for r in only_topics} == {2}
        bad = conn.call(74, 1, {"resource_types": [99]})
        assert bad["error_code"] == 35 and bad["config_resources"] == []
    finally:
        conn.close()


def test_describe_quorum_names_the_controller_as_the_voter(cluster: Target) -> None:
    conn = Conn(cluster)
    req = {"topics": [{"topic_name": "__cluster_metadata",
                       "partitions": [{"partition_index": 0}]}]}
    try:
        body = conn.call(55, 2, req)
        assert body["error_code"] == 0
        part = body["topics"][0]["partitions"][0]
        controller = part["leader_id"]  # a broker of the emulator's, Kafka's own node
        assert [v["replica_id"] for v in part["current_voters"]] == [controller]
        assert sorted(o["replica_id"] for o in part["observers"]) == \
            sorted(b for b in cluster.broker_ids if b != controller)
        # The observers (the brokers) keep up with the metadata log: on Kafka it grows
        # all the time (a NoOpRecord every metadata.max.idle.interval.ms, 500 ms), so one
        # answer may catch a broker a batch behind; they are level again at once.
        def level() -> bool:
            p = conn.call(55, 2, req)["topics"][0]["partitions"][0]
            return all(o["log_end_offset"] == p["high_watermark"] for o in p["observers"])
        assert all(o["log_end_offset"] <= part["high_watermark"] for o in part["observers"])
        wait_for(level, "every observer at the metadata log's high watermark", 10)
        assert body["nodes"][0]["node_id"] == controller
        assert body["nodes"][0]["listeners"][0]["name"] == "CONTROLLER"
        other = conn.call(55, 2, {"topics": [{"topic_name": "foo",
                                              "partitions": [{"partition_index": 0}]}]})
        assert other["topics"][0]["partitions"][0]["error_code"] == 3 and other["nodes"] == []
        v0 = conn.call(55, 0, req)["topics"][0]["partitions"][0]
        assert v0["leader_id"] == controller
    finally:
        conn.close()


def test_client_quotas_alter_describe_and_throttle(cluster: Target) -> None:
    """A producer_byte_rate / consumer_byte_rate quota on the raw connection's client id:
    produce and fetch above it answer throttle_time_ms."""
    from rawkafka import produce_body

    from wire.records import build_batch

    topic = f"q-{uuid.uuid4().hex[:8]}"
    client_id = f"quota-{topic}"
    cluster.create_topic(topic, 1, 3)
    conn = leader_conn(cluster, topic)  # the admin connection, under no quota
    entity = [{"entity_type": "client-id", "entity_name": client_id}]
    try:
        bad = conn.call(49, 1, {"entries": [
            {"entity": [{"entity_type": "ip", "entity_name": "1.2.3.4"},
                        {"entity_type": "user", "entity_name": "u"}], "ops": []},
            {"entity": entity, "ops": [{"key": "nope", "value": 1.0, "remove": False}]}],
            "validate_only": False})
        assert [e["error_code"] for e in bad["entries"]] == [42, 42]
        ok = conn.call(49, 1, {"entries": [{"entity": entity, "ops": [
            {"key": "producer_byte_rate", "value": 1000.0, "remove": False},
            {"key": "consumer_byte_rate", "value": 1000.0, "remove": False}]}],
            "validate_only": False})
        assert ok["entries"][0]["error_code"] == 0

        def described() -> list[dict]:
            entries = conn.call(48, 1, {"components": [
                {"entity_type": "client-id", "match_type": 0, "match": client_id}],
                "strict": True})["entries"]
            return sorted(entries[0]["values"], key=lambda v: v["key"]) if entries else []

        # On Kafka the leader learns the quota from the metadata log after the answer.
        wait_for(lambda: described() == [{"key": "consumer_byte_rate", "value": 1000.0},
                                         {"key": "producer_byte_rate", "value": 1000.0}],
                 "the quota described by the leader")
        # A throttled answer mutes its connection for the throttle time (Kafka), so
        # produce and fetch each on a connection of their own with the quota's client id.
        producer = leader_conn(cluster, topic)
        producer.client_id = client_id
        batch = build_batch([(b"k", b"x" * 30_000)])
        resp = producer.call(0, 9, produce_body(topic, 0, batch, acks=-1))
        producer.close()
        assert resp["responses"][0]["partition_responses"][0]["error_code"] == 0
        assert resp["throttle_time_ms"] > 0  # 30 KB against 1 KB/s
        consumer = leader_conn(cluster, topic)
        consumer.client_id = client_id
        fetched = consumer.call(1, 12, fetch_body(topic, min_bytes=1, max_bytes=1 << 20))
        consumer.close()
        assert fetched["throttle_time_ms"] > 0
    finally:
        remove_quotas(conn, client_id, "producer_byte_rate", "consumer_byte_rate")
        conn.close()


def remove_quotas(conn: Conn, client_id: str, *keys: str) -> None:
    """Take a test's quotas off again: on Kafka the cluster outlives the test."""
    conn.call(49, 1, {"entries": [{"entity": [
        {"entity_type": "client-id", "entity_name": client_id}], "ops": [
        {"key": k, "value": 0.0, "remove": True} for k in keys]}], "validate_only": False})


@pytest.mark.kafka_slow  # throttled answers mute the connection on Kafka
def test_request_percentage_quota_throttles_by_request_time(cluster: Target) -> None:
    """request_percentage (KIP-124): a tiny share of a thread for the raw connection's
    client id makes its Metadata answers throttled (at most one quota window, 1 s); a
    confluent-kafka producer under such a quota is told to back off (throttle_cb), one
    with another client id is not."""
    import threading

    topic = f"rq-{uuid.uuid4().hex[:8]}"
    slow, free, raw = f"{topic}-slow", f"{topic}-free", f"{topic}-raw"
    conn = Conn(cluster, client_id=raw)
    admin = Conn(cluster)  # under no quota

    def set_quota(client_id: str) -> None:
        ok = admin.call(49, 1, {"entries": [{"entity": [
            {"entity_type": "client-id", "entity_name": client_id}], "ops": [
            {"key": "request_percentage", "value": 0.001, "remove": False}]}],
            "validate_only": False})
        assert ok["entries"][0]["error_code"] == 0

    cluster.create_topic(topic, 1, 3)
    try:
        set_quota(raw)
        set_quota(slow)
        # On Kafka the broker applies the quota when the metadata log reaches it.
        wait_for(lambda: conn.call(3, 12, METADATA_ALL)["throttle_time_ms"] > 0,
                 "a throttled Metadata answer", timeout=30)
        # (Each throttled answer mutes the connection up to 1 s on Kafka: a few will do.)
        throttles = [conn.call(3, 12, METADATA_ALL)["throttle_time_ms"] for _ in range(5)]
        assert 0 < throttles[-1] <= 1000, throttles
    except BaseException:
        remove_quotas(admin, raw, "request_percentage")
        remove_quotas(admin, slow, "request_percentage")
        conn.close()
        admin.close()
        raise
    events: dict[str, list[int]] = {slow: [], free: []}
    lock = threading.Lock()

    def producer(client_id: str) -> Producer:
        def on_throttle(ev) -> None:
            with lock:
                events[client_id].append(ev.throttle_time)
        return Producer({"bootstrap.servers": cluster.bootstrap_servers, "linger.ms": 0,
                         "client.id": client_id, "throttle_cb": on_throttle})

    try:
        for client_id in events:
            p = producer(client_id)
            for i in range(10):
                p.produce(topic, value=b"%d" % i)
                p.flush(30)
            p.poll(0.5)
    finally:
        remove_quotas(admin, raw, "request_percentage")
        remove_quotas(admin, slow, "request_percentage")
        conn.close()
        admin.close()
    assert events[slow] and max(events[slow]) > 0, events
    assert events[free] == [], events


def test_update_features_as_a_4_4_controller_answers(cluster: Target) -> None:
    conn = Conn(cluster)
    controller = quorum_leader(conn)

    def update(feature: str, level: int, kind: int = 1, validate: bool = False,
               version: int = 1) -> dict:
        return conn.call(57, version, {"timeout_ms": 60000, "validate_only": validate,
                                       "feature_updates": [{"feature": feature,
                                                            "max_version_level": level,
                                                            "upgrade_type": kind}]})

    def finalized() -> tuple[dict, int]:
        body = conn.call(18, 4, {"client_software_name": "t", "client_software_version": "1"})
        return ({f["name"]: f["max_version_level"] for f in body["finalized_features"]},
                body["finalized_features_epoch"])

    prefix = "The update failed for all features since the following feature had an error: "
    try:
        down = update("transaction.version", 1)
        assert down["error_code"] == 95 and down["error_message"] == prefix + (
            "Invalid update version 1 for feature transaction.version. Can't downgrade the "
            "version of this feature without setting the upgrade type to either safe or "
            "unsafe downgrade.")
        assert update("transaction.version", 3)["error_message"].endswith(
            f"Local controller {controller} only supports versions 0-2")
        assert update("foo.version", 2)["error_message"].endswith(
            f"Local controller {controller} does not support this feature.")
        assert update("metadata.version", 20, kind=2)["error_message"].startswith(
            prefix + "Unsupported metadata.version downgrade from 33 to 20.")
        before, epoch = finalized()
        assert before["transaction.version"] == 2
        checked = update("transaction.version", 1, kind=2, validate=True)
        assert checked["results"] == [{"feature": "transaction.version", "error_code": 0,
                                       "error_message": "NONE"}]
        # validate_only changes no level; the epoch is the metadata log's offset on Kafka,
        # which its NoOpRecords (every 500 ms) move with nothing else changed
        after, later = finalized()
        assert after == before and later >= epoch
        applied = update("transaction.version", 1, kind=2, version=2)
        assert applied["error_code"] == 0 and applied["results"] == []
        # On Kafka the broker answering ApiVersions learns the new level from the log.
        wait_for(lambda: finalized()[0]["transaction.version"] == 1, "transaction.version 1")
        assert finalized()[1] > epoch
    finally:
        # Back to the default level (on Kafka the cluster serves the next tests).
        assert update("transaction.version", 2)["error_code"] == 0
        wait_for(lambda: all(_finalized_on(cluster, i)["transaction.version"] == 2
                             for i in range(len(cluster.broker_ids))),
                 "transaction.version 2 on every broker")
        conn.close()


def _finalized_on(cluster: Target, index: int) -> dict:
    c = Conn(cluster, index)
    try:
        body = c.call(18, 4, {"client_software_name": "t", "client_software_version": "1"})
    finally:
        c.close()
    return {f["name"]: f["max_version_level"] for f in body["finalized_features"]}


def test_delegation_tokens_answer_as_a_broker_without_a_secret_key(cluster: Target) -> None:
    """PLAINTEXT: DELEGATION_TOKEN_REQUEST_NOT_ALLOWED for all four (measured on a real
    4.4 broker)."""
    conn = Conn(cluster)
    try:
        create = conn.call(38, 3, {"owner_principal_type": None, "owner_principal_name": None,
                                   "renewers": [], "max_lifetime_ms": -1})
        assert create["error_code"] == 64 and create["principal_name"] == "ANONYMOUS"
        assert create["token_id"] == "" and create["expiry_timestamp_ms"] == -1
        assert conn.call(39, 2, {"hmac": b"x", "renew_period_ms": -1})["error_code"] == 64
        assert conn.call(40, 2, {"hmac": b"x", "expiry_time_period_ms": -1})["error_code"] == 64
        assert conn.call(41, 3, {"owners": None})["error_code"] == 64
    finally:
        conn.close()


@pytest.mark.emulator_only  # calls the emulator's handlers with a SASL session directly
def test_delegation_tokens_on_sasl_without_a_secret_key(cluster: Cluster) -> None:
    """A SASL session: DELEGATION_TOKEN_AUTH_DISABLED (no secret key)."""
    from emulator.handlers import HANDLERS
    from emulator.handlers.base import RequestContext
    from emulator.security.session import Session

    session = Session("SASL_PLAINTEXT", "SASL_PLAINTEXT", "User:alice")
    ctx = RequestContext(cluster.state, min(cluster.broker_ids), 41, 3, 1, "t",
                         session=session)
    assert HANDLERS[41].module.handle(ctx, {"owners": None}, 3)["error_code"] == 61
    assert HANDLERS[38].module.handle(ctx, {}, 3)["principal_name"] == "alice"


def test_raft_voter_changes_answer_as_a_static_quorum(cluster: Target) -> None:
    conn = Conn(cluster)
    cluster_id = conn.call(3, 12, METADATA_ALL)["cluster_id"]
    voter = {"voter_id": 7, "voter_directory_id": b"\x01" * 16}
    try:
        add = conn.call(80, 1, {"cluster_id": None, "timeout_ms": 5000, **voter,
                                "listeners": [{"name": "CONTROLLER", "host": "h", "port": 1}],
                                "ack_when_committed": True})
        assert add["error_code"] == 35 and add["error_message"] == (
            "Cluster doesn't support adding voter because the kraft.version feature is 0")
        remove = conn.call(81, 0, {"cluster_id": None, **voter})
        assert remove["error_code"] == 35 and "removing voter" in remove["error_message"]
        wrong = conn.call(81, 0, {"cluster_id": "nope", **voter})
        assert wrong["error_code"] == 104 and wrong["error_message"] == (
            f'The given id "nope" doesn\'t match the cluster id "{cluster_id}"')
    finally:
        conn.close()


@pytest.mark.kafka_slow  # broker restarts on Kafka
def test_unregister_broker_as_the_kraft_controller_answers(cluster: Target) -> None:
    """UnregisterBroker as the controller answers it: 102 for an id it does not know,
    NONE for a registered one (running or crashed), then 102 until the broker registers
    again by starting. On Kafka 4.4 a running broker that was unregistered stays out of
    the cluster until it restarts (measured: not back after 20 s), as the emulator's does
    under --fidelity kafka (client_tests/test_unregister_running_broker.py); fast's
    re-registers at once, so the test restarts it either way."""
    conn = Conn(cluster)
    try:
        unknown = conn.call(64, 0, {"broker_id": 77})
        assert unknown == {"throttle_time_ms": 0, "error_code": 102,
                           "error_message": "Broker ID 77 is not currently registered"}
        live = max(cluster.broker_ids)
        assert conn.call(64, 0, {"broker_id": live})["error_code"] == 0
        cluster.stop_broker(live)
        cluster.start_broker(live)  # registers again
        cluster.stop_broker(live)
        assert conn.call(64, 0, {"broker_id": live}) == {
            "throttle_time_ms": 0, "error_code": 0, "error_message": ""}
        assert conn.call(64, 0, {"broker_id": live})["error_code"] == 102
        cluster.start_broker(live)
        assert conn.call(64, 0, {"broker_id": live})["error_code"] == 0
        cluster.stop_broker(live)
        cluster.start_broker(live)  # registers again, for the next test on Kafka
    finally:
        conn.close()


def test_unregister_controller_of_a_single_controller_quorum(cluster: Target) -> None:
    conn = Conn(cluster)
    try:
        active = conn.call(94, 0, {"controller_id": quorum_leader(conn)})
        assert active["error_code"] == 42 and active["error_message"] == (
            "Controller cannot unregister itself while it is active.")
        other = conn.call(94, 0, {"controller_id": 4242})
        assert other["error_code"] == 136 and other["error_message"] == (
            "Controller ID 4242 is not currently registered.")
    finally:
        conn.close()
