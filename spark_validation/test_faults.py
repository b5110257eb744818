"""A streaming query with failOnDataLoss=true through reassignment, a leader crash and
a new partition: no failure, no loss, no duplicate."""

from __future__ import annotations

from spark_validation.jobs import stream_through_faults


def test_stream_through_reassignment_crash_and_new_partition(spark, cluster, work):
    s = stream_through_faults.run(spark, cluster, work)
    assert s["partitions"] == [0, 1, 2, 3]
    assert s["steps"]["reassign"]["leader_after"] != s["steps"]["reassign"]["leader_before"]
