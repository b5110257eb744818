"""Parity: the compiled log/ISR core and its pure-Python twin, fed the same operations.

Every observable result is compared: return values, raised errors (type, message,
corrupt flag), the stored bytes, and the log's state after every step. These tests
need the compiled core; where it is missing they fail and say how to build it.
"""

from __future__ import annotations

import random

import crc32c as crc32c_package
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from emulator.log import isr as pure_isr
from emulator.log import pure
from wire.records import Record, build_batch, validate_batch

try:
    from emulator.log import _core
except ImportError as e:  # a test that cannot run fails and says why
    raise ImportError(
        "tests/test_log_parity.py needs the compiled emulator.log._core: run "
        "`pip install -e .` (needs a C compiler and Cython)") from e

OFFSETS = st.integers(-2, 60)
TIMES = st.integers(-5, 2_000)


def make_batch(n: int, ts: int, spread: int, size: int) -> bytes:
    recs = [Record(0, ts + (i * spread) % 7, b"k%d" % i, b"v" * size) for i in range(n)]
    return build_batch(recs, timestamp=ts)


BATCHES = st.builds(make_batch, st.integers(1, 4), TIMES, st.integers(0, 3), st.integers(0, 40))


def outcome(fn, *args, **kwargs):
    """A call's result or its error, in a form that compares across the twins."""
    try:
        return "ok", fn(*args, **kwargs)
    except Exception as e:  # noqa: BLE001 - the error itself is what we compare
        return "error", type(e).__name__, str(e), getattr(e, "corrupt", None)


def state(log) -> tuple:
    return (log.log_start_offset, log.log_end_offset, log.max_timestamp,
            log.max_timestamp_offset, log.size_bytes, log.batch_count, log.latest_epoch,
            log.epoch_entries(), log.read(-1, 1 << 40, 1 << 40), log.segment_ranges(),
            log.segments.created_ms, log.max_timestamp_batch())


