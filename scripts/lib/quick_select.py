"""The tests ``scripts/test --quick`` runs: those the change at hand most likely breaks.

The full command (``scripts/test``) is the last check before a commit; this is the inner
loop, a few minutes at most. What it picks, from the files changed (``git diff`` against
HEAD plus untracked files; the last commit's files when the tree is clean; or against
``--since REF``):

1. every changed test file (tests/, client_tests/, spark_validation/);
2. for a changed module (emulator/, wire/, conformance/, bench/, a client_tests or
   spark_validation helper): the unit tests named after it (tests/test_<name>.py,
   tests/test_<name>_*.py), then the test files that import it by name (``import m``,
   ``from m import``, ``from package import m``), then those that import a module that
   imports it (up to DEPTH steps: a domain module such as emulator/cluster/followers.py
   is reached through ClusterState), nearest first;
3. a small smoke set of client tests (SMOKE): real clients over TCP producing,
   consuming, in groups and in transactions, so a change that breaks the server in a
   way no unit test saw still turns something red.

Client and Spark test files beyond the smoke set are expensive (real clients, JVMs), so
at most MAX_CLIENT_FILES of them are picked by import, and only one step from the
change at most (directly changed ones always are); unit test files at most
MAX_UNIT_FILES. What is left out is printed, and the full
command runs it. Prints the chosen paths one per line on stdout, the reasons on stderr.

    python3 scripts/lib/quick_select.py [--since REF]
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TEST_DIRS = ("tests", "client_tests", "spark_validation")
SOURCE_DIRS = ("emulator", "wire", "conformance", "bench", "client_tests", "spark_validation")
# Real clients over TCP, a few seconds each with -n 2: confluent-kafka (librdkafka)
# producing and consuming, kafka-python's admin, idempotent producer and group, a
# confluent consumer group, confluent transactions, and hostile bytes.
SMOKE = (
    "client_tests/test_confluent_basic.py",
    "client_tests/test_kafka_python.py",
    "client_tests/test_groups_confluent.py",
    "client_tests/test_transactions_confluent.py",
    "client_tests/test_bad_input.py",
)
MAX_UNIT_FILES = 40
DEPTH = 2
MAX_CLIENT_FILES = 4
# Test files that each take minutes (seed surveys, JVM fleets): never picked by import,
# only when changed themselves.
HEAVY = (
    "client_tests/test_wrong_clients.py",
    "client_tests/test_reference_programs.py",
    "client_tests/test_eos_history.py",
    "client_tests/test_fuzz.py",
    "client_tests/test_adversarial.py",  # 310 s in one process
)


def git(*args: str) -> list[str]:
    out = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True,
                         check=True).stdout
    return [line for line in out.splitlines() if line.strip()]


def changed_files(since: str | None) -> tuple[list[str], str]:
    """The changed paths and what they were compared with."""
    untracked = git("ls-files", "--others", "--exclude-standard")
    if since:
        return sorted(set(git("diff", "--name-only", since)) | set(untracked)), since
    files = set(git("diff", "--name-only", "HEAD")) | set(untracked)
    if files:
        return sorted(files), "the working tree against HEAD"
    return git("diff", "--name-only", "HEAD~1", "HEAD"), "the last commit (the tree is clean)"


def is_test(path: str) -> bool:
    p = Path(path)
    return p.parts[0] in TEST_DIRS and p.name.startswith("test_") and p.suffix == ".py"


def module_names(path: str) -> list[str]:
    """The names a test may import ``path`` by: its dotted name, and for a client_tests
    or spark_validation helper also its bare name (those directories are on sys.path)."""
    p = Path(path)
    if p.suffix != ".py" or p.parts[0] not in SOURCE_DIRS:
        return []
    parts = list(p.with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    names = [".".join(parts)]
    if parts[0] in ("client_tests", "spark_validation") and len(parts) == 2:
        names.append(parts[1])
    return names


def imported(text: str) -> frozenset[str]:
    """The module names a file's import statements name: ``import a.b`` gives a.b,
    ``from a import b, c`` gives a, a.b and a.c (b may be a module or a name in a)."""
    text = re.sub(r"\(([^)]*)\)", lambda m: m.group(1).replace("\n", " "), text)
    out: set[str] = set()
    for line in text.splitlines():
        words = line.split("#", 1)[0].replace(",", " ").split()
        if len(words) >= 2 and words[0] == "import":
            out.update(w for w in words[1:] if w != "as")
        elif len(words) >= 4 and words[0] == "from" and words[2] == "import":
            out.add(words[1])
            out.update(f"{words[1]}.{w}" for w in words[3:] if w != "as")
    return frozenset(out)


def reached(changed: list[str], depth: int) -> dict[str, int]:
    """{module name: steps from a changed module}: the changed modules, and the source
    modules that import one of them, up to ``depth`` steps away."""
    graph: dict[str, frozenset[str]] = {}  # module -> the names it imports
    for d in SOURCE_DIRS:
        for p in (ROOT / d).rglob("*.py"):
            mod = module_names(str(p.relative_to(ROOT)))
            if mod and not p.name.startswith("test_"):
                graph[mod[0]] = imported(p.read_text(errors="replace"))
    dist = {m: 0 for f in changed for m in module_names(f)}
    frontier = set(dist)
    for step in range(1, depth + 1):
        frontier = {m for m, names in graph.items() if names & frontier and m not in dist}
        dist.update(dict.fromkeys(frontier, step))
    return dist


def select(since: str | None) -> tuple[list[str], list[str]]:
    """(the test files to run, the reasons), in a stable order."""
    files, against = changed_files(since)
    reasons = [f"changed ({against}): {len(files)} file(s)"]
    tests = {str(p.relative_to(ROOT)): imported(p.read_text(errors="replace"))
             for d in TEST_DIRS for p in sorted((ROOT / d).glob("test_*.py"))}
    direct = [f for f in files if is_test(f) and f in tests]
    unit: dict[str, tuple[int, str]] = {}  # test file -> (rank, why)
    client: dict[str, tuple[int, str]] = {}
    modules = [f for f in files if module_names(f) and not is_test(f)]
    for f in modules:
        stem = Path(f).stem if Path(f).stem != "__init__" else Path(f).parent.name
        for t in (f"tests/test_{stem}.py", *sorted(str(p.relative_to(ROOT)) for p in
                                               (ROOT / "tests").glob(f"test_{stem}_*.py"))):
            if t in tests:
                unit.setdefault(t, (0, f"named after {f}"))
    for mod, d in sorted(reached(modules, DEPTH).items(), key=lambda kv: (kv[1], kv[0])):
        for t, names in tests.items():
            if t in HEAVY or mod not in names:
                continue
            if not t.startswith("tests/") and d > 1:
                continue  # a client test file costs seconds: only the nearer ones
            why = f"imports {mod}" + (f" ({d} step(s) from a changed module)" if d else "")
            (unit if t.startswith("tests/") else client).setdefault(t, (1 + d, why))
    chosen = list(dict.fromkeys(direct))
    reasons += [f"  {t}: changed" for t in direct]
    left: list[str] = []
    for table, cap in ((unit, MAX_UNIT_FILES), (client, MAX_CLIENT_FILES)):
        # named after the change first, then direct importers, then the nearest
        picked = sorted((t for t in table if t not in chosen), key=lambda t: (table[t][0], t))
        chosen += picked[:cap]
        reasons += [f"  {t}: {table[t][1]}" for t in picked[:cap]]
        left += picked[cap:]
    smoke = [t for t in SMOKE if t not in chosen]
    chosen += smoke
    reasons += [f"  {t}: smoke set" for t in smoke]
    if left:
        reasons.append(f"left to the full command ({len(left)} more that import a changed "
                       "module or one that does): " + " ".join(left))
    return chosen, reasons


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--since", help="compare with this commit (default: HEAD, or the last "
                                    "commit when the tree is clean)")
    args = ap.parse_args()
    chosen, reasons = select(args.since)
    print("\n".join(reasons), file=sys.stderr)
    print("\n".join(chosen))
    return 0


if __name__ == "__main__":
    sys.exit(main())
