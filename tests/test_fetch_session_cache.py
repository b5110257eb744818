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
    fc = new_context(cache, _req(sid, 1, []), 13, 1, {TID: "t"})
    answers = [_answer(), _answer(hw=3, records=b"abc"), _answer(error=E.NOT_LEADER_OR_FOLLOWER)]
    _, sent = finish(cache, fc, answers, 1, False, True)
    assert [cp.partition for cp, _ in sent] == [1, 2]
    # answered partitions moved to the back: 0 is read first next time
    assert [cp.partition for cp in cache.get(sid).partitions.values()] == [0, 1, 2]
    fc = new_context(cache, _req(sid, 2, []), 13, 2, {TID: "t"})
    _, sent = finish(cache, fc, [_answer(), _answer(hw=3), _answer()], 2, False, True)
    # the errored partition answers again once its error is gone (its HW was reset)
    assert [cp.partition for cp, _ in sent] == [2]


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
