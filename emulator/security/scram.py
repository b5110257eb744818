"""SCRAM credentials (RFC 5802/7677) as Kafka stores them: salted, never the password.

A credential is (salt, StoredKey, ServerKey, iterations) per user and mechanism,
Kafka's ScramCredential. ``--sasl-user NAME:PASSWORD`` and AlterUserScramCredentials
(51) fill the store; PLAIN logins are checked against the same salted credential,
so no password is ever kept.
"""

from __future__ import annotations

import base64
import os
from dataclasses import dataclass, field
from enum import IntEnum


class ScramMechanism(IntEnum):
    """Kafka's ScramMechanism codes (DescribeUserScramCredentials, AlterUserScramCredentials)."""

    UNKNOWN = 0
    SCRAM_SHA_256 = 1
    SCRAM_SHA_512 = 2

    @property
    def mechanism_name(self) -> str:
        return self.name.replace("_", "-")

    @property
    def hash_name(self) -> str:
        return {1: "sha256", 2: "sha512"}[int(self)]

    @classmethod
    def from_name(cls, name: str) -> ScramMechanism | None:
        try:
            return cls[name.replace("-", "_")]
        except KeyError:
            return None


MIN_ITERATIONS = 4096  # Kafka's ScramMechanism.minIterations
MAX_ITERATIONS = 16384  # Kafka's limit for AlterUserScramCredentials
DEFAULT_ITERATIONS = 4096


# hashlib and hmac are imported where a credential is made or checked: hashlib builds
# every OpenSSL digest's constructor when imported (~0.6 MB of a process), which a
# cluster without SCRAM users never uses (docs/scale.md, start-up).
def hmac_(hash_name: str, key: bytes, msg: bytes) -> bytes:
    import hmac

    return hmac.new(key, msg, hash_name).digest()


def salted_password(mech: ScramMechanism, password: bytes, salt: bytes, iterations: int) -> bytes:
    import hashlib

    return hashlib.pbkdf2_hmac(mech.hash_name, password, salt, iterations)


@dataclass(frozen=True)
class ScramCredential:
    salt: bytes
    stored_key: bytes
    server_key: bytes
    iterations: int

    @classmethod
    def from_salted_password(cls, mech: ScramMechanism, salt: bytes, salted: bytes,
                             iterations: int) -> ScramCredential:
        import hashlib

        h = mech.hash_name
        client_key = hmac_(h, salted, b"Client Key")
        return cls(salt, hashlib.new(h, client_key).digest(), hmac_(h, salted, b"Server Key"),
                   iterations)

    @classmethod
    def from_password(cls, mech: ScramMechanism, password: str,
                      iterations: int = DEFAULT_ITERATIONS,
                      salt: bytes | None = None) -> ScramCredential:
        salt = os.urandom(32) if salt is None else salt
        return cls.from_salted_password(
            mech, salt, salted_password(mech, password.encode(), salt, iterations), iterations)

    def check_password(self, mech: ScramMechanism, password: str) -> bool:
        import hmac

        other = ScramCredential.from_password(mech, password, self.iterations, self.salt)
        return hmac.compare_digest(other.stored_key, self.stored_key)

    def to_dict(self) -> dict:
        return {"salt": base64.b64encode(self.salt).decode(),
                "stored_key": base64.b64encode(self.stored_key).decode(),
                "server_key": base64.b64encode(self.server_key).decode(),
                "iterations": self.iterations}

    @classmethod
    def from_dict(cls, d: dict) -> ScramCredential:
        return cls(base64.b64decode(d["salt"]), base64.b64decode(d["stored_key"]),
                   base64.b64decode(d["server_key"]), int(d["iterations"]))


@dataclass
class CredentialStore:
    """user -> mechanism -> salted credential (plain data, serializable)."""

    users: dict[str, dict[ScramMechanism, ScramCredential]] = field(default_factory=dict)

    def add_user(self, name: str, password: str, iterations: int = DEFAULT_ITERATIONS) -> None:
        """A ``--sasl-user``: usable with PLAIN and both SCRAM mechanisms."""
        self.users[name] = {m: ScramCredential.from_password(m, password, iterations)
                            for m in (ScramMechanism.SCRAM_SHA_256, ScramMechanism.SCRAM_SHA_512)}

    def get(self, name: str, mech: ScramMechanism) -> ScramCredential | None:
        return self.users.get(name, {}).get(mech)

    def set(self, name: str, mech: ScramMechanism, cred: ScramCredential) -> None:
        self.users.setdefault(name, {})[mech] = cred

    def delete(self, name: str, mech: ScramMechanism) -> bool:
        creds = self.users.get(name)
        if not creds or mech not in creds:
            return False
        del creds[mech]
        if not creds:
            del self.users[name]
        return True

    def check_plain(self, name: str, password: str) -> bool:
        creds = self.users.get(name)
        if not creds:
            return False
        mech, cred = next(iter(sorted(creds.items())))
        return cred.check_password(mech, password)

    def to_dict(self) -> dict:
        return {u: {m.mechanism_name: c.to_dict() for m, c in creds.items()}
                for u, creds in self.users.items()}

    @classmethod
    def from_dict(cls, d: dict) -> CredentialStore:
        out = cls()
        for u, creds in d.items():
            for name, c in creds.items():
                mech = ScramMechanism.from_name(name)
                if mech is not None:
                    out.set(u, mech, ScramCredential.from_dict(c))
        return out
