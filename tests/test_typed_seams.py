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
from emulator.cluster.clock import ManualClock
from emulator.cluster.metadata import Broker
from emulator.cluster.state import ClusterState
from emulator.coordinators.groups.base import GroupsBase
from emulator.coordinators.groups.coordinator import GroupCoordinator
from emulator.coordinators.groups.parts import ClassicPart, ConsumerPart
from emulator.coordinators.runtime.host import ClusterHost
from emulator.coordinators.share.groups import ShareGroupsHost
from emulator.coordinators.share.state import ShareStateHost
from emulator.handlers import HANDLERS
from emulator.handlers.base import RequestContext
from emulator.services import Services
from wire.errors import ErrorCode as E

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
    # None is left: the baseline allows none (an area it does not list may have no errors),
    # so a new explicit Any fails the run.
    assert tc.read_baseline().get("domain (explicit Any)", 0) == 0


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


def test_the_fault_models_checkpoint_leaves_its_failure_for_the_cluster_to_tell(
        make_cluster: MakeCluster) -> None:
    """A failing fsync fails its dir at the next checkpoint (the fault model's ``tick``,
    run by ``ClusterState.tick``): the model keeps the failure, as a write check does,
    and the cluster's tick tells the controller after it, never the model itself."""
    s, clock, f = make_cluster(**{"log.dirs": "/a,/b",
                                  "replica.high.watermark.checkpoint.interval.ms": "5000"})
    s.create_topic("t", assignments={0: [1, 2], 1: [1, 2]})  # 1 in /b
    f.apply({"op": "fail_fsyncs", "broker": 1, "log_dir": "/b"})
    assert s.faults is not None
    s.faults.tick(s.now())  # the checkpoint is due in 5000 ms
    clock.advance(5000)
    assert s.faults.tick(s.now())  # the checkpoint failed /b: nothing acts yet
    p1 = s.get_partition("t", 1)
    assert (p1.offline, p1.leader, s.offline_log_dirs.get(1, set())) == (set(), 1, set())
    s.followers.tell_log_dir_failures(s.faults)
    assert (p1.offline, p1.leader, s.offline_log_dirs[1]) == ({1}, 2, {"/b"})


def test_a_data_dir_write_failure_reaches_the_controller_after_the_observers(
        make_cluster: MakeCluster, tmp_path: Path) -> None:
    """The data directory writes from an observer of the leader's ``Appended``; a write
    it cannot make it reports to the cluster's ``LogDirFailureChannel`` (ports.py), and
    the append tells the controller once every observer is done: while the observers
    run, nothing has moved; then the replica is offline, the leader elsewhere, and the
    append answers KAFKA_STORAGE_ERROR. A real write error: a file stands where the
    partition's directory goes."""
    from emulator.storage import DataDir
    from wire.records import build_batch

    s, _, _ = make_cluster()
    s.create_topic("t", assignments={0: [1, 2]})
    store = DataDir(str(tmp_path / "data"))
    (tmp_path / "data" / "t-0").write_text("")  # os.makedirs fails: FileExistsError
    p = s.get_partition("t", 0)
    seen: list[tuple[str, set[int], int]] = []  # the controller's doing, per observer call

    def observe(kind: str, event: object) -> None:
        store.on_event(s, event)
        seen.append((kind, set(p.offline), p.leader))

    s.hooks.append(observe)
    try:
        r = s.append(1, "t", 0, build_batch([(None, b"v")]), 1)
    finally:
        store.close()
    assert seen[0] == ("append", set(), 1)  # the observer ran; the controller had not
    assert r.error == E.KAFKA_STORAGE_ERROR
    assert (p.offline, p.leader, len(s.offline_log_dirs[1])) == ({1}, 2, 1)
    assert not s.log_dir_failure_channel.pending


# The modules above the domain that call the controller's functions (emulator.cluster
# .controller) directly, each from an operation or a request it runs, none from inside a
# call of the domain's (an event observer, a fault check, the fault model's tick): the
# data directory reports to the log dir failure channel, the fault model leaves its
# failures to take, and the domain tells the controller. A new caller fails here until
# listed.
CONTROLLER_CALLERS_ABOVE = {"emulator/faults/injector.py",
                            "emulator/handlers/api_064_unregister_broker.py"}


