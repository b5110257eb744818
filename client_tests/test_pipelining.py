"""Requests pipelined on one connection, on both targets.

librdkafka sends one ProduceRequest per partition and keeps many in flight on each
connection; the emulator answers a run of requests that are already waiting in one
write (emulator/server/connections.py, ``ClientConnections.serve``). What a client sees must stay Kafka's: every
answer, in the order asked, and none held behind a later request that waits (a long
poll), as Kafka, which reads a connection's next request only after answering the last,
never holds one.
"""

from __future__ import annotations

import time
import uuid

from rawkafka import Conn, leader_conn, produce_body, produce_error

from emulator import Cluster
from wire.errors import ErrorCode as E
from wire.records import build_batch, decode_records, iter_batches


def test_pipelined_requests_are_all_answered_in_order(cluster: Cluster) -> None:
    topic = f"pipe-{uuid.uuid4().hex[:8]}"
    cluster.create_topic(topic, 1, 3)
    c = leader_conn(cluster, topic)
    c.call(0, 9, produce_body(topic, 0, build_batch([(None, b"warm")]), acks=-1))
    # 60 requests in one send: produce (acks=all, as librdkafka), Metadata, ApiVersions
    kinds = [(0, 9), (3, 12), (18, 3)] * 20
    c.client_id = "pipelining-test"
    out = b"".join(c.protocol.send_request(key, version, _body(key, topic, corr),
                                           correlation_id=corr)
                   for corr, (key, version) in enumerate(kinds, start=100))
    c.send_raw(out)
    offsets = []
    for corr, (key, _version) in enumerate(kinds, start=100):
        got, resp = _answer(c)
        assert got == corr, f"answer {got} where {corr} was next"
        if key == 0:
            pr = resp["responses"][0]["partition_responses"][0]
            assert pr["error_code"] == E.NONE
            offsets.append(pr["base_offset"])
        elif key == 3:
            assert resp["topics"][0]["error_code"] == E.NONE
        else:
            assert resp["error_code"] == E.NONE
    assert offsets == list(range(1, 21))  # appended in the order sent, each acknowledged
    c.close()


def test_an_answer_is_not_held_behind_a_later_long_poll(cluster: Cluster) -> None:
    topic = f"pipe-{uuid.uuid4().hex[:8]}"
    cluster.create_topic(topic, 1, 1)
    c = leader_conn(cluster, topic)
    c.call(0, 9, produce_body(topic, 0, build_batch([(None, b"warm")])))  # offset 0
    # a produce (offset 1), then a fetch at the log end after it (2): the fetch waits
    # its max_wait_ms for a byte that does not come
    fetch = {"replica_id": -1, "max_wait_ms": 3000, "min_bytes": 1, "max_bytes": 1 << 20,
             "isolation_level": 0, "session_id": 0, "session_epoch": -1,
             "topics": [{"topic": topic, "partitions": [
                 {"partition": 0, "current_leader_epoch": -1, "fetch_offset": 2,
                  "log_start_offset": -1, "partition_max_bytes": 1 << 20}]}],
             "forgotten_topics_data": [], "rack_id": ""}
    t0 = time.monotonic()
    c.client_id = "pipelining-test"
    produce = produce_body(topic, 0, build_batch([(None, b"x")]))
    c.send_raw(c.protocol.send_request(0, 9, produce, correlation_id=1)
               + c.protocol.send_request(1, 11, fetch, correlation_id=2))
    corr, resp = _answer(c)
    produced = time.monotonic() - t0
    pr = resp["responses"][0]["partition_responses"][0]
    assert corr == 1 and (pr["error_code"], pr["base_offset"]) == (E.NONE, 1)
    assert produced < 1.5, f"the produce answer waited {produced:.2f} s behind the fetch"
    corr, resp = _answer(c)
    waited = time.monotonic() - t0
    parts = resp["responses"][0]["partitions"]
    assert corr == 2 and resp["error_code"] == E.NONE and parts[0]["error_code"] == E.NONE
    assert parts[0]["records"] in (None, b""), "the fetch at the log end returned records"
    assert waited >= 2.5, f"the long poll answered after {waited:.2f} s, not its 3 s wait"
    c.close()


def test_large_fetch_answers_arrive_whole_and_in_order(cluster: Cluster) -> None:
    """Fetch answers above 1 MiB leave the emulator in parts, one writev each
    (wire.connection.encode_response_frame), between small answers on the same
    connection: each must arrive whole, in the order asked."""
    topic = f"pipe-{uuid.uuid4().hex[:8]}"
    cluster.create_topic(topic, 1, 1)
    c = leader_conn(cluster, topic)
    values = [b"%06d" % i + bytes([i % 251]) * 994 for i in range(1200)]
    for k in range(4):  # four batches of ~300 KB: ~1.2 MB in the partition
        body = produce_body(topic, 0, build_batch([(None, v) for v in
                                                   values[k * 300:(k + 1) * 300]]))
        assert produce_error(c.call(0, 9, body)) == E.NONE
    fetch = {"replica_id": -1, "max_wait_ms": 0, "min_bytes": 1, "max_bytes": 50 << 20,
             "isolation_level": 0, "session_id": 0, "session_epoch": -1,
             "topics": [{"topic": topic, "partitions": [
                 {"partition": 0, "current_leader_epoch": -1, "fetch_offset": 0,
                  "log_start_offset": -1, "partition_max_bytes": 10 << 20}]}],
             "forgotten_topics_data": [], "rack_id": ""}
    kinds = [(1, 11), (18, 3), (1, 11), (1, 11), (18, 3)]
    c.client_id = "pipelining-test"
    c.send_raw(b"".join(
        c.protocol.send_request(key, version, fetch if key == 1 else _body(key, topic, 0),
                                correlation_id=corr)
        for corr, (key, version) in enumerate(kinds, start=10)))
    for corr, (key, _version) in enumerate(kinds, start=10):
        got, resp = _answer(c)
        assert got == corr, f"answer {got} where {corr} was next"
        assert resp["error_code"] == E.NONE
        if key == 1:
            part = resp["responses"][0]["partitions"][0]
            assert part["error_code"] == E.NONE and len(part["records"]) > 1 << 20
            read = [r.value for b in iter_batches(part["records"]) for r in decode_records(b)]
            assert read == values
    c.close()


def _body(key: int, topic: str, n: int) -> dict:
    if key == 0:
        return produce_body(topic, 0, build_batch([(None, b"r%d" % n)]), acks=-1)
    if key == 3:
        return {"topics": [{"topic_id": bytes(16), "name": topic}],
                "allow_auto_topic_creation": False,
                "include_topic_authorized_operations": False}
    return {"client_software_name": "pipe", "client_software_version": "1"}


def _answer(c: Conn) -> tuple[int, dict]:
    """The next answer on the connection: (correlation id, body)."""
    r = c.receive()
    return r.correlation_id, r.body
