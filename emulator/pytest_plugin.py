"""pytest plugin (entry point ``kafka_emulator``): in-process clusters as fixtures.

Installed with the package, so ``pip install kafka-emulator`` is all a test suite needs.

Fixtures
    ``kafka_cluster``          a running :class:`emulator.Cluster` on free ports
    ``kafka_bootstrap``        its bootstrap servers string, for any client
    ``kafka_control``          the same cluster as the control handle tests drive faults
                               with (``stop_broker``, ``inject_error``, ``cut_brokers``,
                               ``pause_follower``, ``fault({...})``, ``create_topic``...)
    ``kafka_cluster_factory``  ``make(brokers=5, **Cluster options)`` for extra clusters,
                               each stopped when the test ends
    ``kafka_topic_name``       a topic name unique to the test
    ``kafka_schema_registry``  the URL of ``kafka_cluster``'s built-in schema registry
                               (asking for it starts the cluster with one; give it to
                               ``SchemaRegistryClient({"url": ...})``;
                               docs/schema-registry.md)
    ``kafka_client_config``    ``settings(client="confluent", user=None, mechanism=None,
                               listener=None, mtls=False)``: client settings for the
                               (secured) ``kafka_cluster``: a dict for confluent-kafka,
                               kwargs for ``"kafka-python"``/``"aiokafka"``, Java
                               properties text for ``"java"``
    ``kafka_emulator_logged_exceptions``  autouse: fails any test during which an
                               in-process emulator logged an exception (a handler that
                               raised is a bug even when the client retried past its
                               UNKNOWN_SERVER_ERROR). Opt out with the marker
                               ``@pytest.mark.kafka_emulator_allow_exceptions`` or the
                               option ``--kafka-emulator-allow-exceptions``.

Configuration
    ``--kafka-emulator-brokers N`` or ini ``kafka_emulator_brokers`` (default 3);
    ``--kafka-emulator-scope S`` or ini ``kafka_emulator_scope``: function (default),
    class, module, package or session; the marker ``@pytest.mark.kafka_brokers(n,
    **options)`` on a test, class or module sets the broker count and other Cluster
    options (``config``, ``kafka_version``, ``seed``) for the tests it marks.
    Secured clusters: the marker ``@pytest.mark.kafka_security("sasl_ssl")`` (a preset:
    sasl_plaintext, sasl_ssl, ssl, mtls, acls; users admin/admin-secret and
    alice/alice-secret) or ``@pytest.mark.kafka_security(listeners=..., sasl_users=...,
    authorizer=True, ...)`` (``emulator.security.config.SecurityConfig`` fields), or
    ``--kafka-emulator-security PRESET`` for every test (docs/security.md).
    Fidelity (docs/fidelity.md): ``@pytest.mark.kafka_fidelity("kafka")`` or
    ``@pytest.mark.kafka_fidelity("adversarial", seed=7)`` on a test, class or module;
    else ``--kafka-emulator-fidelity``, else ``$KAFKA_EMULATOR_FIDELITY``, else the ini
    option ``kafka_emulator_fidelity``, else ``fast``. ``--kafka-emulator-seed N`` is the
    seed when the marker gives none. ``kafka_cluster_factory`` clusters take the same
    default unless given ``fidelity=``. A test that fails against an adversarial cluster
    gets a report section listing the faults injected while it ran (docs/faults.md).
    ``--kafka-emulator-shrink``: at the end of the session each such failure is shrunk
    to the fewest of its cluster's faults that still fail the test (each candidate is the
    test re-run in a pytest subprocess on a cluster injecting exactly those faults, up to
    ``--kafka-emulator-shrink-runs`` times: emulator/faults/shrink.py), and the terminal
    summary gives the shrunk fault schedule and the file it was written to;
    ``--kafka-emulator-schedule FILE`` runs every cluster of the plugin from a fault
    schedule (one with an adversary section replays those faults under its seed).

Sharing. With a scope broader than ``function``, tests asking for the same broker
count and options share one cluster for that scope, and tests with other needs get
their own. After each test the plugin clears the faults the test left in force and
starts again any broker it stopped, so the next one begins with a healthy cluster;
topics and records stay, which is what ``kafka_topic_name`` is for. Starting a cluster takes milliseconds, so the default
gives every test a fresh one.

pytest-xdist: each worker is a process of its own with its own clusters, each on
free ports, so workers never share a broker (with session scope: one cluster per
worker).
"""

