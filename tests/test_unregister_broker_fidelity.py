"""UnregisterBroker of a running broker under each fidelity (docs/fidelity.md,
unregister-running-broker), through the handler on a manual clock.

``--fidelity kafka`` fences the broker as Kafka 4.4's controller does (out of the live
brokers and every ISR, its leaderships moved, replica sets keep it) until it restarts;
``fast`` lets it register again at once. client_tests/test_unregister_running_broker.py
checks the behaviour on both targets.
"""

from __future__ import annotations

from cluster_sim import new_cluster

from emulator.cluster import controller
from emulator.cluster.state import ClusterState
from emulator.handlers import api_064_unregister_broker as unregister
from emulator.handlers.base import RequestContext
from emulator.services import Services
from wire.errors import ErrorCode as E


def setup(mode: str) -> tuple[ClusterState, RequestContext]:
    s = new_cluster(3, fidelity=mode).state
    s.create_topic("t", 3, 3)
    return s, RequestContext(s, 1, 64, 0, 1, "c", services=Services())


def test_kafka_fidelity_fences_the_running_broker_until_it_restarts() -> None:
    s, ctx = setup("kafka")
    assert unregister.handle(ctx, {"broker_id": 3}, 0)["error_code"] == E.NONE
    b = s.brokers[3]
    assert (b.alive, b.unregistered) == (False, True)
    assert s.alive_brokers() == [1, 2]
    for p in s.topics["t"].partitions:
        assert p.leader != 3 and 3 not in p.isr and 3 in p.replicas
    again = unregister.handle(ctx, {"broker_id": 3}, 0)
    assert again["error_code"] == E.BROKER_ID_NOT_REGISTERED
    s.clock.advance(60_000)
    s.tick()
    assert not s.is_alive(3)  # it stays out
    controller.broker_crashed(s, 3)  # the restart: stopped, then started
    assert not b.unregistered
    controller.broker_started(s, 3)
    assert s.alive_brokers() == [1, 2, 3]
    assert unregister.handle(ctx, {"broker_id": 3}, 0)["error_code"] == E.NONE


def test_fast_lets_the_running_broker_register_again() -> None:
    s, ctx = setup("fast")
    leaders = [p.leader for p in s.topics["t"].partitions]
    assert unregister.handle(ctx, {"broker_id": 3}, 0)["error_code"] == E.NONE
    assert s.alive_brokers() == [1, 2, 3] and not s.brokers[3].unregistered
    assert [p.leader for p in s.topics["t"].partitions] == leaders
    assert unregister.handle(ctx, {"broker_id": 3}, 0)["error_code"] == E.NONE
