"""failOnDataLoss: records a query still needs are removed, by DeleteRecords or retention.

A query reads a topic (two partitions) and stops. More records arrive; then partition
0 loses records the query has not read: ``DeleteRecords`` up to offset 20, or
``retention.ms`` lowered below their age (their CreateTime is two hours old) so the
emulator's retention deletes them. Restarted from its checkpoint with
``failOnDataLoss=true`` the query must fail with Spark's data-loss error; restarted
again with ``failOnDataLoss=false`` it must carry on from the new log start offset,
as it does on Kafka: partition 0 skips the removed offsets, partition 1 loses
nothing, and nothing is read twice.

    python -m spark_validation.jobs.data_loss [--removal retention]
"""

from __future__ import annotations

import sys
import time
from typing import Any

from emulator.testing import wait_for
from spark_validation import kafka_util as ku
from spark_validation import streams
from spark_validation.jobs._cli import bootstrap_of, main

DATA_LOSS_MESSAGE = "Some data may have been lost because they are not available in Kafka"
REMOVALS = ("delete_records", "retention")
LOST_UP_TO = 20  # partition 0's new log start offset


def run(spark: Any, target: Any, work: str, removal: str = "delete_records") -> dict[str, Any]:
    if removal not in REMOVALS:
        raise ValueError(f"removal is one of {REMOVALS}")
    bootstrap = bootstrap_of(target)
    topic = f"spark-loss-{removal.replace('_', '-')}"
    ku.create_topic(bootstrap, topic, 2)
    old = int(time.time() * 1000) - 2 * 3600_000
    now = int(time.time() * 1000)

    def produce(start: int, count: int, p0_ts: int) -> None:
        # One produce (so separate record batches) per phase; partition 0's
        # timestamps are chosen, partition 1's are always current.
        ku.produce(bootstrap, topic, [
            {"partition": p, "value": f"{p}-{i}".encode(), "timestamp": p0_ts if p == 0 else now}
            for p in (0, 1) for i in range(start, start + count)])

    produce(0, 10, old)
    out, ckpt = streams.workdir(work, f"loss-{removal}")

    def query(fail_on_data_loss: bool) -> Any:
        df = streams.read_stream(spark, bootstrap, subscribe=topic, startingOffsets="earliest",
                                 failOnDataLoss=fail_on_data_loss)
        q = streams.start_parquet_sink(df.selectExpr(*streams.KEY_COLUMNS), out, ckpt,
                                       {"availableNow": True})
        try:
            q.awaitTermination(300)
        except Exception as e:  # noqa: BLE001 - the failure is the result here
            return e
        return q.exception()

    first_error = query(True)
    assert first_error is None, f"the first run must succeed: {first_error}"
    assert len(streams.output(spark, out)) == 20

    produce(10, 10, old)   # offsets 10..19: never read before they are removed
    produce(20, 5, now)    # offsets 20..24: survive
    _remove(bootstrap, topic, removal)
    starts = wait_for(
        lambda: (lambda o: o if o[0][0] == LOST_UP_TO else None)(ku.offsets(bootstrap, topic)),
        f"partition 0 of {topic} to start at {LOST_UP_TO}", 60, interval=0.2)
    assert starts[1][0] == 0, f"partition 1 must keep its records: {starts}"

    error = query(True)
    assert error is not None, "failOnDataLoss=true must fail the query when data is lost"
    assert DATA_LOSS_MESSAGE in str(error), f"not Spark's data-loss error: {str(error)[:2000]}"

    error = query(False)
    assert error is None, f"failOnDataLoss=false must carry on: {str(error)[:2000]}"
    rows = streams.output(spark, out)
    dup = streams.duplicates(rows)
    assert not dup, f"read twice: {dup}"
    want = sorted([(0, i, f"0-{i}") for i in [*range(10), *range(LOST_UP_TO, 25)]]
                  + [(1, i, f"1-{i}") for i in range(25)])
    assert rows == want, (f"got {len(rows)} rows, want {len(want)}; missing "
                          f"{sorted(set(want) - set(rows))[:6]}, unexpected "
                          f"{sorted(set(rows) - set(want))[:6]}")
    return {"removal": removal, "log_start_offsets": {p: o[0] for p, o in starts.items()},
            "rows": len(rows), "fail_on_data_loss_true": _first_line(str(error or ""))}


def _remove(bootstrap: str, topic: str, removal: str) -> None:
    from kafka import TopicPartition
    from kafka.admin import ConfigResource, ConfigResourceType

    a = ku.admin(bootstrap)
    try:
        if removal == "delete_records":
            a.delete_records({TopicPartition(topic, 0): LOST_UP_TO})
        else:
            a.alter_configs([ConfigResource(ConfigResourceType.TOPIC, topic,
                                            configs={"retention.ms": str(3600_000)})])
    finally:
        a.close()


def _first_line(s: str) -> str:
    return s.strip().splitlines()[0] if s.strip() else ""


def _main() -> int:
    removal = "retention" if "retention" in sys.argv[1:] else "delete_records"
    sys.argv = [a for a in sys.argv if a not in ("--removal", "retention", "delete_records")]
    return main(lambda spark, target, work: run(spark, target, work, removal), __doc__)


if __name__ == "__main__":
    sys.exit(_main())
