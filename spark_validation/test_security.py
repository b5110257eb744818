"""Spark's Kafka connector against a secured emulator: batch write and a streaming read
(readStream, availableNow) with kafka.security.protocol=SASL_SSL and SCRAM-SHA-512,
trusting the generated CA through its PKCS12 truststore; the same for mutual TLS."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from emulator import Cluster

N = 200


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
                              "tls_client_auth": "requested",
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
