"""An incremental fetch costs what changed, not the size of its session (docs/scale.md,
"Incremental fetches"): counted as partition reads of the Fetch handler, not timed.

A caught-up consumer of 1,000 partitions sends empty incremental fetches while it waits
(librdkafka, the Java consumer): each must read no partition. Records on 10 of them: 10
reads. Every answer is still Kafka's (the partitions with records, a new high watermark
or log start offset answer; the others are left out), and a long-polling fetch waits on
its session, woken by its partitions' changes only.
"""

from __future__ import annotations

import asyncio
import random

import pytest
from cluster_sim import new_cluster

from emulator.cluster.state import ClusterState
from emulator.handlers import api_001_fetch
from emulator.handlers.base import Delayed, RequestContext
from emulator.server.app import EmulatorServer
from emulator.services import build_services
from wire.records import build_batch

TOPICS, PER_TOPIC = 10, 100
# Built at import, before conftest.py dates the batches for the manual clock.
BATCH = build_batch([(None, b"v" * 10)], timestamp=0)


class Reads:
    """Counts the Fetch handler's partition reads."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.n = 0
        real = api_001_fetch._read_partition

        def counted(*a, **k):  # type: ignore[no-untyped-def]
            self.n += 1
            return real(*a, **k)

        monkeypatch.setattr(api_001_fetch, "_read_partition", counted)

    def take(self) -> int:
        n, self.n = self.n, 0
        return n


class Consumer:
    """One fetch session over the handler (Fetch v12: topics by name)."""

    def __init__(self, s: ClusterState, isolation: int = 0) -> None:
        self.s = s
        self.services = build_services(s)
        self.isolation = isolation
        self.session_id, self.epoch = 0, 0

    def request(self, parts: dict[tuple[str, int], int], max_wait_ms: int = 0) -> dict:
        topics: dict[str, list[dict]] = {}
        for (name, idx), off in parts.items():
            topics.setdefault(name, []).append(
                {"partition": idx, "current_leader_epoch": -1, "fetch_offset": off,
                 "last_fetched_epoch": -1, "log_start_offset": -1,
                 "partition_max_bytes": 1 << 20})
        req = {"replica_id": -1, "max_wait_ms": max_wait_ms, "min_bytes": 1,
               "max_bytes": 50 << 20, "isolation_level": self.isolation,
               "session_id": self.session_id, "session_epoch": self.epoch,
               "topics": [{"topic": n, "partitions": ps} for n, ps in topics.items()],
               "forgotten_topics_data": [], "rack_id": ""}
        self.epoch += 1
        return req

    def ctx(self) -> RequestContext:
        return RequestContext(self.s, 1, 1, 12, self.epoch, "c", services=self.services)

    def answered(self, resp: dict) -> dict[tuple[str, int], dict]:
        assert resp["error_code"] == 0, resp
        if self.session_id == 0:
            self.session_id = resp["session_id"]
        assert resp["session_id"] == self.session_id
        return {(t["topic"], p["partition_index"]): p
                for t in resp["responses"] for p in t["partitions"]}

    def fetch(self, parts: dict[tuple[str, int], int] | None = None) -> dict:
        resp = api_001_fetch.handle(self.ctx(), self.request(parts or {}), 12)
        assert isinstance(resp, dict)
        return self.answered(resp)


def cluster() -> tuple[ClusterState, list[tuple[str, int]]]:
    s = new_cluster(1).state
    for t in range(TOPICS):
        s.create_topic(f"t{t}", PER_TOPIC, 1)
    s.tick()
    parts = [(f"t{t}", i) for t in range(TOPICS) for i in range(PER_TOPIC)]
    for name, idx in parts:
        s.append(1, name, idx, BATCH, 1)
    s.tick()
    return s, parts


def caught_up(s: ClusterState, parts: list[tuple[str, int]], isolation: int = 0) -> Consumer:
    c = Consumer(s, isolation)
    full = c.fetch({tp: 1 for tp in parts})
    assert len(full) == len(parts) and not any(p["records"] for p in full.values())
    return c


def test_idle_incremental_fetches_read_no_partition(monkeypatch: pytest.MonkeyPatch) -> None:
    s, parts = cluster()
    c = caught_up(s, parts)
    reads = Reads(monkeypatch)
    for _ in range(20):
        assert c.fetch() == {}
    assert reads.take() == 0
    session = c.services.fetch_sessions.cache(1).get(c.session_id)
    assert session is not None and session.visits == 0
    # records on 10 partitions: those 10 are read and answer
    news = parts[5::100]
    for tp in news:
        s.append(1, *tp, BATCH, 1)
    got = c.fetch()
    assert set(got) == set(news) and all(p["records"] and p["high_watermark"] == 2
                                         for p in got.values())
    assert reads.take() == 10
    # the client moves to offset 2 on those: read again (new positions), nothing to say
    assert c.fetch(dict.fromkeys(news, 2)) == {} and reads.take() == 10
    assert c.fetch() == {} and reads.take() == 0
    # the log start offset of an idle partition moves (DeleteRecords): it answers
    s.delete_records("t3", 7, 1)
    got = c.fetch()
    assert list(got) == [("t3", 7)] and got[("t3", 7)]["log_start_offset"] == 1 \
        and not got[("t3", 7)]["records"]
    assert reads.take() == 1
    # a change naming no partition (a broker, a fault, a config): every partition once
    s.changed()
    assert c.fetch() == {} and reads.take() == len(parts)
    assert c.fetch() == {} and reads.take() == 0


def test_a_partition_with_records_left_unread_is_read_again(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A response bounded by max_bytes leaves partitions with records behind: they are
    read on the next fetch, in the session's order (answered partitions go last)."""
    s, parts = cluster()
    c = caught_up(s, parts)
    reads = Reads(monkeypatch)
    news = [parts[1], parts[2], parts[3]]
    for tp in news:
        s.append(1, *tp, BATCH, 1)
    req = c.request({})
    req["max_bytes"] = 1  # the first batch comes whole (KIP-74), the others wait
    resp = api_001_fetch.handle(c.ctx(), req, 12)
    assert isinstance(resp, dict)
    got = c.answered(resp)
    # all three answer their new HW, only the first its records
    assert [tp for tp, p in got.items() if p["records"]] == [parts[1]]
    assert set(got) == set(news) and reads.take() == 3
    got = c.fetch({parts[1]: 2})
    assert [tp for tp, p in got.items() if p["records"]] == [parts[2], parts[3]]
    assert reads.take() == 3


