"""Shared fixtures: a fresh in-process 3-broker cluster on free ports per test.

Starting a cluster takes milliseconds, so every test gets its own: no state leaks
between tests, and a test that stops brokers cannot disturb the next one. A test
during which the emulator logged an exception fails (emulator.testing).

``--target kafka`` (or KAFKA_EMULATOR_TARGET=kafka) runs the same tests against Apache
Kafka itself (client_tests/targets.py): ``cluster`` is then one real Kafka cluster for
the session, and the tests that cannot run there are deselected.

Which target a test runs on is said by what it takes, never by its module's name (the
one convention; docs/CONTRIBUTING.md, "Tests"):

- a target fixture of this conftest (TARGET_FIXTURES: ``cluster``, ``group_cluster``,
  ``share_cluster``, ``bootstrap``, ...): both targets, the emulator and with ``--target
  kafka`` the session's Kafka;
- the marker ``emulator_only``, with a comment saying why: the emulator alone (a test of
  the emulator itself, or one that needs an emulator configured as the session's Kafka
  is not: an authorizer, SASL users, connection limits);
- a module with its own ``kafka`` fixture (OWN_KAFKA: a KafkaCluster configured as its
  emulator-only twin's cluster is, in ``<twin>_kafka.py``): a real Kafka, in the default
  pass (``--target`` picks only the shared target).

A client test that says none of these fails at setup (``pytest_runtest_setup``): a test
that builds its own emulator unmarked would otherwise drop out of the Kafka pass unseen.
"""

from __future__ import annotations

import contextlib
import itertools
import os
from collections.abc import Iterator

import pytest

from client_tests import log_dir_targets, process_guard
from client_tests.group_members import GROUP_CONFIG, stop_live
from client_tests.kafka_cluster import KafkaCluster
from client_tests.targets import (
    SHARE_TEST_CONFIG,
    TARGET_ENV,
    KafkaTarget,
    close_session,
    kafka_target,
)
from emulator import Cluster
from emulator.pytest_plugin import kafka_emulator_logged_exceptions  # noqa: F401 - autouse

_names = itertools.count()
TARGET_FIXTURES = {"cluster", "group_cluster", "share_cluster", "bootstrap",
                   "kafka_timing_cluster", "log_dir_cluster", "kafka_defaults_cluster"}
