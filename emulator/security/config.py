"""What a secured cluster is asked for, and the security state it runs with.

``SecurityConfig`` is what the command line, KAFKA_EMULATOR_* variables and
``Cluster(security=...)`` give; ``Security`` is the live, serializable state the
handlers and connections use (credentials, ACLs, super users) - ``ctx.services
["security"]``. With neither listeners nor users nor an authorizer nothing changes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from emulator.security.acl import AclStore, Authorizer
from emulator.security.listeners import ListenerSpec, parse_listeners
from emulator.security.sasl import MECHANISMS
from emulator.security.scram import CredentialStore


@dataclass
class SecurityConfig:
    """Options of a secured cluster (all optional; the defaults change nothing)."""

    listeners: str | None = None  # Kafka syntax; None: one PLAINTEXT listener (--port)
    sasl_users: dict[str, str] = field(default_factory=dict)  # name -> password
    super_users: list[str] = field(default_factory=list)  # names, or full principals
    authorizer: bool = False
    allow_everyone_if_no_acl_found: bool = False
    tls_dir: str | None = None  # where generated (or given) TLS files live
    tls_cert: str | None = None  # user-supplied PEM certificate (chain) for the brokers
    tls_key: str | None = None  # its PEM private key
    tls_client_auth: str = "none"  # Kafka's ssl.client.auth: none, requested, required
    # PEM CA certificates client certificates must chain to (Kafka's ssl.truststore);
    # None: the generated CA
    tls_client_ca: str | None = None
    sasl_mechanisms: tuple[str, ...] = MECHANISMS
    connections_max_reauth_ms: int = 0  # Kafka's default: sessions never expire
    protocol_map: str | None = None  # listener.security.protocol.map

    def listener_specs(self, default_port: int) -> list[ListenerSpec]:
        if not self.listeners:
            return [ListenerSpec("PLAINTEXT", "PLAINTEXT", "", default_port)]
        return parse_listeners(self.listeners, self.protocol_map)

    @property
    def enabled(self) -> bool:
        return bool(self.listeners or self.sasl_users or self.authorizer)

    @classmethod
    def coerce(cls, value: SecurityConfig | dict | None) -> SecurityConfig:
        if value is None:
            return cls()
        if isinstance(value, SecurityConfig):
            return value
        return cls(**value)


# Ready-made secured clusters for tests (pytest plugin, containers): a user ``admin``
# (super user where an authorizer runs) and a user ``alice``.
PRESET_USERS = {"admin": "admin-secret", "alice": "alice-secret"}
PRESETS: dict[str, dict] = {
    "sasl_plaintext": {"listeners": "SASL_PLAINTEXT://127.0.0.1:0", "sasl_users": PRESET_USERS},
    "sasl_ssl": {"listeners": "SASL_SSL://127.0.0.1:0", "sasl_users": PRESET_USERS},
    "ssl": {"listeners": "SSL://127.0.0.1:0"},
    "mtls": {"listeners": "SSL://127.0.0.1:0", "tls_client_auth": "required"},
    "acls": {"listeners": "SASL_PLAINTEXT://127.0.0.1:0", "sasl_users": PRESET_USERS,
             "super_users": ["admin"], "authorizer": True},
}


def preset(name: str, **overrides: object) -> dict:
    """A copy of a preset (``sasl_ssl``, ``acls``...) with overrides applied."""
    if name not in PRESETS:
        raise ValueError(f"unknown security preset {name!r}; presets are {sorted(PRESETS)}")
    return {**PRESETS[name], **overrides}


def principal_of(name: str) -> str:
    """``alice`` -> ``User:alice``; a full principal stays as it is (super.users)."""
    return name if ":" in name else f"User:{name}"


@dataclass
class Security:
    """The cluster's live security state: credentials, ACLs, who is super."""

    credentials: CredentialStore = field(default_factory=CredentialStore)
    authorizer: Authorizer | None = None  # None: no checks (Kafka without authorizer)
    acls: AclStore = field(default_factory=AclStore)
    mechanisms: tuple[str, ...] = MECHANISMS
    connections_max_reauth_ms: int = 0

    @classmethod
    def from_config(cls, cfg: SecurityConfig) -> Security:
        sec = cls(mechanisms=tuple(cfg.sasl_mechanisms),
                  connections_max_reauth_ms=cfg.connections_max_reauth_ms)
        for name, password in cfg.sasl_users.items():
            sec.credentials.add_user(name, password)
        if cfg.authorizer:
            sec.authorizer = Authorizer(sec.acls, {principal_of(u) for u in cfg.super_users},
                                        cfg.allow_everyone_if_no_acl_found)
        return sec
