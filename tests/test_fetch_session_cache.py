"""The fetch session cache and contexts (KIP-227) on a manual clock."""

from __future__ import annotations

import random

from emulator.cluster.fetch_sessions import (
    FetchSessionCache,
    finish,
    new_context,
    next_epoch,
)
from wire.errors import ErrorCode as E

TID = b"\x01" * 16


def _req(session_id: int, epoch: int, parts: list[int], forgotten: list[int] = (),
         version: int = 13) -> dict:
    topic = {"topic": "t", "topic_id": TID, "partitions": [
        {"partition": i, "fetch_offset": 0, "partition_max_bytes": 100,
         "current_leader_epoch": -1, "last_fetched_epoch": -1, "log_start_offset": -1}
        for i in parts]}
    return {"session_id": session_id, "session_epoch": epoch, "topics": [topic] if parts else [],
            "forgotten_topics_data": [{"topic": "t", "topic_id": TID, "partitions": list(forgotten)}]
            if forgotten else []}


def _answer(hw: int = 0, records: bytes = b"", error: int = 0) -> dict:
    return {"high_watermark": hw, "log_start_offset": 0, "records": records,
            "error_code": error}


def _open(cache: FetchSessionCache, parts: list[int], now: int = 0, version: int = 13) -> int:
    fc = new_context(cache, _req(0, 0, parts, version=version), version, now, {TID: "t"})
    sid, _ = finish(cache, fc, [_answer() for _ in fc.partitions], now, False, version >= 13)
    return sid


def test_next_epoch_wraps_to_one() -> None:
    assert next_epoch(0) == 1 and next_epoch(5) == 6 and next_epoch(0x7FFFFFFF) == 1
    assert next_epoch(-1) == -1


def test_stale_session_is_evicted_first_even_if_bigger() -> None:
    cache = FetchSessionCache(1, eviction_ms=1000, rng=random.Random(1))
    old = _open(cache, [0, 1, 2], now=0)
    assert _open(cache, [0], now=500) == 0  # not stale yet, and smaller
    new = _open(cache, [0], now=1001)  # stale now
    assert new and cache.get(old) is None and cache.get(new) is not None
    assert cache.evictions == 1


def test_touch_keeps_a_session_fresh() -> None:
    cache = FetchSessionCache(1, eviction_ms=1000, rng=random.Random(1))
    sid = _open(cache, [0, 1], now=0)
    fc = new_context(cache, _req(sid, 1, []), 13, 900, {TID: "t"})
    assert fc.kind == "incremental"
    assert _open(cache, [0], now=1500) == 0  # used at 900: not stale at 1500


def test_incremental_answers_only_news_and_rotates() -> None:
    cache = FetchSessionCache(10, 1000, random.Random(2))
    sid = _open(cache, [0, 1, 2])
    cache.watch.note([("t", 0), ("t", 1), ("t", 2)])  # the cluster changed all three
    fc = new_context(cache, _req(sid, 1, []), 13, 1, {TID: "t"})
    assert [cp.partition for cp in fc.select(None, 0)] == [0, 1, 2]
    answers = [_answer(), _answer(hw=3, records=b"abc"), _answer(error=E.NOT_LEADER_OR_FOLLOWER)]
    _, sent = finish(cache, fc, answers, 1, False, True)
    assert [cp.partition for cp, _ in sent] == [1, 2]
    # answered partitions moved to the back: 0 is read first next time
    assert [cp.partition for cp in cache.get(sid).partitions.values()] == [0, 1, 2]
    fc = new_context(cache, _req(sid, 2, []), 13, 2, {TID: "t"})
    # read again: 1 answered records (the client may not have moved), 2 an error; 0 is
    # quiet (nothing at its fetch offset, nothing changed) and is not read
    assert [cp.partition for cp in fc.select(None, 0)] == [1, 2]
    _, sent = finish(cache, fc, [_answer(hw=3), _answer()], 2, False, True)
    # the errored partition answers again once its error is gone (its HW was reset)
    assert [cp.partition for cp, _ in sent] == [2]


