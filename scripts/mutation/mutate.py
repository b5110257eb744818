"""Mutation testing of the emulator's rules with mutmut (scripts/mutate, .ci/mutation-nightly).

A green suite proves something only if breaking the emulator turns it red; mutmut
breaks it one small change (a mutant) at a time and runs the tests that reach the
changed function. This driver adds what the project needs around it:

- **Test selection** in two steps. ``targets.toml`` (beside this file) maps each module
  of the mutated packages to the test files meant to pin it; mutmut then runs each
  mutant against only those of them that called the mutated function (its "stats" run
  records which test reaches which function). So one module's mutants run in minutes,
  not the whole suite's hours.
- **A workspace per target** (``.mutation/<target>/``, ignored by git): the target's
  own ``pyproject.toml`` (the project's, plus a ``[tool.mutmut]`` section for that
  target) and links to the sources, so mutmut's cache (mutants, which test reaches
  what, verdicts) is kept per target and a developer's run of one module reuses it.
  mutmut copies emulator/ and wire/ (the compiled log core included) to the
  workspace's ``mutants/``; the test directories are links into the work tree.
- **The triage file** (``equivalent.toml``): a survivor that no test can kill because
  it behaves as the original (an equivalent mutant) is recorded there with the reason.
  Entries match on the function and the changed lines, not mutmut's running number
  (which shifts when the function changes). ``--check`` fails on a survivor not in
  the file, and on an entry of a module that ran whose mutant no longer survives.
- **The triaged scope** (``triaged.toml``): the functions whose every survivor has been
  killed or recorded. A survivor there is a regression and always fails ``--check``; a
  survivor elsewhere is *untriaged* (nobody has looked at it yet): listed and counted,
  and it fails ``--check`` only with ``--strict`` (the issue's goal: every module
  triaged; the nightly then runs strict).
- **The report**: killed / equivalent / surviving per package (a timeout counts as
  killed; "no tests", a mutant no selected test reaches, counts as surviving; a crash,
  its test process killed by a signal, counts as neither and is run again).

The Cython log core is not mutated: its pure twin (emulator/log/pure.py, isr.py,
scan.py) is, with KAFKA_EMULATOR_PURE=1 set for that target's tests (targets.toml
``env``), the same twin the unit suite runs a second time.
"""

from __future__ import annotations

import argparse
import ast
import fnmatch
import json
import os
import shutil
import subprocess
import sys
import tomllib
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
TARGETS = HERE / "targets.toml"
TRIAGE = HERE / "equivalent.toml"
TRIAGED = HERE / "triaged.toml"
WORK = ROOT / ".mutation"
# What every mutant's pytest gets: no cache, no xdist (mutmut forks one test run per
# mutant itself), a per-test timeout well under mutmut's own wall-clock limit.
PYTEST_ARGS = ["-p", "no:cacheprovider", "-n", "0", "--timeout=300", "-W", "ignore",
               "-p", "mutation_preload"]
# A pytest plugin, written into each workspace's mutants/, that imports the preload list
# (below) before the first test: the stats and clean runs fork from mutmut's main process,
# not from the warmed fork server.
PRELOAD_PLUGIN = '''"""Import the mutated modules before any test (scripts/mutation/mutate.py writes this)."""
import importlib
import os


def pytest_configure(config):
    with open(os.environ["MUTATION_PRELOAD"]) as f:
        for name in f.read().split():
            try:
                importlib.import_module(name)
            except ImportError:
                pass
'''
# Lines never mutated: logging and asserts of the emulator's own invariants are not
# behaviour a client can see (a mutant there is equivalent by construction).
DO_NOT_MUTATE_PATTERNS = [r"^\s*(log|logger|_log|LOG)\.(debug|info|warning|error|exception)\(",
                          r"^\s*logging\.getLogger\("]