def test_read_committed_answers_a_new_high_watermark_without_records(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """An open transaction's records move the HW but not the LSO: a read_committed
    session answers the new HW (Kafka's maybeUpdateResponseData), no records, then nothing
    until the LSO moves."""
    s, parts = cluster()
    c = caught_up(s, parts, isolation=1)
    reads = Reads(monkeypatch)
    p = s.get_partition("t4", 4)
    txn = build_batch([(None, b"t")], producer_id=77, producer_epoch=0, base_sequence=0,
                      transactional=True)
    s.append(1, "t4", 4, txn, 1)
    assert p.high_watermark == 2 and p.last_stable_offset() == 1
    got = c.fetch()
    assert list(got) == [("t4", 4)]
    assert got[("t4", 4)]["high_watermark"] == 2 and got[("t4", 4)]["last_stable_offset"] == 1
    assert not got[("t4", 4)]["records"] and reads.take() == 1
    assert c.fetch() == {} and reads.take() == 0


def test_a_long_polling_fetch_waits_on_its_session(monkeypatch: pytest.MonkeyPatch) -> None:
    """Parked on its session's key: appends elsewhere do not wake it, an append to one of
    its partitions does, and the re-check reads that partition alone."""
    s, parts = cluster()
    s.create_topic("other", 4, 1)
    s.tick()
    c = caught_up(s, parts)
    server = EmulatorServer(s)
    reads = Reads(monkeypatch)

    async def scenario() -> dict:
        s.take_changes()
        d = api_001_fetch.handle(c.ctx(), c.request({}, max_wait_ms=30_000), 12)
        assert isinstance(d, Delayed)
        session = c.services.fetch_sessions.cache(1).get(c.session_id)
        assert session is not None and d.keys == frozenset((session.wake_key,))
        task = asyncio.ensure_future(server.wait_delayed(d))
        for _ in range(5):
            await asyncio.sleep(0)
        assert reads.take() == 0 and not task.done()
        for i in range(4):  # another topic's records
            s.append(1, "other", i, BATCH, 1)
        for _ in range(5):
            await asyncio.sleep(0)
        assert reads.take() == 0 and not task.done()
        s.append(1, "t9", 99, BATCH, 1)
        return await asyncio.wait_for(task, 5)

    got = c.answered(asyncio.run(scenario()))
    assert list(got) == [("t9", 99)] and got[("t9", 99)]["records"]
    assert reads.take() == 1


def next_offset(records: bytes, offset: int) -> int:
    """The offset after the whole batches in ``records`` (v2 batch headers)."""
    pos = 0
    while pos + 61 <= len(records):
        size = int.from_bytes(records[pos + 8:pos + 12], "big") + 12
        if pos + size > len(records):
            break
        offset = int.from_bytes(records[pos:pos + 8], "big") \
            + int.from_bytes(records[pos + 23:pos + 27], "big") + 1
        pos += size
    return offset


def _scenario(seed: int) -> list[dict]:
    """A consumer's fetches over a changing cluster (records on a few partitions, log
    start offsets moving, a change naming no partition, small max_bytes), the client
    moving its positions as it reads; every answer."""
    rng = random.Random(seed)
    s = new_cluster(1).state
    s.create_topic("a", 30, 1)
    s.create_topic("b", 30, 1)
    s.tick()
    parts = [(t, i) for t in ("a", "b") for i in range(30)]
    c = Consumer(s)
    positions = dict.fromkeys(parts, 0)
    out = [c.fetch(dict(positions))]
    for _ in range(300):
        for _n in range(rng.choice((0, 0, 1, 3))):
            s.append(1, *rng.choice(parts), BATCH, 1)
        if rng.random() < 0.05:
            name, idx = rng.choice(parts)
            hw = s.get_partition(name, idx).high_watermark
            if hw:
                s.delete_records(name, idx, rng.randint(0, hw))
        if rng.random() < 0.02:
            s.changed()
        moved = {}
        if out:
            for tp, p in out[-1].items():
                if p["records"]:
                    positions[tp] = moved[tp] = next_offset(p["records"], positions[tp])
                elif p["error_code"] == 1:  # OFFSET_OUT_OF_RANGE: to the log start
                    positions[tp] = moved[tp] = s.get_partition(*tp).leader_log.log_start_offset
        req = c.request(moved)
        req["max_bytes"] = rng.choice((1, 200, 50 << 20))
        resp = api_001_fetch.handle(c.ctx(), req, 12)
        assert isinstance(resp, dict)
        out.append(c.answered(resp))
        s.clock.advance(10)
    return out


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_answers_are_those_of_a_session_that_reads_every_partition(
        seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    from emulator.cluster import fetch_sessions

    selective = _scenario(seed)
    real = fetch_sessions.FetchContext.select

    def every(self, params, isolation, settled=True):  # type: ignore[no-untyped-def]
        return real(self, params, isolation, settled=False)  # unsettled: every partition

    monkeypatch.setattr(fetch_sessions.FetchContext, "select", every)
    assert selective == _scenario(seed)
    assert sum(len(r) for r in selective) > 100  # the answers said something


def test_a_session_on_a_follower_sees_what_its_replica_learns() -> None:
    """KIP-392: a consumer reading from a follower gets records once its replica has
    fetched them and learned the high watermark; replication names the partition for
    each step, so the idle session reads it then (and only it)."""
    s = new_cluster(3).state
    s.create_topic("f", 20, 3)
    s.tick()
    s.tick()
    p = s.get_partition("f", 5)
    follower = next(b for b in p.replicas if b != p.leader)
    mine = [i for i in range(20) if follower in s.get_partition("f", i).replicas]
    c = Consumer(s)
    c.ctx = lambda: RequestContext(s, follower, 1, 12, c.epoch, "c",  # type: ignore[method-assign]
                                   services=c.services)
    full = c.fetch({("f", i): 0 for i in mine})
    assert all(q["error_code"] == 0 for q in full.values())
    assert c.fetch() == {}
    s.append(p.leader, "f", 5, BATCH, -1)
    got: dict = {}
    for _ in range(5):  # the follower fetches, then learns the HW
        s.tick(full=False)
        s.clock.advance(10)
        got.update(c.fetch())
        if got.get(("f", 5), {}).get("records"):
            break
    assert set(got) == {("f", 5)} and got[("f", 5)]["records"]
    assert got[("f", 5)]["high_watermark"] == 1
    assert c.fetch({("f", 5): 1}) == {} and c.fetch() == {}
