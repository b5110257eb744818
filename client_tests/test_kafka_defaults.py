"""The timing defaults ``--fidelity kafka`` takes from Kafka 4.4, seen by clients, on both
targets: the emulator under ``--fidelity kafka`` with no config of its own, and with
``--target kafka`` a one-broker Kafka of its own with Kafka's defaults for these keys
(the ``kafka_defaults_cluster`` fixture; the session's Kafka has them at test pace).
Marked kafka_slow: scripts/test's Kafka pass leaves them out, a plain ``--target kafka``
run and python -m conformance.report run them.

- ``initial-rebalance-delay`` (docs/fidelity.md): the first JoinGroup of a new classic
  group is answered group.initial.rebalance.delay.ms (3000) later, not at once as under
  ``fast`` (0).
- ``log-cleaner-backoff``: an idle log cleaner looks for work every log.cleaner.backoff.ms
  (15000), so a topic that becomes cleanable right after the cleaner's last pass waits
  most of that, not about a second as under ``fast`` (1000).
"""

from __future__ import annotations

import time

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

from client_tests.rawkafka import coordinator_call
from client_tests.targets import KafkaTarget
from emulator import Cluster
from emulator.testing import wait_for
from wire.errors import ErrorCode as E

Target = Cluster | KafkaTarget


def join(c: Target, group: str, member_id: str) -> dict:
    return coordinator_call(c, group, 11, 5, {
        "group_id": group, "session_timeout_ms": 10000, "rebalance_timeout_ms": 10000,
        "member_id": member_id, "group_instance_id": None, "protocol_type": "consumer",
        "protocols": [{"name": "range", "metadata": b""}]})


@pytest.mark.kafka_slow  # on Kafka it starts a Kafka of its own (some 40 s)
def test_the_first_join_of_a_new_group_waits_the_initial_rebalance_delay(
        kafka_defaults_cluster: Target) -> None:
    c, group = kafka_defaults_cluster, f"initial-delay-{time.monotonic_ns()}"
    # a fresh Kafka creates and loads __consumer_offsets first
    wait_for(lambda: coordinator_call(c, group, 15, 5, {
        "groups": [group], "include_authorized_operations": False})["groups"][0][
        "error_code"] == 0, f"the coordinator of {group} loaded", 60)
    first = join(c, group, "")
    assert first["error_code"] == E.MEMBER_ID_REQUIRED, first
    t0 = time.monotonic()
    joined = join(c, group, first["member_id"])
    took = time.monotonic() - t0
    assert joined["error_code"] == E.NONE, joined
    assert joined["leader"] == first["member_id"]
    assert 2.9 <= took < 8, f"the first rebalance took {took:.2f} s (Kafka's delay: 3 s)"


def _compacted(c: Target, topic: str) -> bool:
    """Whether offset 0 (the first of key k's three records) is gone."""
    cons = Consumer({"bootstrap.servers": c.bootstrap_servers, "group.id": "cleaner-probe",
                     "enable.auto.commit": False})
    try:
        cons.assign([TopicPartition(topic, 0, 0)])
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            m = cons.poll(0.2)
            if m is not None and m.error() is None:
                return m.offset() > 0
        return False
    finally:
        cons.close()


def _make_cleanable(c: Target, topic: str) -> None:
    """Key k three times, each in a segment of its own (segment.ms 100): the first two
    segments are closed and the first record is superseded within them."""
    p = Producer({"bootstrap.servers": c.bootstrap_servers, "linger.ms": 0})
    for v in (b"v1", b"v2", b"v3"):
        p.produce(topic, key=b"k", value=v, partition=0)
        assert p.flush(10) == 0
        time.sleep(0.15)


@pytest.mark.kafka_slow  # up to 15 s for the cleaner's first pass, then 15 s more
def test_an_idle_cleaner_waits_its_backoff(kafka_defaults_cluster: Target,
                                           topic_name: str) -> None:
    c = kafka_defaults_cluster
    compact = {"cleanup.policy": "compact", "segment.ms": "100",
               "min.cleanable.dirty.ratio": "0.0", "delete.retention.ms": "3600000"}
    first, second = f"{topic_name}-a", f"{topic_name}-b"
    c.create_topic(first, 1, 1, config=compact)
    c.create_topic(second, 1, 1, config=compact)
    # the cleaner's pass over the first topic comes whenever it next wakes (up to 15 s)
    _make_cleanable(c, first)
    wait_for(lambda: _compacted(c, first), f"{first} compacted", 40, interval=0.1)
    # right after that pass the cleaner found nothing more and went to sleep: the second
    # topic, cleanable a moment later, waits for it to wake
    t0 = time.monotonic()
    _make_cleanable(c, second)
    wait_for(lambda: _compacted(c, second), f"{second} compacted", 40, interval=0.1)
    took = time.monotonic() - t0
    assert 5 < took < 25, f"compacted {took:.1f} s after it became cleanable (backoff 15 s)"
