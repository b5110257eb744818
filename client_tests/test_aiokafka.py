"""aiokafka 0.14: producer and group consumer, records checked field by field."""

from __future__ import annotations

import asyncio

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

from emulator import Cluster

N = 40


async def _produce(bootstrap: str, topic: str) -> list:
    p = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all")
    await p.start()
    try:
        return [
            await p.send_and_wait(topic, key=f"k{i}".encode(), value=f"v{i}".encode(),
                                  partition=i % 2, headers=[("i", str(i).encode())])
            for i in range(N)
        ]
    finally:
        await p.stop()


async def _consume_group(bootstrap: str, topic: str) -> list:
    c = AIOKafkaConsumer(topic, bootstrap_servers=bootstrap, group_id="aio-group",
                         auto_offset_reset="earliest", enable_auto_commit=False)
    await c.start()
    out = []
    try:
        async with asyncio.timeout(30):
            async for m in c:
                out.append(m)
                if len(out) == N:
                    break
        await c.commit()
    finally:
        await c.stop()
    return out


def test_producer_and_group_consumer(cluster: Cluster, topic_name: str) -> None:
    cluster.create_topic(topic_name, 2, 3)
    metas = asyncio.run(_produce(cluster.bootstrap_servers, topic_name))
    for i, md in enumerate(metas):
        assert (md.partition, md.offset) == (i % 2, i // 2)
    msgs = asyncio.run(_consume_group(cluster.bootstrap_servers, topic_name))
    assert len(msgs) == N
    for m in msgs:
        i = 2 * m.offset + m.partition
        assert (m.key, m.value) == (f"k{i}".encode(), f"v{i}".encode())
        assert list(m.headers) == [("i", str(i).encode())]


async def _inside_loop() -> int:
    async with Cluster(brokers=1, port=0) as c:
        c.create_topic("in-loop", 1, 1)
        metas = await _produce_one(c.bootstrap_servers)
        return metas


async def _produce_one(bootstrap: str) -> int:
    p = AIOKafkaProducer(bootstrap_servers=bootstrap)
    await p.start()
    try:
        md = await p.send_and_wait("in-loop", b"v")
        return md.offset
    finally:
        await p.stop()


# The emulator's async API (async with Cluster inside the caller's event loop).
@pytest.mark.emulator_only
def test_cluster_runs_inside_the_callers_event_loop() -> None:
    assert asyncio.run(_inside_loop()) == 0
