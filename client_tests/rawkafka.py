"""A minimal raw Kafka protocol connection for tests that need exact requests.

Real clients hide error codes and retry; these tests speak the wire protocol
directly with our codec to see exactly what the broker answers.
"""

from __future__ import annotations

import socket
import struct

from client_tests.targets import KafkaTarget
from emulator import Cluster
from wire.frames import decode_response, encode_request

CORR = 7


def _address(cluster: Cluster | KafkaTarget, broker_index: int) -> tuple[str, int]:
    """The broker's address on either target (client_tests/targets.py)."""
    if isinstance(cluster, KafkaTarget):
        return "127.0.0.1", cluster.kafka.listener_port(cluster.broker_ids[broker_index])
    b = sorted(cluster.state.brokers.values(), key=lambda b: b.id)[broker_index]
    return b.host, b.port


class Conn:
    def __init__(self, cluster: Cluster | KafkaTarget, broker_index: int = 0) -> None:
        self.sock = socket.create_connection(_address(cluster, broker_index), timeout=10)

    def send_raw(self, data: bytes) -> None:
        self.sock.sendall(data)

    def read_frame(self) -> bytes | None:
        head = self._read(4)
        if head is None:
            return None
        return self._read(struct.unpack(">i", head)[0])

    def _read(self, n: int) -> bytes | None:
        buf = b""
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            if not chunk:
                return None
            buf += chunk
        return buf

    def call(self, key: int, version: int, body: dict) -> dict:
        self.send_raw(encode_request(key, version, CORR, "bad-input-test", body))
        frame = self.read_frame()
        assert frame is not None, "connection closed"
        corr, resp = decode_response(key, version, frame)
        assert corr == CORR
        return resp

    def closed(self) -> bool:
        try:
            return self.sock.recv(1) == b""
        except ConnectionResetError:
            return True

    def close(self) -> None:
        self.sock.close()


def produce_body(topic: str, partition: int, records: bytes | None, acks: int = 1) -> dict:
    return {"acks": acks, "timeout_ms": 5000, "topic_data": [
        {"name": topic, "partition_data": [{"index": partition, "records": records}]}]}


def produce_error(resp: dict) -> int:
    return resp["responses"][0]["partition_responses"][0]["error_code"]


def topic_metadata(cluster: Cluster | KafkaTarget, topic: str) -> dict:
    """The topic as Metadata (v12) reports it: asked over the wire, so on either target."""
    c = None
    for i in range(len(cluster.broker_ids)):  # the first broker that is up
        try:
            c = Conn(cluster, i)
            break
        except OSError:
            continue
    assert c is not None, "no broker is up"
    try:
        resp = c.call(3, 12, {"topics": [{"topic_id": b"\x00" * 16, "name": topic}],
                              "allow_auto_topic_creation": False})
    finally:
        c.close()
    return resp["topics"][0]


def leader_conn(cluster: Cluster | KafkaTarget, topic: str) -> Conn:
    leader = next(p["leader_id"] for p in topic_metadata(cluster, topic)["partitions"]
                  if p["partition_index"] == 0)
    return Conn(cluster, cluster.broker_ids.index(leader))
