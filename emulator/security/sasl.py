"""SASL mechanisms as small state machines: ``evaluate(client bytes) -> server bytes``.

PLAIN (RFC 4616), SCRAM-SHA-256/512 (RFC 5802/7677) and OAUTHBEARER with unsecured
JWTs (RFC 7628; Kafka's OAuthBearerUnsecuredValidatorCallbackHandler). A mechanism
raises ``AuthenticationFailed`` with the message Kafka sends to the client; the
connection layer answers SASL_AUTHENTICATION_FAILED with it and closes.
"""

from __future__ import annotations

import base64
import binascii
import os
from dataclasses import dataclass

from emulator.security.scram import CredentialStore, ScramMechanism, hmac_

PLAIN = "PLAIN"
SCRAM_SHA_256 = "SCRAM-SHA-256"
SCRAM_SHA_512 = "SCRAM-SHA-512"
OAUTHBEARER = "OAUTHBEARER"
MECHANISMS = (PLAIN, SCRAM_SHA_256, SCRAM_SHA_512, OAUTHBEARER)


class AuthenticationFailed(Exception):
    """The exchange failed; ``str(e)`` is what Kafka tells the client."""


def generic_failure(mechanism: str, reauth: bool = False) -> AuthenticationFailed:
    """Kafka hides a mechanism's own SaslException text behind this message
    (SaslServerAuthenticator: it could reveal whether a user exists)."""
    phase = "re-authentication" if reauth else "authentication"
    return AuthenticationFailed(
        f"Authentication failed during {phase} due to invalid "
        f"credentials with SASL mechanism {mechanism}"
    )


class SaslServer:
    """One exchange. ``principal`` is set (``User:NAME``) once ``complete``."""

    mechanism = ""

    def __init__(self) -> None:
        self.complete = False
        self.principal: str | None = None
        self.credential_expiry_ms: int | None = None  # OAUTHBEARER token expiry

    def evaluate(self, token: bytes) -> bytes:  # pragma: no cover - interface
        raise NotImplementedError


class PlainServer(SaslServer):
    mechanism = PLAIN

    def __init__(self, store: CredentialStore) -> None:
        super().__init__()
        self.store = store

    def evaluate(self, token: bytes) -> bytes:
        parts = token.decode("utf-8", "replace").split("\0")
        if len(parts) != 3:
            raise generic_failure(PLAIN)  # Kafka: "expected 3 tokens" (a SaslException)
        authzid, user, password = parts
        if not user:
            raise AuthenticationFailed("Authentication failed: username not specified")
        if not password:
            raise AuthenticationFailed("Authentication failed: password not specified")
        if not self.store.check_plain(user, password):
            raise AuthenticationFailed("Authentication failed: Invalid username or password")
        if authzid and authzid != user:
            raise AuthenticationFailed(
                "Authentication failed: Client requested an "
                "authorization id that is different from username"
            )
        self.principal, self.complete = f"User:{user}", True
        return b""


def _scram_attrs(msg: str) -> dict[str, str]:
    out = {}
    for part in msg.split(","):
        if len(part) < 2 or part[1] != "=":
            raise ValueError(f"bad SCRAM attribute {part!r}")
        out[part[0]] = part[2:]
    return out


def _saslname(s: str) -> str:
    if "=" in s.replace("=2C", "").replace("=3D", ""):
        raise ValueError("bad saslname")
    return s.replace("=2C", ",").replace("=3D", "=")


class ScramServer(SaslServer):
    """RFC 5802 server: client-first -> server-first -> client-final -> server-final."""

    def __init__(self, store: CredentialStore, mechanism: str) -> None:
        super().__init__()
        self.mechanism = mechanism
        mech = ScramMechanism.from_name(mechanism)
        assert mech is not None
        self.mech = mech
        self.store = store
        self._state = "client-first"
        self._first_bare = self._server_first = self._nonce = self._gs2 = ""
        self._user = ""

    def evaluate(self, token: bytes) -> bytes:
        try:
            msg = token.decode("utf-8")
            if self._state == "client-first":
                return self._client_first(msg)
            if self._state == "client-final":
                return self._client_final(msg)
        except (ValueError, KeyError, binascii.Error, UnicodeDecodeError) as e:
            raise generic_failure(self.mechanism) from e
        raise generic_failure(self.mechanism)

    def _client_first(self, msg: str) -> bytes:
        flag, authzid, bare = msg.split(",", 2)
        if flag not in ("n", "y") or (authzid and not authzid.startswith("a=")):
            raise ValueError("bad gs2 header")
        self._gs2 = f"{flag},{authzid},"
        attrs = _scram_attrs(bare)
        self._user = _saslname(attrs["n"])
        if authzid and _saslname(authzid[2:]) != self._user:
            raise ValueError("authorization id differs from the user")
        cred = self.store.get(self._user, self.mech)
        if cred is None:
            raise ValueError("unknown user")
        self._nonce = attrs["r"] + base64.b64encode(os.urandom(18)).decode()
        self._first_bare = bare
        self._server_first = (
            f"r={self._nonce},s={base64.b64encode(cred.salt).decode()},i={cred.iterations}"
        )
        self._state = "client-final"
        return self._server_first.encode()

    def _client_final(self, msg: str) -> bytes:
        without_proof, _, proof_attr = msg.rpartition(",p=")
        attrs = _scram_attrs(without_proof)
        if not attrs["r"].endswith(self._nonce):
            # Kafka checks only the suffix; older librdkafka (kcat) repeats its nonce.
            raise ValueError("nonce mismatch")
        if base64.b64decode(attrs["c"]).decode() != self._gs2:
            raise ValueError("channel binding mismatch")
        cred = self.store.get(self._user, self.mech)
        if cred is None:
            raise ValueError("user removed during the exchange")
        import hashlib  # here, as in scram.py: only a SCRAM exchange needs them
        import hmac

        h = self.mech.hash_name
        auth_message = f"{self._first_bare},{self._server_first},{without_proof}".encode()
        signature = hmac_(h, cred.stored_key, auth_message)
        proof = base64.b64decode(proof_attr)
        client_key = bytes(a ^ b for a, b in zip(proof, signature, strict=True))
        if not hmac.compare_digest(hashlib.new(h, client_key).digest(), cred.stored_key):
            raise ValueError("invalid proof")
        self._state = "done"
        self.principal, self.complete = f"User:{self._user}", True
        return b"v=" + base64.b64encode(hmac_(h, cred.server_key, auth_message))