class LogParity(RuleBasedStateMachine):
    """A leader log and a follower log in each twin, driven identically."""

    @initialize(start=st.integers(0, 5))
    def start(self, start: int) -> None:
        self.logs = (pure.Log(start), _core.Log(start))
        self.followers = (pure.Log(start), _core.Log(start))

    def both(self, method: str, *args, follower: bool = False, **kwargs):
        logs = self.followers if follower else self.logs
        a, b = (outcome(getattr(log, method), *args, **kwargs) for log in logs)
        assert a == b, (method, args, kwargs, a, b)
        return a

    @rule(data=BATCHES, epoch=st.integers(0, 6), append_time=st.sampled_from([-1, -1, 0, 1500]))
    def append_as_leader(self, data: bytes, epoch: int, append_time: int) -> None:
        self.both("append_as_leader", data, epoch, append_time)

    @rule(batches=st.lists(st.tuples(BATCHES, st.integers(0, 6)), min_size=1, max_size=6))
    def append_several(self, batches: list[tuple[bytes, int]]) -> None:
        for data, epoch in batches:
            self.both("append_as_leader", data, epoch)

    @rule(data=BATCHES, pos=st.integers(0, 90), byte=st.integers(0, 255),
          kind=st.sampled_from(["bytes", "bytearray", "memoryview"]),
          crc_checked=st.booleans())
    def append_damaged(self, data: bytes, pos: int, byte: int, kind: str,
                       crc_checked: bool) -> None:
        raw = bytearray(data)
        if pos < len(raw):
            raw[pos] = byte
        else:
            raw += bytes([byte])
        arg = {"bytes": bytes, "bytearray": bytearray, "memoryview": memoryview}[kind](raw)
        self.both("append_as_leader", arg, 1, -1, crc_checked)

    @rule(data=st.binary(max_size=70), crc_checked=st.booleans())
    def append_garbage(self, data: bytes, crc_checked: bool) -> None:
        self.both("append_as_leader", data, 0, -1, crc_checked)

    @rule(max_bytes=st.integers(0, 400))
    def replicate(self, max_bytes: int) -> None:
        """A follower fetch: the leader's batches_from, appended as the follower."""
        p_leader, c_leader = self.logs
        p_f, c_f = self.followers
        if p_f.log_end_offset > p_leader.log_end_offset:
            self.both("truncate_to", p_leader.log_end_offset, follower=True)
        if p_f.log_end_offset < p_leader.log_start_offset:
            self.both("truncate_fully_and_start_at", p_leader.log_start_offset, follower=True)
        got = self.both("batches_from", p_f.log_end_offset, max_bytes)
        c_got = c_leader.batches_from(c_f.log_end_offset, max_bytes)
        for (_, base, last, epoch, max_ts), c_item in zip(got[1], c_got, strict=True):
            self.both_follower_append(c_item, base, last, epoch, max_ts)

    def both_follower_append(self, c_item, base, last, epoch, max_ts) -> None:
        p_f, c_f = self.followers
        p_data = self.logs[0].batch_at(base)
        a = outcome(p_f.append_as_follower, p_data, base, last, epoch, max_ts)
        b = outcome(c_f.append_as_follower, c_item[0], base, last, epoch, max_ts)
        assert a == b

    @rule(base=OFFSETS, epoch=st.integers(0, 6), ts=TIMES)
    def follower_append_anywhere(self, base: int, epoch: int, ts: int) -> None:
        data = make_batch(1, ts, 0, 3)
        self.both("append_as_follower", data, base, base, epoch, ts, follower=True)

    @rule(offset=OFFSETS, max_bytes=st.integers(0, 500), max_offset=OFFSETS,
          min_one=st.booleans())
    def read(self, offset: int, max_bytes: int, max_offset: int, min_one: bool) -> None:
        self.both("read", offset, max_bytes, max_offset, min_one=min_one)
        joined = self.both("read_bytes", offset, max_bytes, max_offset, min_one=min_one)
        assert joined == ("ok", b"".join(self.logs[1].read(offset, max_bytes, max_offset,
                                                           min_one=min_one)))

    @rule(offset=OFFSETS, span=st.integers(0, 20), slack=st.integers(-1, 1),
          min_one=st.booleans())
    def read_exactly_to_a_batch_edge(self, offset: int, span: int, slack: int,
                                     min_one: bool) -> None:
        """max_bytes equal to whole batches (plus or minus one): the edges of the limit."""
        limit = self.logs[0].bytes_between(offset, offset + span) + slack
        self.both("read", offset, limit, 1 << 40, min_one=min_one)
        self.both("read_bytes", offset, limit, 1 << 40, min_one=min_one)
        self.both("batches_from", offset, limit)

    @rule(offset=OFFSETS, max_bytes=st.integers(0, 500))
    def batches_from(self, offset: int, max_bytes: int) -> None:
        self.both("batches_from", offset, max_bytes)

    @rule(start=OFFSETS, end=OFFSETS)
    def bytes_between(self, start: int, end: int) -> None:
        self.both("bytes_between", start, end)

    @rule(ts=TIMES)
    def offset_for_timestamp(self, ts: int) -> None:
        self.both("offset_for_timestamp", ts)

    @rule(offset=OFFSETS)
    def batch_at(self, offset: int) -> None:
        self.both("batch_at", offset)

    @rule(epoch=st.integers(-1, 8), start=OFFSETS)
    def assign_epoch(self, epoch: int, start: int) -> None:
        self.both("assign_epoch", epoch, start)

    @rule(follower=st.booleans())
    def epoch_entries(self, follower: bool) -> None:
        self.both("epoch_entries", follower=follower)

    @rule(offset=OFFSETS, follower=st.booleans())
    def truncate_to(self, offset: int, follower: bool) -> None:
        self.both("truncate_to", offset, follower=follower)

    @rule(offset=OFFSETS, follower=st.booleans())
    def truncate_fully_and_start_at(self, offset: int, follower: bool) -> None:
        self.both("truncate_fully_and_start_at", offset, follower=follower)

    @rule(offset=OFFSETS, follower=st.booleans())
    def delete_before(self, offset: int, follower: bool) -> None:
        self.both("delete_before", offset, follower=follower)

    @rule(now=st.integers(0, 3_000), retention_ms=st.integers(-1, 1_500),
          retention_bytes=st.integers(-1, 600), max_offset=st.integers(-2, 100))
    def apply_retention(self, now: int, retention_ms: int, retention_bytes: int,
                        max_offset: int) -> None:
        self.both("apply_retention", now, retention_ms, retention_bytes, max_offset)

    @rule(incoming=st.integers(0, 300), segment_bytes=st.integers(1, 600),
          segment_ms=st.integers(1, 2_000), now=TIMES, follower=st.booleans())
    def maybe_roll(self, incoming: int, segment_bytes: int, segment_ms: int, now: int,
                   follower: bool) -> None:
        self.both("maybe_roll", incoming, segment_bytes, segment_ms, now, follower=follower)

    @rule(now=TIMES, follower=st.booleans())
    def roll(self, now: int, follower: bool) -> None:
        self.both("roll", now, follower=follower)

    @rule(start=OFFSETS, end=OFFSETS, drop=st.integers(0, 3))
    def replace_batches(self, start: int, end: int, drop: int) -> None:
        """The cleaner's swap: every ``drop``-th batch of [start, end) left out."""
        for log in self.logs:
            entries = [e for e in log.batches_from(start, 1 << 40) if e[1] >= start
                       and e[2] < end]
            kept = [e for i, e in enumerate(entries) if not drop or i % (drop + 1)]
            log.replace_batches(start, end, kept)

    @invariant()
    def same_state(self) -> None:
        if not hasattr(self, "logs"):
            return
        for a, b in (self.logs, self.followers):
            assert state(a) == state(b)


