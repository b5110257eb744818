"""controller_mutation_rate (KIP-599): CreateTopics, CreatePartitions and DeleteTopics
against a client's quota of partition mutations per second, and the muting of a
throttled connection (KIP-219), on both targets. The emulator enforces both under
``--fidelity kafka`` (docs/fidelity.md, controller-mutation-quota); ``fast`` stores the
quota without enforcing it (tests/test_controller_mutation_quota_fidelity.py shows
both modes)."""

from __future__ import annotations

import time
import uuid

from rawkafka import Conn

from client_tests.targets import KafkaTarget
from emulator import Cluster
from emulator.testing import wait_for

THROTTLING_QUOTA_EXCEEDED = 89


def set_quota(cluster: Cluster | KafkaTarget, client: str, rate: float) -> None:
    admin = Conn(cluster)
    try:
        r = admin.call(49, 1, {"entries": [{
            "entity": [{"entity_type": "client-id", "entity_name": client}],
            "ops": [{"key": "controller_mutation_rate", "value": rate, "remove": False}]}],
            "validate_only": False})
        assert r["entries"][0]["error_code"] == 0, r

        def described() -> bool:
            d = admin.call(48, 1, {"components": [
                {"entity_type": "client-id", "match_type": 0, "match": client}],
                "strict": False})
            return bool(d["entries"])
        wait_for(described, "the quota described", 30, interval=0.1)
    finally:
        admin.close()


def create(c: Conn, version: int, name: str, partitions: int) -> tuple[dict, int]:
    r = c.call(19, version, {"topics": [{
        "name": name, "num_partitions": partitions, "replication_factor": 1,
        "assignments": [], "configs": []}], "timeout_ms": 30000, "validate_only": False})
    return r["topics"][0], r["throttle_time_ms"]


def api_versions_time(c: Conn) -> float:
    """How long the connection takes to answer an ApiVersions (a muted one: until its
    throttle time is over)."""
    t0 = time.monotonic()
    c.call(18, 3, {"client_software_name": "t", "client_software_version": "1"})
    return time.monotonic() - t0


def test_a_strict_quota_refuses_topics_once_exhausted_and_mutes(
        kafka_timing_cluster: Cluster | KafkaTarget) -> None:
    """Quota 2/s: a bucket of 22 partitions (11 windows of 1 s). A topic that finds
    the bucket at zero or above is created whatever it takes, with no throttle; the next
    finds it below zero and is refused THROTTLING_QUOTA_EXCEEDED (no message) with the
    time until the bucket is back to zero, and the connection is muted for that time.
    DeleteTopics and CreatePartitions draw on the same bucket, on any connection of the
    client (each muted by its own refusal). Kafka 4.4.0 as here (a run with 20 + 20 partitions: refused with 8633 ms,
    the next request on that connection answered 8.6 s later)."""
    cluster = kafka_timing_cluster
    client = f"cmq-{uuid.uuid4().hex[:8]}"
    set_quota(cluster, client, 2.0)
    c = Conn(cluster, 0, client_id=client)
    other = Conn(cluster, 1, client_id=client)
    third = Conn(cluster, 2, client_id=client)  # the refusal mutes other as well
    try:
        started = time.monotonic()
        t, throttle = create(c, 7, f"{client}-a", 20)
        assert (t["error_code"], throttle) == (0, 0), t
        t, throttle = create(c, 7, f"{client}-b", 8)  # takes the bucket to -6
        assert (t["error_code"], throttle) == (0, 0), t
        t, throttle = create(c, 7, f"{client}-c", 1)
        assert (t["error_code"], t["error_message"]) == (THROTTLING_QUOTA_EXCEEDED, None)
        # 3 s to refill 6 at 2/s, less what it refilled between a's draw and c's, which
        # took at most the three answers' time (not a fixed share of the 3 s: a loaded
        # machine stretches it); 2 ms for the brokers' whole-millisecond clocks
        took_ms = (time.monotonic() - started) * 1000
        assert 3000 - took_ms - 2 <= throttle <= 3000, (throttle, took_ms)
        sent = time.monotonic()
        r = other.call(20, 6, {"topics": [{"name": f"{client}-a", "topic_id": bytes(16)}],
                               "timeout_ms": 30000})
        assert r["responses"][0]["error_code"] == THROTTLING_QUOTA_EXCEEDED, r
        assert r["throttle_time_ms"] > 0
        r = third.call(37, 3, {"topics": [{"name": f"{client}-b", "count": 10,
                                           "assignments": None}], "timeout_ms": 30000,
                               "validate_only": False})
        assert r["results"][0]["error_code"] == THROTTLING_QUOTA_EXCEEDED, r
        # c was muted when its refusal was sent: it answers once the throttle is over
        assert time.monotonic() - sent + api_versions_time(c) >= 0.8 * throttle / 1000
    finally:
        c.close()
        other.close()
        third.close()


def test_older_versions_pass_and_answer_the_throttle(
        kafka_timing_cluster: Cluster | KafkaTarget) -> None:
    """CreateTopics before v6 is not refused: the topic is created, and the answer
    carries the time the bucket needs to refill, for which the connection is muted
    (Kafka 4.4.0: 407 ms for a bucket left at about -0.8)."""
    cluster = kafka_timing_cluster
    client = f"cmq-{uuid.uuid4().hex[:8]}"
    set_quota(cluster, client, 2.0)
    c = Conn(cluster, 0, client_id=client)
    try:
        t, throttle = create(c, 5, f"{client}-a", 24)  # 22 in the bucket: 1 s to refill
        assert t["error_code"] == 0, t
        assert 700 <= throttle <= 1000, throttle
        assert api_versions_time(c) >= 0.8 * throttle / 1000
    finally:
        c.close()