from __future__ import annotations

import itertools
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable, Generator, Iterator
from pathlib import Path
from typing import Any, Literal, cast

import pytest

from emulator.fidelity import ENV_VAR, FIDELITIES
from emulator.runtime import Cluster
from emulator.security.config import PRESETS, preset
from emulator.testing import LoggedExceptions

Scope = Literal["function", "class", "module", "package", "session"]
SCOPES: tuple[Scope, ...] = ("function", "class", "module", "package", "session")
_topic_counter = itertools.count()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("kafka-emulator")
    group.addoption("--kafka-emulator-brokers", type=int, default=None,
                    help="brokers in the kafka_cluster fixture's cluster (default 3)")
    group.addoption("--kafka-emulator-scope", default=None, choices=SCOPES,
                    help="scope of the kafka_cluster fixture (default function)")
    group.addoption("--kafka-emulator-security", default=None, choices=sorted(PRESETS),
                    help="secure the kafka_cluster fixture's cluster with this preset")
    group.addoption("--kafka-emulator-allow-exceptions", action="store_true", default=False,
                    help="do not fail tests during which the emulator logged an exception")
    group.addoption("--kafka-emulator-fidelity", default=None, choices=FIDELITIES,
                    help="fidelity of the plugin's clusters: fast (default), kafka or "
                    f"adversarial (docs/fidelity.md); overrides ${ENV_VAR} and the ini option")
    group.addoption("--kafka-emulator-seed", type=int, default=None,
                    help="seed of the plugin's clusters (adversarial's faults replay by it)")
    group.addoption("--kafka-emulator-schedule", default=None, metavar="FILE",
                    help="run the plugin's clusters from this fault schedule; an adversary "
                    "section (kafka-emulator shrink's output) makes them adversarial under "
                    "its seed, injecting exactly its faults (docs/faults.md)")
    group.addoption("--kafka-emulator-shrink", action="store_true", default=False,
                    help="shrink a test's failure under --fidelity adversarial to the "
                    "fewest faults that still fail it (re-runs the test in subprocesses) "
                    "and report them as a fault schedule")
    group.addoption("--kafka-emulator-shrink-runs", type=int, default=3, metavar="K",
                    help="runs a shrink candidate may take to fail before it counts as "
                    "passing, and replays of the result (default 3)")
    parser.addini("kafka_emulator_brokers", "brokers in kafka_cluster (default 3)",
                  default="3")
    parser.addini("kafka_emulator_fidelity", "fidelity of the plugin's clusters when neither "
                  f"--kafka-emulator-fidelity nor ${ENV_VAR} says (default fast)",
                  default="")
    parser.addini("kafka_emulator_scope", "scope of kafka_cluster (default function)",
                  default="function")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "kafka_brokers(n, **options): brokers (and Cluster options such as config, "
        "kafka_version, seed) of the kafka_cluster fixture for the marked tests")
    config.addinivalue_line(
        "markers",
        "kafka_security(preset=None, **security): a secured kafka_cluster (a preset name "
        "such as sasl_ssl, and/or SecurityConfig fields; docs/security.md)")
    config.addinivalue_line(
        "markers",
        "kafka_fidelity(mode, seed=None): the fidelity (fast, kafka, adversarial) and seed "
        "of the kafka_cluster fixture for the marked tests (docs/fidelity.md)")
    config.addinivalue_line(
        "markers",
        "kafka_emulator_allow_exceptions: the marked tests may make the emulator log an "
        "exception (tests of the UNKNOWN_SERVER_ERROR path itself)")


