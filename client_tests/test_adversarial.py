"""--fidelity adversarial (emulator/faults/adversary.py): correct clients still finish under
many seeds, a seed replays the same faults for the same requests, and every kind of fault
is met.

All emulator_only: they test the emulator's own fault mode (Kafka has no seed to replay
its races with).
"""

from __future__ import annotations

import asyncio
import collections
import json
import os
import socket
import subprocess
import sys
import time

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.errors import CommitFailedError as AioCommitFailedError
from aiokafka.errors import RebalanceInProgressError as AioRebalanceInProgressError
from confluent_kafka import Consumer, Producer
from kafka import KafkaConsumer, KafkaProducer
from kafka.errors import CommitFailedError, RebalanceInProgressError

from client_tests.control_http import http
from emulator import Cluster
from emulator.blocking_client import BlockingConnection, ConnectionClosed
from emulator.faults.adversary import KINDS
from wire.records import build_batch

pytestmark = pytest.mark.emulator_only


def _seeds(spec: str | None, sample: tuple[int, ...]) -> tuple[int, ...]:
    """The seeds a test runs: ``sample`` in the README's test command (sized to its time
    budget; the reference programs, client_tests/test_reference_programs.py, cover the
    same clients with the history checker), or ``KAFKA_EMULATOR_ADVERSARIAL_SEEDS``
    (``N`` for seeds 1..N, ``A-B`` or ``A,B``), which the nightly job
    (.ci/adversary-nightly) sets to a larger survey."""
    if not spec:
        return sample
    if "-" in spec:
        a, b = spec.split("-", 1)
        return tuple(range(int(a), int(b) + 1))
    if "," in spec:
        return tuple(int(s) for s in spec.split(",") if s.strip())
    return tuple(range(1, int(spec) + 1))


_SPEC = os.environ.get("KAFKA_EMULATOR_ADVERSARIAL_SEEDS")
# Three seeds for librdkafka's idempotent producer (a few seconds a run), two for the
# runs that also drive a group consumer or a transaction (15-25 s a run); aiokafka's
# seeds 1 and 3 are those that met its offset-reset stall (test_aiokafka_reset_stall.py).
SEEDS = _seeds(_SPEC, (1, 2, 3))
GROUP_SEEDS = _seeds(_SPEC, (1, 2))
AIOKAFKA_SEEDS = _seeds(_SPEC, (1, 3))


def _report(c: Cluster) -> str:
    """What the adversary did, for a failing assertion's message."""
    return "\n".join(f"{f.seq} {f.api} #{f.n} {f.client_id}@{f.broker}: {f.kind}: {f.detail}"
                     for f in c.adversary.record)


def _read_back(c: Cluster, topic: str, n: int, client_id: str,
               isolation: str = "read_uncommitted") -> collections.Counter:
    """Every record of ``topic``, read by an assigned (group-less) librdkafka consumer
    from the beginning: the checker of a producer test. Group-less on purpose: under
    a coordinator move during its OffsetFetch, librdkafka 2.16's group consumer keeps
    the assigned partitions in its "queried" list for good (the retries go to the old
    coordinator, the error answer names no partition to put back to pending), a hang
    of the client's own that real Kafka provokes as well (docs/fidelity.md, what the
    adversary found); a producer test should not depend on it."""
    from confluent_kafka import OFFSET_BEGINNING, TopicPartition
    cons = Consumer({"bootstrap.servers": c.bootstrap_servers, "group.id": "unused",
                     "client.id": client_id, "enable.auto.commit": False,
                     "isolation.level": isolation})
    parts = len(c.state.topics[topic].partitions)
    cons.assign([TopicPartition(topic, i, OFFSET_BEGINNING) for i in range(parts)])
    # by position: a record delivered twice from one offset is the reader going back
    # (an offset reset after a leader move), not a record written twice
    at: dict[tuple[int, int], bytes] = {}
    deadline = time.monotonic() + 60
    while len(at) < n and time.monotonic() < deadline:
        m = cons.poll(0.5)
        if m is not None and m.error() is None:
            at[(m.partition(), m.offset())] = m.value()
    end = time.monotonic() + 1  # anything written twice arrives meanwhile
    while time.monotonic() < end:
        m = cons.poll(0.2)
        if m is not None and m.error() is None:
            at[(m.partition(), m.offset())] = m.value()
    cons.close()
    return collections.Counter(at.values())


