"""UnregisterBroker (key 64), v0: remove a broker's registration, as the KRaft controller.

As a real 4.4 cluster answers (measured): an id that is not registered gets
BROKER_ID_NOT_REGISTERED "Broker ID N is not currently registered"; a registered one
succeeds (error message ""). A stopped broker then stays unregistered until it starts
again (a second request gets BROKER_ID_NOT_REGISTERED, as measured). A running broker
registers again at once in fast, where Kafka 4.4 leaves it out until it restarts: a difference
(docs/fidelity.md, unregister-running-broker); under --fidelity kafka it is fenced as
Kafka fences it: out of Metadata's brokers and every ISR, its leaderships moved, still
answering, until it restarts. Its partitions keep it in their replica sets, as in Kafka.
"""

from __future__ import annotations

from emulator.cluster import controller
from emulator.handlers.authz import ClusterOp, Op
from emulator.handlers.base import RequestContext
from wire.errors import ErrorCode as E

API_KEY = 64
VERSIONS = (0, 0)
AUTHORIZE = (ClusterOp(Op.ALTER),)  # ControllerApis.handleUnregisterBroker


def handle(ctx: RequestContext, req: dict, version: int) -> dict:
    broker_id = req["broker_id"]
    unregistered: set[int] = ctx.services.unregistered_brokers
    cluster = ctx.cluster
    if cluster.is_alive(broker_id):
        unregistered.discard(broker_id)  # running: registered again
    if broker_id not in cluster.brokers or broker_id in unregistered:
        return {"throttle_time_ms": 0, "error_code": E.BROKER_ID_NOT_REGISTERED,
                "error_message": f"Broker ID {broker_id} is not currently registered"}
    if not cluster.is_alive(broker_id):
        unregistered.add(broker_id)
    elif cluster.fidelity.kafka_timing and not cluster.brokers[broker_id].crashed:
        controller.broker_unregistered(cluster, broker_id)
        unregistered.add(broker_id)
    return {"throttle_time_ms": 0, "error_code": E.NONE, "error_message": ""}
