"""aiokafka 0.14's consumer stalls when a leader moves just before its offset reset.

The adversary's seeds 1-3 found aiokafka's group consumer retrying ListOffsets at a
broker that no longer led the partition, about ten times a second for a minute. This
pins the cause with one scripted fault (``Adversary.script``: nothing is drawn): the
partition's leader moves just before the consumer's first ListOffsets reaches it, as a
preferred-leader election or a controlled shutdown can on Kafka. Every answer is one
Kafka gives (NOT_LEADER_OR_FOLLOWER from the old leader, which the soundness check
holds to its rules); aiokafka's offset-reset path (``Fetcher._update_fetch_positions``)
logs the error, sleeps ``retry_backoff_ms`` and asks the same broker again without
asking for metadata, so the partition is never read until its periodic refresh
(``metadata_max_age_ms``, 5 minutes by default). With a short ``metadata_max_age_ms``
the same fault costs the consumer a second: the workaround the reference programs use
(docs/fidelity-wrong-clients.md).

emulator_only: the fault is the adversary's, fired at one chosen request.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

import pytest
from aiokafka import AIOKafkaConsumer, TopicPartition
from confluent_kafka import Producer

from emulator import Cluster
from emulator.faults.adversary import LEADER_MOVE

pytestmark = pytest.mark.emulator_only

N = 20
STALL_S = 6.0  # how long the stalled consumer is watched (its refresh is 300 s away)


@pytest.fixture
def cluster() -> Iterator[Cluster]:
    with Cluster(fidelity="adversarial", seed=0) as c:
        c.adversary.script = frozenset()  # nothing fires unless the test names it
        c.create_topic("stall", 1, 3)
        p = Producer({"bootstrap.servers": c.bootstrap_servers, "acks": "all"})
        for i in range(N):
            p.produce("stall", value=str(i).encode())
        assert p.flush(30) == 0
        yield c


async def _read(bootstrap: str, client_id: str, seconds: float, **options: int) -> int:
    """Records an assigned (no group) aiokafka consumer reads from offset 0 in
    ``seconds``: its first step is the offset reset's ListOffsets."""
    c = AIOKafkaConsumer(bootstrap_servers=bootstrap, client_id=client_id,
                         auto_offset_reset="earliest", enable_auto_commit=False,
                         retry_backoff_ms=100, **options)
    await c.start()
    try:
        c.assign([TopicPartition("stall", 0)])
        got = 0
        deadline = time.monotonic() + seconds
        while got < N and time.monotonic() < deadline:
            for records in (await c.getmany(timeout_ms=200)).values():
                got += len(records)
        return got
    finally:
        await c.stop()


def _move_before_first_list_offsets(c: Cluster, client_id: str) -> int:
    leader = c.state.topics["stall"].partitions[0].leader
    c.adversary.script = frozenset({(client_id, leader, "ListOffsets", 1, LEADER_MOVE)})
    return leader


def test_a_leader_move_before_its_offset_reset_stalls_aiokafkas_consumer(
        cluster: Cluster) -> None:
    c = cluster
    old = _move_before_first_list_offsets(c, "stalled")
    got = asyncio.run(_read(c.bootstrap_servers, "stalled", STALL_S))
    moved = [f for f in c.adversary.record if f.kind == LEADER_MOVE]
    assert len(moved) == 1 and c.state.topics["stall"].partitions[0].leader != old
    # the client's bug: nothing read, its reset retried at the old leader all along
    retries = c.adversary.counts.get(("stalled", old, 2), 0)
    assert got == 0 and retries >= 10, (got, retries)
    assert c.adversary.violations == []  # every answer was one Kafka gives


def test_a_short_metadata_max_age_lets_aiokafka_recover(cluster: Cluster) -> None:
    c = cluster
    _move_before_first_list_offsets(c, "recovers")
    got = asyncio.run(_read(c.bootstrap_servers, "recovers", 20.0,
                            metadata_max_age_ms=1000))
    assert len([f for f in c.adversary.record if f.kind == LEADER_MOVE]) == 1
    assert got == N
    assert c.adversary.violations == []
