"""Listeners in Kafka's syntax: ``PLAINTEXT://127.0.0.1:9092,SASL_SSL://127.0.0.1:9192``.

The name of a listener is its security protocol (PLAINTEXT, SSL, SASL_PLAINTEXT,
SASL_SSL), or any name mapped to one with ``NAME:PROTOCOL`` pairs as Kafka's
``listener.security.protocol.map``. The port given is broker 1's; broker i listens on
port+i-1 of every listener (0: free ports).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
_LISTENER = re.compile(r"^([A-Za-z0-9_-]+)://(\[[^\]]*\]|[^:/]*):(\d+)$")


@dataclass(frozen=True)
class ListenerSpec:
    name: str
    protocol: str
    host: str  # "" = the --host default
    port: int  # broker 1's; 0 = free ports

    @property
    def uses_tls(self) -> bool:
        return self.protocol in ("SSL", "SASL_SSL")

    @property
    def uses_sasl(self) -> bool:
        return self.protocol in ("SASL_PLAINTEXT", "SASL_SSL")


class ListenerError(ValueError):
    pass


def parse_protocol_map(spec: str | None) -> dict[str, str]:
    out = {p: p for p in PROTOCOLS}
    for item in (spec or "").split(","):
        item = item.strip()
        if not item:
            continue
        name, sep, proto = item.partition(":")
        if not sep or proto.upper() not in PROTOCOLS:
            raise ListenerError(f"bad listener.security.protocol.map entry {item!r}")
        out[name.upper()] = proto.upper()
    return out


def parse_listeners(spec: str, protocol_map: str | None = None) -> list[ListenerSpec]:
    """Kafka's ``listeners`` value -> specs; ListenerError says what is wrong."""
    pmap = parse_protocol_map(protocol_map)
    out: list[ListenerSpec] = []
    for item in spec.split(","):
        item = item.strip()
        if not item:
            continue
        m = _LISTENER.match(item)
        if m is None:
            raise ListenerError(f"listener {item!r} is not NAME://HOST:PORT")
        name = m.group(1).upper()
        if name not in pmap:
            raise ListenerError(f"listener {name} has no security protocol (use one of "
                                f"{', '.join(PROTOCOLS)} or map it with NAME:PROTOCOL)")
        host = m.group(2).strip("[]")
        out.append(ListenerSpec(name, pmap[name], host, int(m.group(3))))
    if not out:
        raise ListenerError("no listener given")
    names = [s.name for s in out]
    if len(set(names)) != len(names):
        raise ListenerError(f"listener names must be unique: {spec}")
    ports = [s.port for s in out if s.port]
    if len(set(ports)) != len(ports):
        raise ListenerError(f"two listeners share a port: {spec}")
    return out
