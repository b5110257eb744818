"""AlterConfigs (key 33), v0-2: replace a topic's or broker's dynamic configs.

A request whose changes would be more than 10,000 metadata records (a ConfigRecord per
key set to a new value or removed, every key of a broker resource) fails whole with
POLICY_VIOLATION, as Kafka's controller refuses it (MAX_RECORDS_PER_USER_OP). Many
resources are handled in steps between other clients' requests.
"""

from __future__ import annotations

from emulator.cluster import config_ops
from emulator.handlers.authz import RT, Each, Op, config_resource
from emulator.handlers.base import RequestContext, Sliced
from emulator.handlers.util import alter_config_resources

API_KEY = 33
VERSIONS = (0, 2)
AUTHORIZE = (
    Each(RT.TOPIC, Op.ALTER_CONFIGS, "resources", resolve=config_resource(Op.ALTER_CONFIGS)),
)


def handle(ctx: RequestContext, req: dict, version: int) -> dict | Sliced:
    return alter_config_resources(req, lambda: _bound(ctx, req),
                                  lambda r, validate_only: _apply(ctx, r, validate_only))


def _bound(ctx: RequestContext, req: dict) -> int:
    """At most a record per key set, and one per dynamic key a replacement removes."""
    return sum(len(r["configs"]) + config_ops.dynamic_count(
        ctx.cluster, r["resource_type"], r["resource_name"]) for r in req["resources"])


def _apply(ctx: RequestContext, r: dict, validate_only: bool) -> int:
    return config_ops.alter(ctx.cluster, r["resource_type"], r["resource_name"],
                            {c["name"]: c["value"] for c in r["configs"]}, validate_only,
                            ctx.broker_id)