KILLED = {"killed", "timeout", "caught by type check"}
# A mutant's test process killed by a signal (mutmut's "segfault") says nothing of the
# tests: the mutated code is pure Python, and on 2026-12-07 171 mutants of one run
# "segfaulted" together when the compiled core a warm fork server had loaded was rebuilt
# under it. Neither killed nor surviving: counted apart, judged by no entry, and run
# again by --survivors.
CRASHED = {"segfault"}
PRELOAD = ["pytest", "emulator", "emulator.runtime", "emulator.testing", "emulator.server",
           "emulator.handlers", "wire.messages", "wire.records", "confluent_kafka",
           "confluent_kafka.admin", "kafka", "aiokafka"]
SURVIVING = {"survived", "no tests", "suspicious"}
STATS_FUNCTIONS = "stats-functions.json"  # in a workspace: see full_stats_if_gained


@dataclass
class Target:
    name: str
    modules: list[str]  # globs, relative to the repository
    tests: list[str]
    env: dict[str, str] = field(default_factory=dict)
    # mutmut names (globs) of the functions in scope, where only part of a module is
    # (the schema registry's compatibility rules, not its parsers); empty: every function
    functions: list[str] = field(default_factory=list)

    def owns(self, path: str) -> bool:
        return any(fnmatch.fnmatch(path, g) for g in self.modules)

    def in_scope(self, mutant: str) -> bool:
        return not self.functions or any(fnmatch.fnmatch(mutant, g) for g in self.functions)


@dataclass
class Mutant:
    name: str  # mutmut's: emulator.cluster.reads.x_list_offset__mutmut_12
    path: str  # emulator/cluster/reads.py
    status: str
    diff: list[str] = field(default_factory=list)  # the changed lines, -/+

    @property
    def function(self) -> str:
        return self.name.rsplit("__mutmut_", 1)[0]

    @property
    def package(self) -> str:
        parts = self.path.split("/")
        return "/".join(parts[:2]) if parts[0] == "emulator" else parts[0]


def load_targets() -> list[Target]:
    data = tomllib.loads(TARGETS.read_text())
    return [Target(t["name"], t["modules"], t["tests"], t.get("env", {}),
                   t.get("functions", [])) for t in data["target"]]


def missing_tests(targets: list[Target]) -> list[str]:
    """Test files a target names that do not exist (renamed or deleted: fix the table)."""
    return [f"{t.name}: {path}" for t in targets for path in t.tests
            if not (ROOT / path.split("::")[0]).exists()]


def mutated_modules(targets: list[Target]) -> list[str]:
    """Every module the targets cover (the domain and the rules' packages), sorted."""
    out = set()
    for t in targets:
        for g in t.modules:
            out.update(str(p.relative_to(ROOT)) for p in ROOT.glob(g) if p.name != "__init__.py")
    return sorted(out)


def uncovered_modules(targets: list[Target], packages: list[str]) -> list[str]:
    """Modules of ``packages`` that no target names (a new module must get tests)."""
    out = []
    for pkg in packages:
        for p in sorted((ROOT / pkg).rglob("*.py")):
            rel = str(p.relative_to(ROOT))
            if p.name != "__init__.py" and p.stat().st_size and not any(
                    t.owns(rel) for t in targets):
                out.append(rel)
    return out


def _toml_list(items: list[str]) -> str:
    return "[" + ", ".join(json.dumps(i) for i in items) + "]"


def _sync_built(ws: Path) -> None:
    """Refresh the workspace's copies of the compiled extensions (emulator/log/_core) and
    their sources: mutmut copies the source tree once, so a core rebuilt since (a new
    CORE_API) would leave the tests running on the stale build, or on none (the pure
    twin serving where a test asks for the compiled one) and every mutant's run failing."""
    for src in ("emulator", "wire"):
        for path in (ROOT / src).rglob("*"):
            if path.suffix not in (".so", ".pyx", ".pxi", ".pxd", ".pyi", ".c", ".h"):
                continue
            copy = ws / "mutants" / path.relative_to(ROOT)
            if not copy.parent.is_dir():
                continue
            if copy.exists() and copy.read_bytes() == path.read_bytes():
                continue
            shutil.copy2(path, copy)


