"""The mutation-testing table and triage file stay true (scripts/mutation/, docs/mutation.md).

The nightly job (.ci/mutation-nightly) runs for hours; these checks run with the suite,
so a module added to a mutated package without tests to pin it, a test file renamed
under the table, or an equivalent-mutant entry without a reason fails at once rather
than at night.
"""

from __future__ import annotations

import importlib.util
import sys
import tomllib
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ["emulator/cluster", "emulator/coordinators", "emulator/log", "emulator/handlers",
            "emulator/security", "emulator/faults"]


def _driver() -> ModuleType:
    spec = importlib.util.spec_from_file_location("mutation_driver",
                                                  ROOT / "scripts/mutation/mutate.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


def test_every_module_of_the_mutated_packages_has_tests_to_pin_it() -> None:
    m = _driver()
    assert m.uncovered_modules(m.load_targets(), PACKAGES) == []


def test_every_test_file_the_table_names_exists() -> None:
    m = _driver()
    assert m.missing_tests(m.load_targets()) == []


def test_the_schema_registrys_compatibility_rules_are_in_scope() -> None:
    m = _driver()
    [t] = [t for t in m.load_targets() if t.name == "schema-registry-compatibility"]
    assert t.in_scope("emulator.schema_registry.avro.x__check__mutmut_3")
    assert t.in_scope("emulator.schema_registry.avro.x\u01c1AvroSchema\u01c1check__mutmut_1")
    assert not t.in_scope("emulator.schema_registry.avro.x__normal__mutmut_1")  # a normal form


def test_each_equivalent_mutant_has_a_function_a_diff_and_a_reason() -> None:
    m = _driver()
    data = tomllib.loads((ROOT / "scripts/mutation/equivalent.toml").read_text())
    entries = data.get("equivalent", [])
    modules = set(m.mutated_modules(m.load_targets()))
    for e in entries:
        assert e["reason"].strip(), e
        assert e["diff"] and all(ln[:1] in "+-" for ln in e["diff"]), e
        path = e["function"].rsplit(".", 1)[0].replace(".", "/") + ".py"
        assert path in modules, f"{e['function']}: not a module the table mutates"
    assert len(m.load_triage()) == len(entries)


def test_a_triage_entry_matches_on_the_change_not_mutmuts_number() -> None:
    m = _driver()
    e = m.Entry("emulator.cluster.reads.x_list_offset", ["-    a > b", "+    a >= b"], "why")
    same = m.Mutant("emulator.cluster.reads.x_list_offset__mutmut_41",
                    "emulator/cluster/reads.py", "survived", ["-  a > b", "+  a >= b"])
    other = m.Mutant("emulator.cluster.reads.x_list_offset__mutmut_7",
                     "emulator/cluster/reads.py", "survived", ["-    a > b", "+    a < b"])
    assert e.matches(same) and not e.matches(other)
    surviving, stale = m.report([same, other], [e])
    assert surviving == [other] and stale == []
    surviving, stale = m.report([other], [e])  # the entry's mutant is killed now: stale
    assert surviving == [other] and stale == [e]


def test_check_fails_on_a_survivor_in_triaged_code_and_lists_the_rest() -> None:
    """The nightly's verdict: a survivor of a triaged function (triaged.toml) fails it,
    as does a stale triage entry; an untriaged survivor fails it only when strict."""
    m = _driver()
    scope = ["emulator.faults.match.x__order", "emulator.security.acl.*"]
    triaged = m.Mutant("emulator.faults.match.x__order__mutmut_3",
                       "emulator/faults/match.py", "survived", ["-a", "+b"])
    whole = m.Mutant("emulator.security.acl.x_applies__mutmut_1",
                     "emulator/security/acl.py", "survived", ["-a", "+b"])
    other = m.Mutant("emulator.faults.match.x__orderly__mutmut_1",
                     "emulator/faults/match.py", "survived", ["-a", "+b"])
    assert m.is_triaged(triaged, scope) and m.is_triaged(whole, scope)
    assert not m.is_triaged(other, scope)  # a glob names whole functions, not prefixes
    assert m.failing([other], [], scope, strict=False) == []
    assert len(m.failing([other], [], scope, strict=True)) == 1
    assert len(m.failing([triaged, whole, other], [], scope, strict=False)) == 2
    stale = m.Entry("emulator.faults.match.x__order", ["-a", "+b"], "why")
    assert m.failing([], [stale], scope, strict=False) == [
        "emulator.faults.match.x__order: stale entry"]


def test_a_crashed_mutant_is_neither_killed_nor_judged_and_fails_the_check() -> None:
    """A mutant whose test process died of a signal (mutmut's "segfault": seen when the
    compiled core a fork server had loaded was rebuilt under a run) has no verdict: it
    does not count as killed, its function's entries are not called stale, --survivors
    runs it again, and in triaged code it fails --check."""
    m = _driver()
    scope = ["emulator.faults.match.x__order"]
    crashed = m.Mutant("emulator.faults.match.x__order__mutmut_3",
                       "emulator/faults/match.py", "segfault", [])
    e = m.Entry("emulator.faults.match.x__order", ["-a", "+b"], "why")
    assert "segfault" not in m.KILLED and "segfault" in m.CRASHED
    surviving, stale = m.report([crashed], [e])
    assert surviving == [] and stale == []
    assert m.failing([], [], scope, strict=False, crashed=[crashed]) == [
        "emulator.faults.match.x__order__mutmut_3 crashed in triaged code: run it again"]
    assert m.failing([], [], ["emulator.other.*"], strict=False, crashed=[crashed]) == []


def test_the_triaged_scope_names_functions_the_table_mutates() -> None:
    """Each glob of triaged.toml is of a module some target mutates (a renamed module
    must not leave its triage behind, silently covering nothing)."""
    m = _driver()
    modules = set(m.mutated_modules(m.load_targets()))
    scope = m.load_triaged()
    assert scope
    for g in scope:
        module = g.rsplit(".", 1)[0].replace(".", "/") + ".py"
        assert module in modules, f"{g}: not a module the table mutates"


def test_a_module_named_whole_beside_functions_of_another_judges_only_what_ran() -> None:
    """`scripts/mutate a.py b.py::f`: an entry of b.py's other functions is not stale
    (they did not run), one of a.py's is (all of a.py ran)."""
    m = _driver()
    ran = [m.Mutant("emulator.x.a.x_g__mutmut_1", "emulator/x/a.py", "killed"),
           m.Mutant("emulator.x.b.x_f__mutmut_1", "emulator/x/b.py", "killed")]
    of_a = m.Entry("emulator.x.a.x_h", ["-a", "+b"], "why")  # a.py ran whole
    of_b = m.Entry("emulator.x.b.x_other", ["-a", "+b"], "why")  # not run
    _, stale = m.report(ran, [of_a, of_b], by_function=True, whole={"emulator.x.a"})
    assert stale == [of_a]


def test_an_entry_of_a_function_with_unrun_mutants_is_not_stale() -> None:
    """A function changed since its last run has its mutants made again, not yet run:
    its triage entries cannot be judged until they are."""
    m = _driver()
    ran = [m.Mutant("emulator.x.a.x_g__mutmut_1", "emulator/x/a.py", "not checked"),
           m.Mutant("emulator.x.a.x_h__mutmut_1", "emulator/x/a.py", "killed")]
    of_g = m.Entry("emulator.x.a.x_g", ["-a", "+b"], "why")
    of_h = m.Entry("emulator.x.a.x_h", ["-a", "+b"], "why")
    assert m.report(ran, [of_g, of_h])[1] == [of_h]
    assert m.report(ran, [of_g, of_h], by_function=True)[1] == [of_h]


def test_a_function_the_last_stats_did_not_see_makes_mutmut_collect_them_all(
        tmp_path: Path) -> None:
    """mutmut collects stats again only for new tests: a function added since its last
    full collection would run against too few tests, so the driver removes the stats
    file (a full collection next), once per function gained."""
    d = _driver()
    module = tmp_path / "m.py"
    module.write_text("def f():\n    def inner():\n        pass\n\n\n"
                      "class C:\n    def g(self):\n        pass\n\n    x = 1\n")
    assert d.module_functions(module) == ["f", "C.g"]
    ws = tmp_path / "ws"
    (ws / "mutants").mkdir(parents=True)
    stats = ws / "mutants" / "mutmut-stats.json"
    # a fresh workspace: mutmut collects everything anyway; the functions are noted
    assert d.full_stats_if_gained(ws, ["m.py:f"]) == [] and not stats.exists()
    stats.write_text("{}")
    assert d.full_stats_if_gained(ws, ["m.py:f"]) == [] and stats.exists()
    assert d.full_stats_if_gained(ws, ["m.py:f", "m.py:C.g"]) == ["m.py:C.g"]
    assert not stats.exists()
    stats.write_text("{}")  # the full collection ran
    assert d.full_stats_if_gained(ws, ["m.py:f", "m.py:C.g"]) == [] and stats.exists()
    # a workspace collected before the driver noted functions: collected again once
    (ws / d.STATS_FUNCTIONS).unlink()
    assert d.full_stats_if_gained(ws, ["m.py:f"]) == ["m.py:f"] and not stats.exists()
