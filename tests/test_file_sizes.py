"""Every source file in emulator/ is under 600 lines, or is a pure table that says so.

A long module is usually several roles in one file (the group coordinator's protocols
were once one mixin class of 3,000 lines); splitting by role keeps each readable and
lets the layer and seam checks see the roles apart. Data is different: a table of
Kafka's behaviours read by one lookup gains nothing from being cut in two. Such a file
is listed here with its reason, and its docstring must say it is a pure table.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LIMIT = 600
SOURCES = (".py", ".pyx", ".pxd", ".pxi", ".pyi", ".h")

# path -> why it may be long (its docstring says "pure table")
PURE_TABLES = {
    "emulator/fidelity/differences.py": "every documented difference from Kafka, one entry "
    "each, read by one lookup",
}


def too_long(root: Path, tables: dict[str, str]) -> list[str]:
    """The source files under ``root``/emulator of LIMIT lines or more that are not
    listed pure tables, and the listed ones that no longer say they are."""
    out = []
    for path in sorted((root / "emulator").rglob("*")):
        if path.suffix not in SOURCES or "__pycache__" in path.parts:
            continue
        rel = path.relative_to(root).as_posix()
        text = path.read_text()
        lines = text.count("\n")
        if rel in tables:
            if "pure table" not in text[:2000]:
                out.append(f"{rel}: listed as a pure table, its docstring does not say so")
        elif lines >= LIMIT:
            out.append(f"{rel}: {lines} lines")
    return out


def test_every_emulator_file_is_under_600_lines_or_a_pure_table() -> None:
    assert too_long(ROOT, PURE_TABLES) == []
    for rel in PURE_TABLES:
        assert (ROOT / rel).exists(), rel


def test_the_size_check_sees_a_long_file_and_an_unsaid_table(tmp_path: Path) -> None:
    pkg = tmp_path / "emulator"
    pkg.mkdir()
    (pkg / "long.py").write_text("x = 1\n" * LIMIT)
    (pkg / "short.py").write_text("x = 1\n" * (LIMIT - 1))
    (pkg / "table.py").write_text('"""A table."""\n' + "x = 1\n" * LIMIT)
    assert too_long(tmp_path, {"emulator/table.py": "data"}) == [
        "emulator/long.py: 600 lines",
        "emulator/table.py: listed as a pure table, its docstring does not say so",
    ]