TestLogParity = LogParity.TestCase
TestLogParity.settings = settings(max_examples=200, stateful_step_count=50, deadline=None)


def test_long_random_runs_agree() -> None:
    """Thousands of operations, so the compiled arrays grow, compact and drop heads."""
    for seed in range(4):
        rng = random.Random(seed)
        p, c = pure.Log(), _core.Log()
        pool = [make_batch(rng.randint(1, 5), rng.randint(0, 5000), rng.randint(0, 3),
                           rng.randint(0, 300)) for _ in range(50)]
        epoch = 0
        for step in range(4000):
            op = rng.random()
            if op < 0.7:
                if rng.random() < 0.01:
                    epoch += 1
                args = (rng.choice(pool), epoch, rng.choice([-1, -1, -1, step]))
                name = "append_as_leader"
            elif op < 0.8:
                name, args = "delete_before", (rng.randint(p.log_start_offset,
                                                           p.log_end_offset + 2),)
            elif op < 0.85:
                name, args = "truncate_to", (rng.randint(p.log_end_offset - 30,
                                                         p.log_end_offset + 1),)
            elif op < 0.9:
                name, args = "apply_retention", (step, rng.randint(-1, 3000),
                                                 rng.randint(-1, 200_000), p.log_end_offset)
            else:
                off = rng.randint(p.log_start_offset - 2, p.log_end_offset + 2)
                name, args = rng.choice([
                    ("read", (off, rng.randint(0, 5000), rng.randint(off, off + 100))),
                    ("batches_from", (off, rng.randint(0, 5000))),
                    ("bytes_between", (off, off + rng.randint(0, 100))),
                    ("offset_for_timestamp", (rng.randint(0, 5000),)),
                    ("epoch_entries", ()),
                    ("batch_at", (off,)),
                ])
            a, b = outcome(getattr(p, name), *args), outcome(getattr(c, name), *args)
            assert a == b, (seed, step, name, args)
            if step % 50 == 0:
                assert state(p) == state(c), (seed, step)
        assert state(p) == state(c)


# ---- CRC-32C -----------------------------------------------------------------------------
@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=2000), st.integers(0, 7))
def test_crc32c_matches_the_reference(data: bytes, skip: int) -> None:
    view = memoryview(data)[skip:]
    want = crc32c_package.crc32c(view)
    assert _core.crc32c(view) == want
    assert _core.crc32c_portable(view) == want