def _scope(fixture_name: str, config: pytest.Config) -> Scope:
    scope = config.getoption("--kafka-emulator-scope") or config.getini("kafka_emulator_scope")
    if scope not in SCOPES:
        raise pytest.UsageError(f"kafka_emulator_scope must be one of {SCOPES}, not {scope!r}")
    return cast(Scope, scope)


def _default_brokers(config: pytest.Config) -> int:
    n = config.getoption("--kafka-emulator-brokers")
    return int(n if n is not None else config.getini("kafka_emulator_brokers"))


def _default_fidelity(config: pytest.Config) -> tuple[str, int | None]:
    """The mode and seed for clusters no marker speaks for: the command-line option,
    else the environment variable, else the ini option, else fast (docs/fidelity.md)."""
    mode = (config.getoption("--kafka-emulator-fidelity", None)
            or os.environ.get(ENV_VAR, "").strip()
            or str(config.getini("kafka_emulator_fidelity")).strip() or "fast")
    if mode not in FIDELITIES:
        raise pytest.UsageError(f"kafka-emulator fidelity must be one of "
                                f"{', '.join(FIDELITIES)}, not {mode!r}")
    return mode, config.getoption("--kafka-emulator-seed", None)


def _fidelity(request: pytest.FixtureRequest) -> dict[str, Any]:
    """``{"fidelity": mode}`` (and ``"seed"`` when one is asked for) for kafka_cluster:
    the kafka_fidelity marker's, else the default. Explicit, so the cluster pool keys on
    them and a test asking for kafka never shares a fast cluster."""
    mode, seed = _default_fidelity(request.config)
    marker = request.node.get_closest_marker("kafka_fidelity")
    if marker is not None:
        if not marker.args or marker.args[0] not in FIDELITIES:
            raise pytest.UsageError(f"kafka_fidelity takes one of {', '.join(FIDELITIES)} "
                                    f"(and seed=N), not {marker.args!r}")
        mode = marker.args[0]
        seed = marker.kwargs.get("seed", seed)
    return {"fidelity": mode, **({"seed": int(seed)} if seed is not None else {})}


def _start(brokers: int, options: dict[str, Any]) -> Cluster:
    if "port" in options:
        raise pytest.UsageError("kafka-emulator fixtures always use free ports; drop port=")
    return Cluster(brokers=brokers, port=0, **options).start()


def _scheduled(config: pytest.Config, brokers: int,
               options: dict[str, Any]) -> dict[str, Any]:
    """Under --kafka-emulator-schedule, a cluster's options run from that schedule: its
    adversary section decides the fidelity and the seed, so theirs go. A file that cannot
    be read or is no valid schedule is a usage error naming every problem."""
    from emulator.faults import FaultSchedule, ScheduleError

    path = config.getoption("--kafka-emulator-schedule", None)
    if not path:
        return options
    first = int(options.get("first_broker_id", 1))
    try:
        schedule = FaultSchedule.parse(Path(path).read_text(encoding="utf-8"),
                                       range(first, first + brokers), at_start=True)
    except (OSError, ScheduleError) as e:
        raise pytest.UsageError(f"--kafka-emulator-schedule {path}: {e}") from None
    out = {k: v for k, v in options.items() if k not in ("fidelity", "seed")}
    return {**out, "fault_schedule": schedule}


class ClusterPool:
    """The clusters of one fixture scope, one per (broker count, options)."""

    def __init__(self) -> None:
        self._clusters: dict[str, Cluster] = {}

    def get(self, brokers: int, options: dict[str, Any]) -> Cluster:
        key = repr((brokers, sorted(options.items())))
        if key not in self._clusters:
            self._clusters[key] = _start(brokers, options)
        return self._clusters[key]

    def close(self) -> None:
        for cluster in self._clusters.values():
            cluster.stop()
        self._clusters.clear()


