"""Fixtures: one SparkSession for the whole run, a fresh 3-broker emulator per test.

A SparkSession costs tens of seconds of JVM start and warm-up on a 2-core machine, so
there is exactly one (session scope, local[2]); an emulator costs milliseconds, so
every test gets its own and no topic or fault leaks into the next test.
The connector jars are fetched on first use (fetch_jars.py) if scripts/setup.d has not
done it; a PySpark that is not the connector's release fails the run here. A test
during which the emulator logged an exception fails (emulator.testing).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

from emulator import Cluster
from emulator.pytest_plugin import kafka_emulator_logged_exceptions  # noqa: F401 - autouse


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """local[2]; with SPARK_VALIDATION_CLUSTER=standalone, a master and two worker JVMs
    (spark_validation/standalone.py) whose two executors must both register."""
    from spark_validation.session import build_session

    if os.environ.get("SPARK_VALIDATION_CLUSTER", "local") == "standalone":
        from spark_validation.standalone import (
            STANDALONE_CONF,
            StandaloneCluster,
            wait_for_executors,
        )

        with StandaloneCluster(workers=2) as url:
            session = build_session(app_name="spark_validation-standalone", master=url,
                                    conf=STANDALONE_CONF)
            executors = wait_for_executors(session, 2)
            print(f"standalone cluster {url}: executors {executors}")
            yield session
            for q in session.streams.active:
                q.stop()
            session.stop()
        return
    session = build_session(app_name="spark_validation-tests")
    yield session
    for q in session.streams.active:
        q.stop()
    session.stop()


@pytest.fixture
def cluster() -> Iterator[Cluster]:
    with Cluster(brokers=3, port=0) as c:
        yield c


@pytest.fixture
def docker_cluster() -> Iterator[Any]:
    """The emulator's Docker image, advertised on this host's own address
    (docker_emulator.py); fails, never skips, without an engine or the image."""
    from spark_validation.docker_emulator import DockerEmulator

    with DockerEmulator(brokers=3) as c:
        yield c


@pytest.fixture
def work(tmp_path: Any) -> str:
    return str(tmp_path)


@pytest.fixture(autouse=True)
def _stop_leftover_queries(request: pytest.FixtureRequest) -> Iterator[None]:
    """A failed test must not leave a streaming query polling a stopped emulator."""
    yield
    if "spark" in request.fixturenames:
        for q in request.getfixturevalue("spark").streams.active:
            q.stop()
