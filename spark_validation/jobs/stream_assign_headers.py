"""Structured streaming, ``assign`` with JSON ``startingOffsets``, ``includeHeaders``.

Only the assigned partitions are read, each from its own starting offset (a number,
or -2 for earliest), with Trigger.AvailableNow; record headers (several, repeated
keys, a null value) arrive as Spark's ``array<struct<key: string, value: binary>>``
in their original order, and keys and timestamps come through unchanged.
"""

from __future__ import annotations

import sys
import time
from typing import Any

from spark_validation import kafka_util as ku
from spark_validation import streams
from spark_validation.jobs._cli import bootstrap_of, main

TOPIC = "spark-assign"
# An hour ago, whole seconds: recent enough that the default 7-day retention.ms keeps
# the records (with a fixed date in the past the emulator, like Kafka, deletes them).
BASE_TS = (int(time.time()) - 3600) * 1000


def headers_for(p: int, i: int) -> list[tuple[str, bytes | None]]:
    hs: list[tuple[str, bytes | None]] = [("source", b"emulator"), ("seq", str(i).encode())]
    if i % 3 == 0:
        hs += [("seq", b"again"), ("empty", None)]
    return hs


def run(spark: Any, target: Any, work: str, topic: str = TOPIC) -> dict[str, Any]:
    bootstrap = bootstrap_of(target)
    ku.create_topic(bootstrap, topic, 3)
    ku.produce(bootstrap, topic, [
        {"partition": p, "key": f"k{p}-{i}".encode(), "value": f"v{p}-{i}".encode(),
         "timestamp": BASE_TS + i * 1000, "headers": headers_for(p, i)}
        for p in range(3) for i in range(12)])
    out, ckpt = streams.workdir(work, "assign")
    df = streams.read_stream(spark, bootstrap, assign={topic: [0, 2]}, includeHeaders=True,
                             startingOffsets={topic: {"0": 5, "2": -2}})
    q = streams.start_parquet_sink(
        df.selectExpr("partition", "offset", "CAST(key AS STRING) AS key",
                      "CAST(value AS STRING) AS value", "timestamp", "headers"),
        out, ckpt, {"availableNow": True})
    q.awaitTermination(300)
    if q.exception() is not None:
        raise q.exception()
    rows = spark.read.parquet(str(out)).orderBy("partition", "offset").collect()
    got = [(r.partition, r.offset, r.key, r.value, int(r.timestamp.timestamp() * 1000),
            [(h.key, None if h.value is None else bytes(h.value)) for h in r.headers])
           for r in rows]
    want = [(p, i, f"k{p}-{i}", f"v{p}-{i}", BASE_TS + i * 1000, headers_for(p, i))
            for p, start in ((0, 5), (2, 0)) for i in range(start, 12)]
    assert got == want, _first_difference(got, want)
    return {"rows": len(got), "partitions": sorted({g[0] for g in got})}


def _first_difference(got: list[Any], want: list[Any]) -> str:
    for g, w in zip(got, want, strict=False):
        if g != w:
            return f"first difference: got {g}, want {w}"
    return f"{len(got)} rows, want {len(want)}: {got[len(want):][:3] or want[len(got):][:3]}"


if __name__ == "__main__":
    sys.exit(main(run, __doc__))
