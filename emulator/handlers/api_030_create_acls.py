"""CreateAcls (key 30), v1-3.

Adds bindings to the ACL store; each creation answers its own code (INVALID_REQUEST
for a CLUSTER resource not named kafka-cluster, an empty name, a code Kafka does not
know, a principal without a type: acl.binding_error, Kafka's messages). A code 0
(UNKNOWN) closes the connection (Kafka's parsing of the request refuses it), and a
creation naming ANY or MATCH fails the whole request with UNKNOWN_SERVER_ERROR and no
message (Kafka cannot build its AclBinding); measured on Kafka 4.4. Needs ALTER on
CLUSTER; SECURITY_DISABLED without an authorizer. Creating a binding that exists
succeeds and changes nothing, as in Kafka.
More than 10,000 creations in one request exceed the controller's records per user
operation (AclControlManager's BoundedList): nothing is created and every creation
answers POLICY_VIOLATION, as a real Kafka 4.4 does.
"""

from __future__ import annotations

from emulator.cluster.metadata import MAX_RECORDS_PER_USER_OP
from emulator.handlers.api_029_describe_acls import NO_AUTHORIZER, known
from emulator.handlers.authz import ClusterOp, Op
from emulator.handlers.base import MalformedRequest, RequestContext
from emulator.security.acl import (
    AclBinding,
    AclOperation,
    PatternType,
    PermissionType,
    binding_error,
    names_a_filter,
)
from emulator.security.acl import ResourceType as RT
from wire.errors import ErrorCode as E

API_KEY = 30
VERSIONS = (1, 3)
AUTHORIZE = (ClusterOp(Op.ALTER),)
TOO_LARGE = "Unable to perform excessively large batch operation."


def _binding(c: dict) -> AclBinding:
    """The creation as Kafka reads it: code 0 refused while parsing (MalformedRequest),
    a code Kafka does not know as UNKNOWN."""
    codes = (c["resource_type"], c["resource_pattern_type"], c["operation"],
             c["permission_type"])
    if 0 in codes:
        raise MalformedRequest(f"CreatableAcls contain unknown elements: {codes}")
    return AclBinding(known(RT, codes[0]), c["resource_name"], known(PatternType, codes[1]),
                      c["principal"], c["host"], known(AclOperation, codes[2]),
                      known(PermissionType, codes[3]))


def _create(sec: object, b: AclBinding) -> dict:
    problem = binding_error(b)
    if problem:
        return {"error_code": E.INVALID_REQUEST, "error_message": problem}
    sec.acls.add(b)  # type: ignore[attr-defined]
    return {"error_code": E.NONE, "error_message": None}


def handle(ctx: RequestContext, req: dict, version: int) -> dict:
    bindings = [_binding(c) for c in req["creations"]]
    sec = ctx.services.security
    if sec is None or sec.authorizer is None:
        return {"results": [{"error_code": E.SECURITY_DISABLED, "error_message": NO_AUTHORIZER}
                            for _ in bindings]}
    if any(names_a_filter(b) for b in bindings):
        return {"throttle_time_ms": 0, "results": [
            {"error_code": E.UNKNOWN_SERVER_ERROR, "error_message": None} for _ in bindings]}
    if len(bindings) > MAX_RECORDS_PER_USER_OP:
        return {"throttle_time_ms": 0, "results": [
            {"error_code": E.POLICY_VIOLATION, "error_message": TOO_LARGE}
            for _ in bindings]}
    return {"throttle_time_ms": 0, "results": [_create(sec, b) for b in bindings]}
