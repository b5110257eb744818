"""Produce validation over real TCP (Kafka's LogValidator): what the probe stored before
is refused now, with Kafka 4.4's codes, and nothing already stored is touched."""

from __future__ import annotations

import select
import struct
import time

import cramjam
import pytest
from confluent_kafka import KafkaError, Producer
from rawkafka import Conn, leader_conn, list_offset, produce_body

from client_tests.targets import KafkaTarget
from emulator import Cluster
from emulator.testing import wait_for
from wire.errors import ErrorCode as E
from wire.records import HEADER_SIZE, build_batch, crc32c

# Runs on both targets (--target kafka): topics through create_topic, the stored log
# read back with ListOffsets at the leader.


def raw_batch(body: bytes, count: int, attrs: int = 0, now: int | None = None) -> bytes:
    now = int(time.time() * 1000) if now is None else now
    tail = struct.pack(">hiqqqhii", attrs, count - 1, now, now, -1, -1, -1, count) + body
    return struct.pack(">qiibI", 0, len(tail) + 9, -1, 2, crc32c(tail)) + tail


def partition_response(resp: dict) -> dict:
    return resp["responses"][0]["partition_responses"][0]


def test_hostile_batches_are_refused_and_nothing_stored_moves(
        cluster: Cluster | KafkaTarget, topic_name: str) -> None:
    cluster.create_topic(topic_name, 1, 3)
    c = leader_conn(cluster, topic_name)
    now = int(time.time() * 1000)
    # acks=all: ListOffsets answers the high watermark, which on Kafka moves only when
    # the followers have fetched the record.
    assert partition_response(c.call(0, 9, produce_body(
        topic_name, 0, build_batch([(b"k", b"v")], timestamp=now), acks=-1)))[
        "error_code"] == 0
    one = build_batch([(b"k", b"v")], timestamp=now)[HEADER_SIZE:]
    hostile = {
        # A correct CRC over a payload gzip cannot read: stored before, broke consumers.
        "garbage gzip": (raw_batch(b"\x1f\x8b not gzip at all", 1, attrs=1),
                         E.UNKNOWN_SERVER_ERROR),
        # A record count of 2^31-1 over one record: moved the end offset to 2^31-1.
        "count 2^31-1": (raw_batch(one, 2**31 - 1), E.INVALID_RECORD),
        "trailing bytes": (raw_batch(one + b"\x00\x00", 1), E.INVALID_RECORD),
    }
    for name, (data, code) in hostile.items():
        pr = partition_response(c.call(0, 9, produce_body(topic_name, 0, data)))
        assert pr["error_code"] == code, name
    assert list_offset(c, topic_name) == 1
    c.close()


def test_keyless_records_on_a_compacted_topic_get_record_errors(
        cluster: Cluster | KafkaTarget, topic_name: str) -> None:
    cluster.create_topic(topic_name, 1, 3, config={"cleanup.policy": "compact"})
    c = leader_conn(cluster, topic_name)
    data = build_batch([(b"k", b"1"), (None, b"2")], timestamp=int(time.time() * 1000))
    pr = partition_response(c.call(0, 9, produce_body(topic_name, 0, data)))
    assert pr["error_code"] == E.INVALID_RECORD
    assert pr["record_errors"] == [{"batch_index": 1, "batch_index_error_message":
                                    "Compacted topic cannot accept message without key in "
                                    f"topic partition {topic_name}-0"}]
    assert list_offset(c, topic_name) == 0
    c.close()


def test_a_real_producer_sees_invalid_record_and_invalid_timestamp(
        cluster: Cluster | KafkaTarget, topic_name: str) -> None:
    cmp2, ts = f"{topic_name}-cmp", f"{topic_name}-ts"
    cluster.create_topic(cmp2, 1, 3, config={"cleanup.policy": "compact"})
    cluster.create_topic(ts, 1, 3, config={"message.timestamp.after.max.ms": "60000"})
    errors: dict[str, int] = {}
    p = Producer({"bootstrap.servers": cluster.bootstrap_servers, "retries": 0,
                  "compression.type": "gzip", "linger.ms": 0})

    def report(topic: str):  # noqa: ANN202
        def cb(err: KafkaError | None, _msg: object) -> None:
            errors[topic] = err.code() if err else 0
        return cb

    p.produce(cmp2, value=b"no key", on_delivery=report("cmp2"))
    p.produce(ts, key=b"k", value=b"future", timestamp=int(time.time() * 1000) + 3_600_000,
              on_delivery=report("ts"))
    p.flush(30)
    # A keyed record in its own batch is taken (a batch is refused or taken whole).
    p.produce(cmp2, key=b"k", value=b"keyed", on_delivery=report("cmp2-keyed"))

    def reported() -> bool:
        p.poll(0.1)
        return len(errors) >= 3

    wait_for(reported, "the three delivery reports", timeout=30, interval=0)
    assert errors == {"cmp2": KafkaError.INVALID_RECORD, "ts": KafkaError.INVALID_TIMESTAMP,
                      "cmp2-keyed": 0}


