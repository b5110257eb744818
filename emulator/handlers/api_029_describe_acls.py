"""DescribeAcls (key 29), v1-3.

The bindings matching the filter, grouped by resource pattern (MATCH finds every
binding that applies to a name: literal, wildcard and prefixes). Needs DESCRIBE on
CLUSTER; without an authorizer Kafka answers SECURITY_DISABLED, as here.
"""

from __future__ import annotations

from emulator.handlers.authz import ClusterOp, Op
from emulator.handlers.base import RequestContext
from emulator.security.acl import AclFilter, AclOperation, PatternType, PermissionType, filter_error
from emulator.security.acl import ResourceType as RT
from wire.errors import ErrorCode as E

API_KEY = 29
VERSIONS = (1, 3)
AUTHORIZE = (ClusterOp(Op.DESCRIBE),)
NO_AUTHORIZER = "No Authorizer is configured."  # CreateAcls' and DeleteAcls' wording
# DescribeAcls words it otherwise (measured: conformance/response_diff.py)
NO_AUTHORIZER_DESCRIBE = "No Authorizer is configured on the broker"


def acl_filter(req: dict, prefix: str = "") -> AclFilter | None:
    """The request's filter, or None when a code is not one of Kafka's."""
    try:
        return AclFilter(RT(req["resource_type_filter"]), req["resource_name_filter"],
                         PatternType(req["pattern_type_filter"]), req["principal_filter"],
                         req["host_filter"], AclOperation(req["operation"]),
                         PermissionType(req["permission_type"]))
    except ValueError:
        return None


def handle(ctx: RequestContext, req: dict, version: int) -> dict:
    sec = ctx.services.security
    if sec is None or sec.authorizer is None:
        return {"error_code": E.SECURITY_DISABLED, "error_message": NO_AUTHORIZER_DESCRIBE,
                "resources": []}
    f = acl_filter(req)
    problem = "Unknown code in the filter" if f is None else filter_error(f)
    if f is None or problem:
        return {"error_code": E.INVALID_REQUEST, "error_message": problem, "resources": []}
    groups: dict[tuple, list[dict]] = {}
    for b in sec.acls.describe(f):
        groups.setdefault((b.resource_type, b.resource_name, b.pattern_type), []).append(
            {"principal": b.principal, "host": b.host, "operation": int(b.operation),
             "permission_type": int(b.permission_type)})
    return {"error_code": E.NONE, "error_message": None, "resources": [
        {"resource_type": int(rt), "resource_name": name, "pattern_type": int(pt), "acls": acls}
        for (rt, name, pt), acls in groups.items()]}
