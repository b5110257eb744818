"""Batch reads: ``startingOffsets``/``endingOffsets`` JSON, and reads by timestamp.

Every record carries its own CreateTime, so the offsets a timestamp resolves to
(ListOffsets by timestamp: the first record at or after it, the end when there is
none) can be computed here and compared with what Spark reads.
"""

from __future__ import annotations

import sys
import time
from typing import Any

from spark_validation import kafka_util as ku
from spark_validation import streams
from spark_validation.jobs._cli import bootstrap_of, main

TOPIC = "spark-batch"
PARTITIONS, PER_PARTITION = 3, 20
# An hour ago, whole seconds: recent enough that the default 7-day retention.ms keeps
# the records (with a fixed date in the past the emulator, like Kafka, deletes them).
BASE_TS = (int(time.time()) - 3600) * 1000


def ts(p: int, i: int) -> int:
    return BASE_TS + i * 1000 + p  # distinct per partition, increasing with the offset


def run(spark: Any, target: Any, work: str, topic: str = TOPIC) -> dict[str, Any]:
    bootstrap = bootstrap_of(target)
    ku.create_topic(bootstrap, topic, PARTITIONS)
    # One produce call per record batch of 5, so timestamps span several batches.
    for start in range(0, PER_PARTITION, 5):
        ku.produce(bootstrap, topic, [
            {"partition": p, "value": f"{p}-{i}".encode(), "timestamp": ts(p, i)}
            for p in range(PARTITIONS) for i in range(start, start + 5)])

    def read(**options: Any) -> list[tuple[int, int, str, int]]:
        df = streams.read_batch(spark, bootstrap, **options)
        rows = df.selectExpr("partition", "offset", "CAST(value AS STRING) AS value",
                             "timestamp").orderBy("partition", "offset").collect()
        return [(r[0], r[1], r[2], int(r[3].timestamp() * 1000)) for r in rows]

    def want(ranges: dict[int, tuple[int, int]]) -> list[tuple[int, int, str, int]]:
        return [(p, i, f"{p}-{i}", ts(p, i)) for p, (lo, hi) in sorted(ranges.items())
                for i in range(lo, hi)]

    checks: dict[str, Any] = {}
    # Offsets: a number, -2 (earliest) and -1 (latest).
    got = read(subscribe=topic, startingOffsets={topic: {"0": 3, "1": -2, "2": 10}},
               endingOffsets={topic: {"0": 8, "1": -1, "2": 12}})
    _check("offsets JSON", got, want({0: (3, 8), 1: (0, 20), 2: (10, 12)}))
    checks["offsets_json"] = len(got)

    # The default range is earliest..latest, the whole topic.
    got = read(assign={topic: [0, 1, 2]})
    _check("earliest..latest", got, want({p: (0, PER_PARTITION) for p in range(PARTITIONS)}))
    checks["whole_topic"] = len(got)

    # Per partition timestamps: exact hits, between two records, and past the end.
    got = read(subscribe=topic,
               startingOffsetsByTimestamp={topic: {"0": ts(0, 5), "1": ts(1, 5) + 500,
                                                   "2": BASE_TS}},
               endingOffsetsByTimestamp={topic: {"0": ts(0, 9), "1": BASE_TS + 10**7,
                                                 "2": ts(2, 3) - 1}})
    _check("offsets by timestamp", got, want({0: (5, 9), 1: (6, 20), 2: (0, 3)}))
    checks["offsets_by_timestamp"] = len(got)

    # One timestamp for every partition.
    got = read(subscribe=topic, startingTimestamp=BASE_TS + 15_000,
               endingTimestamp=BASE_TS + 18_000)
    # partition p's record i has ts BASE + 1000 i + p: >= BASE+15000 from i=15, and the
    # end (first ts >= BASE+18000) is i=18 for p=0 and i=18 for p>0 as well.
    _check("global timestamps", got, want({p: (15, 18) for p in range(PARTITIONS)}))
    checks["global_timestamps"] = len(got)
    return checks


def _check(what: str, got: list[Any], want: list[Any]) -> None:
    if got != want:
        g, w = set(got), set(want)
        raise AssertionError(f"{what}: {len(got)} rows, want {len(want)}; missing "
                             f"{sorted(w - g)[:6]}, unexpected {sorted(g - w)[:6]}")


if __name__ == "__main__":
    sys.exit(main(run, __doc__))
