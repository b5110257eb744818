"""The one table of differences from Kafka (emulator/fidelity/differences.py DIFFERENCES)
holds.

The pages generated from it are current, every difference that can make a client test
falsely green is either reproduced by ``--fidelity kafka`` (with tests that exist) or
honestly marked as not yet, and ``kafka`` takes Kafka's own defaults for the keys the
table names.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conformance import fidelity_doc
from emulator.cluster import controller, kafka_configs
from emulator.cluster.clock import ManualClock
from emulator.cluster.configs import FIDELITY_KAFKA
from emulator.faults import FaultInjector
from emulator.fidelity import DIFFERENCES, NOT_YET, difference
from emulator.runtime import Cluster

ROOT = Path(__file__).resolve().parent.parent


def test_generated_pages_are_current() -> None:
    """docs/fidelity.md, docs/conformance.md's Known differences and docs/configs.md are
    what the tables give now (else: python -m conformance.fidelity_doc)."""
    stale = [str(p.relative_to(ROOT)) for p in fidelity_doc.stale()]
    assert stale == [], f"stale: {stale}; run python -m conformance.fidelity_doc"


def test_rewriting_conformance_touches_only_its_section() -> None:
    page = "# T\n\n## A\n\na\n\n## Known differences\n\n- old\n\n## B\n\nb\n"
    out = fidelity_doc.rewrite_section(page, ["## Known differences", "", "- new"])
    assert out == "# T\n\n## A\n\na\n\n## Known differences\n\n- new\n\n## B\n\nb\n"
    assert fidelity_doc.rewrite_section(out, ["## Known differences", "", "- new"]) == out


def test_keys_are_unique_and_stable_in_form() -> None:
    keys = [d.key for d in DIFFERENCES]
    assert len(keys) == len(set(keys))
    assert all(re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", k) for k in keys), keys
    # The keys the docs and other modules cite are there.
    for key in ("metadata-propagation", "coordinator-loading", "transaction-markers"):
        assert difference(key).false_green


@pytest.mark.parametrize("d", DIFFERENCES, ids=lambda d: d.key)
def test_a_false_green_is_reproduced_or_honestly_open(d) -> None:
    """Every entry says what each mode does; a false green is either reproduced by
    ``kafka`` and named by tests, or its kafka_mode says it is not yet."""
    assert d.title and d.kafka and d.fast and d.kafka_mode
    if not d.false_green:
        return
    if d.kafka_mode.startswith(NOT_YET):
        assert fidelity_doc.is_open(d)
        return
    assert d.kafka_mode != "as fast", f"{d.key}: a false green cannot be 'as fast' in kafka"
    both = [t for t in d.tests if t.startswith("client_tests/")]
    assert both, (f"{d.key}: reproduced by --fidelity kafka, but no client test on both "
                  "targets names it (a unit test of the config is not evidence)")


def _defined(path: Path, name: str) -> bool:
    """``name`` ("f" or "Class::method") is a function defined in ``path``."""
    tree = ast.parse(path.read_text())
    scope: list[ast.stmt] = tree.body
    *classes, func = name.split("::")
    for cls in classes:
        found = [n for n in scope if isinstance(n, ast.ClassDef) and n.name == cls]
        if not found:
            return False
        scope = found[0].body
    return any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == func
               for n in scope)


NAMED = sorted({t for d in DIFFERENCES for t in (*d.tests, *d.emulator_tests)})


@pytest.mark.parametrize("test_id", NAMED)
def test_every_named_test_exists(test_id: str) -> None:
    path, sep, name = test_id.partition("::")
    assert sep and name, f"{test_id}: expected path::function"
    file = ROOT / path
    assert file.is_file(), f"{test_id}: no file {path}"
    assert _defined(file, name.split("[")[0]), f"{test_id}: no such test in {path}"


def test_kafka_mode_takes_kafkas_timing_defaults() -> None:
    """The table's configs get Kafka 4.4's defaults in kafka and adversarial, not in
    fast; a config given explicitly still wins; and a crashed broker stays leader for
    Kafka's broker session timeout before it is fenced."""
    kafka_defaults = {r[0]: r[2] for r in kafka_configs.BROKER}
    keys = {k for d in DIFFERENCES for k in d.configs}
    assert keys == {"broker.session.timeout.ms", "group.initial.rebalance.delay.ms",
                    "log.cleaner.backoff.ms", "offsets.topic.segment.bytes",
                    "transaction.state.log.segment.bytes",
                    "share.coordinator.state.topic.segment.bytes"}
    assert FIDELITY_KAFKA == {k: kafka_defaults[k] for k in keys}
    fast = Cluster(port=0, fidelity="fast").state
    assert fast.config_int("group.initial.rebalance.delay.ms") == 0
    assert controller.crash_fence_delay(fast) == 0
    # the server's cleaner falls back to 1 s (emulator/server/purgatory.py)
    assert fast.config.get("log.cleaner.backoff.ms") is None
    for mode in ("kafka", "adversarial"):
        s = Cluster(port=0, fidelity=mode).state
        assert s.config_int("group.initial.rebalance.delay.ms") == 3000
        assert controller.crash_fence_delay(s) == 9000
        assert s.config_int("log.cleaner.backoff.ms") == 15000
    given = Cluster(port=0, fidelity="kafka",
                    config={"group.initial.rebalance.delay.ms": "10"}).state
    assert given.config_int("group.initial.rebalance.delay.ms") == 10

    clock = ManualClock()
    s = Cluster(port=0, fidelity="kafka", clock=clock).state
    s.create_topic("t", assignments={0: [2, 3, 1]})
    p = s.get_partition("t", 0)
    FaultInjector(s).apply({"op": "stop_broker", "broker": 2})
    clock.advance(8999)
    s.tick()
    assert p.leader == 2  # still listed as leader, as on Kafka until fenced
    clock.advance(1)
    s.tick()
    assert p.leader != 2 and not s.brokers[2].alive