def test_timestamp_lookup_of_a_compressed_batch_is_bounded(
        cluster: Cluster | KafkaTarget, topic_name: str) -> None:
    """ListOffsets by timestamp reads (offset, timestamp) pairs one at a time from one
    bounded buffer; a 3 MB record in a small gzip batch answers normally."""
    cluster.create_topic(topic_name, 1, 1)
    c = leader_conn(cluster, topic_name)
    now = int(time.time() * 1000)
    body = build_batch([(b"k", b"\x00" * 3_000_000)], timestamp=now)[HEADER_SIZE:]
    data = raw_batch(bytes(cramjam.gzip.compress(body)), 1, attrs=1, now=now)
    assert len(data) < 20_000
    assert partition_response(c.call(0, 9, produce_body(topic_name, 0, data)))[
        "error_code"] == 0
    for ts in (now - 1, -3):
        resp = c.call(2, 7, {"replica_id": -1, "topics": [
            {"name": topic_name, "partitions": [{"partition_index": 0, "timestamp": ts}]}]})
        part = resp["topics"][0]["partitions"][0]
        assert (part["error_code"], part["offset"], part["timestamp"]) == (0, 0, now)
    c.close()


@pytest.mark.emulator_only  # the emulator's own worker process (emulator/server/offload.py)
def test_large_compressed_batches_are_checked_off_the_event_loop(cluster: Cluster) -> None:
    """A gzip batch inflating past 1 MiB is validated in the server's worker process
    (emulator/server/offload.py) while other clients are served; the answers are the
    validator's own: stored when valid, KIP-467 record errors and INVALID_RECORD when
    not. (How long others wait meanwhile: bench/hostile_stall.py.)"""
    cluster.create_topic("big", 1, 3)
    cluster.create_topic("bigc", 1, 3, config={"cleanup.policy": "compact"})
    now = int(time.time() * 1000)
    value = bytes(range(250)) * 4

    def gzip_batch(keys: list[bytes | None], count: int | None = None) -> bytes:
        body = build_batch([(k, value) for k in keys], timestamp=now)[HEADER_SIZE:]
        return raw_batch(bytes(cramjam.gzip.compress(body)), count or len(keys), attrs=1,
                         now=now)

    checker = cluster.server.batches
    answered_while_checking = []

    def observe(bid: int, key: int, version: int, frame: bytes, out: bytes | None) -> None:
        if key == 3:
            answered_while_checking.append(checker.in_flight > 0)

    cluster.server.frame_observers.append(observe)
    keys: list[bytes | None] = [b"k%d" % i for i in range(4000)]  # ~4 MB inflated
    c = leader_conn(cluster, "big")
    c.client_id = "big"
    c.send(0, 9, produce_body("big", 0, gzip_batch(keys)))
    other = Conn(cluster, 1)
    n = 0
    while not select.select([c.sock], [], [], 0)[0]:
        md = other.call(3, 12, {"topics": [{"name": "big", "topic_id": bytes(16)}],
                                "allow_auto_topic_creation": False})
        assert md["topics"][0]["error_code"] == 0
        n += 1
    pr = partition_response(c.receive().body)
    assert (pr["error_code"], pr["base_offset"]) == (0, 0)
    assert n and any(answered_while_checking), (n, answered_while_checking)
    assert cluster.state.get_partition("big", 0).log_end_offset == 4000
    # Refusals come back from the worker as the validator gives them.
    keys[2] = None
    cc = leader_conn(cluster, "bigc")
    pr = partition_response(cc.call(0, 9, produce_body("bigc", 0, gzip_batch(keys))))
    assert pr["error_code"] == E.INVALID_RECORD
    assert pr["record_errors"] == [{"batch_index": 2, "batch_index_error_message":
                                    "Compacted topic cannot accept message without key in "
                                    "topic partition bigc-0"}]
    keys[2] = b"k2"
    pr = partition_response(c.call(0, 9, produce_body("big", 0, gzip_batch(keys, 4001))))
    assert pr["error_code"] == E.INVALID_RECORD
    assert checker.offloaded == 3
    assert cluster.state.get_partition("bigc", 0).log_end_offset == 0
    assert cluster.state.get_partition("big", 0).log_end_offset == 4000
    for conn in (c, cc, other):
        conn.close()
