"""Batch reads by offsets and timestamps; batch and streaming writes read back."""

from __future__ import annotations

from spark_validation.jobs import batch_read, kafka_write


def test_batch_read_offsets_and_timestamps(spark, cluster, work):
    s = batch_read.run(spark, cluster, work)
    assert s == {"offsets_json": 5 + 20 + 2, "whole_topic": 60,
                 "offsets_by_timestamp": 4 + 14 + 3, "global_timestamps": 9}


def test_write_batch_and_streaming_read_back(spark, cluster, work):
    s = kafka_write.run(spark, cluster, work)
    assert s == {"batch_written": kafka_write.N, "stream_written": kafka_write.N}
