"""A minimal raw Kafka protocol connection for tests that need exact requests.

Real clients hide error codes and retry; these tests speak the wire protocol
directly with our codec to see exactly what the broker answers.
"""

from __future__ import annotations

import socket
import struct

from emulator import Cluster
from wire.frames import decode_response, encode_request

CORR = 7


class Conn:
    def __init__(self, cluster: Cluster, broker_index: int = 0) -> None:
        b = sorted(cluster.state.brokers.values(), key=lambda b: b.id)[broker_index]
        self.sock = socket.create_connection((b.host, b.port), timeout=10)

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


def leader_conn(cluster: Cluster, topic: str) -> Conn:
    leader = cluster.state.get_partition(topic, 0).leader
    return Conn(cluster, cluster.broker_ids.index(leader))
