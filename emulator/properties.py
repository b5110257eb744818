"""Java properties files and the official Kafka images' rule for naming a server
property as a ``KAFKA_<PROPERTY>`` variable (dots as ``_``, ``_`` as ``__``, ``-`` as
``___``, upper case), both ways; used by emulator.official_image."""

from __future__ import annotations

import re
from collections.abc import Mapping


def env_name(key: str) -> str:
    """The variable that sets server property ``key`` (the rule run backwards)."""
    return "KAFKA_" + key.replace("_", "__").replace("-", "___").replace(".", "_").upper()


def property_name(var: str) -> str:
    """``KAFKA_ADVERTISED_LISTENERS`` -> ``advertised.listeners`` (Kafka's rule)."""
    return (var.replace("KAFKA_", "", 1).lower().replace("_", ".")
            .replace("...", "-").replace("..", "_"))


def parse_properties(text: str) -> dict[str, str]:
    """A Java properties file's ``key=value`` (or ``key: value``) lines; comments and
    blank lines skipped, a trailing backslash continues a line."""
    out: dict[str, str] = {}
    pending = ""
    for raw in text.splitlines():
        line = pending + raw.strip()
        pending = ""
        if not line or line[0] in "#!":
            continue
        if line.endswith("\\"):
            pending = line[:-1]
            continue
        m = re.match(r"^([^=:\s]+)\s*[=:\s]\s*(.*)$", line)
        if m:
            out[m.group(1)] = m.group(2)
        else:
            out[line] = ""
    return out


def properties_text(props: Mapping[str, str]) -> str:
    """``key=value`` lines, as cp-kafka's configure step writes kafka.properties."""
    return "".join(f"{k}={v}\n" for k, v in sorted(props.items()))
