"""SaslAuthenticate (key 36), v0-2.

Feeds one token to the connection's mechanism (emulator/security/sasl.py) and answers
its token. v1+ carries session_lifetime_ms (KIP-368): with connections.max.reauth.ms
set, the session lasts that long (or until an OAUTHBEARER token expires) and a
client that does not re-authenticate in time has its connection closed. Failed
credentials get SASL_AUTHENTICATION_FAILED with Kafka's message and the connection
closes after the response. On a connection that is already authenticated (or not
SASL at all) KafkaApis answers ILLEGAL_SASL_STATE, as here.
"""

from __future__ import annotations

from emulator.handlers.base import RequestContext
from emulator.security.sasl import AuthenticationFailed
from emulator.security.session import AUTHENTICATE
from wire.errors import ErrorCode as E

API_KEY = 36
VERSIONS = (0, 2)
AUTHORIZE = ()  # authentication itself: no principal yet


def handle(ctx: RequestContext, req: dict, version: int) -> dict:
    security, session = ctx.services.security, ctx.session
    if security is None or session is None or session.state != AUTHENTICATE:
        return {"error_code": E.ILLEGAL_SASL_STATE,
                "error_message": "SaslAuthenticate request received after successful "
                "authentication", "auth_bytes": b""}
    now = ctx.cluster.now()
    try:
        out = session.authenticate(req["auth_bytes"], security, now)
    except AuthenticationFailed as e:
        return {"error_code": E.SASL_AUTHENTICATION_FAILED, "error_message": str(e),
                "auth_bytes": b""}
    # Kafka's success carries an empty message, not a null one (measured on 4.4)
    return {"error_code": E.NONE, "error_message": "", "auth_bytes": out,
            "session_lifetime_ms": session.session_lifetime_ms(now) if session.complete else 0}
