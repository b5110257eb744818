"""Segments and the log cleaner on a manual clock: rolling, dirty ratio, compaction lag
bounds, tombstones and their delete horizon, transactions and markers, compressed
batches, headers, followers; and a property: the compacted log holds exactly the latest
record per key at its original offset, and no key whose tombstone has expired."""

from __future__ import annotations

import pytest
from cluster_sim import new_cluster
from hypothesis import given, settings
from hypothesis import strategies as st

from emulator.cluster.clock import ManualClock
from emulator.cluster.compaction import LogCleaner
from emulator.cluster.state import ClusterState
from emulator.log import Log
from emulator.log.cleaner import CleanerConfig, clean, cleanable_range
from wire.errors import ErrorCode as E
from wire.records import (
    DELETE_HORIZON_BIT,
    GZIP,
    LZ4,
    SNAPPY,
    ZSTD,
    Record,
    build_batch,
    decode_records,
    read_header,
    rebuild_batch,
)

T0 = 1_700_000_000_000
DAY = 86_400_000


def kv(key: str | None, value: str | None, ts: int = T0,
       headers: list | None = None) -> bytes:
    r = Record(0, ts, None if key is None else key.encode(),
               None if value is None else value.encode(), headers or [])
    return build_batch([r], timestamp=ts)


def records(log: Log) -> list[tuple[int, bytes | None, bytes | None]]:
    return [(r.offset, r.key, r.value) for b in log.read(-1, 1 << 40, 1 << 40)
            for r in decode_records(b)]


def filled(pairs: list[tuple[str | None, str | None]], segment_every: int = 2) -> Log:
    log = Log()
    for i, (k, v) in enumerate(pairs):
        if i and i % segment_every == 0:
            log.roll(T0)
        log.append_as_leader(kv(k, v), 0)
    return log


def clean_log(log: Log, now: int = T0, cfg: CleanerConfig | None = None,
              first_dirty: int = 0, aborted: list | None = None) -> tuple[int, object]:
    cfg = cfg or CleanerConfig(min_cleanable_dirty_ratio=0.0)
    rng = cleanable_range(log, first_dirty, log.log_end_offset, now, cfg)
    entries = [e for e in log.batches_from(-1, 1 << 40) if e[2] < rng.end]
    res = clean(entries, rng.first_dirty, rng.end, aborted or [], now, cfg)
    log.replace_batches(res.start, res.end, res.batches)
    return rng.end, res


# ---- segments ----------------------------------------------------------------------
def test_segment_bytes_and_segment_ms_roll_the_active_segment() -> None:
    log = Log()
    size = len(kv("a", "1"))
    for i in range(5):
        log.maybe_roll(size, 2 * size, 10_000, T0 + i)
        log.append_as_leader(kv("a", str(i)), 0)
    assert [b for b, _ in log.segment_ranges()] == [0, 2, 4]
    assert log.maybe_roll(size, 1 << 30, 10_000, T0 + 10_004) is True  # segment.ms
    assert log.segment_ranges()[-1] == (5, 5)
    assert log.maybe_roll(size, 1, 1, T0 + 20_000) is False  # empty: never rolled


def test_truncation_and_deletion_drop_segments() -> None:
    log = filled([("a", "1")] * 6)
    assert [b for b, _ in log.segment_ranges()] == [0, 2, 4]
    log.truncate_to(3)
    assert [b for b, _ in log.segment_ranges()] == [0, 2]
    log.delete_before(2)
    assert log.segment_ranges() == [(2, 3)]


# ---- the pass ------------------------------------------------------------------------
def test_latest_value_per_key_at_its_offset_and_the_active_segment_is_left_alone() -> None:
    log = filled([("a", "1"), ("b", "1"), ("a", "2"), ("c", "1"), ("a", "3"), ("b", "2"),
                  ("a", "4")])
    end, res = clean_log(log)
    assert end == 6  # the active segment [6, 7) is never cleaned
    assert records(log) == [(3, b"c", b"1"), (4, b"a", b"3"), (5, b"b", b"2"),
                            (6, b"a", b"4")]
    assert res.records_removed == 3
    assert log.log_end_offset == 7 and log.log_start_offset == 0


def test_kept_batches_are_the_same_bytes() -> None:
    log = filled([("a", "1"), ("b", "1"), ("c", "1"), ("d", "1")])
    before = log.read(-1, 1 << 40, 1 << 40)
    clean_log(log)
    after = log.read(-1, 1 << 40, 1 << 40)
    assert all(x is y for x, y in zip(before, after, strict=True))