def _b64url(s: str) -> bytes:
    return base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))


class OAuthBearerServer(SaslServer):
    """Unsecured JWTs as Kafka's default validator takes them: ``alg: none``, no
    signature, a ``sub`` (the principal) and an ``exp`` not in the past."""

    mechanism = OAUTHBEARER

    def __init__(self, now_ms: int, principal_claim: str = "sub", clock_skew_s: int = 0) -> None:
        super().__init__()
        self.now_ms = now_ms
        self.principal_claim = principal_claim
        self.clock_skew_s = clock_skew_s
        self._error: str | None = None

    def evaluate(self, token: bytes) -> bytes:
        if self._error is not None:
            if token == b"\x01":  # the client's answer to our error challenge
                raise AuthenticationFailed(self._error)
            raise generic_failure(OAUTHBEARER)
        try:
            kv = self._parse_initial(token.decode("utf-8"))
        except (ValueError, UnicodeDecodeError) as e:
            raise generic_failure(OAUTHBEARER) from e
        auth = kv.get("auth", "")
        if not auth.startswith("Bearer "):
            raise generic_failure(OAUTHBEARER)
        problem = self._validate(auth[len("Bearer ") :].strip())
        if problem is not None:
            import json  # OAUTHBEARER's only: a start without SASL never loads it

            self._error = json.dumps({"status": "invalid_token"}, separators=(",", ":"))
            return self._error.encode()
        self.complete = True
        return b""

    @staticmethod
    def _parse_initial(msg: str) -> dict[str, str]:
        gs2, sep, rest = msg.partition("\x01")
        if not sep or not gs2.startswith(("n,", "y,")):
            raise ValueError("bad gs2 header")
        out = {}
        for item in rest.split("\x01"):
            if item:
                k, eq, v = item.partition("=")
                if not eq:
                    raise ValueError("bad key/value")
                out[k] = v
        return out

    def _validate(self, jws: str) -> str | None:
        parts = jws.split(".")
        if len(parts) != 3 or parts[2]:
            return "an unsecured JWS has three parts and no signature"
        import json  # see evaluate

        try:
            header = json.loads(_b64url(parts[0]))
            claims = json.loads(_b64url(parts[1]))
        except (ValueError, binascii.Error):
            return "the JWS header or claims are not base64url JSON"
        if not isinstance(header, dict) or header.get("alg") != "none":
            return "an unsecured JWS must have alg none"
        if not isinstance(claims, dict):
            return "claims must be a JSON object"
        sub, exp = claims.get(self.principal_claim), claims.get("exp")
        if not isinstance(sub, str) or not sub.strip():
            return f"the {self.principal_claim} claim is missing"
        if not isinstance(exp, int | float):
            return "the exp claim is missing"
        exp_ms = int(exp * 1000)
        if exp_ms + self.clock_skew_s * 1000 <= self.now_ms:
            return "the token has expired"
        self.principal, self.credential_expiry_ms = f"User:{sub}", exp_ms
        return None


@dataclass
class SaslSettings:
    """What a SASL listener offers; plain data."""

    mechanisms: tuple[str, ...] = MECHANISMS

    def server(self, mechanism: str, store: CredentialStore, now_ms: int) -> SaslServer | None:
        if mechanism not in self.mechanisms:
            return None
        if mechanism == PLAIN:
            return PlainServer(store)
        if mechanism in (SCRAM_SHA_256, SCRAM_SHA_512):
            return ScramServer(store, mechanism)
        if mechanism == OAUTHBEARER:
            return OAuthBearerServer(now_ms)
        return None
