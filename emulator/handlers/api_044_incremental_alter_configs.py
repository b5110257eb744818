"""IncrementalAlterConfigs (key 44), v0-1: SET, DELETE, APPEND, SUBTRACT per key.

This is how kafka-reassign-partitions sets and clears replication throttles. A request
whose changes would be more than 10,000 metadata records (a ConfigRecord per key whose
value changes, every key of a broker resource) fails whole with POLICY_VIOLATION
"Unable to perform excessively large batch operation.", as Kafka's controller refuses
it (QuorumController.MAX_RECORDS_PER_USER_OP); nothing is changed.
"""

from __future__ import annotations

from emulator.cluster import config_ops
from emulator.cluster.partition import KafkaError
from emulator.handlers.authz import RT, Each, Op, config_resource
from emulator.handlers.base import RequestContext
from emulator.handlers.util import error_of
from wire.errors import ErrorCode as E

API_KEY = 44
VERSIONS = (0, 1)
AUTHORIZE = (
    Each(RT.TOPIC, Op.ALTER_CONFIGS, "resources", resolve=config_resource(Op.ALTER_CONFIGS)),
)


def handle(ctx: RequestContext, req: dict, version: int) -> dict:
    def records(r: dict) -> int:
        return config_ops.incremental_alter(
            ctx.cluster, r["resource_type"], r["resource_name"],
            [(c["name"], c["config_operation"], c["value"]) for c in r["configs"]], True,
            ctx.broker_id)

    resources = req["resources"]
    if config_ops.over_records_per_user_op(
            resources, sum(len(r["configs"]) for r in resources), records):
        return {"throttle_time_ms": 0, "responses": config_ops.refuse_all(resources)}
    out = []
    for r in req["resources"]:
        res = {"error_code": E.NONE, "error_message": None, "resource_type": r["resource_type"],
               "resource_name": r["resource_name"]}
        try:
            ops = [(c["name"], c["config_operation"], c["value"]) for c in r["configs"]]
            config_ops.incremental_alter(ctx.cluster, r["resource_type"], r["resource_name"],
                                         ops, req["validate_only"], ctx.broker_id)
        except KafkaError as e:  # a business failure; anything else is our bug
            res["error_code"], res["error_message"] = error_of(e)
        out.append(res)
    return {"throttle_time_ms": 0, "responses": out}
