"""Example pipeline: page views in, per-minute totals out, with an event-time watermark.

    python -m spark_validation.example_pipeline                      # its own emulator
    python -m spark_validation.example_pipeline --bootstrap-servers 127.0.0.1:9092

What a typical Spark job against Kafka does, end to end on the emulator:

1. JSON page-view events (user, page, event time, amount in cents) go to a 3-partition
   topic through confluent-kafka, keyed by user.
2. A structured-streaming query reads the topic, parses the JSON, declares a 1-minute
   watermark on the event time, counts views and sums cents per page in 1-minute
   tumbling windows, and writes each finished window (append mode) as JSON, keyed by
   page, to a second topic through Spark's Kafka sink.
3. The events come in three waves, so the watermark does something visible: on-time
   events; then late ones, some still inside the watermark (they count) and some for
   windows that are already closed (Spark drops them); then one event ten minutes on,
   which moves the watermark past every real window and makes Spark emit them.
4. The job reads the result topic back with confluent-kafka and checks it against the
   same aggregation done in Python: every window once, nothing dropped that should
   count, nothing counted that came too late.

The event times are fixed (a morning of 2026-11-22 UTC) and the events come from a
seeded generator, so every run computes the same totals; topic names carry a run id,
so the job can run again and again against one long-running emulator.
"""

from __future__ import annotations

import json
import random
import sys
import time
import uuid
from collections import Counter, defaultdict
from typing import Any

from emulator.testing import wait_for
from spark_validation import kafka_util as ku
from spark_validation import streams
from spark_validation.jobs._cli import bootstrap_of, main

T0_MS = 1_795_341_600_000  # 2026-11-22T10:00:00Z, start of the first window
MINUTE_MS = 60_000
WATERMARK = "1 minute"
PAGES = ("/home", "/search", "/product", "/checkout")
USERS = [f"user-{i:02d}" for i in range(20)]
PARTITIONS = 3

# The three waves. On time: five minutes of events, the last at 4:59, so the watermark
# becomes 3:59 and windows [0,1) [1,2) [2,3) close. Late but kept: event times after
# 3:59 in the open windows [3,4) and [4,5). Too late: event times in [1,2), a window
# the watermark has closed. The flush event at 10:00 moves the watermark to 9:00.
ON_TIME = 400
LATE_KEPT = 24
TOO_LATE = 15
FLUSH_AT_MS = T0_MS + 10 * MINUTE_MS


def _event(rng: random.Random, ts_ms: int) -> dict[str, Any]:
    return {"user": rng.choice(USERS), "page": rng.choice(PAGES), "ts_ms": ts_ms,
            "cents": rng.randrange(0, 1000)}


