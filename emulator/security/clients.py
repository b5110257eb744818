"""Client settings for a secured cluster, per client library (pure data, no I/O).

``settings(kind, ...)`` gives what each client takes: a config dict for
confluent-kafka, keyword arguments for kafka-python and aiokafka, Java properties
text for the Java clients, Kafka's tools and Spark (prefix each key with ``kafka.``
for Spark's connector). ``Cluster.client_config`` fills in the cluster's addresses
and TLS files.
"""

from __future__ import annotations

import base64
import json
import ssl
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from emulator.security.sasl import OAUTHBEARER, PLAIN

_JAAS = {
    PLAIN: "org.apache.kafka.common.security.plain.PlainLoginModule",
    "SCRAM-SHA-256": "org.apache.kafka.common.security.scram.ScramLoginModule",
    "SCRAM-SHA-512": "org.apache.kafka.common.security.scram.ScramLoginModule",
    OAUTHBEARER: "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule",
}


def unsecured_jwt(sub: str, lifetime_s: int = 3600, now_s: float | None = None) -> str:
    """An unsecured JWS (``alg: none``) as Kafka's unsecured login module makes them."""
    now = int(time.time() if now_s is None else now_s)

    def part(obj: dict) -> str:
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).rstrip(b"=").decode()

    return f"{part({'alg': 'none'})}.{part({'sub': sub, 'iat': now, 'exp': now + lifetime_s})}."


def kafka_python_token_provider(sub: str, lifetime_s: int = 3600) -> Any:
    """kafka-python's provider must subclass its AbstractTokenProvider (kafka.net.sasl.oauth
    in 3.x, kafka.oauth.abstract before)."""
    try:
        from kafka.net.sasl.oauth import AbstractTokenProvider  # only with kafka-python
    except ImportError:  # older kafka-python
        from kafka.oauth.abstract import AbstractTokenProvider  # type: ignore[no-redef]

    class Provider(AbstractTokenProvider):  # type: ignore[misc, valid-type]
        def token(self) -> str:
            return unsecured_jwt(sub, lifetime_s)

    return Provider()


def async_token_provider(sub: str, lifetime_s: int = 3600) -> Any:
    """aiokafka's token provider: an aiokafka.abc.AbstractTokenProvider with a coroutine."""
    from aiokafka.abc import AbstractTokenProvider  # only when aiokafka is in use

    class Provider(AbstractTokenProvider):
        async def token(self) -> str:
            return unsecured_jwt(sub, lifetime_s)

    return Provider()


@dataclass
class ClientSecurity:
    """Everything a client needs to reach one listener."""

    bootstrap_servers: str
    protocol: str  # PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL
    mechanism: str | None = None
    username: str | None = None
    password: str | None = None
    ca: str | None = None  # PEM CA file
    truststore: str | None = None  # PKCS12 truststore (Java)
    client_cert: str | None = None  # mTLS: PEM chain, key, PKCS12 keystore (Java)
    client_key: str | None = None
    client_keystore: str | None = None
    store_password: str = "changeit"

    @property
    def tls(self) -> bool:
        return self.protocol in ("SSL", "SASL_SSL")

    @property
    def sasl(self) -> bool:
        return self.protocol.startswith("SASL_")


def confluent(c: ClientSecurity) -> dict[str, Any]:
    out: dict[str, Any] = {"bootstrap.servers": c.bootstrap_servers,
                           "security.protocol": c.protocol}
    if c.sasl:
        out["sasl.mechanisms"] = c.mechanism or PLAIN
        if c.mechanism == OAUTHBEARER:
            out["enable.sasl.oauthbearer.unsecure.jwt"] = True
            out["sasl.oauthbearer.config"] = f"principal={c.username}"
        else:
            out["sasl.username"], out["sasl.password"] = c.username, c.password
    if c.tls:
        out["ssl.ca.location"] = c.ca
        if c.client_cert:
            out["ssl.certificate.location"] = c.client_cert
            out["ssl.key.location"] = c.client_key
    return out


def _ssl_context(c: ClientSecurity) -> ssl.SSLContext:
    ctx = ssl.create_default_context(cafile=c.ca)
    if c.client_cert and c.client_key:
        ctx.load_cert_chain(c.client_cert, c.client_key)
    return ctx


def kafka_python(c: ClientSecurity, provider: Callable[[str], Any] | None = None
                 ) -> dict[str, Any]:
    out: dict[str, Any] = {"bootstrap_servers": c.bootstrap_servers.split(","),
                           "security_protocol": c.protocol}
    if c.sasl:
        out["sasl_mechanism"] = c.mechanism or PLAIN
        if c.mechanism == OAUTHBEARER:
            make = provider or kafka_python_token_provider
            out["sasl_oauth_token_provider"] = make(c.username or "")
        else:
            out["sasl_plain_username"], out["sasl_plain_password"] = c.username, c.password
    if c.tls:
        out["ssl_context"] = _ssl_context(c)
    return out


def aiokafka(c: ClientSecurity) -> dict[str, Any]:
    out = kafka_python(c, provider=async_token_provider)
    out["bootstrap_servers"] = c.bootstrap_servers
    return out


def java_properties(c: ClientSecurity) -> str:
    props = {"bootstrap.servers": c.bootstrap_servers, "security.protocol": c.protocol}
    if c.sasl:
        mech = c.mechanism or PLAIN
        props["sasl.mechanism"] = mech
        if mech == OAUTHBEARER:
            props["sasl.jaas.config"] = (f'{_JAAS[mech]} required '
                                         f'unsecuredLoginStringClaim_sub="{c.username}";')
        else:
            props["sasl.jaas.config"] = (f'{_JAAS[mech]} required username="{c.username}" '
                                         f'password="{c.password}";')
    if c.tls:
        props.update({"ssl.truststore.location": c.truststore or "",
                      "ssl.truststore.password": c.store_password,
                      "ssl.truststore.type": "PKCS12"})
        if c.client_keystore:
            props.update({"ssl.keystore.location": c.client_keystore,
                          "ssl.keystore.password": c.store_password,
                          "ssl.key.password": c.store_password,
                          "ssl.keystore.type": "PKCS12"})
    return "".join(f"{k}={_escape(v)}\n" for k, v in props.items())


def _escape(v: str) -> str:
    return v.replace("\\", "\\\\")


SETTINGS = {"confluent": confluent, "kafka-python": kafka_python, "aiokafka": aiokafka,
            "java": java_properties}


def settings(kind: str, c: ClientSecurity) -> Any:
    if kind not in SETTINGS:
        raise ValueError(f"client kind must be one of {sorted(SETTINGS)}, got {kind!r}")
    return SETTINGS[kind](c)
