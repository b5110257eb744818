"""Every config Kafka 4.4 knows is either acted on or accepted without effect, and the
declaration (emulator/cluster/config_effects.py) matches what the code reads.

"Read" is found in the source, not trusted: a string constant that is a config key (a
dict literal's keys excepted: those are configs the code writes, e.g. an internal
topic's), or a literal key given to an accessor that prefixes it (``consumer_cfg(g,
"session.timeout.ms")`` reads consumer.session.timeout.ms and group.consumer.*). The
modules that only define, list or hand keys to clients are left out (DEFINITIONS).
"""

from __future__ import annotations

import ast
from pathlib import Path

from emulator.cluster import config_effects

ROOT = Path(__file__).resolve().parent.parent
# Modules that name keys without acting on them: Kafka's tables (its keys, their
# validators), the definitions and validation of types, DescribeConfigs' listing, this
# declaration, the difference table's prose, client-side settings (security/clients.py
# writes a client's ssl.*), and the reassignment tool's JSON (it sets throttles through
# AlterConfigs, as Kafka's).
DEFINITIONS = {
    "emulator/cluster/kafka_configs.py", "emulator/cluster/kafka_validators.py",
    "emulator/cluster/configs.py",
    "emulator/cluster/config_effects.py", "emulator/cluster/config_ops.py",
    "emulator/cluster/group_configs.py", "emulator/fidelity/differences.py",
    "emulator/security/clients.py", "emulator/tools/reassign/json_format.py",
}
# Accessors that read a key under a prefix: name -> the prefixes they put before it.
PREFIXING_ACCESSORS = {
    "consumer_cfg": ("consumer.", "group.consumer."),
    "streams_cfg": ("streams.", "group.streams."),
}


def keys_read_in_code() -> dict[str, set[str]]:
    """key -> the modules of emulator/ that read it."""
    known = config_effects.known_keys()
    found: dict[str, set[str]] = {}
    for path in sorted((ROOT / "emulator").rglob("*.py")):
        rel = str(path.relative_to(ROOT))
        if rel in DEFINITIONS:
            continue
        tree = ast.parse(path.read_text())
        written = {id(k) for d in ast.walk(tree) if isinstance(d, ast.Dict)
                   for k in d.keys if k is not None}
        for node in ast.walk(tree):
            names: list[str] = []
            if (isinstance(node, ast.Constant) and isinstance(node.value, str)
                    and id(node) not in written):
                names = [node.value]
            elif isinstance(node, ast.Call):
                func = node.func
                name = getattr(func, "attr", getattr(func, "id", None))
                if (name in PREFIXING_ACCESSORS and len(node.args) >= 2
                        and isinstance(node.args[1], ast.Constant)):
                    names = [p + str(node.args[1].value) for p in PREFIXING_ACCESSORS[name]]
            for key in names:
                if key in known:
                    found.setdefault(key, set()).add(rel)
    return found


def test_every_key_read_in_code_is_declared_acted_on() -> None:
    read = keys_read_in_code()
    undeclared = sorted(set(read) - set(config_effects.acted_on()))
    assert undeclared == [], (
        "read in code but not declared in emulator/cluster/config_effects.py ACTED_ON: "
        + ", ".join(f"{k} ({', '.join(sorted(read[k]))})" for k in undeclared))


def test_every_declared_key_is_still_read() -> None:
    """A declaration outliving its code would list a key as acting that no longer does."""
    stale = sorted(set(config_effects.ACTED_ON) - set(keys_read_in_code()))
    assert stale == [], f"declared acted on, read nowhere: {stale}"


def test_acted_on_and_without_effect_cover_every_kafka_key_once() -> None:
    acted = set(config_effects.acted_on())
    idle = set(config_effects.without_effect())
    kafka = set(config_effects.kafka_keys())
    assert sorted(acted & idle) == [], (
        "declared both acted on and without effect: take them out of their WITHOUT_EFFECT "
        "family in emulator/cluster/config_effects.py")
    assert sorted(kafka - acted - idle) == [], (
        "Kafka keys in neither set: declare them in emulator/cluster/config_effects.py")
    assert config_effects.dead_patterns() == []
    assert acted <= config_effects.known_keys()
    assert all(config_effects.acted_on()[k] for k in acted)
    # Known facts either way: retention acts, Kerberos and thread pools do not.
    assert {"retention.ms", "log.retention.ms", "replica.lag.time.max.ms"} <= acted
    assert {"sasl.kerberos.service.name", "num.network.threads"} <= idle