@pytest.fixture(scope=_scope)
def _kafka_cluster_pool() -> Iterator[ClusterPool]:
    pool = ClusterPool()
    yield pool
    pool.close()


def _heal(cluster: Cluster) -> None:
    """Undo what a test did to a shared cluster: faults in force, stopped brokers, and
    log dirs a storage fault took offline (they come back when the broker restarts)."""
    cluster.clear_faults()
    for broker_id in cluster.broker_ids:
        b = cluster.state.brokers[broker_id]
        if b.alive and not b.crashed and cluster.state.offline_log_dirs.get(broker_id):
            cluster.stop_broker(broker_id, controlled=True)
        if not b.alive or b.crashed:
            cluster.start_broker(broker_id)


@pytest.fixture
def kafka_cluster(request: pytest.FixtureRequest,
                  _kafka_cluster_pool: ClusterPool) -> Iterator[Cluster]:
    """A running in-process cluster on free ports (see the module docstring for scope)."""
    marker = request.node.get_closest_marker("kafka_brokers")
    brokers = marker.args[0] if marker and marker.args else _default_brokers(request.config)
    options = dict(marker.kwargs) if marker else {}
    brokers = options.pop("brokers", brokers)
    for key, value in _fidelity(request).items():
        options.setdefault(key, value)  # kafka_brokers(seed=...) given explicitly stays
    security = _security(request)
    if security is not None:
        options["security"] = security
    if "kafka_schema_registry" in request.fixturenames:
        options.setdefault("schema_registry_port", 0)
    options = _scheduled(request.config, int(brokers), options)
    cluster = _kafka_cluster_pool.get(int(brokers), options)
    _watch_adversary(request, cluster)
    yield cluster
    if _scope("kafka_cluster", request.config) != "function":
        _heal(cluster)


def _security(request: pytest.FixtureRequest) -> dict | None:
    """The kafka_security marker's settings, else the --kafka-emulator-security preset."""
    marker = request.node.get_closest_marker("kafka_security")
    if marker is not None:
        name = marker.args[0] if marker.args else None
        return preset(name, **marker.kwargs) if name else dict(marker.kwargs)
    name = request.config.getoption("--kafka-emulator-security", None)
    return preset(name) if name else None


@pytest.fixture
def kafka_client_config(kafka_cluster: Cluster) -> Callable[..., Any]:
    """``settings(client="confluent", **kw)``: ``Cluster.client_config`` of kafka_cluster."""
    return kafka_cluster.client_config


_ADVERSARIES = pytest.StashKey[list]()


def _watch_adversary(request: pytest.FixtureRequest, cluster: Cluster) -> None:
    """Under --fidelity adversarial, note where the cluster's record of injected faults
    stands, so a failing test's report lists the faults injected while it ran."""
    if cluster.adversary is not None:
        request.node.stash.setdefault(_ADVERSARIES, []).append(
            (cluster, len(cluster.adversary.record)))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item,
                              call: pytest.CallInfo) -> Generator[None, Any, Any]:
    """A failed test that ran against an adversarial cluster gets a report section with
    the faults injected meanwhile (seed, request, what): the seed replays them."""
    report = yield
    if not report.failed:
        return report
    watched = item.stash.get(_ADVERSARIES, [])
    for cluster, start in watched:
        adversary = cluster.adversary
        lines = [f"{f.seq}: broker {f.broker}, {f.api} #{f.n} from {f.client_id!r}: "
                 f"{f.kind}: {f.detail}" for f in adversary.record[start:]]
        report.sections.append((
            f"kafka-emulator adversary (seed {adversary.seed}, {len(lines)} faults)",
            "\n".join(lines) or "(none injected during this test)"))
    if watched and call.when == "call" and item.config.getoption(
            "--kafka-emulator-shrink", False):
        # The whole record (the settings made at the cluster's start too), shrunk when
        # the session ends: after the test's clusters stopped, outside its timeout. A
        # pytest-xdist worker has no terminal summary: there it is shrunk now, and the
        # report (which the worker sends) carries the result.
        adversary = watched[0][0].adversary
        failure = (item.nodeid, adversary.seed, list(adversary.record))
        if hasattr(item.config, "workerinput"):
            report.sections.append((f"kafka-emulator shrink (seed {adversary.seed})",
                                    _shrink_failure(item.config, *failure)))
        else:
            item.config.stash.setdefault(_TO_SHRINK, []).append(failure)
    return report


