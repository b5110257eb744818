"""Spark's Kafka connector against a secured emulator: batch write and a streaming read
(readStream, availableNow) with kafka.security.protocol=SASL_SSL and SCRAM-SHA-512,
trusting the generated CA through its PKCS12 truststore; the same for mutual TLS.

The brokers require a client certificate (ssl.client.auth=required), so the mutual-TLS
run passes only if Spark presented the generated one from its keystore, and the test
checks the requirement holds: a TLS client without a certificate is refused. Switched
to ``requested`` (SPARK_VALIDATION_CLIENT_AUTH=requested) the test fails, as it must.
"""

from __future__ import annotations

import os
import socket
import ssl
from collections.abc import Iterator
from typing import Any

import pytest

from emulator import Cluster
from wire.frames import encode_request

N = 200
CLIENT_AUTH = os.environ.get("SPARK_VALIDATION_CLIENT_AUTH", "required")  # "requested": the check must fail


def _spark_options(cluster: Cluster, **kw: Any) -> dict[str, str]:
    """Java client properties from client_config, each prefixed with kafka."""
    props = cluster.client_config("java", **kw)
    out = {}
    for line in props.splitlines():
        k, _, v = line.partition("=")
        out[f"kafka.{k}"] = v.replace("\\\\", "\\")
    return out


@pytest.fixture
def secured(tmp_path: Any) -> Iterator[Cluster]:
    with Cluster(3, security={"listeners": "SASL_SSL://127.0.0.1:0,SSL://127.0.0.1:0",
                              "sasl_users": {"spark": "spark-pw"},
                              "tls_client_auth": CLIENT_AUTH,
                              "tls_dir": str(tmp_path / "tls")}) as c:
        yield c


@pytest.mark.parametrize("listener, extra", [
    ("SASL_SSL", {"mechanism": "SCRAM-SHA-512"}),
    ("SSL", {"mtls": True}),
])
def test_write_and_stream_read_secured(spark: Any, secured: Cluster, work: str,
                                       listener: str, extra: dict) -> None:
    topic = f"spark-{listener.lower()}"
    secured.create_topic(topic, 3)
    opts = _spark_options(secured, listener=listener, user="spark", **extra)
    df = spark.range(N).selectExpr("CAST(id AS STRING) AS key", "CAST(id AS STRING) AS value")
    df.write.format("kafka").options(**opts).option("topic", topic).save()
    stream = (spark.readStream.format("kafka").options(**opts)
              .option("subscribe", topic).option("startingOffsets", "earliest").load())
    q = (stream.selectExpr("CAST(value AS STRING) AS v").writeStream
         .format("memory").queryName(f"sec_{listener.lower()}")
         .option("checkpointLocation", f"{work}/ckpt-{listener}")
         .trigger(availableNow=True).start())
    q.awaitTermination(180)
    rows = spark.sql(f"SELECT v FROM sec_{listener.lower()}").collect()
    assert sorted(int(r.v) for r in rows) == list(range(N))
    if extra.get("mtls"):
        bootstrap = opts["kafka.bootstrap.servers"].split(",")[0]
        assert refused_without_certificate(secured, bootstrap), \
            "a TLS client without a certificate was served: client auth is not required"


def refused_without_certificate(cluster: Cluster, address: str) -> bool:
    """Whether a TLS client trusting the CA but presenting no certificate is refused: the
    handshake fails, or (TLS 1.3, where the server checks after the client finished) the
    first request gets no answer."""
    assert cluster.tls is not None
    host, port = address.rsplit(":", 1)
    ctx = ssl.create_default_context(cafile=cluster.tls.trust or cluster.tls.ca)
    ctx.check_hostname = False
    try:
        with socket.create_connection((host, int(port)), timeout=10) as raw, \
                ctx.wrap_socket(raw, server_hostname=host) as s:
            s.sendall(encode_request(18, 3, 1, "mtls-check", {
                "client_software_name": "mtls-check", "client_software_version": "1"}))
            return s.recv(4) == b""
    except (ssl.SSLError, ConnectionError):
        return True
