"""Comments and docs point only at things in the repository (docs/architecture.md):
never at an issue number, a design document or a spec digest kept elsewhere."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SUFFIXES = {".py", ".pyx", ".pyi", ".pxd", ".md", ".sh", ".toml", ".js", ".go", ".java",
            ".html", ".cfg", ".txt", ""}
OUTSIDE = re.compile(r"\b[Ii]ssues? #?\d+\b|\bDESIGN\.md\b|(?<![\w/.])specs/\w|"
                     r"\bseeds?/\d|\bseed \d{3}\b|/work/(?:shared|main|wt)\b")


def test_no_comment_points_outside_the_repository() -> None:
    files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True,
                           check=True).stdout.split()
    found = []
    for name in files:
        path = ROOT / name
        if path.suffix not in SUFFIXES or not path.is_file() or path.is_symlink():
            continue
        try:
            text = path.read_text()
        except UnicodeDecodeError:
            continue
        for n, line in enumerate(text.splitlines(), 1):
            if OUTSIDE.search(line):
                found.append(f"{name}:{n}: {line.strip()}")
    assert not found, "point at docs/ or say the fact instead:\n" + "\n".join(found)