def workspace(t: Target, max_children: int) -> Path:
    """``.mutation/<target>/``: a pyproject.toml with the target's [tool.mutmut], links
    to the sources mutmut copies, and (in mutants/) links to everything else the tests
    read (test directories, conftest.py, conformance/, docs/...)."""
    ws = WORK / t.name
    (ws / "mutants").mkdir(parents=True, exist_ok=True)
    (WORK / ".gitignore").write_text("*\n")
    for src in ("emulator", "wire"):
        link = ws / src
        if not link.is_symlink():
            link.symlink_to(ROOT / src)
    skip = {"emulator", "wire", "pyproject.toml", ".git", ".mutation", "mutants"}
    for entry in ROOT.iterdir():
        link = ws / "mutants" / entry.name
        if entry.name in skip or link.exists() or link.is_symlink():
            continue
        link.symlink_to(entry)
    _sync_built(ws)
    # Each mutant's test run forks from a server process that imported these first: the
    # target's mutated modules (a mutated module holds every mutant of every function,
    # emulator/handlers/api_000_produce.py 85,000 lines, seconds to import, which a test
    # talking to a lazily importing server would spend inside its socket timeouts) and
    # what every test imports.
    preload = ws / "preload.txt"
    modules = [m[:-3].replace("/", ".") for m in mutated_modules([t])]
    preload.write_text("\n".join(PRELOAD + modules) + "\n")
    (ws / "mutants" / "mutation_preload.py").write_text(PRELOAD_PLUGIN)
    base = (ROOT / "pyproject.toml").read_text()
    section = "\n".join([
        "", "# written by scripts/mutation/mutate.py for target " + t.name,
        "[tool.mutmut]",
        'source_paths = ["emulator", "wire"]',
        f"only_mutate = {_toml_list(t.modules)}",
        f"pytest_add_cli_args_test_selection = {_toml_list(t.tests)}",
        f"pytest_add_cli_args = {_toml_list(PYTEST_ARGS)}",
        f"do_not_mutate_patterns = {_toml_list(DO_NOT_MUTATE_PATTERNS)}",
        # the in-process clusters of the client tests start threads and event loops:
        # each mutant forks from a server process that only imported and collected.
        # "collect" (a --collect-only run of the target's tests, whose mutation_preload
        # plugin imports the preload list) gives every mutant's fork the test modules
        # and conftest already imported; "import" (the preload list alone) left each
        # fork to import them again: 28 mutants of cluster-data-path took 227 s so and
        # 153 s with "collect", the same verdicts (docs/mutation.md).
        'process_isolation = "forkserver"',
        'forkserver_warmup = "collect"',
        f"preload_modules_file = {json.dumps(str(preload))}",
        "use_git_change_detection = false",
        'on_dependency_change = "ignore"',
        "timeout_multiplier = 10.0",
        "timeout_constant = 5.0",
        "",
    ])
    text = base + section
    py = ws / "pyproject.toml"
    if not py.exists() or py.read_text() != text:
        py.write_text(text)
    return ws


def module_functions(path: Path) -> list[str]:
    """The top-level functions and methods of one module: what mutmut mutates one by one
    (a nested function is part of the function around it)."""
    tree = ast.parse(path.read_text())
    out = []
    defs = (ast.FunctionDef, ast.AsyncFunctionDef)
    for node in tree.body:
        if isinstance(node, defs):
            out.append(node.name)
        elif isinstance(node, ast.ClassDef):
            out.extend(f"{node.name}.{n.name}" for n in node.body if isinstance(n, defs))
    return out


