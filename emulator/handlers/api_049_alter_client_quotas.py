"""AlterClientQuotas (key 49), v0-1: set or remove quotas of users, client ids and ips.

Each entry is checked on its own, as Kafka's ClientQuotaControlManager does: an empty
or duplicated entity, an ip combined with a user or client id, or a key that does not
belong to the entity's kind (producer_byte_rate, consumer_byte_rate,
request_percentage, controller_mutation_rate for users and client ids;
connection_creation_rate for ips) gets INVALID_REQUEST, an unknown entity type
UNSUPPORTED_VERSION; validate_only changes nothing. Producer and consumer byte rates
and request_percentage are enforced as throttle_time_ms, controller_mutation_rate under
--fidelity kafka only (emulator/cluster/quotas.py, docs/fidelity.md).
"""

from __future__ import annotations

from emulator.cluster.quotas import QuotaError, entity_of
from emulator.handlers.authz import ClusterOp, Op
from emulator.handlers.base import RequestContext
from wire.errors import ErrorCode as E

API_KEY = 49
VERSIONS = (0, 1)
AUTHORIZE = (ClusterOp(Op.ALTER_CONFIGS),)


def handle(ctx: RequestContext, req: dict, version: int) -> dict:
    quotas = ctx.services.quotas
    entries = []
    for entry in req["entries"]:
        out = {"error_code": E.NONE, "error_message": None, "entity": entry["entity"]}
        try:
            quotas.alter(entity_of(entry["entity"]), entry["ops"], req["validate_only"])
        except QuotaError as e:
            out.update(error_code=e.code, error_message=e.message)
        entries.append(out)
    return {"throttle_time_ms": 0, "entries": entries}
