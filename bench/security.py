"""Security benchmark: what TLS and SASL cost (docs/security.md). Prints figures; asserts nothing.

Runs ``kafka-emulator`` as its own process with a PLAINTEXT and a SASL_SSL listener
(SCRAM-SHA-512) and measures with confluent-kafka:

- produce MB/s (1 KiB records, acks=1, one partition per broker) and consume MB/s,
  over PLAINTEXT and over SASL_SSL;
- connections/s: a raw client opening a connection, logging in with SCRAM-SHA-256
  (SaslHandshake + two SaslAuthenticate round trips) and closing, over SASL_PLAINTEXT
  and SASL_SSL (the client caches its salted password, as the server does: the
  figure is the broker's cost, not the client's PBKDF2).

Usage: python bench/security.py [--records N] [--connections N]
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import hmac
import os
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import uuid

from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient, NewTopic

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from client_tests.kafka_cluster import request  # noqa: E402

USER, PASSWORD = "bench", "bench-secret"


def start(tls_dir: str) -> tuple[subprocess.Popen, dict[str, str]]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "emulator", "--brokers", "3", "--log-level", "WARNING",
         "--listeners", "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0,"
         "SASL_SSL://127.0.0.1:0", "--sasl-user", f"{USER}:{PASSWORD}", "--tls-dir", tls_dir],
        stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline() if proc.stdout else ""
    if "kafka-emulator ready:" not in line:
        proc.kill()
        raise RuntimeError(f"kafka-emulator did not start: {line!r}")
    words = line.split()
    boot = {"PLAINTEXT": words[words.index("servers") + 1]}
    for name in ("SASL_PLAINTEXT", "SASL_SSL"):
        boot[name] = words[words.index(name) + 1]
    return proc, boot


def conf_for(listener: str, boot: dict[str, str], tls_dir: str) -> dict:
    conf: dict = {"bootstrap.servers": boot[listener], "security.protocol": listener}
    if listener.startswith("SASL_"):
        conf.update({"sasl.mechanisms": "SCRAM-SHA-512", "sasl.username": USER,
                     "sasl.password": PASSWORD})
    if listener.endswith("SSL"):
        conf["ssl.ca.location"] = os.path.join(tls_dir, "ca.pem")
    return conf


def throughput(conf: dict, records: int) -> tuple[float, float]:
    topic = f"bench-{uuid.uuid4().hex[:8]}"
    admin = AdminClient(conf)
    for f in admin.create_topics([NewTopic(topic, 3, 1)]).values():
        f.result(30)
    value = os.urandom(1024)
    p = Producer({**conf, "acks": 1, "linger.ms": 5, "batch.size": 262144})
    t0 = time.perf_counter()
    for i in range(records):
        while True:
            try:
                p.produce(topic, value, partition=i % 3)
                break
            except BufferError:
                p.poll(0.01)
    p.flush(120)
    produce_s = time.perf_counter() - t0
    c = Consumer({**conf, "group.id": topic, "auto.offset.reset": "earliest",
                  "fetch.max.bytes": 52428800})
    c.subscribe([topic])
    got, t0 = 0, 0.0
    while got < records:
        msgs = c.consume(1000, 5)
        if msgs and not t0:
            t0 = time.perf_counter()  # from the first batch: not the group join
        got += sum(1 for m in msgs if m.error() is None)
    consume_s = time.perf_counter() - t0
    c.close()
    mb = records * 1024 / 1e6
    return mb / produce_s, mb / consume_s


class ScramClient:
    """Just enough RFC 5802 client for the benchmark (salted password cached)."""

    cache: dict[bytes, bytes] = {}

    def first(self) -> bytes:
        self.nonce = base64.b64encode(os.urandom(18)).decode()
        self.bare = f"n={USER},r={self.nonce}"
        return ("n,," + self.bare).encode()

    def final(self, server_first: bytes) -> bytes:
        sf = server_first.decode()
        attrs = dict(a.split("=", 1) for a in sf.split(","))
        salt, it = base64.b64decode(attrs["s"]), int(attrs["i"])
        salted = self.cache.get(salt)
        if salted is None:
            salted = self.cache[salt] = hashlib.pbkdf2_hmac("sha256", PASSWORD.encode(),
                                                            salt, it)
        client_key = hmac.new(salted, b"Client Key", "sha256").digest()
        without = f"c=biws,r={attrs['r']}"
        auth = f"{self.bare},{sf},{without}".encode()
        sig = hmac.new(hashlib.sha256(client_key).digest(), auth, "sha256").digest()
        proof = base64.b64encode(bytes(a ^ b for a, b in zip(client_key, sig, strict=True)))
        return f"{without},p={proof.decode()}".encode()


def connections_per_s(addr: str, n: int, ctx: ssl.SSLContext | None) -> float:
    host, port = addr.split(",")[0].rsplit(":", 1)
    t0 = time.perf_counter()
    for _ in range(n):
        raw = socket.create_connection((host, int(port)))
        sock = ctx.wrap_socket(raw, server_hostname=host) if ctx else raw
        c = ScramClient()
        assert request(sock, 17, 1, {"mechanism": "SCRAM-SHA-256"})["error_code"] == 0
        r = request(sock, 36, 2, {"auth_bytes": c.first()})
        r = request(sock, 36, 2, {"auth_bytes": c.final(r["auth_bytes"])})
        assert r["error_code"] == 0, r
        sock.close()
    return n / (time.perf_counter() - t0)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=100_000)
    ap.add_argument("--connections", type=int, default=300)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tls_dir:
        proc, boot = start(tls_dir)
        try:
            print(f"{'listener':<16}{'produce MB/s':>14}{'consume MB/s':>14}")
            for listener in ("PLAINTEXT", "SASL_SSL"):
                p, c = throughput(conf_for(listener, boot, tls_dir), args.records)
                print(f"{listener:<16}{p:>14.1f}{c:>14.1f}")
            ctx = ssl.create_default_context(cafile=os.path.join(tls_dir, "ca.pem"))
            print(f"\n{'SCRAM-SHA-256 login':<24}{'connections/s':>14}")
            for listener, c_ in (("SASL_PLAINTEXT", None), ("SASL_SSL", ctx)):
                rate = connections_per_s(boot[listener], args.connections, c_)
                print(f"{listener:<24}{rate:>14.0f}")
        finally:
            proc.terminate()
            proc.wait(timeout=30)


if __name__ == "__main__":
    main()