def full_stats_if_gained(ws: Path, functions: list[str]) -> list[str]:
    """Make mutmut collect every test's stats again when the target has a function its
    last full collection did not see; returns those functions (empty: nothing done).

    mutmut 3.8 collects stats again only for tests it has not seen, so a function added
    since (or an old test it never ran that now reaches one) is mapped to the new tests
    alone, and its mutants run against too few tests: false survivors (h3 met one on
    2026-12-07: a new controller function's mutant "survived" the fencing tests that
    kill it). Removing ``mutmut-stats.json`` makes the next run a full collection (a few
    minutes); the verdicts live elsewhere and are kept. ``stats-functions.json`` holds
    the functions the last full collection saw; a workspace without it is collected
    again once.
    """
    stats = ws / "mutants" / "mutmut-stats.json"
    seen_file = ws / STATS_FUNCTIONS
    gained: list[str] = []
    if stats.exists():
        seen = set(json.loads(seen_file.read_text())) if seen_file.exists() else set()
        gained = [f for f in functions if f not in seen]
        if gained:
            stats.unlink()
    if gained or not stats.exists():
        seen_file.write_text(json.dumps(sorted(functions)))
    return gained


def run_mutmut(ws: Path, t: Target, names: list[str], max_children: int, log: Path) -> int:
    env = {**os.environ, **t.env, "MUTATION_PRELOAD": str(ws / "preload.txt")}
    cmd = ["mutmut", "run", "--max-children", str(max_children), *names]
    print(f"== {t.name}: mutmut run {' '.join(names) or '(every module of the target)'} "
          f"(log: {log})", flush=True)
    with open(log, "w") as out:
        rc = subprocess.call(cmd, cwd=ws, env=env, stdout=out, stderr=subprocess.STDOUT)
    if rc != 0:
        tail = log.read_text(errors="replace")[-3000:]
        print(f"mutmut failed (exit {rc}); the end of its log:\n{tail}", file=sys.stderr)
    return rc


def module_of(path: str) -> str:
    return path[:-3].replace("/", ".")


def mutant_globs(t: Target, path: str, function: str | None) -> list[str]:
    """mutmut's names for the mutants of ``path`` in scope (of ``function`` only, if
    named: a function, or a method as Class.method)."""
    mod = module_of(path)
    if function:
        cls, _, name = function.rpartition(".")
        mangled = f"x\u01c1{cls}\u01c1{name}" if cls else f"x_{name}"
        return [f"{mod}.{mangled}__mutmut_*"]
    own = [g for g in t.functions if g.startswith(mod + ".")]
    return own if t.functions else [f"{mod}.*"]


def results(ws: Path, paths: list[str], keep: list[str] | None = None) -> list[Mutant]:
    """The verdicts mutmut keeps in mutants/<path>.meta, with each survivor's diff."""
    from mutmut.mutation.diff_apply import get_diff_for_mutant
    from mutmut.stats import status_by_exit_code

    out = []
    cwd = os.getcwd()
    os.chdir(ws)
    try:
        for path in paths:
            meta = ws / "mutants" / (path + ".meta")
            if not meta.exists():
                continue
            codes = json.loads(meta.read_text())["exit_code_by_key"]
            for name, code in sorted(codes.items()):
                if keep is not None and not any(fnmatch.fnmatch(name, g) for g in keep):
                    continue
                m = Mutant(name, path, status_by_exit_code[code])
                if m.status in SURVIVING:
                    diff = get_diff_for_mutant(name, path=path)
                    m.diff = [ln for ln in diff.splitlines()
                              if ln[:1] in "+-" and not ln.startswith(("+++", "---"))]
                out.append(m)
    finally:
        os.chdir(cwd)
    return out


@dataclass
class Entry:
    function: str
    diff: list[str]
    reason: str
    mutant: str = ""

    def matches(self, m: Mutant) -> bool:
        """The same function and the same changed lines (indentation aside)."""
        def norm(lines: list[str]) -> list[str]:
            return [ln[:1] + ln[1:].strip() for ln in lines]

        return self.function == m.function and norm(self.diff) == norm(m.diff)