def test_dirty_ratio_decides() -> None:
    log = filled([("a", "1"), ("b", "1"), ("a", "2"), ("b", "2"), ("x", "x")])
    cfg = CleanerConfig(min_cleanable_dirty_ratio=0.5)
    rng = cleanable_range(log, 0, log.log_end_offset, T0, cfg)
    assert rng.ratio == 1.0 and rng.needs_cleaning(cfg)
    end, _ = clean_log(log, cfg=cfg)
    # everything below 4 is now clean; nothing new is dirty
    rng = cleanable_range(log, end, log.log_end_offset, T0, cfg)
    assert rng.dirty_bytes == 0 and not rng.needs_cleaning(cfg)
    for k in ("c",):
        log.roll(T0)
        log.append_as_leader(kv(k, "1"), 0)
    log.roll(T0)
    rng = cleanable_range(log, end, log.log_end_offset, T0, cfg)
    assert 0 < rng.ratio <= 0.5 and not rng.needs_cleaning(cfg)


def test_min_compaction_lag_keeps_young_segments_dirty() -> None:
    log = Log()
    for i, ts in enumerate((T0, T0, T0 + 50_000, T0 + 50_000)):
        if i == 2:
            log.roll()
        log.append_as_leader(kv("a", str(i), ts), 0)
    log.roll()
    cfg = CleanerConfig(min_compaction_lag_ms=60_000, min_cleanable_dirty_ratio=0.0)
    assert cleanable_range(log, 0, 99, T0 + 70_000, cfg).end == 2
    assert cleanable_range(log, 0, 99, T0 + 120_000, cfg).end == 4


def test_max_compaction_lag_forces_a_clean_below_the_ratio() -> None:
    log = filled([("a", "1"), ("b", "1"), ("c", "1")])
    log.roll()
    cfg = CleanerConfig(max_compaction_lag_ms=1_000, min_cleanable_dirty_ratio=0.99)
    clean_log(log, cfg=cfg)
    rng = cleanable_range(log, 2, 99, T0 + 500, cfg)
    assert not rng.must_clean
    rng = cleanable_range(log, 2, 99, T0 + 5_000, cfg)
    assert rng.must_clean and rng.needs_cleaning(cfg)


def test_cleaning_stops_below_the_last_stable_offset() -> None:
    log = filled([("a", "1")] * 6)
    cfg = CleanerConfig(min_cleanable_dirty_ratio=0.0)
    assert cleanable_range(log, 0, 3, T0, cfg).end == 2


def test_tombstones_kept_for_delete_retention_then_removed() -> None:
    log = filled([("a", "1"), ("b", "1"), ("a", None), ("c", "1")])
    log.roll()
    cfg = CleanerConfig(delete_retention_ms=DAY, min_cleanable_dirty_ratio=0.0)
    clean_log(log, now=T0, cfg=cfg)
    assert records(log) == [(1, b"b", b"1"), (2, b"a", None), (3, b"c", b"1")]
    stamped = log.batch_at(2)
    h = read_header(stamped)
    assert h.attributes & DELETE_HORIZON_BIT and h.base_timestamp == T0 + DAY
    assert decode_records(stamped)[0].timestamp == T0  # the record's own time stays
    clean_log(log, now=T0 + DAY - 1, cfg=cfg)
    assert (2, b"a", None) in records(log)
    clean_log(log, now=T0 + DAY, cfg=cfg)
    assert records(log) == [(1, b"b", b"1"), (3, b"c", b"1")]


def test_keyless_records_are_dropped() -> None:
    log = filled([(None, "x"), ("a", "1"), ("b", "1")])
    clean_log(log)
    assert [r[1] for r in records(log)] == [b"a", b"b"]


@pytest.mark.parametrize("codec", [GZIP, SNAPPY, LZ4, ZSTD])
def test_compressed_batches_are_rewritten_with_their_codec_and_headers(codec: int) -> None:
    recs = [Record(i, T0 + i, b"k%d" % (i % 3), b"v%d" % i, [("h", b"%d" % i)])
            for i in range(9)]
    plain = build_batch(recs, timestamp=T0)
    h = read_header(plain)
    compressed = rebuild_batch(h, decode_records(plain), attributes=codec,
                               base_timestamp=T0, max_timestamp=h.max_timestamp)
    log = Log()
    log.append_as_leader(compressed, 3)
    log.roll()
    log.append_as_leader(kv("z", "z"), 3)
    clean_log(log)
    out = log.batch_at(0)
    oh = read_header(out)
    assert oh.compression == codec and oh.base_offset == 0 and oh.last_offset_delta == 8
    assert oh.partition_leader_epoch == 3
    got = decode_records(out)
    assert [(r.offset, r.key, r.value, r.headers, r.timestamp) for r in got] == [
        (i, b"k%d" % (i % 3), b"v%d" % i, [("h", b"%d" % i)], T0 + i) for i in (6, 7, 8)]


