"""DescribeUserScramCredentials (key 50), v0.

Mechanisms and iterations of each user's SCRAM credentials (never the salt or keys);
all users when the list is null or empty. An unknown user gets RESOURCE_NOT_FOUND, a
user named twice DUPLICATE_RESOURCE, as Kafka answers. Needs DESCRIBE on CLUSTER.
"""

from __future__ import annotations

from collections import Counter

from emulator.handlers.authz import ClusterOp, Op
from emulator.handlers.base import RequestContext
from wire.errors import ErrorCode as E

API_KEY = 50
VERSIONS = (0, 0)
AUTHORIZE = (ClusterOp(Op.DESCRIBE),)


def handle(ctx: RequestContext, req: dict, version: int) -> dict:
    sec = ctx.services.security
    store = sec.credentials if sec is not None else None
    users = store.users if store is not None else {}
    names = [u["name"] for u in req["users"] or []] or sorted(users)
    seen = Counter(names)
    results = []
    for name in dict.fromkeys(names):
        if seen[name] > 1:
            results.append({"user": name, "error_code": E.DUPLICATE_RESOURCE,
                            "error_message": "Cannot describe SCRAM credentials for the same "
                            f"user twice in a single request: {name}"})
        elif name not in users:
            results.append({"user": name, "error_code": E.RESOURCE_NOT_FOUND,
                            "error_message": "Attempt to describe a user credential that "
                            f"does not exist: {name}"})
        else:
            results.append({"user": name, "error_code": E.NONE, "credential_infos": [
                {"mechanism": int(m), "iterations": c.iterations}
                for m, c in sorted(users[name].items())]})
    return {"throttle_time_ms": 0, "error_code": E.NONE, "results": results}
