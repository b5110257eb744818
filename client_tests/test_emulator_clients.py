"""The emulator's own client modules (clients/java, clients/go, clients/node) run their
tests against the image: Java's KafkaEmulatorContainer (a Testcontainers KafkaContainer)
with a JUnit 5 test, the testcontainers-go module with a Go test, the Testcontainers for
Node module with a node:test test. Each test crashes a broker in the middle of a stream
(producing goes on, nothing acknowledged is lost), fails one group's commits with a fault
rule, and asserts on the request journal.

Needs a Docker engine and kafka-emulator:latest (scripts/setup.d/50-docker.sh) and the
modules built (scripts/setup.d/54-emulator-clients.sh: Java jars from Maven Central, the
Go test binary from the Go module proxy, the Node package's dependencies from npm).
Without them these tests fail and say which script to run. As in test_official_image.py,
no registry is reachable here: Ryuk is off and the Docker host is named.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from client_tests.docker_image import require_image

# Not run with --target kafka: the emulator's image and its control plane.
pytestmark = [pytest.mark.emulator_only, pytest.mark.xdist_group("docker-clients")]

IMAGE = os.environ.get("KAFKA_EMULATOR_IMAGE", "kafka-emulator:latest")
CLIENTS = Path(__file__).resolve().parent.parent / "clients"
SETUP = "scripts/setup.d/54-emulator-clients.sh"
TC_ENV = {"TESTCONTAINERS_RYUK_DISABLED": "true", "TESTCONTAINERS_HOST_OVERRIDE": "localhost",
          "KAFKA_EMULATOR_IMAGE": IMAGE}


@pytest.fixture(scope="module")
def image() -> str:
    """Fail (not skip) with the reason when the engine or the image is missing."""
    return require_image(IMAGE)


def run_tests(cmd: list[str], cwd: Path, passed: str, started: bool = True) -> str:
    """Run one language's tests; their output, after checking every test passed (and
    printing the time from the container's start to ready that the test printed)."""
    proc = subprocess.run(cmd, cwd=cwd, env={**os.environ, **TC_ENV}, capture_output=True,
                          text=True, timeout=300)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"{' '.join(cmd)} failed:\n{out[-6000:]}"
    assert re.search(passed, out), out[-6000:]
    if started:  # start() returned; the emulator's own part, from docker start
        for figure in (r"started in \d+ ms", r"ready \d+ ms after docker start"):
            found = re.search(figure, out)
            assert found is not None, out[-6000:]
            print(found.group(0))
    return out


def need(path: Path, what: str) -> None:
    if not path.exists():
        pytest.fail(f"{what} is not built ({path}); run {SETUP}")


def test_java_kafka_emulator_container(image: str) -> None:
    """KafkaEmulatorContainerTest on JUnit's console launcher: 4 tests."""
    java = CLIENTS / "java"
    need(java / ".classes" / "test", "the Java module")
    run_tests(["java", f"-Dimage={image}", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
               "-cp", f"{java}/.classes/main:{java}/.classes/test:{java}/.jars/*",
               "org.junit.platform.console.ConsoleLauncher", "execute", "--disable-banner",
               "--details=summary", "--select-class",
               "io.github.kafkaemulator.testcontainers.KafkaEmulatorContainerTest"],
              java, r"\[\s+4 tests successful\s+\]")


def test_java_spring_service_connection(image: str) -> None:
    """KafkaEmulatorContainer as a Spring Boot @ServiceConnection (Spring Boot's jars of
    client_tests/testcontainers_spring): the auto-configured template and consumer factory
    move records, and the journal saw the template's Produce requests."""
    java = CLIENTS / "java"
    spring = java.parent.parent / "client_tests" / "testcontainers_spring"
    need(java / ".classes" / "spring", "the Java module's Spring Boot test")
    out = run_tests(
        ["java", f"-Dimage={image}", "-Dlogging.level.root=WARN", "-cp",
         f"{java}/.classes/spring:{java}/.classes/main:{spring}/.jars/*",
         "org.junit.platform.console.ConsoleLauncher", "execute", "--disable-banner",
         "--details=summary", "--select-class",
         "io.github.kafkaemulator.testcontainers.SpringServiceConnectionTest"],
        java, r"\[\s+1 tests successful\s+\]", started=False)
    assert "ok: spring produced 20 consumed 20" in out, out[-6000:]


def test_go_module(image: str) -> None:
    """The Go module's tests (go test -c, run here): 5 tests."""
    go = CLIENTS / "go"
    binary = go / ".bin" / "kafkaemulator.test"
    need(binary, "the Go module's test binary")
    out = run_tests([str(binary), "-test.v", "-test.count=1"], go, r"(?m)^PASS$")
    assert len(re.findall(r"(?m)^--- PASS", out)) == 5, out[-6000:]


def test_node_package(image: str) -> None:
    """The Node package's tests under node:test: 4 tests."""
    node = CLIENTS / "node"
    need(node / "node_modules" / "testcontainers", "the Node package's dependencies")
    run_tests(["node", "--test", "--test-concurrency=1", "test/emulator.test.js"], node,
              r"(?m)^# pass 4$")


def test_node_package_types() -> None:
    """index.d.ts compiles under tsc --strict with a typical TypeScript test's calls
    (test/types.ts, npm run typecheck)."""
    node = CLIENTS / "node"
    need(node / "node_modules" / "typescript", "the Node package's dependencies")
    proc = subprocess.run(["npm", "run", "-s", "typecheck"], cwd=node, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
