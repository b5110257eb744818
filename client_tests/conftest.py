"""Shared fixtures: a fresh in-process 3-broker cluster on free ports per test.

Starting a cluster takes milliseconds, so every test gets its own: no state leaks
between tests, and a test that stops brokers cannot disturb the next one. A test
during which the emulator logged an exception fails (emulator.testing).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import pytest

from emulator import Cluster
from emulator.pytest_plugin import kafka_emulator_logged_exceptions  # noqa: F401 - autouse

_names = itertools.count()


@pytest.fixture
def cluster() -> Iterator[Cluster]:
    with Cluster(brokers=3, port=0) as c:
        yield c


@pytest.fixture
def bootstrap(cluster: Cluster) -> str:
    return cluster.bootstrap_servers


@pytest.fixture
def topic_name(request: pytest.FixtureRequest) -> str:
    """A unique, legal topic name per test."""
    return f"t-{request.node.name.replace('[', '-').replace(']', '')[:80]}-{next(_names)}"
