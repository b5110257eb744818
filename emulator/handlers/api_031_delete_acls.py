"""DeleteAcls (key 31), v1-3.

Removes every binding matching each filter (filters as DescribeAcls takes them) and
lists what each removed. Needs ALTER on CLUSTER; SECURITY_DISABLED without an
authorizer. Filters matching more than 10,000 bindings together remove none and each
answers INVALID_REQUEST with Kafka's message (the controller's cap on records per user
operation; a real Kafka 4.4 answers so for one filter over the cap and for two filters
of 5,000 and 5,001). A code 0 (UNKNOWN) in a filter closes the connection, as
Kafka's parsing of the request does; a code Kafka does not know reads as UNKNOWN and
that filter answers INVALID_REQUEST with the controller's message (measured).
"""

from __future__ import annotations

from emulator.cluster.metadata import MAX_RECORDS_PER_USER_OP
from emulator.handlers.api_029_describe_acls import NO_AUTHORIZER, acl_filter
from emulator.handlers.authz import ClusterOp, Op
from emulator.handlers.base import RequestContext
from emulator.security.acl import AclFilter, filter_error
from wire.errors import ErrorCode as E

API_KEY = 31
VERSIONS = (1, 3)
AUTHORIZE = (ClusterOp(Op.ALTER),)
TOO_MANY = (f"Cannot remove more than {MAX_RECORDS_PER_USER_OP} acls in a single delete "
            "operation.")


def _delete(sec: object, f: AclFilter) -> dict:
    problem = filter_error(f)
    if problem:
        return {"error_code": E.INVALID_REQUEST, "error_message": problem, "matching_acls": []}
    gone = sec.acls.delete(f)  # type: ignore[attr-defined]
    return {"error_code": E.NONE, "error_message": None, "matching_acls": [
        {"error_code": E.NONE, "error_message": None, "resource_type": int(b.resource_type),
         "resource_name": b.resource_name, "pattern_type": int(b.pattern_type),
         "principal": b.principal, "host": b.host, "operation": int(b.operation),
         "permission_type": int(b.permission_type)} for b in gone]}


def handle(ctx: RequestContext, req: dict, version: int) -> dict:
    filters = [acl_filter(item) for item in req["filters"]]  # code 0: no answer at all
    sec = ctx.services.security
    if sec is None or sec.authorizer is None:
        return {"filter_results": [
            {"error_code": E.SECURITY_DISABLED, "error_message": NO_AUTHORIZER}
            for _ in req["filters"]]}
    matched: set = set()
    for f in filters:
        if not filter_error(f):
            matched.update(sec.acls.describe(f))
    if len(matched) > MAX_RECORDS_PER_USER_OP:
        return {"throttle_time_ms": 0, "filter_results": [
            {"error_code": E.INVALID_REQUEST, "error_message": TOO_MANY, "matching_acls": []}
            for _ in req["filters"]]}
    return {"throttle_time_ms": 0, "filter_results": [_delete(sec, f) for f in filters]}
