"""The registries' indexes (wire/messages/_index.py, emulator/handlers/_index.py) say what
the modules declare, so that importing a module on its key's first use (docs/scale.md,
start-up) serves exactly what importing them all would.

A failure here means a message or handler module was added, removed or changed without
regenerating them: run ``python3 scripts/registry_index.py``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import emulator.handlers as handlers
import wire.messages as messages
from emulator.handlers import HANDLERS
from wire.messages import NAMES, REQUESTS, RESPONSES

ROOT = Path(__file__).resolve().parent.parent


def test_the_indexes_are_current() -> None:
    for pkg in (messages, handlers):
        path = Path(pkg.__file__).with_name("_index.py")
        assert path.read_text(encoding="utf-8") == pkg.index_source(), (
            f"{path} is stale: run python3 scripts/registry_index.py")


def test_the_lazy_message_tables_are_the_declared_messages() -> None:
    found = messages.scan()
    for kind, table in (("request", REQUESTS), ("response", RESPONSES)):
        assert set(table) == set(found[kind]), kind
        for key, (_, msg) in found[kind].items():
            assert table[key].msg is msg, (kind, key)
    assert NAMES == {k: m.name[: -len("Request")] for k, (_, m) in found["request"].items()}


def test_the_lazy_handlers_are_the_declared_handlers() -> None:
    found = handlers.scan()
    assert set(HANDLERS) == set(found)
    for key, info in found.items():
        lazy = HANDLERS[key]
        assert (lazy.versions, lazy.accepted) == (info.versions, info.accepted), key
        assert lazy.module is info.module, key
        assert lazy.module.handle is not lazy.module.unguarded_handle or not getattr(
            lazy.module, "AUTHORIZE", ()), f"{key}: not behind its AUTHORIZE guard"


def test_a_module_missing_from_the_index_is_still_served(tmp_path: Path) -> None:
    """A module set that differs from the index (a new module, the index not regenerated)
    makes the registry import every module, as before the index: never a key unserved."""
    code = """
import sys, types
# The indexes as they would be had produce's modules been added after them.
for name, path, module, key in (
        ("wire.messages._index", "wire/messages/_index.py", "produce", 0),
        ("emulator.handlers._index", "emulator/handlers/_index.py", "api_000_produce", 0)):
    index = types.ModuleType(name)
    exec(open(path).read(), index.__dict__)
    index.MODULES = index.MODULES - {module}
    index.INDEX.pop(key)
    sys.modules[name] = index
from emulator.handlers import HANDLERS
from wire.messages import REQUESTS
print(0 in HANDLERS, 0 in REQUESTS, "emulator.handlers.api_000_produce" in sys.modules)
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       cwd=ROOT, timeout=60)
    assert r.stdout.split() == ["True", "True", "True"], r.stderr


def test_importing_the_registries_imports_no_message_or_handler_module() -> None:
    code = ("import sys, emulator.handlers; print(sorted(m for m in sys.modules if "
            "m.startswith(('wire.messages.', 'emulator.handlers.api_'))))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       cwd=ROOT, timeout=60)
    assert r.stdout.strip() == "['wire.messages._index']", r.stderr
