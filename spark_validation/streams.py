"""Building blocks of the Spark jobs: Kafka sources, an exactly-once sink, progress.

The sink the jobs use to check what a query saw is Spark's file sink (Parquet): with a
checkpoint it is exactly-once across restarts (it commits each batch in its
``_spark_metadata`` log), so a record that shows up twice in it was read twice from
Kafka, and one missing was never read. That makes "every record exactly once" a
statement about the Kafka source and the emulator, not about the sink.
"""

from __future__ import annotations

import json
import os
import time
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from emulator.testing import wait_for

# Timeouts short enough that a broken fault scenario fails within a minute or two,
# long enough for a broker restart and a leader election to finish.
CLIENT_OPTIONS: dict[str, str] = {
    "kafka.request.timeout.ms": "10000",
    "kafka.default.api.timeout.ms": "30000",
    "kafka.metadata.max.age.ms": "5000",
    "kafka.reconnect.backoff.max.ms": "1000",
    "fetchOffset.retryIntervalMs": "200",
    "kafkaConsumer.pollTimeoutMs": "60000",
}

# What the Kafka source produces, as the jobs compare it.
KEY_COLUMNS = ["topic", "partition", "offset", "CAST(key AS STRING) AS key",
               "CAST(value AS STRING) AS value"]


def kafka_options(bootstrap: str, **options: Any) -> dict[str, str]:
    """Source or sink options: bootstrap, the client timeouts above, then ``options``.

    Values that are dicts become JSON (startingOffsets and friends).
    """
    out = {"kafka.bootstrap.servers": bootstrap, **CLIENT_OPTIONS}
    for k, v in options.items():
        if isinstance(v, dict | list):
            v = json.dumps(v)
        elif isinstance(v, bool):
            v = str(v).lower()
        out[k] = str(v)
    return out


def read_stream(spark: Any, bootstrap: str, **options: Any) -> Any:
    """``spark.readStream.format("kafka")`` with ``kafka_options``."""
    return spark.readStream.format("kafka").options(**kafka_options(bootstrap, **options)).load()


def read_batch(spark: Any, bootstrap: str, **options: Any) -> Any:
    return spark.read.format("kafka").options(**kafka_options(bootstrap, **options)).load()


def start_parquet_sink(df: Any, out: Path | str, checkpoint: Path | str,
                       trigger: dict[str, Any], name: str | None = None) -> Any:
    """Start ``df`` into Parquet files under ``out`` (exactly-once with the checkpoint).

    ``trigger`` is passed to ``DataStreamWriter.trigger``: ``{"availableNow": True}`` or
    ``{"processingTime": "1 second"}``.
    """
    w = (df.writeStream.format("parquet").option("path", str(out))
         .option("checkpointLocation", str(checkpoint)).trigger(**trigger))
    if name:
        w = w.queryName(name)
    return w.start()


def output(spark: Any, out: Path | str, columns: str = "partition, offset, value") -> list[Any]:
    """Everything the file sink committed, sorted by ``columns``."""
    meta = Path(out) / "_spark_metadata"
    if not meta.exists() or not any(f.name.split(".")[0].isdigit() for f in meta.iterdir()):
        return []  # no batch committed yet
    df = spark.read.parquet(str(out))
    cols = [c.strip() for c in columns.split(",")]
    return [tuple(r) for r in df.select(*cols).orderBy(*cols).collect()]


def duplicates(items: Iterable[Any]) -> dict[Any, int]:
    return {k: n for k, n in Counter(items).items() if n > 1}


def source_progress(query: Any) -> list[dict[str, Any]]:
    """Per finished batch: batch id, input rows, and the Kafka source's start/end offsets."""
    rows = []
    for p in query.recentProgress:
        src = p["sources"][0] if p.get("sources") else {}
        rows.append({"batchId": p["batchId"], "numInputRows": p["numInputRows"],
                     "startOffset": _json(src.get("startOffset")),
                     "endOffset": _json(src.get("endOffset"))})
    return rows


def _json(v: Any) -> Any:
    if isinstance(v, str):
        try:
            return json.loads(v)
        except ValueError:
            return v
    return v


def wait_initial_offsets(checkpoint: Path | str, query: Any, timeout_s: float = 120) -> dict:
    """Block until the Kafka source has fixed its initial offsets in the checkpoint.

    KafkaMicroBatchStream writes them to ``sources/0/0`` before the first batch; from
    then on ``startingOffsets=latest`` means "after this point", so a test may produce.
    """
    path = Path(checkpoint) / "sources" / "0" / "0"
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if query.exception() is not None:
            raise query.exception()
        if path.exists() and path.stat().st_size > 0:
            lines = path.read_text().splitlines()
            if len(lines) >= 2:  # "v1" then the JSON offsets
                return json.loads(lines[-1])
        time.sleep(0.1)
    raise TimeoutError(f"no initial offsets in {path} after {timeout_s}s; "
                       f"status {query.status}")


def wait_rows(spark: Any, query: Any, out: Path | str, n: int, timeout_s: float = 180,
              columns: str = "partition, offset, value") -> list[Any]:
    """Wait until the running ``query`` has committed at least ``n`` rows; return them."""
    deadline = time.monotonic() + timeout_s
    rows: list[Any] = []
    while time.monotonic() < deadline:
        if query.exception() is not None:
            raise query.exception()
        if not query.isActive:
            break
        rows = output(spark, out, columns)
        if len(rows) >= n:
            return rows
        time.sleep(0.5)
    rows = output(spark, out, columns)
    if len(rows) >= n:
        return rows
    raise TimeoutError(f"query {query.name or query.id} committed {len(rows)} of {n} rows "
                       f"in {timeout_s}s; status {query.status}; last progress "
                       f"{_short(query.lastProgress)}")


def wait_read_to(query: Any, topic: str, ends: dict[int, int],
                 timeout_s: float = 120) -> dict[str, Any]:
    """Wait until a finished batch of ``query`` read ``topic`` up to ``ends``
    ({partition: log end offset}); return that batch's progress. With nothing more
    produced, every row the query will ever write is then committed: the condition a
    "no extra rows" check needs, instead of sleeping and hoping a stray batch shows."""
    want = {str(p): end for p, end in ends.items()}

    def reached() -> dict[str, Any] | None:
        if query.exception() is not None:
            raise query.exception()
        for batch in reversed(source_progress(query)):
            end = batch["endOffset"]
            if isinstance(end, dict) and end.get(topic) == want:
                return batch
        return None

    return wait_for(reached, f"query {query.name or query.id} to read {topic} to {want}",
                    timeout_s, interval=0.2)


def _short(progress: Any) -> Any:
    if not progress:
        return progress
    return {k: progress.get(k) for k in ("batchId", "numInputRows", "sources")}


def stop(query: Any) -> None:
    """Stop a query if it runs; never hide the exception it died of."""
    if query is not None and query.isActive:
        query.stop()


def workdir(base: Path | str, name: str) -> tuple[Path, Path]:
    """(output dir, checkpoint dir) for one query under ``base``."""
    root = Path(base) / name
    os.makedirs(root, exist_ok=True)
    return root / "out", root / "checkpoint"