def _collected(target: str, files: list[str]) -> set[str]:
    """The node ids (parameters stripped) pytest collects from ``files`` with
    ``--target target``: with kafka, client_tests/conftest.py deselects every test that
    cannot run on Kafka (marked emulator_only, or with an emulator of its own)."""
    r = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
         "-p", "no:randomly", "--target", target, *files],
        capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert r.returncode in (0, 5), r.stdout[-3000:] + r.stderr[-3000:]  # 5: none left
    return {line.split("[")[0] for line in r.stdout.splitlines() if "::" in line}


def test_tests_run_on_the_targets_the_entries_say() -> None:
    """A client test an entry names in ``tests`` runs on both targets (collected under
    ``--target kafka``); one in ``emulator_tests`` does not (else it belongs in tests)."""
    both = sorted({t for d in DIFFERENCES for t in d.tests if t.startswith("client_tests/")})
    alone = sorted({t for d in DIFFERENCES for t in d.emulator_tests
                    if t.startswith("client_tests/")})
    files = sorted({t.split("::")[0] for t in both + alone})
    on_kafka = _collected("kafka", files)
    wrong = [f"{t}: named in tests but not run with --target kafka" for t in both
             if t.split("[")[0] not in on_kafka]
    wrong += [f"{t}: runs with --target kafka, so it belongs in tests" for t in alone
              if t.split("[")[0] in on_kafka]
    assert wrong == []


def _test_source(test_id: str) -> str:
    """A named test's function source and its module's docstring."""
    path, _, name = test_id.partition("::")
    text = (ROOT / path).read_text()
    tree = ast.parse(text)
    scope: list[ast.stmt] = tree.body
    *classes, func = name.split("[")[0].split("::")
    for cls in classes:
        scope = next(n for n in scope if isinstance(n, ast.ClassDef) and n.name == cls).body
    node = next(n for n in scope if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
                and n.name == func)
    return (ast.get_docstring(tree) or "") + "\n" + (ast.get_source_segment(text, node) or "")


KAFKA_FIDELITY = ("kafka_timing_cluster", 'fidelity="kafka"', "fidelity='kafka'",
                  "kafka_defaults_cluster")


def _exercise_terms(d) -> set[str]:
    terms = {d.key, *d.configs, *d.exercises}
    if d.adversarial:
        terms.add("adversar")
    if d.false_green and not d.kafka_mode.startswith(NOT_YET) and d.kafka_mode != "as fast":
        terms.update(KAFKA_FIDELITY)
    return terms


@pytest.mark.parametrize("d", [d for d in DIFFERENCES if d.tests or d.emulator_tests],
                         ids=lambda d: d.key)
def test_every_named_test_exercises_its_difference(d) -> None:
    """Each test an entry names says, in its source or its module's docstring, what the
    difference is about: the entry's key, a config of it, one of its ``exercises``, the
    adversary for an adversarial entry, a kafka-fidelity emulator for a reproduced one."""
    terms = _exercise_terms(d)
    silent = [t for t in (*d.tests, *d.emulator_tests)
              if not any(term in _test_source(t) for term in terms)]
    assert silent == [], f"{d.key}: none of {sorted(terms)} in {silent}"


def test_false_green_follows_the_evidence() -> None:
    """``false_green`` is not a judgement the table may contradict: a difference the
    response differential shows (conformance/response_diff.py KNOWN) is a value a client
    reads differently, so its entry names that case in ``differential`` and is false
    green; every case an entry names is a KNOWN case of the battery."""
    from conformance.response_cases import cases
    from conformance.response_diff import KNOWN

    names = {c.name for c in cases()}
    by_case = {c: d for d in DIFFERENCES for c in d.differential}
    problems = []
    for case, (why, _) in KNOWN.items():
        key = why.split(":", 1)[0]
        d = by_case.get(case)
        if d is None or d.key != key:
            problems.append(f"KNOWN {case!r} cites {key!r}, whose entry does not name it")
    for case, d in by_case.items():
        if case not in names or case not in KNOWN:
            problems.append(f"{d.key}: {case!r} is not a known difference of the battery")
        if not d.false_green:
            problems.append(f"{d.key}: the differential shows it ({case!r}): false green")
    assert problems == []


def test_the_checks_catch_a_wrong_entry() -> None:
    """The rules above fail on an entry that breaks them (so they are not vacuous)."""
    from dataclasses import replace

    d = difference("auto-create-visibility")
    assert not _collected("kafka", ["client_tests/test_storage_faults.py"]) & {
        "client_tests/test_storage_faults.py::"
        "test_disk_full_takes_one_dir_offline_and_leadership_moves"}
    quiet = replace(d, key="x-y", exercises=(), configs=(), false_green=False)
    assert not any(t in _test_source(
        "client_tests/test_pipelining.py::test_pipelined_requests_are_all_answered_in_order")
        for t in _exercise_terms(quiet))