def _imports_the_controller(path: Path) -> bool:
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module == "emulator.cluster" \
                and any(a.name == "controller" for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and node.module == "emulator.cluster.controller":
            return True
        if isinstance(node, ast.Import) and any(a.name == "emulator.cluster.controller"
                                                for a in node.names):
            return True
    return False


def test_the_callers_of_the_controller_above_the_domain_are_the_listed_ones() -> None:
    found = {str(f.relative_to(ROOT)) for f in sorted((ROOT / "emulator").rglob("*.py"))
             if not f.is_relative_to(ROOT / "emulator/cluster") and _imports_the_controller(f)}
    assert found == CONTROLLER_CALLERS_ABOVE


def test_the_controller_caller_check_sees_an_import(tmp_path: Path) -> None:
    for text in ("from emulator.cluster import controller\n",
                 "from emulator.cluster.controller import log_dir_failed\n",
                 "import emulator.cluster.controller\n"):
        (tmp_path / "m.py").write_text(text)
        assert _imports_the_controller(tmp_path / "m.py"), text
    (tmp_path / "m.py").write_text("from emulator.cluster import ports\n")
    assert not _imports_the_controller(tmp_path / "m.py")


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
                  "fidelity", "is_alive", "is_running", "alive_brokers", "now", "rng",
                  "create_topic",
                  "append_control", "hooks", "tick_hooks", "emit", "changed"},
    ShareGroupsHost: {"state", "groups", "gc", "cfg", "group_int", "initialize_subscribed",
                      "share_state_initialized", "on_member_gone", "mark_changed"},
    ShareStateHost: {"state", "partitions", "cfg", "share_partition", "persist", "forget",
                     "mark_changed"},
    # and the calls between the group coordinator's parts, through its core: migration
    # calls down into the classic and consumer protocols, and no part calls up into it
    ClassicPart: {"session_timeout_valid", "join_group", "sync_group", "heartbeat",
                  "leave_group", "prepare_rebalance"},
    ConsumerPart: {"compute_subscription_metadata", "update_group_epoch",
                   "maybe_update_target", "reconcile", "remove_consumer_member",
                   "heartbeat_error", "validate_heartbeat", "member_heartbeat",
                   "leaving_member", "left", "leave_for_a_while", "fence_member",
                   "tick_assignment", "must_fence"},
}


def test_the_calls_up_a_layer_are_the_listed_ones() -> None:
    assert {p: _members(p) for p in UPWARD_SEAMS} == UPWARD_SEAMS


def _parts_reached(path: Path) -> set[str]:
    """The parts of the group coordinator a module reaches through its core
    (``self.gc.<part>`` or ``gc.<part>``)."""
    parts = {"classic", "consumer", "migration", "streams"}
    return {node.attr for node in ast.walk(ast.parse(path.read_text()))
            if isinstance(node, ast.Attribute) and node.attr in parts
            and isinstance(node.value, ast.Attribute | ast.Name)
            and (node.value.attr if isinstance(node.value, ast.Attribute)
                 else node.value.id) == "gc"}


def test_migration_sits_above_the_classic_and_the_consumer_protocol(tmp_path: Path) -> None:
    """Online migration takes the classic requests, the consumer heartbeats and the
    consumer groups' timers first and calls the classic and consumer protocols below it;
    neither protocol reaches another part (a call up into migration, as the classic
    JoinGroup, SyncGroup, Heartbeat and LeaveGroup once made, and the consumer protocol's
    upgrade, downgrade and classic members' timers, fails here), and the core the parts
    share names no migration for them to reach (mypy then refuses ``gc.migration``)."""
    coordinators = ROOT / "emulator/coordinators"
    assert _parts_reached(coordinators / "classic/protocol.py") == set()
    assert _parts_reached(coordinators / "consumer/protocol.py") == set()
    assert _parts_reached(coordinators / "streams/protocol.py") == set()
    assert _parts_reached(coordinators / "consumer/migration.py") == {"classic", "consumer"}
    assert "migration" not in GroupsBase.__annotations__
    # what migration calls below is public: no protocol between the parts names a
    # private member
    for proto in (ClassicPart, ConsumerPart):
        assert not [n for n, v in vars(proto).items() if n.startswith("_")
                    and not n.startswith("__") and callable(v)], proto
    bad = tmp_path / "protocol.py"
    bad.write_text("def join(self, g):\n    return self.gc.migration.join_group(g)\n")
    assert _parts_reached(bad) == {"migration"}


