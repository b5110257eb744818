"""Structured streaming, ``subscribe`` from ``earliest``, stopped and restarted.

Run 1 uses a processing-time trigger with ``maxOffsetsPerTrigger`` and a one-hour
interval: the first batch runs at once and reads at most maxOffsetsPerTrigger records
(one more batch may run if the clock crosses a full hour, since Spark aligns triggers to
multiples of the interval), and the query is stopped while it waits, so most records
are still unread; more records arrive; run 2 restarts from the same checkpoint with
``Trigger.AvailableNow`` and reads the rest in several batches. Checks: no batch reads more than
maxOffsetsPerTrigger records, run 2 begins exactly at the offsets run 1 committed,
and the sink holds every record of the topic exactly once.
"""

from __future__ import annotations

import sys
from typing import Any

from spark_validation import kafka_util as ku
from spark_validation import streams
from spark_validation.jobs._cli import bootstrap_of, main

TOPIC = "spark-subscribe"
PARTITIONS = 3
MAX_PER_TRIGGER = 25


def run(spark: Any, target: Any, work: str, topic: str = TOPIC) -> dict[str, Any]:
    bootstrap = bootstrap_of(target)
    ku.create_topic(bootstrap, topic, PARTITIONS)
    first = ku.produce_values(bootstrap, topic, PARTITIONS, 40, prefix="a")
    out, ckpt = streams.workdir(work, "subscribe")

    def query(trigger: dict[str, Any]) -> Any:
        df = streams.read_stream(spark, bootstrap, subscribe=topic, startingOffsets="earliest",
                                 maxOffsetsPerTrigger=MAX_PER_TRIGGER, failOnDataLoss=True)
        return streams.start_parquet_sink(df.selectExpr(*streams.KEY_COLUMNS), out, ckpt,
                                          trigger)

    q1 = query({"processingTime": "1 hour"})
    try:
        streams.wait_rows(spark, q1, out, 1)
    finally:
        q1.stop()
    run1 = streams.source_progress(q1)
    seen1 = streams.output(spark, out)
    assert 0 < len(seen1) <= 2 * MAX_PER_TRIGGER, (
        f"run 1 should commit one batch (two at an hour boundary) of at most "
        f"{MAX_PER_TRIGGER} records; it has {len(seen1)}")

    second = ku.produce_values(bootstrap, topic, PARTITIONS, 10, start=40, prefix="a")
    q2 = query({"availableNow": True})
    q2.awaitTermination(300)
    if q2.exception() is not None:
        raise q2.exception()
    run2 = streams.source_progress(q2)

    batches = [b for b in run1 + run2 if b["numInputRows"]]
    too_big = [b for b in batches if b["numInputRows"] > MAX_PER_TRIGGER]
    assert not too_big, f"batches above maxOffsetsPerTrigger={MAX_PER_TRIGGER}: {too_big}"
    committed1 = _end_offsets(run1)
    assert run2 and run2[0]["startOffset"] == committed1, (
        f"run 2 started at {run2[0]['startOffset'] if run2 else None}, "
        f"run 1 committed {committed1}")
    rows = streams.output(spark, out)
    values = [r[2] for r in rows]
    dup = streams.duplicates(values)
    assert not dup, f"records read more than once: {list(dup.items())[:10]}"
    expected = sorted(v.decode() for v in first + second)
    assert sorted(values) == expected, _diff(expected, values)
    log = ku.consume_all(bootstrap, topic)
    assert [(r.partition, r.offset, r.value.decode()) for r in log] == rows, \
        "sink rows differ from the log's (partition, offset, value)"
    return {"records": len(rows), "run1_rows": len(seen1), "run1_batches": len(run1),
            "run2_batches": len(run2), "max_batch": max(b["numInputRows"] for b in batches)}


def _end_offsets(progress: list[dict[str, Any]]) -> Any:
    done = [b for b in progress if b["endOffset"]]
    return done[-1]["endOffset"] if done else None


def _diff(expected: list[str], got: list[str]) -> str:
    e, g = set(expected), set(got)
    return (f"{len(got)} rows, {len(expected)} expected; missing {sorted(e - g)[:10]}, "
            f"unexpected {sorted(g - e)[:10]}")


if __name__ == "__main__":
    sys.exit(main(run, __doc__))
