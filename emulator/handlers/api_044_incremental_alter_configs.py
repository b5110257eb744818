"""IncrementalAlterConfigs (key 44), v0-1: SET, DELETE, APPEND, SUBTRACT per key.

This is how kafka-reassign-partitions sets and clears replication throttles. A request
whose changes would be more than 10,000 metadata records (a ConfigRecord per key whose
value changes, every key of a broker resource) fails whole with POLICY_VIOLATION
"Unable to perform excessively large batch operation.", as Kafka's controller refuses
it (QuorumController.MAX_RECORDS_PER_USER_OP); nothing is changed. Many resources
(10,000 took 0.1-0.3 s) are handled in steps between other clients' requests.
"""

from __future__ import annotations

from emulator.cluster import config_ops
from emulator.cluster.partition import KafkaError
from emulator.cluster.steps import Steps
from emulator.handlers.authz import RT, Each, Op, config_resource
from emulator.handlers.base import RequestContext, Sliced, sliced_if
from emulator.handlers.util import error_of
from wire.errors import ErrorCode as E

API_KEY = 44
VERSIONS = (0, 1)
AUTHORIZE = (
    Each(RT.TOPIC, Op.ALTER_CONFIGS, "resources", resolve=config_resource(Op.ALTER_CONFIGS)),
)


def handle(ctx: RequestContext, req: dict, version: int) -> dict | Sliced:
    return sliced_if(_alter(ctx, req),
                     len(req["resources"]) > 2 * config_ops.STEP_RESOURCES)


def _apply(ctx: RequestContext, r: dict, validate_only: bool) -> int:
    return config_ops.incremental_alter(ctx.cluster, r["resource_type"], r["resource_name"],
                                        [(c["name"], c["config_operation"], c["value"])
                                         for c in r["configs"]], validate_only, ctx.broker_id)


def _alter(ctx: RequestContext, req: dict) -> Steps[dict]:
    """The record cap first (emulator/cluster/config_ops.py), then each resource; in
    steps between other clients' requests when there are many."""
    resources = req["resources"]
    bound = sum(len(r["configs"]) for r in resources)
    if (yield from config_ops.over_records_per_user_op(
            resources, bound, lambda r: _apply(ctx, r, True))):
        return {"throttle_time_ms": 0, "responses": config_ops.refuse_all(resources)}
    out = []
    for i, r in enumerate(resources):
        if i and i % config_ops.STEP_RESOURCES == 0:
            yield
        res = {"error_code": E.NONE, "error_message": None, "resource_type": r["resource_type"],
               "resource_name": r["resource_name"]}
        try:
            _apply(ctx, r, req["validate_only"])
        except KafkaError as e:  # a business failure; anything else is our bug
            res["error_code"], res["error_message"] = error_of(e)
        out.append(res)
    return {"throttle_time_ms": 0, "responses": out}