# ---- waiting and time: the domain's -----------------------------------------------------
HANDLERS_DIR = ROOT / "emulator/handlers"
# What builds a waiting object or moves a coordinator's clock: the domain's to call.
WAIT_BUILDERS = {"Delayed", "until"}


# The one place a handler module runs a coordinator's timers: before the handler.
CLOCK_PLACE = ("base.py", "advance_clocks")


def _waits_and_ticks(path: Path) -> list[str]:
    """Where ``path`` builds a waiting object (``Delayed(...)``, ``until(...)``, a class
    named Delayed) or calls a ``tick`` (a coordinator's or the cluster's), but in
    CLOCK_PLACE."""
    found = []
    tree = ast.parse(path.read_text())
    skip = {id(n) for f in ast.walk(tree) if isinstance(f, ast.FunctionDef)
            and (path.name, f.name) == CLOCK_PLACE for n in ast.walk(f)}
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == "Delayed":
            found.append(f"{path.name}:{node.lineno} defines Delayed")
        if not isinstance(node, ast.Call) or id(node) in skip:
            continue
        f = node.func
        name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) \
            else ""
        if name in WAIT_BUILDERS or name == "tick":
            found.append(f"{path.name}:{node.lineno} calls {name}")
    return found


def test_handlers_build_no_waiting_object_and_tick_nothing() -> None:
    """The purgatory's conditions and deadlines are the domain's (emulator/cluster/
    delayed.py, the coordinators' waits.py); a handler decodes, calls the domain and maps
    its answer (``Delayed.map``). The coordinators' timers run before a request in one
    place, the registry (``COORDINATORS``, emulator/handlers/__init__.py ``_on_time``)."""
    found = [hit for p in sorted(HANDLERS_DIR.glob("*.py")) for hit in _waits_and_ticks(p)]
    assert found == []


def test_the_seam_check_sees_a_handler_that_waits_or_ticks(tmp_path: Path) -> None:
    bad = tmp_path / "api_999_bad.py"
    bad.write_text("def handle(ctx, req, version):\n"
                   "    ctx.services.groups.tick()\n"
                   "    return Delayed(lambda: None, 0, dict)\n")
    assert _waits_and_ticks(bad) == ["api_999_bad.py:2 calls tick",
                                     "api_999_bad.py:3 calls Delayed"]


def test_a_request_meets_the_coordinators_timers_as_of_its_own_time() -> None:
    """A heartbeat arriving after its member's session ran out, before any periodic
    tick: the registry runs the group coordinator's timers first (the handler module's
    ``COORDINATORS``), so it meets UNKNOWN_MEMBER_ID, as on Kafka, whose timer fires on
    time."""
    clock = ManualClock()
    s = ClusterState([Broker(i, "h", 9000 + i) for i in (1, 2, 3)], clock=clock,
                     broker_config={"group.initial.rebalance.delay.ms": "0"})
    gc = GroupCoordinator(s)
    gc.ensure_offsets_topic()
    fut = gc.join_group("g", "", None, "consumer", [("range", b"")], 10_000, 10_000,
                        version=3)
    gc.tick()
    joined = fut.value
    member, generation = joined["member_id"], joined["generation_id"]
    gc.sync_group("g", member, generation, assignments=[(member, b"")])
    heartbeat = HANDLERS[12].module
    ctx = RequestContext(s, gc.coordinator_for("g"), 12, 4, 1, "c",
                         services=Services(groups=gc))
    req = {"group_id": "g", "member_id": member, "generation_id": generation,
           "group_instance_id": None}
    assert heartbeat.handle(ctx, req, 4)["error_code"] == E.NONE
    clock.advance(10_001)  # the session ran out; no tick since
    assert heartbeat.handle(ctx, req, 4)["error_code"] == E.UNKNOWN_MEMBER_ID
