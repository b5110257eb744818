"""DescribeClientQuotas (key 48), v0-1: the quotas whose entities match the filter.

Components filter by entity type: an exact name, the default entity (match type 1), or
any (2); ``strict`` keeps only entities with exactly the filtered types. Invalid filters
get Kafka's codes (INVALID_REQUEST, UNSUPPORTED_VERSION for an unknown entity type) in
the top-level error with null entries. Quotas live in emulator/cluster/quotas.py, where
producer and consumer byte rates are enforced as throttle_time_ms.
"""

from __future__ import annotations

from emulator.cluster.quotas import QuotaError
from emulator.handlers.authz import ClusterOp, Op
from emulator.handlers.base import RequestContext
from wire.errors import ErrorCode as E

API_KEY = 48
VERSIONS = (0, 1)
AUTHORIZE = (ClusterOp(Op.DESCRIBE_CONFIGS),)


def handle(ctx: RequestContext, req: dict, version: int) -> dict:
    try:
        found = ctx.services.quotas.describe(req["components"], req["strict"])
    except QuotaError as e:
        return {"throttle_time_ms": 0, "error_code": e.code, "error_message": e.message,
                "entries": None}
    # an empty message on success, as Kafka 4.4 answers (measured)
    return {"throttle_time_ms": 0, "error_code": E.NONE, "error_message": "", "entries": [
        {"entity": [{"entity_type": t, "entity_name": n} for t, n in entity],
         "values": [{"key": k, "value": v} for k, v in sorted(values.items())]}
        for entity, values in found]}