def load_triage() -> list[Entry]:
    if not TRIAGE.exists():
        return []
    data = tomllib.loads(TRIAGE.read_text())
    entries = []
    for e in data.get("equivalent", []):
        if not e.get("reason", "").strip():
            raise SystemExit(f"{TRIAGE}: {e.get('mutant')}: an equivalent mutant needs a reason")
        entries.append(Entry(e["function"], e["diff"], e["reason"], e.get("mutant", "")))
    return entries


def load_triaged() -> list[str]:
    """mutmut's function names (globs) of the triaged scope (triaged.toml)."""
    if not TRIAGED.exists():
        return []
    return list(tomllib.loads(TRIAGED.read_text()).get("triaged", []))


def is_triaged(m: Mutant, scope: list[str]) -> bool:
    return any(fnmatch.fnmatchcase(m.function, g) for g in scope)


def failing(surviving: list[Mutant], stale: list[Entry], scope: list[str],
            strict: bool, crashed: list[Mutant] | None = None) -> list[str]:
    """Why ``--check`` fails (nothing: it passes): a survivor in the triaged scope, a
    mutant there whose run crashed (no verdict: the nightly must not pass on it), a
    stale entry of the triage file, and with ``strict`` an untriaged survivor too."""
    out = [f"{m.name} survives in triaged code" for m in surviving if is_triaged(m, scope)]
    out += [f"{m.name} crashed in triaged code: run it again" for m in crashed or []
            if is_triaged(m, scope)]
    out += [f"{e.mutant or e.function}: stale entry" for e in stale]
    if strict:
        out += [f"{m.name} survives, untriaged" for m in surviving if not is_triaged(m, scope)]
    return out


def triage_text(m: Mutant) -> str:
    """A stub entry for the triage file: fill in the reason, or kill it with a test."""
    return "\n".join([
        "[[equivalent]]",
        f"mutant = {json.dumps(m.name)}",
        f"function = {json.dumps(m.function)}",
        "diff = [" + ", ".join(json.dumps(ln) for ln in m.diff) + "]",
        'reason = ""', ""])


