"""pytest plugin: fixtures giving each test (or module, or session) a running cluster."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from emulator.runtime import Cluster


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("kafka-emulator")
    group.addoption("--kafka-emulator-brokers", type=int, default=3,
                    help="brokers in the kafka_cluster fixture's cluster (default 3)")
    group.addoption("--kafka-emulator-scope", default="function",
                    choices=["function", "class", "module", "package", "session"],
                    help="scope of the kafka_cluster fixture (default function)")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "kafka_brokers(n): number of brokers for the kafka_cluster fixture")


def _scope(fixture_name: str, config: pytest.Config) -> str:
    return config.getoption("--kafka-emulator-scope")


@pytest.fixture(scope=_scope)
def kafka_cluster(request: pytest.FixtureRequest) -> Iterator[Cluster]:
    """A running in-process cluster on free ports."""
    marker = request.node.get_closest_marker("kafka_brokers")
    n = marker.args[0] if marker else request.config.getoption("--kafka-emulator-brokers")
    with Cluster(brokers=n, port=0) as cluster:
        yield cluster


@pytest.fixture(scope=_scope)
def kafka_bootstrap(kafka_cluster: Cluster) -> str:
    """The bootstrap servers string of ``kafka_cluster``."""
    return kafka_cluster.bootstrap_servers
