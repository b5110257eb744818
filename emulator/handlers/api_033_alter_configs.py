"""AlterConfigs (key 33), v0-2: replace a topic's or broker's dynamic configs.

A request whose changes would be more than 10,000 metadata records (a ConfigRecord per
key set to a new value or removed, every key of a broker resource) fails whole with
POLICY_VIOLATION, as Kafka's controller refuses it (MAX_RECORDS_PER_USER_OP).
"""

from __future__ import annotations

from emulator.cluster import config_ops
from emulator.cluster.partition import KafkaError
from emulator.handlers.authz import RT, Each, Op, config_resource
from emulator.handlers.base import RequestContext
from emulator.handlers.util import error_of
from wire.errors import ErrorCode as E

API_KEY = 33
VERSIONS = (0, 2)
AUTHORIZE = (
    Each(RT.TOPIC, Op.ALTER_CONFIGS, "resources", resolve=config_resource(Op.ALTER_CONFIGS)),
)


def handle(ctx: RequestContext, req: dict, version: int) -> dict:
    def records(r: dict) -> int:
        return config_ops.alter(ctx.cluster, r["resource_type"], r["resource_name"],
                                {c["name"]: c["value"] for c in r["configs"]}, True,
                                ctx.broker_id)

    resources = req["resources"]
    bound = sum(len(r["configs"]) + config_ops.dynamic_count(
        ctx.cluster, r["resource_type"], r["resource_name"]) for r in resources)
    if config_ops.over_records_per_user_op(resources, bound, records):
        return {"throttle_time_ms": 0, "responses": config_ops.refuse_all(resources)}
    out = []
    for r in req["resources"]:
        res = {"error_code": E.NONE, "error_message": None, "resource_type": r["resource_type"],
               "resource_name": r["resource_name"]}
        try:
            config_ops.alter(ctx.cluster, r["resource_type"], r["resource_name"],
                             {c["name"]: c["value"] for c in r["configs"]},
                             req["validate_only"], ctx.broker_id)
        except KafkaError as e:  # a business failure; anything else is our bug
            res["error_code"], res["error_message"] = error_of(e)
        out.append(res)
    return {"throttle_time_ms": 0, "responses": out}