def waves(seed: int = 20261122) -> tuple[list[dict], list[dict], list[dict], dict]:
    """(on time, late but kept, too late, flush) events; the same for the same seed."""
    rng = random.Random(seed)
    span = 5 * MINUTE_MS
    on_time = [_event(rng, T0_MS + rng.randrange(0, span - 1000)) for _ in range(ON_TIME - 1)]
    on_time.append(_event(rng, T0_MS + span - 1000))  # 4:59.000: the max event time
    on_time.sort(key=lambda e: e["ts_ms"])
    # Watermark after the first wave: 4:59.000 - 1 minute = 3:59.000.
    kept = [_event(rng, T0_MS + 3 * MINUTE_MS + 59_500 + i * 10) for i in range(LATE_KEPT // 2)]
    kept += [_event(rng, T0_MS + 4 * MINUTE_MS + 10_000 + i * 1000)
             for i in range(LATE_KEPT - LATE_KEPT // 2)]
    too_late = [_event(rng, T0_MS + MINUTE_MS + 30_000 + i * 1000) for i in range(TOO_LATE)]
    flush = _event(rng, FLUSH_AT_MS)
    return on_time, kept, too_late, flush


def expected(events: list[dict]) -> dict[tuple[int, str], dict[str, int]]:
    """{(window start ms, page): {"views", "cents"}}, the aggregation done in Python."""
    out: dict[tuple[int, str], dict[str, int]] = defaultdict(lambda: {"views": 0, "cents": 0})
    for e in events:
        key = (e["ts_ms"] - (e["ts_ms"] - T0_MS) % MINUTE_MS, e["page"])
        out[key]["views"] += 1
        out[key]["cents"] += e["cents"]
    return dict(out)


def _send(bootstrap: str, topic: str, events: list[dict]) -> None:
    ku.produce(bootstrap, topic, ({"key": e["user"].encode(),
                                   "value": json.dumps(e).encode()} for e in events))


def build_query(spark: Any, bootstrap: str, source: str, sink: str, checkpoint: str) -> Any:
    """The pipeline itself: Kafka -> parse -> watermark -> windowed totals -> Kafka."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import IntegerType, LongType, StringType, StructField, StructType

    schema = StructType([StructField("user", StringType()), StructField("page", StringType()),
                         StructField("ts_ms", LongType()), StructField("cents", IntegerType())])
    events = (streams.read_stream(spark, bootstrap, subscribe=source,
                                  startingOffsets="earliest")
              .select(F.from_json(F.col("value").cast("string"), schema).alias("e"))
              .select("e.page", "e.cents",
                      F.timestamp_millis(F.col("e.ts_ms")).alias("event_time")))
    totals = (events.withWatermark("event_time", WATERMARK)
              .groupBy(F.window("event_time", "1 minute"), "page")
              .agg(F.count(F.lit(1)).alias("views"), F.sum("cents").alias("cents")))
    out = totals.select(
        F.col("page").alias("key"),
        F.to_json(F.struct(F.unix_millis(F.col("window.start")).alias("window_start_ms"),
                           "page", "views", "cents")).alias("value"))
    return (out.writeStream.format("kafka").outputMode("append")
            .options(**streams.kafka_options(bootstrap, topic=sink))
            .option("checkpointLocation", checkpoint)
            .trigger(processingTime="1 second").queryName("page-view-totals").start())


def _wait_progress(query: Any, what: str, done: Any, timeout_s: float = 180) -> None:
    """Wait until ``done(progress list)``; a failed query raises its own error."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if query.exception() is not None:
            raise query.exception()
        if done(query.recentProgress):
            return
        time.sleep(0.2)
    raise TimeoutError(f"timed out waiting for {what}; last progress {query.lastProgress}")


def _iso(ms: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms / 1000)) + f".{ms % 1000:03d}Z"


def run(spark: Any, target: Any, work: str) -> dict[str, Any]:
    bootstrap = bootstrap_of(target)
    run_id = uuid.uuid4().hex[:8]
    source, sink = f"page-views-{run_id}", f"page-view-totals-{run_id}"
    ku.create_topic(bootstrap, source, PARTITIONS)
    ku.create_topic(bootstrap, sink, PARTITIONS)
    on_time, kept, too_late, flush = waves()
    want = expected(on_time + kept)

    _, ckpt = streams.workdir(work, "example-pipeline")
    q = build_query(spark, bootstrap, source, sink, str(ckpt))
    try:
        _send(bootstrap, source, on_time)
        wm = _iso(max(e["ts_ms"] for e in on_time) - MINUTE_MS)
        _wait_progress(q, f"the watermark to reach {wm}",
                       lambda ps: any(p.get("eventTime", {}).get("watermark") == wm for p in ps))
        _send(bootstrap, source, kept + too_late)
        total_in = len(on_time) + len(kept) + len(too_late)
        _wait_progress(q, f"{total_in} events read",
                       lambda ps: sum(p["numInputRows"] for p in ps) >= total_in)
        _send(bootstrap, source, [flush])
        back = wait_for(lambda: _totals_if_complete(bootstrap, sink, len(want), q),
                        f"{len(want)} window totals in {sink}", 180, interval=0.2)
        dropped = sum(sum(op.get("numRowsDroppedByWatermark", 0)
                          for op in p.get("stateOperators", []))
                      for p in q.recentProgress)
    finally:
        streams.stop(q)

    counts = Counter((t["window_start_ms"], t["page"]) for t in back)
    twice = {k: n for k, n in counts.items() if n > 1}
    assert not twice, f"windows written more than once: {twice}"
    got = {(t["window_start_ms"], t["page"]): {"views": t["views"], "cents": t["cents"]}
           for t in back}
    assert got == want, _diff(got, want)
    return {"events": total_in + 1, "too_late_events": len(too_late),
            "dropped_by_watermark": dropped, "windows": len(got),
            "views": sum(v["views"] for v in got.values()),
            "cents": sum(v["cents"] for v in got.values()),
            "source_topic": source, "result_topic": sink}


def _totals_if_complete(bootstrap: str, topic: str, n: int, query: Any) -> list[dict] | None:
    if query.exception() is not None:
        raise query.exception()
    ends = ku.offsets(bootstrap, topic)
    if sum(hi - lo for lo, hi in ends.values()) < n:
        return None
    return [json.loads(r.value) for r in ku.consume_all(bootstrap, topic)]


def _diff(got: dict, want: dict) -> str:
    missing = sorted(set(want) - set(got))[:4]
    extra = sorted(set(got) - set(want))[:4]
    wrong = [(k, got[k], want[k]) for k in sorted(set(got) & set(want)) if got[k] != want[k]]
    return (f"window totals differ: {len(got)} windows, want {len(want)}; missing "
            f"{missing}, unexpected {extra}, wrong {wrong[:4]}")


if __name__ == "__main__":
    sys.exit(main(run, __doc__.split("\n\n")[0]))