def _txn(pid: int, key: str, value: str) -> bytes:
    return build_batch([(key.encode(), value.encode())], producer_id=pid, producer_epoch=0,
                       base_sequence=0, transactional=True, timestamp=T0)


def _marker(pid: int, commit: bool) -> bytes:
    from wire.records import control_batch

    return control_batch(commit, pid, 0, T0)


def test_aborted_transactions_go_markers_stay_until_their_horizon() -> None:
    log = Log()
    log.append_as_leader(_txn(7, "a", "aborted"), 0)   # 0
    log.append_as_leader(_marker(7, False), 0)         # 1: ABORT
    log.append_as_leader(_txn(8, "a", "committed"), 0)  # 2
    log.append_as_leader(_marker(8, True), 0)          # 3: COMMIT
    log.append_as_leader(kv("b", "1"), 0)              # 4
    log.roll()
    log.append_as_leader(kv("z", "z"), 0)
    cfg = CleanerConfig(delete_retention_ms=1_000, min_cleanable_dirty_ratio=0.0)
    aborted = [(7, 0, 1)]
    clean_log(log, cfg=cfg, aborted=aborted)
    offsets = [e[1] for e in log.batches_from(-1, 1 << 40)]
    assert offsets == [1, 2, 3, 4, 5]  # aborted data gone, both markers kept (horizon)
    assert all(read_header(log.batch_at(o)).attributes & DELETE_HORIZON_BIT for o in (1, 3))
    clean_log(log, now=T0 + 2_000, cfg=cfg, aborted=aborted)
    offsets = [e[1] for e in log.batches_from(-1, 1 << 40)]
    # the abort marker had no data left: removed; the commit's data is still there
    assert offsets == [2, 3, 4, 5]


# ---- in the cluster --------------------------------------------------------------------
def cluster(**configs: str) -> tuple[ClusterState, ManualClock]:
    clock = ManualClock(T0)
    st_ = new_cluster(3, clock).state
    st_.create_topic("c", 1, 3, configs={"cleanup.policy": "compact", "internal.segment.bytes": "200",
                                         "min.cleanable.dirty.ratio": "0.01", **configs})
    return st_, clock


def produce(st_: ClusterState, key: str, value: str | None) -> int:
    p = st_.get_partition("c", 0)
    r = st_.append(p.leader, "c", 0, kv(key, value, st_.now()), -1)
    assert r.error == E.NONE, r
    st_.tick()
    return r.base_offset


def test_cluster_cleans_and_followers_hold_the_same_log() -> None:
    st_, clock = cluster()
    for i in range(30):
        produce(st_, f"k{i % 3}", str(i))
    p = st_.get_partition("c", 0)
    assert len(p.leader_log.segment_ranges()) > 3
    assert [s for s, _ in p.logs[2].segment_ranges()] == \
        [s for s, _ in p.leader_log.segment_ranges()]
    before = p.leader_log.size_bytes
    while st_.run_cleaner() is not None:
        pass
    assert p.leader_log.size_bytes < before
    leader = p.leader_log.read(-1, 1 << 40, 1 << 40)
    for b, log in p.logs.items():
        assert log.read(-1, 1 << 40, 1 << 40) == leader, b
    keys = [r.key for b in leader for r in decode_records(b)]
    active = p.leader_log.segments.active_base
    assert len([k for b in p.leader_log.read(-1, 1 << 40, active) for k in
                [r.key for r in decode_records(b)]]) <= 3 + 3  # one per key, per section
    assert set(keys) == {b"k0", b"k1", b"k2"}
    assert st_.cleaner.stats.passes >= 1 and st_.cleaner.stats.records_removed > 0


