#!/usr/bin/env python3
"""Regenerate the two registry indexes: wire/messages/_index.py (which module declares
which API key's messages) and emulator/handlers/_index.py (each handler module's key and
versions). They let a process import a message or handler module when its key is first
used rather than all of them at start (docs/scale.md, start-up). Run after adding,
removing or renaming a message or handler module, or changing a handler's VERSIONS or
ACCEPTED; tests/test_registry_index.py fails until then. ``--check`` only says whether
they are current (exit 1 if not)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import emulator.handlers as handlers  # noqa: E402
import wire.messages as messages  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="only check; exit 1 when stale")
    args = ap.parse_args()
    stale = 0
    # Messages first: the handler index reads the message tables.
    for pkg in (messages, handlers):
        path = Path(pkg.__file__).with_name("_index.py")
        text = pkg.index_source()
        if path.read_text(encoding="utf-8") == text:
            print(f"{path}: current")
            continue
        stale += 1
        if args.check:
            print(f"{path}: stale (python3 scripts/registry_index.py)")
        else:
            pkg.write_index()
            print(f"{path}: written")
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
