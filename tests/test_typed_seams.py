"""The domain's seams upward stay typed, and the checker counts what is left untyped.

An attribute typed ``Any`` is a seam no check sees: leadership and reassignment once
called the controller back through ``ClusterMetadata.controller: Any``, replication and
the followers called the fault model through ``ClusterMetadata.faults: Any``, and the
coordinators used ``state: Any``. Those seams are protocols now (emulator/cluster/
ports.py, emulator/coordinators/runtime/host.py), and mypy counts the explicit ``Any``
left in the domain apart (scripts/typecheck.py, "domain (explicit Any)" in
scripts/mypy-baseline.txt), so that the count only goes down. These tests hold the
pieces of that in place that mypy itself would not notice going away, and list every
member of those protocols: as the cycle check fails on a new import cycle, a new call
up a layer fails here until it is listed.
"""

from __future__ import annotations

import ast
import importlib.util
import sys
import tomllib
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

from emulator.cluster import ports
from emulator.coordinators.groups.parts import ClassicPart, ConsumerPart, MigrationPart
from emulator.coordinators.runtime.host import ClusterHost
from emulator.coordinators.share.groups import ShareGroupsHost
from emulator.coordinators.share.state import ShareStateHost

if TYPE_CHECKING:
    from conftest import MakeCluster

ROOT = Path(__file__).resolve().parent.parent
DOMAIN = ["emulator.cluster", "emulator.cluster.*", "emulator.log", "emulator.log.*",
          "emulator.coordinators", "emulator.coordinators.*"]


def _typecheck() -> ModuleType:
    spec = importlib.util.spec_from_file_location("typecheck_script",
                                                  ROOT / "scripts/typecheck.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def test_the_domain_forbids_explicit_any_and_counts_it_apart() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]
    domain = [o for o in config["overrides"] if o["module"] == DOMAIN]
    assert len(domain) == 1 and domain[0].get("disallow_any_explicit") is True
    tc = _typecheck()
    line = ('emulator/cluster/reads.py:17: error: Explicit "Any" is not allowed  '
            '[explicit-any]')
    m = tc.ERROR.match(line)
    assert m is not None
    assert tc.area(m["path"], m["code"]) == "domain (explicit Any)"
    other = tc.ERROR.match("emulator/cluster/reads.py:17: error: Name \"x\" is not defined  "
                           "[name-defined]")
    assert other is not None and tc.area(other["path"], other["code"]) == "domain"
    assert "domain (explicit Any)" in tc.read_baseline()


def _annotation_of(path: str, cls: str, attribute: str) -> str:
    """The annotation of ``self.<attribute>: ...`` in ``cls.__init__`` of ``path``."""
    tree = ast.parse((ROOT / path).read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == cls:
            for sub in ast.walk(node):
                if isinstance(sub, ast.AnnAssign) and isinstance(sub.target, ast.Attribute) \
                        and sub.target.attr == attribute:
                    return ast.unparse(sub.annotation)
    raise AssertionError(f"{cls}.{attribute} has no annotation in {path}")


def test_the_controller_and_the_faults_are_reached_through_typed_ports() -> None:
    path = "emulator/cluster/metadata.py"
    assert _annotation_of(path, "ClusterMetadata", "controller") == "ControllerRole | None"
    assert _annotation_of(path, "ClusterMetadata", "faults") == "FaultConditions | None"


def test_the_controller_role_and_the_fault_model_implement_their_ports(
        make_cluster: MakeCluster) -> None:
    """The runtime side of what mypy checks: a real cluster's controller and fault model
    have every member their protocol names."""
    state = make_cluster().state  # with its FaultInjector: the fault model is wired in
    for proto, obj in ((ports.ControllerRole, state.controller),
                       (ports.FaultConditions, state.faults)):
        names = {n for c in proto.__mro__ if c.__module__ == ports.__name__
                 for n in vars(c) if not n.startswith("_")}
        assert names and obj is not None and all(hasattr(obj, n) for n in names), proto


def test_a_failed_log_dir_reaches_the_controller_after_the_check(
        make_cluster: MakeCluster) -> None:
    """The fault model's write check answers and keeps the failure; the cluster tells
    the controller through ``log_dir_listeners`` (ports.LogDirFailure), not the check."""
    s, _, f = make_cluster(**{"log.dirs": "/a,/b"})
    s.create_topic("t", assignments={0: [1, 2], 1: [1, 2]})
    f.apply({"op": "fail_writes", "broker": 1, "log_dir": "/b"})
    p1 = s.get_partition("t", 1)
    assert s.faults is not None
    err, _ = s.faults.storage_write(p1, 1, s.now())  # the check alone: nothing acts yet
    assert err is not None and p1.offline == set() and p1.leader == 1
    told: list[ports.LogDirFailure] = []
    s.followers.log_dir_listeners.insert(0, told.append)
    s.followers.tell_log_dir_failures(s.faults)
    assert [(x.broker, x.log_dir) for x in told] == [(1, "/b")]
    assert (p1.offline, p1.leader, s.offline_log_dirs[1]) == ({1}, 2, {"/b"})
    assert s.faults.take_log_dir_failures() == []


def _members(proto: type) -> set[str]:
    """The members a protocol names, its own and its bases' (not typing's)."""
    return {n for c in proto.__mro__ if c.__module__ == proto.__module__
            for n in vars(c) if not n.startswith("_")}


# Every call up a layer, by the protocol it goes through. A new one is a deliberate
# change: add the member to the protocol (saying why there) and here.
UPWARD_SEAMS: dict[type, set[str]] = {
    ports.ControllerRole: {"broker_id", "epoch", "machines", "tick"},
    ports.FaultConditions: {"affects_fetching", "follower_can_fetch", "fetch_budget",
                            "storage", "storage_write", "take_log_dir_failures", "tick"},
    ClusterHost: {"topics", "topics_by_id", "topic_set_version", "config", "group_configs",
                  "fidelity", "is_alive", "alive_brokers", "now", "rng", "create_topic",
                  "append_control", "hooks", "tick_hooks", "emit", "changed"},
    ShareGroupsHost: {"state", "groups", "gc", "cfg", "group_int", "initialize_subscribed",
                      "share_state_initialized", "on_member_gone", "mark_changed"},
    ShareStateHost: {"state", "partitions", "cfg", "share_partition", "persist", "forget",
                     "mark_changed"},
    # and the calls between the group coordinator's parts, through its core
    ClassicPart: {"prepare_rebalance"},
    ConsumerPart: {"compute_subscription_metadata", "update_group_epoch",
                   "maybe_update_target", "reconcile", "remove_consumer_member"},
    MigrationPart: {"classic_join_to_consumer", "classic_sync_to_consumer",
                    "classic_heartbeat_to_consumer", "classic_leave_consumer", "maybe_upgrade",
                    "can_downgrade_without", "convert_to_classic", "tick_classic_members"},
}


def test_the_calls_up_a_layer_are_the_listed_ones() -> None:
    assert {p: _members(p) for p in UPWARD_SEAMS} == UPWARD_SEAMS