_TO_SHRINK = pytest.StashKey[list]()


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    """--kafka-emulator-shrink: each adversarial failure shrunk, its schedule printed."""
    for nodeid, seed, record in config.stash.get(_TO_SHRINK, []):
        terminalreporter.section(f"kafka-emulator shrink: {nodeid} (seed {seed})")
        terminalreporter.write_line(_shrink_failure(config, nodeid, seed, record))


def _shrink_failure(config: pytest.Config, nodeid: str, seed: int, record: list) -> str:
    """Shrink the faults of a failed test's adversarial cluster by re-running the test
    in pytest subprocesses, each on clusters injecting exactly a candidate set
    (--kafka-emulator-schedule); returns the faults, the schedule, where it was written
    and how to replay it."""
    from emulator.faults.schedule import FaultSchedule
    from emulator.faults.shrink import shrink

    base = FaultSchedule.from_record(seed, record)
    runs = max(1, int(config.getoption("--kafka-emulator-shrink-runs", 3)))
    out_dir = Path(tempfile.gettempdir()) / "kafka-emulator-shrunk"
    out_dir.mkdir(exist_ok=True)
    stem = re.sub(r"[^a-zA-Z0-9._-]+", "-", nodeid).strip("-")[:150]
    # The candidates' file is this shrink's own: two shrinks of a test of the same name
    # at once (two xdist workers, two checkouts) must not replay each other's candidates.
    fd, name = tempfile.mkstemp(prefix=f"{stem}.", suffix=".candidate.json", dir=out_dir)
    os.close(fd)
    candidate_file = Path(name)
    args = [sys.executable, "-m", "pytest", nodeid, "-q", "-x", "-p", "no:cacheprovider",
            "--rootdir", str(config.rootpath), "--kafka-emulator-schedule",
            str(candidate_file)]
    if config.pluginmanager.hasplugin("xdist"):
        args += ["-n", "0"]
    for option in ("--kafka-emulator-brokers", "--kafka-emulator-scope",
                   "--kafka-emulator-security"):
        value = config.getoption(option, None)
        if value is not None:
            args += [option, str(value)]
    trouble: list[str] = []

    def run(candidate: tuple[Any, ...]) -> bool:
        candidate_file.write_text(base.with_adversary(candidate).to_json(), encoding="utf-8")
        done = subprocess.run(args, cwd=config.rootpath, capture_output=True, text=True,
                              check=False)
        if done.returncode not in (0, 1):  # not "passed" or "failed": say why, stop
            trouble.append(f"exit {done.returncode}: {done.stdout[-2000:]}{done.stderr[-2000:]}")
            raise RuntimeError(trouble[-1])
        return done.returncode == 1

    try:
        result = shrink(base.adversary or (), run, runs=runs, confirm=runs)
    except RuntimeError:
        return (f"could not re-run {nodeid} in a subprocess to shrink its faults "
                f"({' '.join(args)}):\n{trouble[-1]}")
    finally:
        candidate_file.unlink(missing_ok=True)
    lines = [result.summary()]
    if result.cause_found:
        shrunk = base.with_adversary(result.faults, comment=(
            f"{nodeid} under seed {seed}: {len(result.faults)} of "
            f"{len(result.original)} faults, failed {sum(result.confirmed)} of "
            f"{len(result.confirmed)} replays"))
        path = Path(str(candidate_file).removesuffix(".candidate.json") + ".json")
        path.write_text(shrunk.to_json(), encoding="utf-8")
        if not any(result.confirmed):
            lines.append("the shrunk set did not fail again: the failure needs timing these "
                         "faults do not fix (more --kafka-emulator-shrink-runs); the faults "
                         "of the last failing candidate:")
        else:
            lines.append(("this fault fails" if len(result.faults) == 1 else
                          f"these {len(result.faults)} faults, in this order, fail")
                         + " the test:")
        lines += [f"  {i}. {f.describe()}" for i, f in enumerate(result.faults, 1)]
        lines += [f"written to {path}; replay: pytest '{nodeid}' "
                  f"--kafka-emulator-schedule {path}", shrunk.to_json()]
    return "\n".join(lines)


