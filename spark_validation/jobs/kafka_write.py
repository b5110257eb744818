"""Writes to Kafka, batch and streaming, read back intact by another client.

Batch: rows with key, value, an explicit partition and headers (a null key and a
null value included) go through Spark's Kafka sink, whose producer is Java's
idempotent one (InitProducerId), and come back from confluent-kafka byte for byte,
each in the partition it was sent to. Streaming: a query reads that topic and writes
every record, value upper-cased and headers kept, to a second topic with
Trigger.AvailableNow; the second topic then holds each record exactly once.
"""

from __future__ import annotations

import sys
from typing import Any

from spark_validation import kafka_util as ku
from spark_validation import streams
from spark_validation.jobs._cli import bootstrap_of, main

SOURCE, SINK = "spark-write", "spark-write-upper"
N, PARTITIONS = 60, 3


def expected_rows() -> list[dict[str, Any]]:
    rows = []
    for i in range(N):
        rows.append({"key": None if i == 7 else f"key-{i}".encode(),
                     "value": None if i == 11 else f"value-{i}".encode(),
                     "partition": i % PARTITIONS,
                     "headers": [("i", str(i).encode()), ("kind", b"batch")]})
    return rows


def run(spark: Any, target: Any, work: str) -> dict[str, Any]:
    from pyspark.sql.types import (
        ArrayType,
        BinaryType,
        IntegerType,
        StringType,
        StructField,
        StructType,
    )

    bootstrap = bootstrap_of(target)
    ku.create_topic(bootstrap, SOURCE, PARTITIONS)
    ku.create_topic(bootstrap, SINK, PARTITIONS)
    header = StructType([StructField("key", StringType()), StructField("value", BinaryType())])
    schema = StructType([StructField("key", BinaryType()), StructField("value", BinaryType()),
                         StructField("partition", IntegerType()),
                         StructField("headers", ArrayType(header))])
    rows = expected_rows()
    df = spark.createDataFrame([(r["key"], r["value"], r["partition"], r["headers"])
                                for r in rows], schema)
    (df.write.format("kafka").options(**streams.kafka_options(bootstrap, topic=SOURCE))
     .save())
    back = ku.consume_all(bootstrap, SOURCE, expect=N)
    got = sorted(((r.partition, r.key, r.value, r.headers) for r in back), key=repr)
    want = sorted(((r["partition"], r["key"], r["value"], tuple(r["headers"])) for r in rows),
                  key=repr)
    assert got == want, _diff("batch write", got, want)
    per_partition = {p: sorted(r.offset for r in back if r.partition == p)
                     for p in range(PARTITIONS)}
    assert all(offs == list(range(len(offs))) for offs in per_partition.values()), \
        f"offsets should be dense from 0: {per_partition}"

    out, ckpt = streams.workdir(work, "write-stream")
    src = streams.read_stream(spark, bootstrap, subscribe=SOURCE, startingOffsets="earliest",
                              includeHeaders=True)
    upper = src.selectExpr("key", "CAST(upper(CAST(value AS STRING)) AS BINARY) AS value",
                           "headers")
    q = (upper.writeStream.format("kafka")
         .options(**streams.kafka_options(bootstrap, topic=SINK))
         .option("checkpointLocation", str(ckpt)).trigger(availableNow=True).start())
    q.awaitTermination(300)
    if q.exception() is not None:
        raise q.exception()
    back2 = ku.consume_all(bootstrap, SINK, expect=N)
    got2 = sorted((r.key or b"", r.value or b"", r.headers) for r in back2)
    want2 = sorted((r["key"] or b"", (r["value"] or b"").upper(), tuple(r["headers"]))
                   for r in rows)
    # A null value upper-cased is still null; compare with b"" standing in for null.
    assert got2 == want2, _diff("streaming write", got2, want2)
    return {"batch_written": len(back), "stream_written": len(back2)}


def _diff(what: str, got: list[Any], want: list[Any]) -> str:
    g, w = set(got), set(want)
    return (f"{what}: {len(got)} records, want {len(want)}; missing {sorted(w - g)[:4]}, "
            f"unexpected {sorted(g - w)[:4]}")


if __name__ == "__main__":
    sys.exit(main(run, __doc__))
