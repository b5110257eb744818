"""A connection's authentication state: Kafka's SaslServerAuthenticator, sans I/O.

The server asks ``gate(api_key)`` before dispatching each request; the SaslHandshake
and SaslAuthenticate handlers drive the exchange through ``handshake`` and
``authenticate``. A failure that Kafka answers and then closes on sets
``close_after_response``.

State table (what each state accepts; anything else closes the connection, as Kafka's
authenticator throws IllegalSaslStateException before any handler runs):

    state           accepts            next
    HANDSHAKE       ApiVersions(18)    HANDSHAKE
                    SaslHandshake(17)  AUTHENTICATE (v1+) / RAW_TOKENS (v0)
    AUTHENTICATE    SaslAuthenticate   AUTHENTICATE until the mechanism completes,
                    (36)               then AUTHENTICATED
    RAW_TOKENS      raw SASL frames    (SaslHandshake v0: tokens without Kafka framing)
    AUTHENTICATED   everything         SaslHandshake starts re-authentication (KIP-368)
    FAILED          nothing
"""

from __future__ import annotations

from dataclasses import dataclass, field

from emulator.security.acl import ANONYMOUS
from emulator.security.config import Security
from emulator.security.sasl import AuthenticationFailed, SaslServer, SaslSettings

HANDSHAKE = "HANDSHAKE"
AUTHENTICATE = "AUTHENTICATE"
RAW_TOKENS = "RAW_TOKENS"
AUTHENTICATED = "AUTHENTICATED"
FAILED = "FAILED"

API_VERSIONS, SASL_HANDSHAKE, SASL_AUTHENTICATE = 18, 17, 36

ALLOWED: dict[str, frozenset[int]] = {
    HANDSHAKE: frozenset({API_VERSIONS, SASL_HANDSHAKE}),
    AUTHENTICATE: frozenset({SASL_AUTHENTICATE}),
    RAW_TOKENS: frozenset(),
    FAILED: frozenset(),
}


@dataclass
class Session:
    """Who is on the other end of one connection, and how far they got."""

    listener: str = "PLAINTEXT"
    protocol: str = "PLAINTEXT"
    principal: str = ANONYMOUS  # TLS: from the client certificate; SASL: from the login
    state: str = AUTHENTICATED  # a non-SASL listener has nothing to negotiate
    mechanism: str | None = None
    expires_ms: int | None = None  # KIP-368: the session ends here unless re-authenticated
    reauthenticating: bool = False
    last_reauth_ms: int | None = None  # when the last re-authentication began
    close_after_response: str | None = None
    # The last response's throttle_time_ms under --fidelity kafka: the server reads no
    # further request of this connection for so long (Kafka's muting, KIP-219).
    mute_ms: int = 0
    _server: SaslServer | None = field(default=None, repr=False)

    @classmethod
    def for_listener(cls, name: str, protocol: str, tls_principal: str | None) -> Session:
        sasl = protocol.startswith("SASL_")
        return cls(name, protocol, tls_principal or ANONYMOUS,
                   HANDSHAKE if sasl else AUTHENTICATED)

    @property
    def uses_sasl(self) -> bool:
        return self.protocol.startswith("SASL_")

    def gate(self, api_key: int, now_ms: int) -> str | None:
        """None to dispatch the request; else why the connection must close."""
        if self.state == AUTHENTICATED:
            if self.expires_ms is not None and now_ms >= self.expires_ms and \
                    api_key != SASL_HANDSHAKE:
                return (f"the session of {self.principal} expired (KIP-368 "
                        "connections.max.reauth.ms) without re-authentication")
            return None
        if api_key in ALLOWED[self.state]:
            return None
        phase = "SASL handshake" if self.state == HANDSHAKE else "SASL authentication"
        return f"Unexpected Kafka request of type {api_key} during {phase}."

    # ---- SaslHandshake ---------------------------------------------------------------
    def handshake(self, mechanism: str, version: int, security: Security,
                  now_ms: int) -> bool:
        """Start an exchange; False when the mechanism is not enabled (Kafka answers
        UNSUPPORTED_SASL_MECHANISM and closes)."""
        self.reauthenticating = self.state == AUTHENTICATED
        if self.reauthenticating:
            self.last_reauth_ms = now_ms
        server = SaslSettings(security.mechanisms).server(mechanism, security.credentials,
                                                          now_ms)
        if server is None:
            self.state, self.close_after_response = FAILED, (
                f"unsupported SASL mechanism {mechanism!r}")
            return False
        if self.reauthenticating and mechanism != self.mechanism:
            # Kafka: re-authentication must use the mechanism of the first login.
            self.state, self.close_after_response = FAILED, (
                f"re-authentication with {mechanism} after {self.mechanism}")
            return False
        self._server, self.mechanism = server, mechanism
        self.state = AUTHENTICATE if version >= 1 else RAW_TOKENS
        return True

    # ---- SaslAuthenticate (or a raw token) -----------------------------------------------
    def authenticate(self, token: bytes, security: Security, now_ms: int) -> bytes:
        """Feed one token; the answer token. Raises AuthenticationFailed (state FAILED,
        close after the response)."""
        server = self._server
        assert server is not None
        try:
            out = server.evaluate(token)
            if server.complete and self.reauthenticating and \
                    server.principal != self.principal:
                # Kafka names them type.name here ("User.alice", measured on 4.4)
                raise AuthenticationFailed(
                    f"Cannot change principals during re-authentication from "
                    f"{self.principal.replace(':', '.', 1)}: "
                    f"{(server.principal or '').replace(':', '.', 1)}")
        except AuthenticationFailed as e:
            self.state = FAILED
            if self.reauthenticating and "during authentication" in str(e):
                # Kafka names the phase: "Authentication failed during re-authentication..."
                e = AuthenticationFailed(str(e).replace("during authentication",
                                                        "during re-authentication"))
            self.close_after_response = f"{self.mechanism} authentication failed: {e}"
            raise e from None
        if server.complete:
            self.principal = server.principal or ANONYMOUS
            self.state, self._server = AUTHENTICATED, None
            self.expires_ms = self._expiry(server, security, now_ms)
        return out

    @property
    def complete(self) -> bool:
        return self.state == AUTHENTICATED

    @staticmethod
    def _expiry(server: SaslServer, security: Security, now_ms: int) -> int | None:
        """Kafka: with connections.max.reauth.ms > 0 the session lasts that long, or
        until the credential (an OAUTHBEARER token) expires if that is sooner."""
        if security.connections_max_reauth_ms <= 0:
            return None
        end = now_ms + security.connections_max_reauth_ms
        if server.credential_expiry_ms is not None:
            end = min(end, server.credential_expiry_ms)
        return end

    def may_reauthenticate(self, security: Security, now_ms: int) -> bool:
        """Kafka re-authenticates (KIP-368) only where connections.max.reauth.ms > 0, and
        at most once a second (KafkaChannel.maybeBeginServerReauthentication); a handshake
        that may not re-authenticate reaches KafkaApis, which answers ILLEGAL_SASL_STATE."""
        if security.connections_max_reauth_ms <= 0:
            return False
        return self.last_reauth_ms is None or now_ms - self.last_reauth_ms >= 1000

    def session_lifetime_ms(self, now_ms: int) -> int:
        return 0 if self.expires_ms is None else max(0, self.expires_ms - now_ms)