def test_an_idle_session_reads_only_what_changed() -> None:
    cache = FetchSessionCache(10, 1000, random.Random(7))
    sid = _open(cache, list(range(1000)))
    session = cache.get(sid)
    epoch = 1

    def fetch(parts: list[int] = (), params: object = None) -> list[int]:
        nonlocal epoch
        fc = new_context(cache, _req(sid, epoch, list(parts)), 13, epoch, {TID: "t"})
        epoch += 1
        read = fc.select(params, 0)
        finish(cache, fc, [_answer() for _ in read], epoch, False, True)
        return [cp.partition for cp in read]

    assert fetch() == [] and fetch() == []
    # a change to partitions of the session marks them (and wakes the session's
    # long-polling fetch); other keys (other topics, groups) concern nobody
    assert cache.watch.note([("t", 7), ("u", 7), ("group", "g"), ("t", 3)]) \
        == {session.wake_key}
    assert fetch() == [3, 7] and fetch() == []
    assert fetch([500]) == [500]  # a partition the request names is read
    # a change naming no partition: every partition once, then quiet again
    cache.watch.note(None)
    assert len(fetch()) == 1000 and fetch() == []
    # new read parameters (isolation level, the topics denied...): every partition once
    assert len(fetch(params=("other",))) == 1000 and fetch(params=("other",)) == []
    assert session.visits == 2 + 1 + 2000


def test_unread_records_stay_pending_until_read() -> None:
    cache = FetchSessionCache(10, 1000, random.Random(8))
    fc = new_context(cache, _req(0, 0, [0, 1]), 13, 0, {TID: "t"})
    fc.select(None, 0)
    # partition 1 has records below the HW the response had no room for
    sid, _ = finish(cache, fc, [_answer(hw=0), _answer(hw=5)], 0, False, True)
    fc = new_context(cache, _req(sid, 1, []), 13, 1, {TID: "t"})
    assert [cp.partition for cp in fc.select(None, 0)] == [1]
    finish(cache, fc, [_answer(hw=5, records=b"r")], 1, False, True)
    fc = new_context(cache, _req(sid, 2, []), 13, 2, {TID: "t"})
    assert [cp.partition for cp in fc.select(None, 0)] == [1]  # answered records


def test_sessions_leave_the_watch_when_forgotten_evicted_or_closed() -> None:
    cache = FetchSessionCache(1, eviction_ms=10, rng=random.Random(9))
    sid = _open(cache, [0, 1, 2])
    assert set(cache.watch.holders) == {("t", 0), ("t", 1), ("t", 2)}
    new_context(cache, _req(sid, 1, [], forgotten=[1]), 13, 0, {TID: "t"})
    assert set(cache.watch.holders) == {("t", 0), ("t", 2)}
    assert cache.watch.note([("t", 1)]) == set()
    assert _open(cache, [5], now=100)  # evicts the stale session
    assert set(cache.watch.holders) == {("t", 5)}
    sid = next(iter(cache.sessions))
    new_context(cache, _req(sid, 0, [5]), 13, 200, {TID: "t"})  # epoch 0: closes it
    assert cache.watch.holders == {}


def test_session_errors() -> None:
    cache = FetchSessionCache(10, 1000, random.Random(3))
    sid = _open(cache, [0])
    assert new_context(cache, _req(sid + 1, 1, []), 13, 0, {}).error == E.FETCH_SESSION_ID_NOT_FOUND
    assert new_context(cache, _req(sid, 2, []), 13, 0, {}).error == E.INVALID_FETCH_SESSION_EPOCH
    # a session opened with topic ids cannot continue with names (v12)
    assert new_context(cache, _req(sid, 1, [], version=12), 12, 0, {}).error \
        == E.FETCH_SESSION_TOPIC_ID_ERROR
    # a rejected request does not move the epoch
    assert new_context(cache, _req(sid, 1, []), 13, 0, {}).kind == "incremental"


def test_forgetting_every_partition_closes_the_session() -> None:
    cache = FetchSessionCache(10, 1000, random.Random(4))
    sid = _open(cache, [0, 1])
    fc = new_context(cache, _req(sid, 1, [], forgotten=[0, 1]), 13, 0, {TID: "t"})
    assert fc.kind == "sessionless" and cache.get(sid) is None


def test_privileged_sessions_evict_consumers_but_not_the_reverse() -> None:
    cache = FetchSessionCache(1, 10**9, random.Random(5))
    fc = new_context(cache, _req(0, 0, [0]), 13, 0, {TID: "t"})
    follower, _ = finish(cache, fc, [_answer()], 0, True, True)
    assert follower and _open(cache, [0, 1, 2, 3]) == 0  # a consumer cannot evict it
    cache2 = FetchSessionCache(1, 10**9, random.Random(6))
    consumer = _open(cache2, [0, 1, 2, 3])
    fc = new_context(cache2, _req(0, 0, [0]), 13, 0, {TID: "t"})
    sid, _ = finish(cache2, fc, [_answer()], 0, True, True)
    assert sid and cache2.get(consumer) is None