def _consume_all(c: Cluster, topic: str, n: int, client_id: str) -> collections.Counter:
    """A consumer group member that commits after processing (at-least-once): every
    record is seen at least once; a commit refused by a rebalance is not an error."""
    cons = KafkaConsumer(topic, bootstrap_servers=c.bootstrap_servers, group_id="g-" + topic,
                         client_id=client_id, auto_offset_reset="earliest",
                         enable_auto_commit=False, heartbeat_interval_ms=200,
                         session_timeout_ms=6000)
    seen: collections.Counter = collections.Counter()
    deadline = time.monotonic() + 60
    try:
        while len(seen) < n and time.monotonic() < deadline:
            for records in cons.poll(200).values():
                for r in records:
                    seen[r.value] += 1
            try:
                cons.commit()
            except (CommitFailedError, RebalanceInProgressError):
                pass  # kicked or rebalancing: what was not committed is read again
    finally:
        cons.close()
    return seen


@pytest.mark.parametrize("seed", GROUP_SEEDS)
def test_idempotent_kafka_python_producer_and_group_consumer_finish(seed: int) -> None:
    n = 120
    with Cluster(fidelity="adversarial", seed=seed) as c:
        c.create_topic("orders", 3, 3)
        p = KafkaProducer(bootstrap_servers=c.bootstrap_servers, enable_idempotence=True,
                          acks="all", client_id="good-producer", retry_backoff_ms=20)
        for i in range(n):
            p.send("orders", str(i).encode()).get(timeout=30)
        p.close()
        seen = _consume_all(c, "orders", n, "good-consumer")
        assert set(seen) == {str(i).encode() for i in range(n)}, _report(c)
        kinds = {f.kind for f in c.adversary.record if f.api == "Produce"}
        assert kinds, "the producer met no fault: the adversary did nothing"


@pytest.mark.parametrize("seed", SEEDS)
def test_idempotent_confluent_producer_writes_each_record_once(seed: int) -> None:
    n = 200
    with Cluster(fidelity="adversarial", seed=seed) as c:
        c.create_topic("events", 3, 3)
        p = Producer({"bootstrap.servers": c.bootstrap_servers, "enable.idempotence": True,
                      "client.id": "good-rdkafka", "linger.ms": 0, "retry.backoff.ms": 20})
        failed = []
        for i in range(n):
            p.produce("events", str(i).encode(),
                      on_delivery=lambda err, msg: failed.append(err) if err else None)
            p.poll(0)
        assert p.flush(60) == 0
        assert not failed, failed
        values = _read_back(c, "events", n, "checker")
        # idempotence: a lost answer or a timeout after the write landed is retried, and
        # the broker keeps the first copy only
        assert values == collections.Counter(str(i).encode() for i in range(n)), _report(c)


@pytest.mark.parametrize("seed", GROUP_SEEDS)
def test_transactional_producer_commits_each_record_once(seed: int) -> None:
    """Lost EndTxn and InitProducerId answers, coordinator moves and loads, slow markers,
    CONCURRENT_TRANSACTIONS: librdkafka's transactional producer retries through them and
    a read_committed reader finds every record once."""
    with Cluster(fidelity="adversarial", seed=seed, adversary_scale="all=2") as c:
        c.create_topic("tx", 3, 3)
        p = Producer({"bootstrap.servers": c.bootstrap_servers, "transactional.id": "tx-app",
                      "client.id": "tx-app", "linger.ms": 0})
        p.init_transactions(30)
        sent = [f"{b}-{i}".encode() for b in range(10) for i in range(5)]
        for b in range(10):
            p.begin_transaction()
            for v in sent[b * 5:(b + 1) * 5]:
                p.produce("tx", v)
            p.commit_transaction(30)
        got = _read_back(c, "tx", len(sent), "tx-read", "read_committed")
        assert got == collections.Counter(sent), _report(c)
        assert {f.api for f in c.adversary.record} & {"EndTxn", "InitProducerId",
                                                      "AddOffsetsToTxn", "AddPartitionsToTxn"}


async def _aiokafka_round_trip(bootstrap: str, n: int) -> collections.Counter:
    """An idempotent aiokafka producer, then a group member committing after it
    processed (a commit refused by a rebalance is retried by reading again)."""
    p = AIOKafkaProducer(bootstrap_servers=bootstrap, enable_idempotence=True,
                         client_id="aio-producer", retry_backoff_ms=20)
    await p.start()
    try:
        for i in range(n):
            await p.send_and_wait("aio", str(i).encode())
    finally:
        await p.stop()
    # metadata_max_age_ms: aiokafka 0.14 refreshes no metadata when an offset reset's
    # ListOffsets meets a moved leader, and retries the old one until its periodic
    # refresh (client_tests/test_aiokafka_reset_stall.py): its bug, worked around here
    c = AIOKafkaConsumer("aio", bootstrap_servers=bootstrap, group_id="aio-group",
                         client_id="aio-consumer", auto_offset_reset="earliest",
                         enable_auto_commit=False, heartbeat_interval_ms=200,
                         session_timeout_ms=6000, metadata_max_age_ms=1000)
    await c.start()
    seen: collections.Counter = collections.Counter()
    try:
        deadline = time.monotonic() + 60
        while len(seen) < n and time.monotonic() < deadline:
            for records in (await c.getmany(timeout_ms=200)).values():
                for r in records:
                    seen[r.value] += 1
            try:
                await c.commit()
            except (AioCommitFailedError, AioRebalanceInProgressError):
                pass
    finally:
        await c.stop()
    return seen


