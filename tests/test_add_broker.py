"""A broker the cluster was not made with joins it (ClusterMetadata.add_broker): Kafka's
brokers register with the controller by their own node id when they first start, so
a cluster of dedicated controllers learns its brokers one by one (the official image's
isolated mode, emulator.official_cluster). It joins fenced, broker_started unfences
it, and from then on it is a broker like the others: new topics are placed on it, it
leads and follows, it leaves the ISRs when it stops."""

from __future__ import annotations

import asyncio

import pytest

from emulator.cluster import controller
from emulator.cluster.state import Broker, ClusterState
from emulator.cluster.topics import create_topic
from emulator.handlers.util import live_brokers, reported_controller_id
from emulator.runtime import Cluster, new_event_loop


def test_an_added_broker_is_fenced_until_it_starts_then_takes_replicas() -> None:
    s = ClusterState([Broker(4, "kafka-1", 19092)])
    v0 = s.version
    s.add_broker(Broker(5, "kafka-2", 19092))
    assert s.version > v0  # parked requests (Metadata waits) hear of it
    assert sorted(s.brokers) == [4, 5] and s.alive_brokers() == [4]
    assert s.brokers[5].host == "kafka-2"
    # registered and fenced, it takes a replica after the unfenced one, as Kafka's placer
    # does, outside the ISR; a third replica has no registered broker
    early = create_topic(s, "early", 2, 2)
    assert early is not None
    assert all(p.replicas == [4, 5] and p.isr == [4] and p.leader == 4 for p in early.partitions)
    with pytest.raises(Exception, match="replication factor"):
        create_topic(s, "three", 1, 3)
    controller.broker_started(s, 5)
    assert s.alive_brokers() == [4, 5]
    t = create_topic(s, "two", 2, 2)
    assert t is not None
    assert sorted(p.leader for p in t.partitions) == [4, 5]
    assert all(sorted(p.isr) == [4, 5] for p in t.partitions)
    controller.broker_stopped(s, 5)
    assert all(p.isr == [4] and p.leader == 4 for p in t.partitions)
    s.tick()  # replication, ISR counters and config lookups know the new id
    assert s.isr_shrinks_by_broker[5] == 0 and s.broker_overrides[5] == {}


def test_a_known_broker_is_not_added_again() -> None:
    s = ClusterState([Broker(1, "h", 1)])
    with pytest.raises(ValueError, match="broker 1"):
        s.add_broker(Broker(1, "h", 2))
    assert s.brokers[1].port == 1


def test_metadata_names_an_added_broker_once_it_starts_at_its_listeners() -> None:
    """Metadata's brokers (and the controller id a KRaft broker reports: a live
    broker) take the added broker in once it is unfenced, at each listener's address."""
    s = ClusterState([Broker(4, "kafka-1", 19092, endpoints={"HOST": 29092},
                             endpoint_hosts={"HOST": "localhost"})])
    s.add_broker(Broker(5, "kafka-2", 19092, endpoints={"HOST": 39092},
                        endpoint_hosts={"HOST": "localhost"}))
    assert [b["node_id"] for b in live_brokers(s)] == [4]
    controller.broker_started(s, 5)
    assert live_brokers(s, "HOST")[1] == {"node_id": 5, "host": "localhost", "port": 39092,
                                          "rack": None}
    assert {reported_controller_id(s) for _ in range(50)} == {4, 5}


async def _add_start_stop() -> tuple[bool, bool, list[int], bool]:
    c = Cluster(1, port=0, first_broker_id=4)
    await c.start_async()
    try:
        await c.add_broker_async(5)
        fenced = not c.state.brokers[5].alive
        await c.start_broker_async(5)
        port = c.server.endpoints[5][0].bind_port
        _, w = await asyncio.open_connection("127.0.0.1", port)
        w.close()
        listening = port > 0
        alive = c.state.alive_brokers()
        await c.stop_broker_async(5)
        try:
            await asyncio.open_connection("127.0.0.1", port)
            closed = False
        except OSError:
            closed = True
        return fenced, listening, alive, closed
    finally:
        await c.stop_async()


def test_a_running_cluster_adds_a_broker_that_listens_once_started() -> None:
    """Cluster.add_broker_async: the server gets the broker's listeners, closed until
    it starts; started it answers on its own port, stopped it closes it."""
    loop = new_event_loop()
    try:
        assert loop.run_until_complete(_add_start_stop()) == (True, True, [4, 5], True)
    finally:
        loop.close()