@pytest.mark.parametrize("size", [3 * 256 - 1, 3 * 256, 3 * 8192, 3 * 8192 + 13, 200_001])
def test_crc32c_long_buffers(size: int) -> None:
    data = random.Random(size).randbytes(size)
    for skip in range(3):
        want = crc32c_package.crc32c(data[skip:])
        assert _core.crc32c(data[skip:]) == want == _core.crc32c_portable(data[skip:])


# ---- ISR bookkeeping -----------------------------------------------------------------------
def states(twin):
    return st.dictionaries(
        st.integers(0, 5),
        st.builds(twin.FollowerState, st.integers(0, 50), st.integers(0, 1000),
                  st.integers(0, 50), st.integers(0, 1000)),
        max_size=5,
    )


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_isr_functions_agree(data) -> None:
    raw = data.draw(st.dictionaries(st.integers(0, 5), st.tuples(
        st.integers(0, 50), st.integers(0, 1000), st.integers(0, 50), st.integers(0, 1000)),
        max_size=5))
    py = {b: pure_isr.FollowerState(*v) for b, v in raw.items()}
    cy = {b: _core.FollowerState(*v) for b, v in raw.items()}
    isr = data.draw(st.lists(st.integers(0, 5), max_size=5, unique=True))
    replicas = data.draw(st.lists(st.integers(0, 5), max_size=5, unique=True))
    leader = data.draw(st.integers(-1, 5))
    leo = data.draw(st.integers(0, 60))
    now, lag = data.draw(st.integers(0, 2000)), data.draw(st.integers(0, 1000))
    assert pure_isr.isr_high_watermark(leader, leo, isr, py) == _core.isr_high_watermark(
        leader, leo, isr, cy)
    assert pure_isr.out_of_sync_replicas(leader, isr, py, now, lag) == \
        _core.out_of_sync_replicas(leader, isr, cy, now, lag)
    hw, start = data.draw(st.integers(0, 60)), data.draw(st.integers(0, 60))
    for b in range(6):
        assert pure_isr.can_join_isr(b, py.get(b), isr, replicas, hw, start) == \
            _core.can_join_isr(b, cy.get(b), isr, replicas, hw, start)
    for b in raw:
        fetch = data.draw(st.integers(0, 60))
        pure_isr.update_fetch_state(py[b], fetch, leo, now)
        _core.update_fetch_state(cy[b], fetch, leo, now)
        assert repr(py[b]) == repr(cy[b])
        assert (py[b] == pure_isr.FollowerState(*raw[b])) == (
            cy[b] == _core.FollowerState(*raw[b]))


def test_replace_keeps_batches_below_offset_zero() -> None:
    """A log restarted at a negative offset keeps its batches through a cleaner swap
    that does not cover them (hypothesis found the twins differing here: the rebuild
    path listed batches from offset -1 and dropped the one at -2)."""
    logs = (pure.Log(0), _core.Log(0))
    for log in logs:
        log.truncate_fully_and_start_at(-2)
        log.append_as_leader(make_batch(1, 0, 0, 1), 0)
        log.replace_batches(0, 0, [])
    assert state(logs[0]) == state(logs[1])
    assert logs[0].batch_count == 1


def _mangled(batch: bytes, where: int, value: int, cut: int) -> bytes:
    """``batch`` with one byte set (length, magic, CRC, count...) and maybe cut short."""
    b = bytearray(batch)
    if where >= 0:
        b[where % len(b)] = value
    return bytes(b[:cut]) if cut >= 0 else bytes(b)


@given(BATCHES, st.integers(-1, 80), st.integers(0, 255), st.integers(-1, 80))
@settings(max_examples=300, deadline=None)
def test_validate_batch_agrees(batch: bytes, where: int, value: int, cut: int) -> None:
    """The compiled header check (the produce validator's first step) returns the same
    BatchHeader as wire.records.validate_batch, or raises the same error."""
    data = _mangled(batch, where, value, cut)
    assert outcome(_core.validate_batch, data) == outcome(validate_batch, data)
    assert outcome(_core.validate_batch, memoryview(data)) == outcome(validate_batch, data)