@pytest.mark.parametrize("seed", AIOKAFKA_SEEDS)
def test_aiokafka_idempotent_producer_and_group_consumer_finish(seed: int) -> None:
    n = 100
    with Cluster(fidelity="adversarial", seed=seed) as c:
        c.create_topic("aio", 3, 3)
        seen = asyncio.run(_aiokafka_round_trip(c.bootstrap_servers, n))
        assert set(seen) == {str(i).encode() for i in range(n)}, _report(c)


def _raw_sequence(seed: int) -> list[tuple]:
    """One client's fixed request sequence against broker 1 of a fresh cluster; returns
    the faults it met (what replays: Injected.key)."""
    with Cluster(fidelity="adversarial", seed=seed) as c:
        c.create_topic("raw", 1, 3)
        b = c.state.brokers[1]
        batch = build_batch([(b"k", b"v")])

        def conn() -> BlockingConnection:
            return BlockingConnection(socket.create_connection((b.host, b.port), timeout=10),
                                      "replayer")
        k = conn()
        for i in range(100):
            for key, version, body in (
                    (3, 12, {"topics": [{"name": "raw", "topic_id": bytes(16)}],
                             "allow_auto_topic_creation": False}),
                    (0, 9, {"acks": -1, "timeout_ms": 5000, "topic_data": [
                        {"name": "raw", "partition_data": [{"index": 0, "records": batch}]}]}),
                    (2, 7, {"replica_id": -1, "isolation_level": 0, "topics": [
                        {"name": "raw", "partitions": [
                            {"partition_index": 0, "timestamp": -1}]}]}),
                    (10, 4, {"key_type": 0, "coordinator_keys": [f"group-{i % 3}"]}),
                    (9, 7, {"group_id": "g0", "topics": [
                        {"name": "raw", "partition_indexes": [0]}]})):
                try:
                    k.call(key, version, body)
                except ConnectionClosed:
                    k = conn()  # a lost response: the next request goes on a new connection
        k.close()
        return [f.key() for f in c.adversary.record]


def test_same_seed_replays_the_same_faults_for_the_same_requests() -> None:
    first, again, other = _raw_sequence(7), _raw_sequence(7), _raw_sequence(8)
    assert len(first) >= 4, first
    assert first == again
    assert first != other


def test_every_kind_of_fault_is_met() -> None:
    """A workload that reaches every fault point (produce, metadata, fetch sessions,
    a classic group's heartbeats and commits, a transaction's coordinator) meets every
    kind of fault the adversary has within a few seeds."""
    met: dict[str, int] = collections.Counter()
    # zombie and the move before an OffsetFetch are off by default (test_a_zombie_fences_
    # the_producer, client_tests/test_adversary_kinds.py); share_lock_expiry needs a
    # share group (test_adversary_kinds.py)
    wanted = set(KINDS) - {"zombie", "share_lock_expiry",
                           "coordinator_move_before_offset_fetch"}
    for seed in range(11, 17):  # until every kind was met, at most six seeds
        if wanted <= set(met):
            break
        with Cluster(fidelity="adversarial", seed=seed) as c:
            # a group is disrupted at most once per 3 s: alternate which kind gets it
            group = {"kick": 8.0, "rebalance": 0.25} if seed % 2 else {"kick": 0.0}
            c.adversary.scale.update({"all": 2.0, "session_evicted": 2.0, **group})
            c.create_topic("mix", 3, 3)
            c.create_topic("mix1", 3, 3)
            p = Producer({"bootstrap.servers": c.bootstrap_servers, "client.id": "mix-p",
                          "enable.idempotence": True, "linger.ms": 0,
                          "transactional.id": f"tx-{seed}"})
            p.init_transactions(30)
            for batch in range(6):
                p.begin_transaction()
                for i in range(10):
                    p.produce("mix", f"{batch}-{i}".encode())
                p.commit_transaction(30)
            # acks=1: its answers may be followed by a move before the followers fetched
            # (the records may be lost: that is acks=1, nothing here reads them back)
            one = Producer({"bootstrap.servers": c.bootstrap_servers, "client.id": "mix-1",
                            "acks": 1, "linger.ms": 0, "enable.idempotence": False})
            for i in range(60):
                one.produce("mix1", f"{i}".encode())
                one.poll(0)
            one.flush(30)
            seen = _consume_all(c, "mix", 60, "mix-c")
            # a member polling a caught-up topic: incremental fetch sessions (kafka-python
            # keeps them; librdkafka does not), heartbeats
            idle = KafkaConsumer("mix", bootstrap_servers=c.bootstrap_servers,
                                 group_id="sess", client_id="mix-s",
                                 auto_offset_reset="earliest", fetch_max_wait_ms=20,
                                 heartbeat_interval_ms=100, session_timeout_ms=6000)
            end = time.monotonic() + 4
            while time.monotonic() < end:
                idle.poll(50)
            idle.close()
            assert len(seen) == 60, _report(c)
            met.update(f.kind for f in c.adversary.record)
    assert wanted <= set(met), f"met {dict(met)}; never met {wanted - set(met)}"


