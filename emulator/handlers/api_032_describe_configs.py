"""DescribeConfigs (key 32), v1-4: topic and broker configs with Kafka's names.

Sources, synonyms (v1+ when asked), config types (v3+), read-only flags for
static broker configs. A BROKER resource must name this broker or it gets
INVALID_REQUEST, as on Kafka. A request for many resources (Kafka has no cap: one
for 10,000 groups took 1.2 s in one go) is described in steps between other clients'
requests, and its large response encoded off the event loop (emulator/server/dispatch.py).
"""

from __future__ import annotations

from emulator.cluster import config_ops
from emulator.cluster.steps import Steps
from emulator.handlers.authz import RT, Each, Op, config_resource
from emulator.handlers.base import RequestContext, Sliced, sliced_if
from emulator.handlers.util import error_of
from wire.errors import ErrorCode as E
from wire.errors import KafkaError

API_KEY = 32
VERSIONS = (1, 4)
AUTHORIZE = (
    Each(RT.TOPIC, Op.DESCRIBE_CONFIGS, "resources", resolve=config_resource(Op.DESCRIBE_CONFIGS)),
)


# Resources described per step: a request for thousands (legal, Kafka has no cap) is
# answered in steps between other clients' requests (emulator/cluster/steps.py).
STEP_RESOURCES = 16


def handle(ctx: RequestContext, req: dict, version: int) -> dict | Sliced:
    return sliced_if(_describe(ctx, req), len(req["resources"]) > 4 * STEP_RESOURCES)


def _describe(ctx: RequestContext, req: dict) -> Steps[dict]:
    results = []
    for i, r in enumerate(req["resources"]):
        if i and i % STEP_RESOURCES == 0:
            yield
        # A described resource's error_message is "", not null: Kafka leaves the field at
        # its schema default (DescribeConfigsResult.errorMessage), measured on a 4.4 broker.
        out = {"error_code": E.NONE, "error_message": "", "resource_type": r["resource_type"],
               "resource_name": r["resource_name"], "configs": []}
        try:
            entries = config_ops.describe(ctx.cluster, r["resource_type"], r["resource_name"],
                                          r["configuration_keys"], ctx.broker_id,
                                          broker_view=True)
            out["configs"] = [
                {"name": e.name, "value": e.value, "read_only": e.read_only,
                 "config_source": e.source, "is_sensitive": e.sensitive,
                 "synonyms": [{"name": n, "value": v, "source": s} for n, v, s in e.synonyms]
                 if req["include_synonyms"] else [],
                 "config_type": e.config_type, "documentation": None}
                for e in entries
            ]
        except KafkaError as e:  # a business failure; anything else is our bug
            out["error_code"], out["error_message"] = error_of(e)
        results.append(out)
    return {"throttle_time_ms": 0, "results": results}