@pytest.fixture(autouse=True)
def kafka_emulator_logged_exceptions(request: pytest.FixtureRequest) -> Iterator[None]:
    """Fail the test if an emulator in this process logged an exception meanwhile.

    Autouse, so it is set up first and torn down last: it also sees what a cluster
    logs while the test's fixtures stop it. The repository's conftests import it too,
    so it holds even with the plugin disabled (``-p no:kafka_emulator``).
    """
    allowed = (request.node.get_closest_marker("kafka_emulator_allow_exceptions") is not None
               or request.config.getoption("--kafka-emulator-allow-exceptions", False))
    if allowed:
        yield
        return
    with LoggedExceptions() as seen:
        yield
    if seen.records:
        pytest.fail("the emulator logged an exception during this test (a handler or "
                    "the cluster raised: our bug, whatever the client saw):\n"
                    + seen.report(), pytrace=False)


@pytest.fixture
def kafka_bootstrap(kafka_cluster: Cluster) -> str:
    """The bootstrap servers string of ``kafka_cluster`` ("127.0.0.1:PORT,...")."""
    return kafka_cluster.bootstrap_servers


@pytest.fixture
def kafka_schema_registry(kafka_cluster: Cluster) -> str:
    """``http://127.0.0.1:PORT``: the schema registry of ``kafka_cluster`` (Confluent's
    REST API, schemas kept in its ``_schemas`` topic)."""
    return kafka_cluster.schema_registry_url


@pytest.fixture
def kafka_control(kafka_cluster: Cluster) -> Cluster:
    """The control handle of ``kafka_cluster``: the Cluster object itself.

    Everything the Python control plane offers is there: ``stop_broker(id,
    controlled=False)``, ``start_broker(id)``, the fault API (``inject_error``,
    ``add_latency``, ``drop_response``, ``pause_follower``, ``slow_follower``,
    ``cut_brokers``, ``cut_clients``, the storage faults ``disk_full``, ``fail_writes``,
    ``fail_fsyncs``, ``slow_writes``, ``heal_storage`` (docs/faults.md),
    ``fault({"op": ...})``, ``run_fault_schedule``,
    ``clear_faults``), ``create_topic(...)``, ``cluster_info()``, and ``call(fn)`` on the
    cluster's loop. Safe to call from the test's thread.
    """
    return kafka_cluster


@pytest.fixture
def kafka_cluster_factory(request: pytest.FixtureRequest) -> Iterator[Callable[..., Cluster]]:
    """``make(brokers=3, **options)``: more clusters for one test, stopped at its end;
    the plugin's fidelity (marker, option, environment, ini) unless ``fidelity=``."""
    made: list[Cluster] = []
    defaults = _fidelity(request)

    def make(brokers: int = 3, **options: Any) -> Cluster:
        if "fidelity" not in options:
            options = {**defaults, **options}
        cluster = _start(brokers, _scheduled(request.config, brokers, options))
        made.append(cluster)
        _watch_adversary(request, cluster)
        return cluster

    yield make
    for cluster in made:
        cluster.stop()


@pytest.fixture
def kafka_topic_name(request: pytest.FixtureRequest) -> str:
    """A legal topic name unique to this test (and xdist worker), for shared clusters."""
    stem = re.sub(r"[^a-zA-Z0-9._-]+", "-", request.node.name).strip("-")[:180]
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    return f"{stem}-{worker}-{next(_topic_counter)}"
