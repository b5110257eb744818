"""CreateAcls (key 30), v1-3.

Adds bindings to the ACL store; each creation answers its own code (INVALID_REQUEST
for an ANY/MATCH/UNKNOWN element, a CLUSTER resource not named kafka-cluster, a
principal without a type). Needs ALTER on CLUSTER; SECURITY_DISABLED without an
authorizer. Creating a binding that exists succeeds and changes nothing, as in Kafka.
More than 10,000 creations in one request exceed the controller's records per user
operation (AclControlManager's BoundedList): nothing is created and every creation
answers POLICY_VIOLATION, as a real Kafka 4.4 does.
"""

from __future__ import annotations

from emulator.cluster.metadata import MAX_RECORDS_PER_USER_OP
from emulator.handlers.api_029_describe_acls import NO_AUTHORIZER
from emulator.handlers.authz import ClusterOp, Op
from emulator.handlers.base import RequestContext
from emulator.security.acl import (
    AclBinding,
    AclOperation,
    PatternType,
    PermissionType,
    binding_error,
)
from emulator.security.acl import ResourceType as RT
from wire.errors import ErrorCode as E

API_KEY = 30
VERSIONS = (1, 3)
AUTHORIZE = (ClusterOp(Op.ALTER),)
TOO_LARGE = "Unable to perform excessively large batch operation."


def _create(sec: object, c: dict) -> dict:
    try:
        b = AclBinding(RT(c["resource_type"]), c["resource_name"],
                       PatternType(c["resource_pattern_type"]), c["principal"], c["host"],
                       AclOperation(c["operation"]), PermissionType(c["permission_type"]))
    except ValueError as e:
        return {"error_code": E.INVALID_REQUEST, "error_message": str(e)}
    problem = binding_error(b)
    if problem:
        return {"error_code": E.INVALID_REQUEST, "error_message": problem}
    sec.acls.add(b)  # type: ignore[attr-defined]
    return {"error_code": E.NONE, "error_message": None}


def handle(ctx: RequestContext, req: dict, version: int) -> dict:
    sec = ctx.services.security
    if sec is None or sec.authorizer is None:
        return {"results": [{"error_code": E.SECURITY_DISABLED, "error_message": NO_AUTHORIZER}
                            for _ in req["creations"]]}
    if len(req["creations"]) > MAX_RECORDS_PER_USER_OP:
        return {"throttle_time_ms": 0, "results": [
            {"error_code": E.POLICY_VIOLATION, "error_message": TOO_LARGE}
            for _ in req["creations"]]}
    return {"throttle_time_ms": 0, "results": [_create(sec, c) for c in req["creations"]]}
