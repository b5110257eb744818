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
    assert d.tests, f"{d.key}: reproduced by --fidelity kafka, but no test names it"


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


@pytest.mark.parametrize("test_id", sorted({t for d in DIFFERENCES for t in d.tests}))
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
