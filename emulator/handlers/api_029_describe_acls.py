"""DescribeAcls (key 29), v1-3.

The bindings matching the filter, grouped by resource pattern (MATCH finds every
binding that applies to a name: literal, wildcard and prefixes). Needs DESCRIBE on
CLUSTER; without an authorizer Kafka answers SECURITY_DISABLED, as here. A code 0
(UNKNOWN) in the filter closes the connection, as Kafka's parsing of the request
does; a code Kafka does not know reads as UNKNOWN and matches nothing (both measured
on Kafka 4.4).
"""

from __future__ import annotations

from enum import IntEnum
from typing import TypeVar

from emulator.handlers.authz import ClusterOp, Op
from emulator.handlers.base import MalformedRequest, RequestContext
from emulator.security.acl import AclFilter, AclOperation, PatternType, PermissionType
from emulator.security.acl import ResourceType as RT
from wire.errors import ErrorCode as E

C = TypeVar("C", bound=IntEnum)
API_KEY = 29
VERSIONS = (1, 3)
AUTHORIZE = (ClusterOp(Op.DESCRIBE),)
NO_AUTHORIZER = "No Authorizer is configured."  # CreateAcls' and DeleteAcls' wording
# DescribeAcls words it otherwise (measured: conformance/response_diff.py)
NO_AUTHORIZER_DESCRIBE = "No Authorizer is configured on the broker"


def known(kind: type[C], code: int) -> C:
    """A code as Kafka's fromCode reads it: one Kafka does not know is UNKNOWN (0)."""
    try:
        return kind(code)
    except ValueError:
        return kind(0)


def acl_filter(req: dict) -> AclFilter:
    """The request's filter. A code 0 (UNKNOWN) is refused while Kafka parses the
    request (DescribeAcls/DeleteAclsRequest's own checks): MalformedRequest."""
    codes = (req["resource_type_filter"], req["pattern_type_filter"], req["operation"],
             req["permission_type"])
    if 0 in codes:
        raise MalformedRequest(f"the filter contains UNKNOWN elements: {codes}")
    return AclFilter(known(RT, codes[0]), req["resource_name_filter"],
                     known(PatternType, codes[1]), req["principal_filter"],
                     req["host_filter"], known(AclOperation, codes[2]),
                     known(PermissionType, codes[3]))


def handle(ctx: RequestContext, req: dict, version: int) -> dict:
    f = acl_filter(req)
    sec = ctx.services.security
    if sec is None or sec.authorizer is None:
        return {"error_code": E.SECURITY_DISABLED, "error_message": NO_AUTHORIZER_DESCRIBE,
                "resources": []}
    groups: dict[tuple, list[dict]] = {}
    for b in sec.acls.describe(f):
        groups.setdefault((b.resource_type, b.resource_name, b.pattern_type), []).append(
            {"principal": b.principal, "host": b.host, "operation": int(b.operation),
             "permission_type": int(b.permission_type)})
    return {"error_code": E.NONE, "error_message": None, "resources": [
        {"resource_type": int(rt), "resource_name": name, "pattern_type": int(pt), "acls": acls}
        for (rt, name, pt), acls in groups.items()]}
