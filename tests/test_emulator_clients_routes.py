"""The Java, Go and Node modules of clients/ reach every operation of the control
surface's table: each route's fixed parts appear in each module's sources, and each
fault operation of POST /faults by its name. A new row of
emulator/control/operations.py fails here until each client has its method (the
clients' tests in client_tests/test_emulator_clients.py run them against the image).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from emulator.control.operations import FAULT_ROUTE, OPERATIONS, Operation

CLIENTS = Path(__file__).resolve().parent.parent / "clients"
SOURCES = {
    "java": "java/src/main/java/**/*.java",
    "go": "go/*.go",
    "node": "node/index.js",
}
# A browser's routes (the console and its event stream) and the list of routes.
NOT_A_CLIENT_METHOD = {"ui", "console", "events", "routes"}


def source(language: str) -> str:
    files = [p for p in CLIENTS.glob(SOURCES[language]) if not p.name.endswith("_test.go")]
    assert files, f"no sources for {language} under {CLIENTS}"
    return "\n".join(p.read_text() for p in files)


def needles(op: Operation) -> list[str]:
    """What a client's source must contain to send this operation."""
    if op.fault and (op.method, op.path) == FAULT_ROUTE:
        return [f'"{op.name}"']
    return [part for part in re.split(r"\{\w+\}", op.path) if part.strip("/")]


@pytest.mark.parametrize("language", sorted(SOURCES))
def test_every_operation_has_a_method(language: str) -> None:
    text = source(language)
    missing = [op.name for op in OPERATIONS if op.name not in NOT_A_CLIENT_METHOD
               and not all(n in text for n in needles(op))]
    assert not missing, f"clients/{language} sends no request for {missing}"


def test_the_needles_tell_operations_apart() -> None:
    """A route that is only "/" would match anything: every checked one names a part."""
    for op in OPERATIONS:
        if op.name not in NOT_A_CLIENT_METHOD:
            assert needles(op), op.name
