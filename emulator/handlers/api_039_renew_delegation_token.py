"""RenewDelegationToken (key 39), v1-2: extend a token.

As a Kafka broker without ``delegation.token.secret.key`` (Kafka's default) answers: on
PLAINTEXT (or SSL without a client certificate) DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, as
measured on a real 4.4 broker; on SASL listeners DELEGATION_TOKEN_AUTH_DISABLED. Differs
from Kafka: a secret key cannot be configured, so tokens are never issued (SCRAM token
authentication is not implemented).
"""

from __future__ import annotations

from emulator.handlers.base import RequestContext
from emulator.handlers.util import delegation_token_error

API_KEY = 39
VERSIONS = (1, 2)
AUTHORIZE = ()  # no token secret configured: answered with Kafka's error before any check


def handle(ctx: RequestContext, req: dict, version: int) -> dict:
    return {"error_code": delegation_token_error(ctx), "expiry_timestamp_ms": -1,
            "throttle_time_ms": 0}
