"""CreateDelegationToken (key 38), v1-3: issue a token for the requester (or owner).

As a Kafka broker without ``delegation.token.secret.key`` (Kafka's default) answers: on
PLAINTEXT (or SSL without a client certificate) DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, as
measured on a real 4.4 broker; on SASL listeners DELEGATION_TOKEN_AUTH_DISABLED. Differs
from Kafka: a secret key cannot be configured, so tokens are never issued (SCRAM token
authentication is not implemented).
"""

from __future__ import annotations

from emulator.handlers.base import RequestContext
from emulator.handlers.util import delegation_token_error

API_KEY = 38
VERSIONS = (1, 3)
AUTHORIZE = ()  # no token secret configured: answered with Kafka's error before any check


def handle(ctx: RequestContext, req: dict, version: int) -> dict:
    principal_type, _, principal_name = ctx.principal.partition(":")
    return {"error_code": delegation_token_error(ctx), "principal_type": principal_type,
            "principal_name": principal_name, "token_requester_principal_type": principal_type,
            "token_requester_principal_name": principal_name, "issue_timestamp_ms": -1,
            "expiry_timestamp_ms": -1, "max_timestamp_ms": -1, "token_id": "", "hmac": b"",
            "throttle_time_ms": 0}
