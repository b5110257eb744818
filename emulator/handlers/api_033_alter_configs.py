"""AlterConfigs (key 33), v0-2: replace a topic's or broker's dynamic configs."""

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