def test_the_record_and_the_rates_through_the_control_plane_and_the_cli() -> None:
    """GET /adversary prints what was injected (a failing test's evidence), POST turns
    the faults off for a setup and scales them; the same through kafka-emulator fault."""
    with Cluster(fidelity="adversarial", seed=3, control_port=0,
                 adversary_scale="lost_response=0") as c:
        base = f"http://127.0.0.1:{c.control.port}"
        status, view = http(base, "GET", "/adversary")
        assert status == 200 and view["seed"] == 3 and view["scale"] == {"lost_response": 0}
        assert http(base, "POST", "/adversary", {"off": True})[1]["enabled"] is False
        c.create_topic("quiet", 1, 3)
        p = Producer({"bootstrap.servers": c.bootstrap_servers, "client.id": "quiet"})
        for _ in range(50):
            p.produce("quiet", b"x")
            p.flush(10)
        assert not [f for f in c.adversary.record if f.client_id == "quiet"]
        status, view = http(base, "POST", "/adversary", {"on": True, "scale": "all=3"})
        assert status == 200 and view["enabled"] and view["scale"]["all"] == 3
        for _ in range(100):
            p.produce("quiet", b"x")
            p.flush(10)
        injected = http(base, "GET", "/adversary")[1]["injected"]
        assert [f for f in injected if f["client_id"] == "quiet"], injected
        assert http(base, "POST", "/adversary", {"scale": "kik=1"})[0] == 400
        out = subprocess.run([sys.executable, "-m", "emulator", "fault", "--control", base,
                              "adversary-tune", "--off"], capture_output=True, text=True,
                             timeout=60)
        assert out.returncode == 0 and json.loads(out.stdout)["enabled"] is False, out.stderr
        out = subprocess.run([sys.executable, "-m", "emulator", "fault", "--control", base,
                              "adversary"], capture_output=True, text=True, timeout=60)
        assert out.returncode == 0 and json.loads(out.stdout)["injected"], out.stderr
    for mode in ("fast", "kafka"):
        with Cluster(control_port=0, fidelity=mode) as other:
            # no adversary at all: the server's one test per request finds None
            assert other.adversary is None and other.server.faults.adversary is None
            status, view = http(f"http://127.0.0.1:{other.control.port}", "GET",
                                 "/adversary")
            assert status == 404 and f"fidelity {mode}" in view["error"]


def test_a_zombie_fences_the_producer() -> None:
    """``zombie`` (off by default: a second instance of the application) fences a
    transactional producer over the wire: its transaction cannot commit, and the
    error is the fatal fencing one a correct application must handle by closing."""
    from confluent_kafka import KafkaException
    with Cluster(fidelity="adversarial", seed=1, adversary_scale="all=0,zombie=40") as c:
        c.adversary.scale["all"] = 1.0  # only zombies (40 x 2 %: nearly every request)
        for kind in KINDS:
            if kind != "zombie":
                c.adversary.scale[kind] = 0.0
        c.create_topic("z", 1, 3)
        p = Producer({"bootstrap.servers": c.bootstrap_servers, "transactional.id": "z-app",
                      "client.id": "z-app", "linger.ms": 0})
        p.init_transactions(30)
        with pytest.raises(KafkaException) as e:
            for _ in range(5):
                p.begin_transaction()
                p.produce("z", b"x")
                p.commit_transaction(30)
        assert e.value.args[0].fatal(), e.value
        assert any(f.kind == "zombie" for f in c.adversary.record), _report(c)
