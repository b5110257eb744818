"""SaslHandshake (key 17), v0-1.

On a SASL listener it starts an exchange with the chosen mechanism (v1: tokens in
SaslAuthenticate requests; v0: raw tokens without Kafka framing) and lists the
enabled mechanisms; an unknown mechanism gets UNSUPPORTED_SASL_MECHANISM and the
connection closes, as Kafka's SaslServerAuthenticator does. On an authenticated
connection it starts re-authentication (KIP-368) if connections.max.reauth.ms is
set, as Kafka does. Where no authenticator runs (a
PLAINTEXT or SSL listener) it reaches KafkaApis, which answers ILLEGAL_SASL_STATE.
"""

from __future__ import annotations

from emulator.handlers.base import RequestContext
from wire.errors import ErrorCode as E

API_KEY = 17
VERSIONS = (0, 1)
AUTHORIZE = ()  # authentication itself: no principal yet


def handle(ctx: RequestContext, req: dict, version: int) -> dict:
    security, session = ctx.services.security, ctx.session
    if security is None or session is None or not session.uses_sasl:
        return {"error_code": E.ILLEGAL_SASL_STATE, "mechanisms": []}
    if session.complete and not session.may_reauthenticate(security, ctx.cluster.now()):
        # no re-authentication here (see Session.may_reauthenticate): ILLEGAL_SASL_STATE,
        # the connection stays open (measured on a 4.4 broker)
        return {"error_code": E.ILLEGAL_SASL_STATE, "mechanisms": []}
    ok = session.handshake(req["mechanism"], version, security, ctx.cluster.now())
    return {"error_code": E.NONE if ok else E.UNSUPPORTED_SASL_MECHANISM,
            "mechanisms": list(security.mechanisms)}
