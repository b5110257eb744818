"""docs/architecture.md's walks name what is in the code.

The walks (a produce request, a fault, a reassignment) say module by module how far
each travels; they went stale once already (a walk through the controller that the
code no longer took, a function renamed). This holds every module and name they
quote in backticks to the tree: a module path must exist, and a name (a function, a
class, an attribute, ``Class.member``) must still be defined or used somewhere in
emulator/ or wire/. It cannot tell whether a step is in the right order; it does tell
when a rename or a move leaves the page describing something that is gone.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
IDENTIFIER = re.compile(r"[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*")


def _walks() -> str:
    text = (ROOT / "docs/architecture.md").read_text()
    start = text.index("\n## Walks")
    end = text.index("\n## ", start + 1)
    return text[start:end]


def _quoted(section: str) -> list[str]:
    return sorted(set(re.findall(r"`([^`\n]+)`", section)))


def _source() -> str:
    return "\n".join(p.read_text() for d in ("emulator", "wire")
                     for p in sorted((ROOT / d).rglob("*.py*"))
                     if p.suffix in (".py", ".pyx", ".pyi"))


def _path_exists(token: str) -> bool:
    token = token.rstrip("/")
    if (ROOT / token).exists() or (ROOT / "emulator" / token).exists():
        return True
    return any(str(p).endswith("/" + token) for p in (ROOT / "emulator").rglob(Path(token).name))


def test_every_module_a_walk_names_exists() -> None:
    paths = [t for t in _quoted(_walks())
             if ("/" in t and " " not in t) or t.endswith((".py", ".pyx"))]
    assert len(paths) > 20  # the walks name their modules
    missing = [t for t in paths if not _path_exists(t)]
    assert missing == [], f"docs/architecture.md's walks name modules that are gone: {missing}"


def test_every_name_a_walk_quotes_is_in_the_code() -> None:
    names = [t for t in _quoted(_walks())
             if IDENTIFIER.fullmatch(t) and not t.endswith((".py", ".pyx"))]
    assert len(names) > 20
    source = _source()
    gone = [t for t in names
            if not re.search(r"\b" + re.escape(t.rsplit(".", 1)[-1]) + r"\b", source)]
    assert gone == [], f"docs/architecture.md's walks quote names that are gone: {gone}"
