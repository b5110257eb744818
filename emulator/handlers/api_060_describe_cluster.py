"""DescribeCluster (key 60), v0-2: cluster id, controller id and live brokers.

v1+ endpoint_type 1 (brokers) is served; 2 (controllers) gets
UNSUPPORTED_ENDPOINT_TYPE like a broker listener does. v2 include_fenced_brokers
lists stopped brokers with is_fenced=true. Like Kafka's KafkaApis it needs no ACL (checked against a real 4.4
with StandardAuthorizer); cluster authorized operations are filled when asked for
(every cluster operation without an authorizer). The controller id is a random live
broker, as a KRaft broker reports it (handlers/util.py reported_controller_id).
"""

from __future__ import annotations

from emulator.handlers.authz import NOT_REQUESTED, RT, authorized_operations
from emulator.handlers.base import RequestContext
from emulator.handlers.util import reported_controller_id
from wire.errors import ErrorCode as E

API_KEY = 60
VERSIONS = (0, 2)
AUTHORIZE = ()  # Kafka 4.4 requires no ACL here (checked on a real broker with StandardAuthorizer)


def handle(ctx: RequestContext, req: dict, version: int) -> dict:
    cluster = ctx.cluster
    if version >= 1 and req.get("endpoint_type", 1) != 1:
        return {"error_code": E.UNSUPPORTED_ENDPOINT_TYPE,
                "error_message": "The endpoint type is not supported by this listener",
                "endpoint_type": req["endpoint_type"], "cluster_id": cluster.cluster_id,
                "controller_id": -1, "brokers": []}
    brokers = [
        {"broker_id": b.id, "host": b.host_for(ctx.listener), "port": b.port_for(ctx.listener), "rack": b.rack,
         "is_fenced": not b.alive}
        for b in sorted(cluster.brokers.values(), key=lambda b: b.id)
        if b.alive or (version >= 2 and req.get("include_fenced_brokers"))
    ]
    return {"throttle_time_ms": 0, "error_code": E.NONE, "error_message": None,
            "endpoint_type": 1, "cluster_id": cluster.cluster_id,
            "controller_id": reported_controller_id(cluster), "brokers": brokers,
            "cluster_authorized_operations": authorized_operations(ctx, RT.CLUSTER)
            if req["include_cluster_authorized_operations"] else NOT_REQUESTED}