TARGET_MODULES = {"conftest"}  # where the target-aware ones live
OWN_KAFKA = "kafka"  # the fixture of a *_kafka.py module: a real Kafka of its own


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--target", choices=("emulator", "kafka"),
                     default=os.environ.get(TARGET_ENV, "emulator"),
                     help="run the client tests against the emulator (default) or a real "
                          f"Apache Kafka cluster (env {TARGET_ENV})")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "emulator_only: runs on the emulator alone (not with --target kafka): "
                   "tests the emulator itself (faults, control plane, its state or timing), "
                   "or needs an emulator configured as the session's Kafka is not (its "
                   "Kafka side a *_kafka.py twin); a comment says why")
    config.addinivalue_line(
        "markers", "kafka_slow: over ~10 s on Kafka (a crash waits broker.session.timeout.ms "
                   "for the fencing, then a restart and rebalance); scripts/test's Kafka "
                   "pass leaves these out (-m 'not kafka_slow'), a plain --target kafka run "
                   "and python -m conformance.report run them")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--target") != "kafka":
        return
    keep, drop = [], []
    for item in items:
        in_client_tests = "client_tests" in item.path.parts
        # Only a test that reaches the cluster through the target fixtures can run on
        # Kafka; one that builds its own emulator would pass here without touching Kafka.
        runs = _uses_target(item) and not item.get_closest_marker("emulator_only")
        (keep if runs or not in_client_tests else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


def target_of(item: pytest.Item) -> str | None:
    """Where a client test runs, as it says (the module docstring's convention): "both",
    "emulator" (marked emulator_only), "own kafka" (a *_kafka.py module's Kafka), or None
    when it says nothing."""
    if item.get_closest_marker("emulator_only"):
        return "emulator"
    if _uses_target(item):
        return "both"
    # A module with a ``kafka`` fixture of its own is a Kafka twin: its tests run there
    # (the few that need a Kafka configured otherwise start one themselves).
    defs = item.session._fixturemanager.getfixturedefs(OWN_KAFKA, item)
    if defs and defs[-1].baseid and item.nodeid.startswith(defs[-1].baseid + "::"):
        return "own kafka"
    return None


def pytest_runtest_setup(item: pytest.Item) -> None:
    if "client_tests" in item.path.parts and target_of(item) is None:
        pytest.fail(f"{item.nodeid} says no target: take a target fixture of "
                    "client_tests/conftest.py (both targets), or mark it emulator_only with "
                    "a comment saying why (the emulator alone); see the conftest's "
                    "docstring", pytrace=False)


def _uses_target(item: pytest.Item) -> bool:
    """Does the test get its cluster from the target-aware fixtures here (not from a
    fixture of its own module that starts an emulator)?"""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return False
    for name in TARGET_FIXTURES & set(info.names_closure):
        defs = info.name2fixturedefs.get(name)
        if defs and defs[-1].func.__module__.rsplit(".", 1)[-1] in TARGET_MODULES:
            return True
    return False


@pytest.fixture(autouse=True)
def _reap_children() -> Iterator[None]:
    """What a test started with process_guard.start is gone after it, pass or fail."""
    yield
    process_guard.reap()


def pytest_sessionfinish(session: pytest.Session) -> None:
    close_session()


def on_kafka(request: pytest.FixtureRequest) -> bool:
    return request.config.getoption("--target") == "kafka"


@contextlib.contextmanager
def _target(request: pytest.FixtureRequest, config: dict[str, str] | None,
            fidelity: str | None = None) -> Iterator[Cluster | KafkaTarget]:
    """The session's Kafka with --target kafka (restored after the test), else a fresh
    3-broker emulator with ``config`` (and ``fidelity``; None: the default)."""
    if on_kafka(request):
        target = kafka_target()
        try:
            yield target
        finally:
            target.restore()
        return
    with Cluster(brokers=3, port=0, config=config, fidelity=fidelity) as c:
        yield c


@pytest.fixture
def cluster(request: pytest.FixtureRequest) -> Iterator[Cluster | KafkaTarget]:
    """The emulator (a fresh one per test), or with --target kafka the session's Kafka."""
    with _target(request, None) as c:
        yield c


@pytest.fixture
def group_cluster(request: pytest.FixtureRequest) -> Iterator[Cluster | KafkaTarget]:
    """For the group client tests (client_tests/group_members.py): an emulator with
    GROUP_CONFIG's short group timeouts, or with --target kafka the session's Kafka, whose
    group timeouts are these too. The members a failing test left running are stopped
    before the cluster is."""
    with _target(request, GROUP_CONFIG) as c:
        try:
            yield c
        finally:
            stop_live()


@pytest.fixture
def share_cluster(request: pytest.FixtureRequest) -> Iterator[Cluster | KafkaTarget]:
    """For share-group client tests: an emulator with SHARE_TEST_CONFIG (test-paced share
    heartbeats and lock durations), or with --target kafka the session's Kafka, which
    has it too."""
    with _target(request, SHARE_TEST_CONFIG) as c:
        yield c


@pytest.fixture
def kafka_timing_cluster(request: pytest.FixtureRequest) -> Iterator[Cluster | KafkaTarget]:
    """For client tests of Kafka's timing (coordinators loading, transactions preparing):
    an emulator under ``--fidelity kafka``, or with --target kafka the session's Kafka.
    The first rebalance of a classic group waits 0 ms, as in the session's Kafka
    (kafka_cluster.small_cluster_config), not Kafka's default 3 s."""
    with _target(request, {"group.initial.rebalance.delay.ms": "0"}, "kafka") as c:
        yield c


# Kafka's own defaults for the timing keys the fidelity table names (configs of its
# entries: emulator/fidelity/differences.py), which the session's Kafka sets to test pace.
KAFKA_TIMING_DEFAULTS = {"group.initial.rebalance.delay.ms": "3000",
                         "log.cleaner.backoff.ms": "15000"}


@pytest.fixture(scope="session")
def _kafka_with_kafkas_defaults(request: pytest.FixtureRequest
                                ) -> Iterator[KafkaTarget | None]:
    """With --target kafka, a one-broker Kafka of its own with KAFKA_TIMING_DEFAULTS
    (started on first use); None on the emulator."""
    if not on_kafka(request):
        yield None
        return
    with KafkaCluster(brokers=1, broker_config=KAFKA_TIMING_DEFAULTS) as kafka:
        yield KafkaTarget(kafka)


@pytest.fixture
def kafka_defaults_cluster(request: pytest.FixtureRequest,
                           _kafka_with_kafkas_defaults: KafkaTarget | None
                           ) -> Iterator[Cluster | KafkaTarget]:
    """For client tests of the timing defaults ``--fidelity kafka`` takes from Kafka
    (group.initial.rebalance.delay.ms 3000, log.cleaner.backoff.ms 15000): a one-broker
    emulator under ``--fidelity kafka`` with no config of its own, or with --target kafka a
    one-broker Kafka of its own with Kafka's defaults for them."""
    if _kafka_with_kafkas_defaults is not None:
        yield _kafka_with_kafkas_defaults
        return
    with Cluster(brokers=1, port=0, fidelity="kafka") as c:
        yield c


@pytest.fixture
def log_dir_cluster(request: pytest.FixtureRequest) -> Iterator[log_dir_targets.Side]:
    """Two brokers, broker 1 with two log dirs of which one can be made to fail: the
    emulator (a storage fault), or with --target kafka a Kafka cluster of its own with a
    filled tmpfs (client_tests/log_dir_targets.py; needs root)."""
    side = log_dir_targets.kafka_side if on_kafka(request) else log_dir_targets.emulator_side
    with side() as s:
        yield s


@pytest.fixture
def bootstrap(cluster: Cluster | KafkaTarget) -> str:
    return cluster.bootstrap_servers


@pytest.fixture
def topic_name(request: pytest.FixtureRequest) -> str:
    """A unique, legal topic name per test."""
    return f"t-{request.node.name.replace('[', '-').replace(']', '')[:80]}-{next(_names)}"
