"""Spark reads Avro records written through the emulator's schema registry: Confluent's
framing (magic byte, 4-byte schema id) stripped, the rest decoded by ``from_avro``
with the schema the registry holds for that id (docs/schema-registry.md)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from confluent_kafka import Producer
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

from emulator import Cluster

SCHEMA = {"type": "record", "name": "Reading", "namespace": "iot", "fields": [
    {"name": "sensor", "type": "string"}, {"name": "value", "type": "double"},
    {"name": "tags", "type": {"type": "array", "items": "string"}},
    {"name": "note", "type": ["null", "string"], "default": None}]}


@pytest.fixture
def registry_cluster() -> Iterator[Cluster]:
    with Cluster(brokers=3, port=0, schema_registry_port=0) as c:
        yield c


def test_from_avro_reads_records_written_through_the_registry(spark, registry_cluster):
    from pyspark.sql.avro.functions import from_avro
    from pyspark.sql.functions import expr

    c = registry_cluster
    client = SchemaRegistryClient({"url": c.schema_registry_url})
    ser = AvroSerializer(client, json.dumps(SCHEMA))
    ctx = SerializationContext("readings", MessageField.VALUE)
    rows = [{"sensor": f"s{i}", "value": i / 4, "tags": ["a"] * (i % 3),
             "note": None if i % 2 else f"n{i}"} for i in range(40)]
    p = Producer({"bootstrap.servers": c.bootstrap_servers})
    for r in rows:
        p.produce("readings", value=ser(r, ctx))
    assert p.flush(30) == 0

    registered = client.get_latest_version("readings-value")
    df = (spark.read.format("kafka").option("kafka.bootstrap.servers", c.bootstrap_servers)
          .option("subscribe", "readings").option("startingOffsets", "earliest").load())
    framed = df.select(
        expr("cast(conv(hex(substring(value, 2, 4)), 16, 10) as int)").alias("schema_id"),
        expr("substring(value, 6, length(value) - 5)").alias("payload"))
    assert {r.schema_id for r in framed.select("schema_id").collect()} == {
        registered.schema_id}
    decoded = framed.select(from_avro("payload", registered.schema.schema_str).alias("r"))
    got = sorted((r.r.asDict() for r in decoded.collect()), key=lambda d: d["sensor"])
    assert got == sorted(rows, key=lambda d: d["sensor"])
