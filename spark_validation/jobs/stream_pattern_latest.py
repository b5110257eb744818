"""Structured streaming, ``subscribePattern`` from ``latest``, processing-time trigger.

Records written before the query fixed its starting offsets are not read; records
written after are, from every topic that matches, including a topic created while the
query runs (read from its beginning, as Spark does for partitions it discovers), and
none from a topic that does not match.
"""

from __future__ import annotations

import sys
from typing import Any

from spark_validation import kafka_util as ku
from spark_validation import streams
from spark_validation.jobs._cli import bootstrap_of, main

COLUMNS = "topic, partition, offset, value"


def run(spark: Any, target: Any, work: str, prefix: str = "pat") -> dict[str, Any]:
    bootstrap = bootstrap_of(target)
    a, b, c, other = f"{prefix}-a", f"{prefix}-b", f"{prefix}-c", f"not-{prefix}"
    for name, parts in ((a, 2), (b, 1), (other, 1)):
        ku.create_topic(bootstrap, name, parts)
    before = {t: ku.produce_values(bootstrap, t, n, 10, prefix="before")
              for t, n in ((a, 2), (b, 1), (other, 1))}
    out, ckpt = streams.workdir(work, "pattern")
    df = streams.read_stream(spark, bootstrap, subscribePattern=f"{prefix}-.*",
                             startingOffsets="latest")
    q = streams.start_parquet_sink(df.selectExpr(*streams.KEY_COLUMNS), out, ckpt,
                                   {"processingTime": "500 milliseconds"})
    try:
        initial = streams.wait_initial_offsets(ckpt, q)
        assert set(initial) == {a, b}, f"initial offsets for {sorted(initial)}, want {a}, {b}"
        want = {(a, 0): 10, (a, 1): 10, (b, 0): 10}
        assert {(t, int(p)): o for t, ps in initial.items() for p, o in ps.items()} == want, \
            f"latest should be the high watermarks {want}, got {initial}"
        after = {t: ku.produce_values(bootstrap, t, n, 5, start=10, prefix="after")
                 for t, n in ((a, 2), (b, 1), (other, 1))}
        ku.create_topic(bootstrap, c, 2)
        new = ku.produce_values(bootstrap, c, 2, 5, prefix="new")
        expected = sorted(
            [(t, int(v.split(b"-")[1]), int(v.split(b"-")[2]), v.decode())
             for t in (a, b) for v in after[t]]
            + [(c, int(v.split(b"-")[1]), int(v.split(b"-")[2]), v.decode()) for v in new])
        rows = streams.wait_rows(spark, q, out, len(expected), columns=COLUMNS)
    finally:
        streams.stop(q)
    rows = streams.output(spark, out, COLUMNS)
    before_seen = [r for r in rows if r[3].startswith("before")]
    assert not before_seen, f"records from before the start were read: {before_seen[:5]}"
    assert not [r for r in rows if r[0] == other], f"{other} does not match the pattern"
    # value "<phase>-<partition>-<i>" sits at offset i: 10.. in a and b, 0.. in c
    assert rows == expected, f"got {rows[:8]}..., expected {expected[:8]}..."
    return {"rows": len(rows), "skipped_before_start": len(before_seen),
            "before_total": sum(len(v) for v in before.values())}


if __name__ == "__main__":
    sys.exit(main(run, __doc__))