def report(mutants: list[Mutant], entries: list[Entry], by_function: bool = False,
           whole: set[str] | None = None) -> tuple[list[Mutant], list[Entry]]:
    """Print killed / equivalent / surviving per package; return the surviving mutants
    (not in the triage file) and the stale entries (of a module that ran, matching no
    survivor; ``by_function``, when only some functions were named: of a function that
    ran, or of a module of ``whole``, the dotted names of the modules also named whole)."""
    rows: dict[str, Counter[str]] = defaultdict(Counter)
    surviving, used = [], set()
    for m in mutants:
        if m.status in KILLED:
            rows[m.package]["killed"] += 1
            continue
        if m.status not in SURVIVING:  # not checked, interrupted, skipped
            rows[m.package][m.status] += 1
            continue
        hit = next((i for i, e in enumerate(entries) if i not in used and e.matches(m)), None)
        if hit is not None:
            used.add(hit)
            rows[m.package]["equivalent"] += 1
        else:
            rows[m.package]["surviving"] += 1
            surviving.append(m)
    # a function with mutants not run (yet, or again since it changed) judges none of
    # its entries: their mutants may be among those
    unrun = {m.function for m in mutants if m.status not in KILLED and m.status not in SURVIVING}
    entries_run = [(i, e) for i, e in enumerate(entries) if e.function not in unrun]
    if by_function:
        ran = {m.function for m in mutants}
        stale = [e for i, e in entries_run if i not in used and (
            e.function in ran or e.function.rsplit(".", 1)[0] in (whole or set()))]
    else:
        modules = {m.function.rsplit(".", 1)[0] for m in mutants}
        stale = [e for i, e in entries_run
                 if i not in used and e.function.rsplit(".", 1)[0] in modules]
    print(f"\n{'package':32} {'mutants':>8} {'killed':>8} {'equivalent':>11} {'surviving':>10}")
    total: Counter[str] = Counter()
    for pkg in sorted(rows):
        c = rows[pkg]
        n = sum(c.values())
        total.update(c)
        extra = "".join(f"  {k}: {v}" for k, v in c.items()
                        if k not in ("killed", "equivalent", "surviving"))
        print(f"{pkg:32} {n:8} {c['killed']:8} {c['equivalent']:11} {c['surviving']:10}{extra}")
    print(f"{'total':32} {sum(total.values()):8} {total['killed']:8} {total['equivalent']:11} "
          f"{total['surviving']:10}")
    return surviving, stale


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="scripts/mutate", description="Mutation testing of the modules you name "
        "(or --all), each against the tests targets.toml maps it to.")
    ap.add_argument("paths", nargs="*", help="modules or package folders to mutate "
                    "(e.g. emulator/cluster/followers.py), or one function of a module "
                    "(emulator/cluster/reads.py::list_offset, path::Class.method)")
    ap.add_argument("--all", action="store_true", help="every module of every target "
                    "(the nightly job)")
    ap.add_argument("--check", action="store_true", help="exit 1 on a survivor in "
                    "triaged code (scripts/mutation/triaged.toml) missing from "
                    "scripts/mutation/equivalent.toml, or a stale entry there")
    ap.add_argument("--strict", action="store_true", help="with --check: fail on an "
                    "untriaged survivor too (one outside scripts/mutation/triaged.toml)")
    ap.add_argument("--report-only", action="store_true", help="no mutmut run: report "
                    "the verdicts the workspaces hold")
    ap.add_argument("--max-children", type=int, default=max(1, (os.cpu_count() or 2) // 2),
                    help="mutants run at once (default: half the cores)")
    ap.add_argument("--survivors", action="store_true", help="run only the mutants not "
                    "known killed: those that survived the workspace's last run, and those "
                    "not run yet; after adding a test. A function changed since its last "
                    "run: name it without --survivors (its new mutants are made by the run)")
    ap.add_argument("--shard", metavar="I/N", help="with --all: only every N-th target "
                    "from the I-th (0-based), to spread the whole set over N runs")
    ap.add_argument("--stubs", type=Path, help="write a triage stub for each survivor "
                    "to this file")
    args = ap.parse_args(argv)

    targets = load_targets()
    gone = missing_tests(targets)
    if gone:
        print("test files scripts/mutation/targets.toml names but the tree lacks:\n  "
              + "\n  ".join(gone), file=sys.stderr)
        return 2
    if args.shard:
        try:
            i, n = (int(x) for x in args.shard.split("/"))
            assert 0 <= i < n
        except (ValueError, AssertionError):
            ap.error(f"--shard {args.shard}: expected I/N with 0 <= I < N")
        shard = targets[i::n]
    else:
        shard = targets
    # path -> the functions asked for (several ::names of one module add up; a module
    # also named whole is mutated whole)
    functions: dict[str, list[str]] = defaultdict(list)
    whole: set[str] = set()
    if args.all:
        missing = uncovered_modules(targets, ["emulator/cluster", "emulator/coordinators",
                                              "emulator/log", "emulator/handlers",
                                              "emulator/security", "emulator/faults"])
        if missing:
            print("modules no target of scripts/mutation/targets.toml names (give each "
                  "the tests that pin it):\n  " + "\n  ".join(missing), file=sys.stderr)
            return 2
        wanted = mutated_modules(shard)
    else:
        if not args.paths:
            ap.error("name the modules to mutate, or --all")
        wanted = []
        for p in args.paths:
            p, _, function = p.partition("::")
            if function:
                functions[str((Path.cwd() / p).resolve().relative_to(ROOT))].append(function)
            elif (Path.cwd() / p).resolve().is_relative_to(ROOT):
                whole.add(str((Path.cwd() / p).resolve().relative_to(ROOT)))
            full = (Path.cwd() / p).resolve()
            if not full.exists():
                ap.error(f"{p}: no such file or folder")
            rel = str(full.relative_to(ROOT))
            files = [rel] if full.is_file() else [
                str(f.relative_to(ROOT)) for f in sorted(full.rglob("*.py"))]
            wanted.extend(f for f in files if Path(f).name != "__init__.py" and f not in wanted)
    by_target: dict[str, list[str]] = defaultdict(list)
    for path in wanted:
        owners = [t for t in targets if t.owns(path)]
        if not owners:
            print(f"{path}: no target of {TARGETS.relative_to(ROOT)} names it; add it with "
                  "the tests that pin it", file=sys.stderr)
            return 2
        by_target[owners[0].name].append(path)

    mutants: list[Mutant] = []
    failed = []
    for t in targets:
        paths = by_target.get(t.name)
        if not paths:
            continue
        ws = workspace(t, args.max_children)
        globs = [g for p in paths
                 for f in (functions[p] if p in functions and p not in whole else [None])
                 for g in mutant_globs(t, p, f)]
        if not args.report_only:
            # the named modules' mutants (again); for the nightly, the whole target in
            # scope, verdicts of unchanged functions kept from the workspace's last run
            names = [] if args.all and not t.functions else globs
            if args.survivors:
                names = [m.name for m in results(ws, paths, globs)
                         if m.status in SURVIVING or m.status == "not checked"
                         or m.status in CRASHED]
                if not names:
                    print(f"== {t.name}: no survivor to run again")
            if names or not args.survivors:
                gained = full_stats_if_gained(ws, [
                    f"{m}:{f}" for m in mutated_modules([t])
                    for f in module_functions(ROOT / m)])
                if gained:
                    print(f"== {t.name}: {len(gained)} functions its last full stats "
                          f"collection did not see (e.g. {gained[0]}): collecting every "
                          "test's stats again, the verdicts kept", flush=True)
                if run_mutmut(ws, t, names, args.max_children, ws / "mutmut.log") != 0:
                    failed.append(t.name)
        mutants.extend(results(ws, paths, globs))

    entries = load_triage()
    surviving, stale = report(mutants, entries, by_function=bool(functions),
                              whole={module_of(p) for p in whole})
    scope = load_triaged()
    untriaged = [m for m in surviving if not is_triaged(m, scope)]
    if surviving:
        print(f"\n{len(surviving)} surviving mutants (kill each with a test, or record it in "
              f"{TRIAGE.relative_to(ROOT)} with the reason it is equivalent):")
        for m in surviving:
            where = "in triaged code" if is_triaged(m, scope) else "untriaged"
            print(f"  {m.name} ({m.status}, {where})")
            for ln in m.diff:
                print(f"      {ln}")
        if args.stubs:
            args.stubs.write_text("\n".join(triage_text(m) for m in surviving))
            print(f"triage stubs: {args.stubs}")
    for e in stale:
        print(f"stale entry in {TRIAGE.relative_to(ROOT)}: {e.mutant or e.function} "
              f"{e.diff} no longer survives (killed, or the code changed): remove it")
    crashed = [m for m in mutants if m.status in CRASHED]
    if crashed:
        print(f"\n{len(crashed)} mutants crashed (their test process killed by a signal, "
              "e.g. a compiled core rebuilt under the run): no verdict, counted apart; "
              f"--survivors runs them again (first: {crashed[0].name})")
    if failed:
        print(f"mutmut failed for: {', '.join(failed)}", file=sys.stderr)
        return 1
    if untriaged:
        functions_left = sorted({m.function for m in untriaged})
        print(f"\nuntriaged: {len(untriaged)} survivors in {len(functions_left)} functions "
              f"outside {TRIAGED.relative_to(ROOT)}"
              + ("" if args.strict else " (not failing: --strict fails on them)"))
    if args.check and failing(surviving, stale, scope, args.strict, crashed):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
