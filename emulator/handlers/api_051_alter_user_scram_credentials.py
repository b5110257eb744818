"""AlterUserScramCredentials (key 51), v0.

Upserts SCRAM credentials from the client's salt and salted password (the client
salts; the broker derives and keeps StoredKey/ServerKey, never a password) and
deletes credentials. Per-user codes as Kafka's ScramControlManager gives them:
UNACCEPTABLE_CREDENTIAL (empty name, iterations outside 4096..16384),
UNSUPPORTED_SASL_MECHANISM, RESOURCE_NOT_FOUND (deleting what does not exist),
DUPLICATE_RESOURCE (a user and mechanism altered twice in one request). Needs ALTER on
CLUSTER: refused, every user named in deletions AND upsertions gets
CLUSTER_AUTHORIZATION_FAILED, sorted, as Kafka's AlterUserScramCredentialsRequest.
getErrorResponse (the generic refusal mirrors only the first request array, and
kafka-configs adding a user then failed with "The broker response did not contain a
result for user ...").
"""

from __future__ import annotations

from collections import Counter

from emulator.handlers.authz import RT, Op, allowed, denied_message
from emulator.handlers.base import RequestContext
from emulator.security.scram import MAX_ITERATIONS, MIN_ITERATIONS, ScramCredential, ScramMechanism
from wire.errors import ErrorCode as E

API_KEY = 51
VERSIONS = (0, 0)
AUTHORIZE = ()  # ALTER on CLUSTER, in handle: Kafka answers every user named (above)


def _mechanism(code: int) -> ScramMechanism | None:
    try:
        m = ScramMechanism(code)
    except ValueError:
        return None
    return None if m == ScramMechanism.UNKNOWN else m


def _check(item: dict, upsert: bool) -> tuple[int, str] | None:
    if not item["name"]:
        return E.UNACCEPTABLE_CREDENTIAL, "Username must not be empty"
    if _mechanism(item["mechanism"]) is None:
        return E.UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism"
    if upsert:
        if item["iterations"] < MIN_ITERATIONS:
            return E.UNACCEPTABLE_CREDENTIAL, "Too few iterations"
        if item["iterations"] > MAX_ITERATIONS:
            return E.UNACCEPTABLE_CREDENTIAL, "Too many iterations"
    return None


def handle(ctx: RequestContext, req: dict, version: int) -> dict:
    if not allowed(ctx, Op.ALTER, RT.CLUSTER):
        users = sorted({i["name"] for i in req["deletions"] + req["upsertions"]})
        return {"throttle_time_ms": 0, "results": [
            {"user": u, "error_code": E.CLUSTER_AUTHORIZATION_FAILED,
             "error_message": denied_message(ctx, API_KEY, E.CLUSTER_AUTHORIZATION_FAILED,
                                             Op.ALTER)} for u in users]}
    sec = ctx.services.security
    if sec is None:
        return {"results": []}
    store = sec.credentials
    # One user may alter several mechanisms at once (kafka-configs does); the same
    # (user, mechanism) twice is the duplicate.
    counts = Counter((i["name"], i["mechanism"]) for i in req["deletions"] + req["upsertions"])
    results: dict[str, dict] = {}
    for upsert, items in ((False, req["deletions"]), (True, req["upsertions"])):
        for item in items:
            name = item["name"]
            if results.get(name, {}).get("error_code"):
                continue  # the user's first failure is its answer
            if counts[(name, item["mechanism"])] > 1:
                results[name] = {"user": name, "error_code": E.DUPLICATE_RESOURCE,
                                 "error_message": "A user credential cannot be altered twice "
                                 "in the same request"}
                continue
            problem = _check(item, upsert)
            if problem is None:
                mech = _mechanism(item["mechanism"])
                assert mech is not None
                if upsert:
                    store.set(name, mech, ScramCredential.from_salted_password(
                        mech, item["salt"], item["salted_password"], item["iterations"]))
                elif not store.delete(name, mech):
                    problem = (E.RESOURCE_NOT_FOUND,
                               "Attempt to delete a user credential that does not exist")
            code, message = problem or (E.NONE, None)
            results[name] = {"user": name, "error_code": code, "error_message": message}
    return {"throttle_time_ms": 0, "results": list(results.values())}
