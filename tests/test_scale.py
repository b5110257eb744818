"""Work follows what changed (docs/architecture.md): replication visits only touched, unfinished or
due partitions; parked requests wake only for the partitions they wait on; Metadata
is rebuilt only for topics that changed. Counted on the manual clock, so the property
cannot silently regress (bench/scale.py measures the time it saves)."""

from __future__ import annotations

import asyncio

import pytest
from cluster_sim import new_cluster, produce

from emulator.cluster import config_ops, controller
from emulator.cluster.clock import ManualClock
from emulator.cluster.state import ClusterState
from emulator.handlers.base import Delayed
from emulator.server import connections, purgatory
from emulator.server.app import EmulatorServer
from wire.connection import ClientConnection
from wire.messages import RESPONSES
from wire.records import build_batch

LAG = 1000
TOPICS, PER_TOPIC = 50, 20  # 1,000 partitions, replication factor 3


def make() -> tuple[ClusterState, ManualClock]:
    clock = ManualClock()
    s = new_cluster(3, clock, **{"replica.lag.time.max.ms": str(LAG)}).state
    for i in range(TOPICS):
        s.create_topic(f"t{i}", PER_TOPIC, 3)
    s.tick(full=False)  # the new partitions' first round
    s.tick(full=False)
    return s, clock


def visits(s: ClusterState, ticks: int = 1, clock: ManualClock | None = None,
           step_ms: int = 0) -> int:
    before = s.followers.visits
    for _ in range(ticks):
        if clock is not None:
            clock.advance(step_ms)
        s.tick(full=False)
    return s.followers.visits - before


