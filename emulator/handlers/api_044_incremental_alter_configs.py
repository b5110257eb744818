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
from emulator.handlers.authz import RT, Each, Op, config_resource
from emulator.handlers.base import RequestContext, Sliced
from emulator.handlers.util import alter_config_resources

API_KEY = 44
VERSIONS = (0, 1)
AUTHORIZE = (
    Each(RT.TOPIC, Op.ALTER_CONFIGS, "resources", resolve=config_resource(Op.ALTER_CONFIGS)),
)


def handle(ctx: RequestContext, req: dict, version: int) -> dict | Sliced:
    return alter_config_resources(req, lambda: sum(len(r["configs"]) for r in req["resources"]),
                                  lambda r, validate_only: _apply(ctx, r, validate_only))


def _apply(ctx: RequestContext, r: dict, validate_only: bool) -> int:
    return config_ops.incremental_alter(ctx.cluster, r["resource_type"], r["resource_name"],
                                        [(c["name"], c["config_operation"], c["value"])
                                         for c in r["configs"]], validate_only, ctx.broker_id)
