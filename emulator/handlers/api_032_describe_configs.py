"""DescribeConfigs (key 32), v1-4: topic and broker configs with Kafka's names.

Sources, synonyms (v1+ when asked), config types (v3+), read-only flags for
static broker configs. A BROKER resource must name this broker or it gets
INVALID_REQUEST, as on Kafka.
"""

from __future__ import annotations

from emulator.cluster import config_ops
from emulator.cluster.partition import KafkaError
from emulator.handlers.authz import RT, Each, Op, config_resource
from emulator.handlers.base import RequestContext
from emulator.handlers.util import error_of
from wire.errors import ErrorCode as E

API_KEY = 32
VERSIONS = (1, 4)
AUTHORIZE = (
    Each(RT.TOPIC, Op.DESCRIBE_CONFIGS, "resources", resolve=config_resource(Op.DESCRIBE_CONFIGS)),
)


def handle(ctx: RequestContext, req: dict, version: int) -> dict:
    results = []
    for r in req["resources"]:
        out = {"error_code": E.NONE, "error_message": None, "resource_type": r["resource_type"],
               "resource_name": r["resource_name"], "configs": []}
        try:
            entries = config_ops.describe(ctx.cluster, r["resource_type"], r["resource_name"],
                                          r["configuration_keys"], ctx.broker_id)
            out["configs"] = [
                {"name": e.name, "value": e.value, "read_only": e.read_only,
                 "is_default": e.source == 5, "config_source": e.source, "is_sensitive": e.sensitive,
                 "synonyms": [{"name": n, "value": v, "source": s} for n, v, s in e.synonyms]
                 if req["include_synonyms"] else [],
                 "config_type": e.config_type, "documentation": None}
                for e in entries
            ]
        except KafkaError as e:  # a business failure; anything else is our bug
            out["error_code"], out["error_message"] = error_of(e)
        results.append(out)
    return {"throttle_time_ms": 0, "results": results}
