"""The handler registry (emulator/handlers/__init__.py): what we advertise is what we serve.

Every ``api_NNN_*.py`` module registers (the registry skips a module whose key has no
wire schema, which would silently un-serve it); every key any release advertises has a
handler; every message schema in wire/messages has a handler, but for the keys listed
in ``NOT_YET_SERVED``, each with the work that serves it. Whoever serves one of them
deletes its line here; whoever adds a schema without a handler must add one, with why.
"""

from __future__ import annotations

import importlib
import pkgutil
import re

import pytest

import emulator.handlers as handlers_pkg
from emulator.handlers import HANDLERS
from emulator.versions import SUPPORTED_RELEASES, advertised
from wire.messages import NAMES, REQUESTS, RESPONSES

# Schemas declared in wire/messages that no handler serves yet:
NOT_YET_SERVED: dict[int, str] = {
    # A Kafka 4.x broker advertises these only with a ClientTelemetry metrics reporter
    # configured, so a default 4.4 broker does not (measured, tests/data/kafka-api-versions):
    # nor do we, until the emulator has telemetry to receive.
    71: "GetTelemetrySubscriptions: no client metrics reporter (as Kafka's default)",
    72: "PushTelemetry: no client metrics reporter (as Kafka's default)",
}


def _modules() -> list[str]:
    return sorted(m.name for m in pkgutil.iter_modules(handlers_pkg.__path__)
                  if m.name.startswith("api_"))


@pytest.mark.parametrize("name", _modules())
def test_every_handler_module_registers_under_its_own_key(name: str) -> None:
    key = int(re.fullmatch(r"api_(\d{3})_\w+", name).group(1))
    info = HANDLERS.get(key)
    assert info is not None, f"{name} did not register (no schema for key {key}?)"
    assert info.module.__name__ == f"emulator.handlers.{name}", (
        f"key {key} is served by {info.module.__name__}, not {name}: two modules, one key")
    assert info.module.API_KEY == key
    assert callable(info.module.handle)
    assert info.module.__doc__, f"{name}: the docstring says what it serves and how it differs"
    lo, hi = info.versions
    assert 0 <= lo <= hi <= REQUESTS[key].msg.versions[1], (name, info.versions)
    assert hi <= RESPONSES[key].msg.versions[1], (name, info.versions)
    alo, ahi = info.accepted
    assert lo <= alo <= ahi <= hi, f"{name}: ACCEPTED {info.accepted} outside {info.versions}"


@pytest.mark.parametrize("release", SUPPORTED_RELEASES)
def test_every_advertised_key_has_a_handler(release: str) -> None:
    implemented = {k: h.versions for k, h in HANDLERS.items()}
    adv = advertised(implemented, release)
    assert set(adv) <= set(HANDLERS)
    for key, (lo, hi) in adv.items():
        hlo, hhi = HANDLERS[key].versions
        assert hlo <= lo <= hi <= hhi, (release, key, (lo, hi), (hlo, hhi))


def test_every_wire_schema_has_a_handler_but_the_listed_ones() -> None:
    unserved = set(REQUESTS) - set(HANDLERS)
    assert unserved == set(NOT_YET_SERVED), (
        "schemas without a handler: "
        f"{sorted((k, NAMES[k]) for k in unserved - set(NOT_YET_SERVED))}; "
        "listed as not served but served now (delete their lines): "
        f"{sorted(set(NOT_YET_SERVED) - unserved)}")
    assert set(REQUESTS) == set(RESPONSES)


def test_every_handler_declares_what_it_authorizes() -> None:
    """A handler without ``AUTHORIZE`` would be open to everyone under --authorizer.

    ``AUTHORIZE = ()`` is allowed, with a comment saying where the check lives (filtering
    in the handler) or why Kafka has none; a missing declaration is an oversight.
    """
    missing = [name for name in _modules()
               if not hasattr(importlib.import_module(f"emulator.handlers.{name}"), "AUTHORIZE")]
    assert missing == []
