"""Run mypy over emulator/ and wire/ (configured in pyproject.toml: strict on wire/ and
the domain, i.e. emulator/cluster, emulator/log and emulator/coordinators; the default
checks elsewhere) and hold each area to
the count of errors in scripts/mypy-baseline.txt, which may only go down.

An area is wire/, the domain (emulator/cluster, emulator/log and the coordinators'
package, counted together so that moving a module between them changes nothing), each
other package of emulator/, and emulator's top-level modules. An explicit ``Any``
(``disallow_any_explicit``, on for the domain) counts in an area of its own, "<area>
(explicit Any)": the domain has no other errors left, while its ``Any`` are many and
go one seam at a time; each is a place no check sees (a call through an attribute
typed ``Any`` may climb a layer unseen), so their count too may only go down. The run fails when an area
has more errors than its baseline (the new ones are printed) and when it has fewer: then
the baseline is lowered with ``python3 scripts/typecheck.py --update``, which never
raises a count or adds an area. An area missing from the baseline may have no errors.

mypy's cache is .mypy_cache (ignored by git): a run with a warm cache takes about a
second, a cold one a few.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BASELINE = ROOT / "scripts" / "mypy-baseline.txt"
ERROR = re.compile(r"^(?P<path>[\w/.]+\.pyi?):\d+: error: .*?(?:\[(?P<code>[\w-]+)\])?$")
EXPLICIT_ANY = "explicit-any"  # mypy's code for disallow_any_explicit
DOMAIN = ("emulator/cluster/", "emulator/log/", "emulator/coordinator")


def area(path: str, code: str | None = None) -> str:
    """The area an error of a file counts against (see the module's docstring)."""
    if code == EXPLICIT_ANY:
        return f"{area(path)} (explicit Any)"
    if path.startswith("wire/"):
        return "wire"
    if path.startswith(DOMAIN):
        return "domain"
    parts = path.split("/")
    if len(parts) > 2:
        return "/".join(parts[:2])
    return parts[0] + " (top-level modules)"


def read_baseline() -> dict[str, int]:
    counts = {}
    for line in BASELINE.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, count = line.rsplit(":", 1)
            counts[name.strip()] = int(count)
    return counts


def write_baseline(counts: dict[str, int]) -> None:
    head = [line for line in BASELINE.read_text().splitlines() if line.startswith("#")]
    body = [f"{name}: {count}" for name, count in sorted(counts.items()) if count]
    BASELINE.write_text("\n".join(head + body) + "\n")


def main(argv: list[str]) -> int:
    update = "--update" in argv
    run = subprocess.run([sys.executable, "-m", "mypy"], cwd=ROOT, capture_output=True,
                         text=True)
    if run.returncode not in (0, 1) or (run.returncode == 1 and ": error: " not in run.stdout):
        sys.stdout.write(run.stdout + run.stderr)
        print(f"mypy itself failed (exit {run.returncode})")
        return 2
    errors: dict[str, list[str]] = defaultdict(list)
    for line in run.stdout.splitlines():
        m = ERROR.match(line)
        if m:
            errors[area(m["path"], m["code"])].append(line)
    found = Counter({name: len(lines) for name, lines in errors.items()})
    baseline = read_baseline()
    over = {name: n for name, n in found.items() if n > baseline.get(name, 0)}
    under = {name: found[name] for name, n in baseline.items() if found[name] < n}
    for name, n in sorted(over.items()):
        print(f"mypy: {name} has {n} errors, its baseline allows {baseline.get(name, 0)}:")
        print("\n".join(errors[name]))
    if update and under:
        write_baseline({**baseline, **under})
        print(f"mypy: baseline lowered: {under}")
        under = {}
    for name, n in sorted(under.items()):
        print(f"mypy: {name} is down to {n} errors from {baseline[name]}: lower the baseline "
              "(python3 scripts/typecheck.py --update)")
    total = sum(found.values())
    print(f"mypy: {total} errors in all ({dict(sorted(found.items()))}), baseline "
          f"{sum(baseline.values())}")
    return 1 if over or under else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
