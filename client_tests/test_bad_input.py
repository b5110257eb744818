"""Bad input over real TCP: each gets Kafka's error code or a closed connection,
and nothing stored is lost; other connections do not notice."""

from __future__ import annotations

import struct

from rawkafka import (
    CORR,
    Conn,
    leader_conn,
    list_offset,
    partition_leader,
    produce_body,
    produce_error,
)

from client_tests.targets import KafkaTarget
from emulator import Cluster
from wire.connection import size_prefixed
from wire.records import build_batch

# Runs on both targets (--target kafka): brokers addressed through Metadata.
Target = Cluster | KafkaTarget


def test_malformed_frames_close_only_that_connection(cluster: Target, topic_name: str) -> None:
    cluster.create_topic(topic_name, 1, 3)
    good = leader_conn(cluster, topic_name)
    assert produce_error(good.call(0, 9, produce_body(  # acks=all: the high watermark moves
        topic_name, 0, build_batch([(b"k", b"v")]), acks=-1))) == 0
    for garbage in (
        size_prefixed(b"abc"),                                # shorter than a header
        size_prefixed(struct.pack(">hhih", 3, 12, 1, 30) + b"xx"),  # client id overrun
        size_prefixed(struct.pack(">hhih", 999, 0, 1, -1)),   # unknown API key
        size_prefixed(struct.pack(">hhih", 3, 99, 1, -1)),    # unknown version
        struct.pack(">i", -5),                                # negative size
        struct.pack(">i", 200 * 1024 * 1024),                 # above socket.request.max.bytes
        size_prefixed(struct.pack(">hhih", 3, 12, 1, -1) + b"\x05\xff\xff\xff"),
        # An ApiVersions newer than the broker's without the tagged fields of header v2
        # (which Kafka reads for any ApiVersions from v3 on).
        size_prefixed(struct.pack(">hhih", 18, 99, 1, -1)),
    ):
        bad = Conn(cluster)
        bad.send_raw(garbage)
        assert bad.closed(), garbage
        bad.close()
    # The good connection still works and the stored record is still there.
    assert list_offset(good, topic_name) == 1
    good.close()


def test_unsupported_api_versions_version_gets_error_35_v0_body(cluster: Target) -> None:
    c = Conn(cluster)
    # Header v2, as a client sends its newest ApiVersions: an empty tagged-field section.
    c.send_raw(size_prefixed(struct.pack(">hhih", 18, 99, CORR, -1) + b"\x00"))
    c.protocol.expect(18, 0, CORR)  # a version the broker does not know: a v0 body
    r = c.receive()
    corr, body = r.correlation_id, r.body
    assert corr == CORR and body["error_code"] == 35
    assert any(k["api_key"] == 18 and k["max_version"] == 5 for k in body["api_keys"])
    c.close()


def test_produce_errors_are_kafka_codes(cluster: Target, topic_name: str) -> None:
    p = topic_name
    cluster.create_topic(p, 1, 3, config={"max.message.bytes": "2000"})
    c = leader_conn(cluster, p)
    corrupt = bytearray(build_batch([(b"k", b"value")]))
    corrupt[-1] ^= 0xFF
    assert produce_error(c.call(0, 9, produce_body(p, 0, bytes(corrupt)))) == 2  # CORRUPT
    big = build_batch([(b"k", b"x" * 5000)])
    assert produce_error(c.call(0, 9, produce_body(p, 0, big))) == 10  # MESSAGE_TOO_LARGE
    assert produce_error(c.call(0, 9, produce_body(p, 7, build_batch([(b"k", b"v")])))) == 3
    assert produce_error(c.call(0, 9, produce_body(f"{p}-nope", 0, build_batch([(b"k", b"v")])))) == 3
    two = build_batch([(b"a", b"1")]) + build_batch([(b"b", b"2")])
    assert produce_error(c.call(0, 9, produce_body(p, 0, two))) == 87  # INVALID_RECORD
    assert produce_error(c.call(0, 9, produce_body(p, 0, build_batch([(b"k", b"v")]),
                                                   acks=5))) == 21  # INVALID_REQUIRED_ACKS
    ok = c.call(0, 9, produce_body(p, 0, build_batch([(b"k", b"v")])))
    assert produce_error(ok) == 0
    assert ok["responses"][0]["partition_responses"][0]["base_offset"] == 0  # nothing lost
    c.close()


def test_produce_to_a_follower_gets_not_leader_with_hint(cluster: Target,
                                                        topic_name: str) -> None:
    cluster.create_topic(topic_name, 1, 3)
    leader, epoch = partition_leader(cluster, topic_name)
    follower = next(b for b in cluster.broker_ids if b != leader)
    c = Conn(cluster, cluster.broker_ids.index(follower))
    resp = c.call(0, 10, produce_body(topic_name, 0, build_batch([(b"k", b"v")])))
    pr = resp["responses"][0]["partition_responses"][0]
    assert pr["error_code"] == 6
    assert pr["current_leader"] == {"leader_id": leader, "leader_epoch": epoch}
    assert [n["node_id"] for n in resp["node_endpoints"]] == [leader]
    c.close()


def test_invalid_topic_names(cluster: Target) -> None:
    c = Conn(cluster)
    resp = c.call(3, 12, {"topics": [{"name": "bad name!"}, {"name": "x" * 250}]})
    assert [t["error_code"] for t in resp["topics"]] == [17, 17]
    resp = c.call(19, 7, {"topics": [{"name": "a/b", "num_partitions": 1,
                                      "replication_factor": 1}], "timeout_ms": 1000})
    assert resp["topics"][0]["error_code"] == 17
    c.close()