def test_idle_partitions_cost_no_visit_however_long_the_time() -> None:
    s, clock = make()
    # 20 ISR-expiration periods go by: nothing is visited
    assert visits(s, ticks=40, clock=clock, step_ms=LAG // 4) == 0


def test_an_append_visits_only_its_partition_until_it_is_replicated() -> None:
    s, clock = make()
    p = s.get_partition("t7", 3)
    produce(s, p, acks=-1)
    assert visits(s) == 1  # the followers fetch, the high watermark moves
    assert p.high_watermark == 1
    assert visits(s, ticks=10, clock=clock, step_ms=LAG) == 0  # idle again


def test_a_produce_round_over_every_partition_visits_each_once() -> None:
    s, _ = make()
    parts = [p for t in s.topics.values() for p in t.partitions]
    for p in parts:
        produce(s, p, acks=-1)
    assert visits(s) == len(parts)
    assert all(p.high_watermark == 1 for p in parts)
    assert visits(s, ticks=3) == 0


def test_a_follower_down_parks_its_partitions_until_the_isr_expires_them() -> None:
    """Broker 3 crashes (not yet fenced): the partitions written meanwhile cannot
    finish; they are parked until replica.lag.time.max.ms, not visited every tick."""
    s, clock = make()
    controller.broker_crashed(s, 3, fence_after_ms=60_000)
    s.tick(full=False)  # the crash touched every partition once
    written = [t.partitions[0] for t in list(s.topics.values())[:5]]
    written = [p for p in written if p.leader != 3]
    for p in written:
        produce(s, p, acks=-1)
    assert visits(s) == len(written)  # followers 1/2 fetch; 3 cannot
    assert all(3 in p.isr and p.high_watermark == 0 for p in written)
    assert visits(s, ticks=20, clock=clock, step_ms=LAG // 40) == 0  # parked, not polled
    clock.advance(LAG)  # the deadline passes: visited until the ISR expiration shrinks
    n = visits(s, ticks=3, clock=clock, step_ms=LAG // 2)
    assert len(written) <= n <= 3 * len(written)
    assert all(3 not in p.isr and p.high_watermark == 1 for p in written)
    assert visits(s, ticks=10, clock=clock, step_ms=LAG) == 0


def retention_visits(s: ClusterState, passes: int = 1, clock: ManualClock | None = None,
                     step_ms: int = 0) -> int:
    """Partitions looked at by the server's retention passes (not full ones)."""
    before = s.retention_schedule.visits
    for _ in range(passes):
        if clock is not None:
            clock.advance(step_ms)
        s.apply_retention(full=False)
    return s.retention_schedule.visits - before


def test_retention_looks_only_at_logs_that_moved_and_deadlines_that_came() -> None:
    s, clock = make()
    t0 = clock.now_ms()
    parts = [p for t in s.topics.values() for p in t.partitions]
    for _ in range(2):  # two batches everywhere: retention could delete the first
        for p in parts:
            s.append(p.leader, p.topic, p.index, build_batch([(None, b"v")], timestamp=t0), -1)
        s.tick(full=False)
    assert all(p.high_watermark == 2 for p in parts)
    assert retention_visits(s) == len(parts)  # the first pass looks at everything
    # Nothing moves, nothing comes due (retention.ms: 7 days): a minute of passes
    assert retention_visits(s, passes=60, clock=clock, step_ms=1000) == 0
    p = s.get_partition("t7", 3)
    produce(s, p, acks=-1)  # replication visits it, then the next pass looks at it alone
    s.tick(full=False)
    assert retention_visits(s) == 1
    assert retention_visits(s) == 0
    # A config change takes effect at the next pass (a full one); then t4's oldest
    # batches are due at t0 + retention.ms + 1 and looked at then, not before.
    config_ops.incremental_alter(s, config_ops.TOPIC, "t4", [
        ("retention.ms", config_ops.SET, "120000")], False, 1)
    s.tick(full=False)  # (a config change: replication visits every partition once)
    assert retention_visits(s) == len(parts)
    clock.advance(t0 + 120_000 - clock.now_ms())
    assert retention_visits(s) == 0
    t4 = s.topics["t4"].partitions
    assert all(q.log_start_offset == 0 for q in t4)
    assert retention_visits(s, clock=clock, step_ms=1) == PER_TOPIC
    assert all(q.log_start_offset == 1 for q in t4)
    assert all(log.log_start_offset == 1 for q in t4 for log in q.logs.values())
    s.tick(full=False)  # the deletions touched t4's partitions: seen once more
    assert retention_visits(s) == PER_TOPIC
    assert retention_visits(s, passes=30, clock=clock, step_ms=10_000) == 0  # one batch left


def test_retention_waits_for_the_high_watermark_then_deletes_at_once() -> None:
    """A batch old enough to go but not yet below the high watermark (a follower down)
    is deleted on the first pass after the high watermark passes it, with no deadline
    polled meanwhile."""
    s, clock = make()
    config_ops.incremental_alter(s, config_ops.TOPIC, "t2", [
        ("retention.ms", config_ops.SET, "1000")], False, 1)
    p = next(q for q in s.topics["t2"].partitions if q.leader != 3)
    controller.broker_crashed(s, 3, fence_after_ms=60_000)
    s.tick(full=False)
    for _ in range(2):
        produce(s, p, acks=-1)  # timestamp 0: already older than retention.ms
    s.tick(full=False)
    assert p.high_watermark == 0  # broker 3 in the ISR has not fetched
    s.apply_retention(full=False)  # the config change: a full pass
    assert p.log_start_offset == 0
    assert retention_visits(s, passes=5, clock=clock, step_ms=LAG // 10) == 0
    for _ in range(4):  # the ISR expires broker 3; the high watermark moves
        s.tick(full=False)
        clock.advance(LAG // 2)
    assert 3 not in p.isr and p.high_watermark == 2
    assert retention_visits(s) >= 1
    assert p.log_start_offset == 1


def test_a_leader_change_touches_only_that_partition() -> None:
    s, _ = make()
    p = s.get_partition("t3", 5)
    new = next(b for b in p.isr if b != p.leader)
    controller.change_leader(s, p, new)
    assert visits(s) == 1
    assert visits(s) == 0


def test_an_append_reports_only_its_partition_to_parked_requests() -> None:
    s, _ = make()
    s.take_changes()
    p = s.get_partition("t1", 1)
    produce(s, p, acks=-1)
    assert s.take_changes() == (False, {("t1", 1)})
    s.tick(full=False)  # replication moves the high watermark of that one partition
    assert s.take_changes() == (False, {("t1", 1)})


class CountingKeys(dict):
    """The server's purgatory keys (Purgatory.keyed), counting registrations."""

    registered = 0

    def setdefault(self, k, d=None):  # noqa: ANN001, ANN201
        self.registered += 1
        return super().setdefault(k, d)


def test_parked_requests_wake_only_for_the_partitions_they_wait_on() -> None:
    """Kafka's purgatory keys: 200 parked fetches on 200 partitions, one append:
    one check re-runs (plus none of the others)."""
    s, _ = make()
    server = EmulatorServer(s)
    s.take_changes()  # the topic creations before the server was there
    keys = [(f"t{i}", j) for i in range(10) for j in range(PER_TOPIC)]
    checks: dict[tuple[str, int], int] = dict.fromkeys(keys, 0)
    target = s.get_partition("t4", 2)

    def parked(key: tuple[str, int]) -> Delayed:
        def check() -> dict | None:
            checks[key] += 1
            p = s.get_partition(*key)
            return {"done": key} if p.log_end_offset > 0 else None

        return Delayed(check, s.now() + 60_000, lambda: {"expired": key},
                       keys=frozenset({key}))

    async def scenario() -> dict:
        tasks = {k: asyncio.ensure_future(server.wait_delayed(parked(k))) for k in keys}
        await asyncio.sleep(0)  # every request parks (one check each)
        assert all(n == 1 for n in checks.values())
        produce(s, target, acks=-1)
        result = await asyncio.wait_for(tasks[target.key], 5)
        await asyncio.sleep(0)
        for t in tasks.values():
            t.cancel()
        await asyncio.gather(*tasks.values(), return_exceptions=True)
        return result

    assert asyncio.run(scenario()) == {"done": ("t4", 2)}
    assert checks[target.key] == 2
    assert sum(checks.values()) == len(keys) + 1  # nobody else was re-checked
    s.on_change = None


def test_metadata_entries_are_rebuilt_only_for_the_topic_that_changed() -> None:
    s, _ = make()
    first = {name: s.partition_metadata(t) for name, t in s.topics.items()}
    p = s.get_partition("t9", 0)
    produce(s, p, acks=-1)
    s.tick(full=False)  # appends and high watermarks are not metadata
    again = {name: s.partition_metadata(t) for name, t in s.topics.items()}
    assert all(again[n] is first[n] for n in first)
    controller.change_leader(s, p, next(b for b in p.isr if b != p.leader))
    after = {name: s.partition_metadata(t) for name, t in s.topics.items()}
    assert [n for n in first if after[n] is not first[n]] == ["t9"]
    assert after["t9"][0]["leader_id"] == p.leader
    assert after["t9"][0]["leader_epoch"] == p.leader_epoch
    controller.broker_stopped(s, 3)  # offline replicas change everywhere
    assert all(s.partition_metadata(t) is not after[n] for n, t in s.topics.items())


def test_metadata_partitions_are_encoded_once_per_change() -> None:
    """A whole-cluster Metadata answer encodes only the topics that changed since the
    last one: the others' partition arrays are the bytes kept from before."""
    s, _ = make()
    frames = []
    for _ in range(3):
        parts: list = []
        RESPONSES[3].encode_into({"topics": [
            {"name": n, "topic_id": t.id, "partitions": s.partition_metadata(t)}
            for n, t in s.topics.items()]}, 12, parts)
        frames.append((b"".join(parts), parts))
        if len(frames) == 2:
            p = s.get_partition("t9", 0)
            controller.change_leader(s, p, next(b for b in p.isr if b != p.leader))
    (first, first_parts), (second, second_parts), (third, third_parts) = frames
    assert second == first and third != first
    kept = [x for x in second_parts if len(x) > 100]  # one kept array for each topic
    assert len(kept) == TOPICS and all(a is b for a, b in zip(
        kept, [x for x in first_parts if len(x) > 100], strict=True))
    changed = [x for x in third_parts if len(x) > 100 and not any(x is k for k in kept)]
    assert len(changed) == 1  # t9's partitions, encoded again after its leader moved


def test_an_acks_all_request_on_many_partitions_checks_each_once(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """One produce request per broker carrying all its partitions (as kafka-python and
    the Java client send), acks=all, replicated over many budgeted ticks: each tick
    wakes the parked requests, and each wake-up resumes where the last check stopped,
    so the acks=all checks cost each partition about once (not once per tick), and
    the request's keys are registered once."""
    s, _ = make()
    server = EmulatorServer(s)
    s.take_changes()
    monkeypatch.setattr(purgatory, "TICK_VISITS", 25)  # 1,000 partitions: 40 ticks or more
    calls = 0
    real = s.acks_all_done

    def counted(*a: object) -> tuple[bool, int]:
        nonlocal calls
        calls += 1
        return real(*a)

    monkeypatch.setattr(s, "acks_all_done", counted)
    server.purgatory.keyed = keys = CountingKeys()
    batch = build_batch([(None, b"v")])
    led: dict[int, dict[str, list[dict]]] = {b: {} for b in s.brokers}
    for name, t in s.topics.items():
        for p in t.partitions:
            led[p.leader].setdefault(name, []).append({"index": p.index, "records": batch})

    clients = {b: ClientConnection("many") for b in led}

    async def scenario() -> list[bytes | None]:
        return await asyncio.gather(*(server._process(
            server.listeners[b], b, "h", clients[b].send_request(0, 10, {
                "transactional_id": None, "acks": -1, "timeout_ms": 30_000,
                "topic_data": [{"name": n, "partition_data": parts}
                               for n, parts in topics.items()]})[4:])
            for b, topics in led.items()))

    frames = asyncio.run(scenario())
    answered = 0
    for b, frame in zip(led, frames, strict=True):
        assert frame is not None
        clients[b].receive_data(frame)
        resp = clients[b].next_response().body
        for t in resp["responses"]:
            for pr in t["partition_responses"]:
                assert pr["error_code"] == 0 and pr["base_offset"] == 0
                answered += 1
    n = TOPICS * PER_TOPIC
    assert answered == n
    assert s.followers.visits >= n  # every partition replicated, over many ticks
    # each partition: found not done at most once per wake-up of its request, and done
    # once by the checks, whose code the response takes (not asked again): about n
    assert calls <= n + 3 * (n // 25 + 2)
    assert keys.registered == n  # one registration per partition for the whole wait
    s.on_change = None


def test_an_acks_all_produce_whose_followers_fetch_is_answered_without_parking(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The replication tick an append asks for runs before the request would park
    (EmulatorServer.wait_delayed): with every follower fetching, a one-partition
    acks=all request (librdkafka's) registers no purgatory key and gets its answer."""
    s, _ = make()
    server = EmulatorServer(s)
    s.take_changes()
    server.purgatory.keyed = keys = CountingKeys()
    p = s.get_partition("t3", 7)
    client = ClientConnection("one")
    frame = client.send_request(0, 10, {
        "transactional_id": None, "acks": -1, "timeout_ms": 30_000,
        "topic_data": [{"name": "t3", "partition_data": [
            {"index": 7, "records": build_batch([(None, b"v")])}]}]})[4:]

    async def scenario() -> bytes | None:
        return await server._process(server.listeners[p.leader], p.leader, "h", frame)

    out = asyncio.run(scenario())
    assert out is not None
    client.receive_data(out)
    pr = client.next_response().body["responses"][0]["partition_responses"][0]
    assert (pr["error_code"], pr["base_offset"]) == (0, 0)
    assert keys.registered == 0 and p.high_watermark == 1
    s.on_change = None


def test_a_whole_request_frame_in_the_buffer_is_seen() -> None:
    """Corked answers (ClientConnections.serve) wait only while the next request is in
    the reader's buffer, whole; asyncio.StreamReader's ``_buffer`` is read for that, and
    this fails if a Python release renames it (the answers would then never be corked)."""
    async def scenario() -> list[bool]:
        r = asyncio.StreamReader()
        seen = [connections._frame_waiting(r)]
        frame = ClientConnection("c").send_request(18, 3, {"client_software_name": "a",
                                                           "client_software_version": "1"})
        r.feed_data(frame[:3])
        seen.append(connections._frame_waiting(r))
        r.feed_data(frame[3:-1])
        seen.append(connections._frame_waiting(r))
        r.feed_data(frame[-1:])
        seen.append(connections._frame_waiting(r))
        return seen

    assert asyncio.run(scenario()) == [False, False, False, True]
