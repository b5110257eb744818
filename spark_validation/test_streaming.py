"""Structured streaming from the emulator: subscribe, subscribePattern, assign,
starting offsets, maxOffsetsPerTrigger, headers, triggers, checkpoint restarts."""

from __future__ import annotations

from spark_validation.jobs import stream_assign_headers, stream_pattern_latest, stream_subscribe


def test_subscribe_max_offsets_restart_exactly_once(spark, cluster, work):
    s = stream_subscribe.run(spark, cluster, work)
    assert s["records"] == 150
    assert s["run1_batches"] >= 1 and s["run2_batches"] >= 1


def test_subscribe_pattern_latest_processing_time(spark, cluster, work):
    s = stream_pattern_latest.run(spark, cluster, work)
    assert s["skipped_before_start"] == 0


def test_assign_json_offsets_headers_available_now(spark, cluster, work):
    stream_assign_headers.run(spark, cluster, work)