def test_a_reassignment_target_copies_the_compacted_log() -> None:
    st_, clock = cluster()
    st_.create_topic("d", 1, 1)  # unrelated
    for i in range(20):
        produce(st_, f"k{i % 2}", str(i))
    while st_.run_cleaner() is not None:
        pass
    p = st_.get_partition("c", 0)
    old = p.replicas[-1]
    p.delete_replica(old)
    p.replicas[-1] = old
    p.add_replica(old)  # an empty replica, as a reassignment target starts
    p.isr = [b for b in p.isr if b != old]
    for _ in range(50):
        st_.tick()
    assert p.logs[old].read(-1, 1 << 40, 1 << 40) == p.leader_log.read(-1, 1 << 40, 1 << 40)


def test_compact_only_topics_are_not_retained_by_time() -> None:
    st_, clock = cluster(**{"retention.ms": "1000"})
    for i in range(10):
        produce(st_, f"k{i}", "v")
    clock.advance(10_000)
    st_.apply_retention()
    assert st_.get_partition("c", 0).log_start_offset == 0


def test_compact_delete_also_applies_retention() -> None:
    st_, clock = cluster(**{"retention.ms": "1000", "cleanup.policy": "compact,delete"})
    for i in range(10):
        produce(st_, f"k{i}", "v")
    clock.advance(10_000)
    st_.apply_retention()
    assert st_.get_partition("c", 0).log_start_offset > 0


def test_nothing_to_do_on_delete_topics() -> None:
    clock = ManualClock(T0)
    st_ = new_cluster(1, clock).state
    st_.create_topic("plain", 1, 1, configs={"internal.segment.bytes": "100"})
    for i in range(10):
        st_.append(1, "plain", 0, kv("a", str(i)), 1)
    assert LogCleaner(st_).run() is None


# ---- the property ----------------------------------------------------------------------
OPS = st.lists(st.tuples(st.sampled_from(["a", "b", "c", "d", "e"]),
                         st.one_of(st.none(), st.text("xyz", min_size=1, max_size=3)),
                         st.booleans(),  # roll before this record
                         st.integers(0, 3)),  # clean this many times after it
               min_size=1, max_size=60)


@settings(max_examples=150, deadline=None)
@given(ops=OPS, retention=st.integers(0, 40))
def test_compacted_log_is_the_latest_value_per_key(ops, retention: int) -> None:
    """For any sequence: below the cleaned point the log holds exactly each key's
    latest record at its original offset, except tombstones past their horizon;
    above it, everything as written."""
    log = Log()
    cfg = CleanerConfig(delete_retention_ms=retention, min_cleanable_dirty_ratio=0.0)
    now = T0
    cleaned_to = 0
    written: list[tuple[int, bytes, bytes | None]] = []
    first_seen: dict[int, int] = {}  # tombstone offset -> time of the first pass over it
    expired: set[int] = set()
    for key, value, roll, cleans in ops:
        if roll:
            log.roll(now)
        off, _, _ = log.append_as_leader(kv(key, value, now), 0)
        written.append((off, key.encode(), None if value is None else value.encode()))
        for _ in range(cleans):
            now += 7
            cleaned_to, _ = clean_log(log, now=now, cfg=cfg, first_dirty=cleaned_to)
            for o, _k, v in written:
                if v is None and o < cleaned_to:
                    if o not in first_seen:
                        first_seen[o] = now
                    elif now >= first_seen[o] + retention:
                        expired.add(o)
    latest = {k: o for o, k, _ in written if o < cleaned_to}
    expect = [(o, k, v) for o, k, v in written
              if o >= cleaned_to or (latest[k] == o and o not in expired)]
    assert records(log) == expect
    assert log.log_end_offset == len(written)


def test_a_partition_the_cleaner_cannot_read_is_marked_uncleanable() -> None:
    st_, clock = cluster()
    for i in range(12):
        produce(st_, f"k{i % 2}", str(i))
    p = st_.get_partition("c", 0)
    h = read_header(p.leader_log.batch_at(0))
    bad = bytearray(p.leader_log.batch_at(0))
    bad[22] = (bad[22] & 0xF8) | 7  # compression codec 7: unreadable
    entries = p.leader_log.batches_from(-1, 1 << 40)
    p.leader_log.replace_batches(0, 1, [(bytes(bad), 0, h.last_offset, 0, entries[0][4])])
    with pytest.raises(Exception, match="compression|codec"):
        while st_.cleaner.step():
            pass
    st_.cleaner.mark_uncleanable()
    assert (p.topic_id, 0) in st_.cleaner.stats.uncleanable_partitions
    assert st_.cleaner.step() is False  # left alone from now on
