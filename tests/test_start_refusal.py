"""A refusal at start is one line: ``kafka-emulator`` that cannot start says why on one
line of stderr and exits non-zero, with nothing else (no traceback, no asyncio "Task was
destroyed but it is pending!" for the tasks of listeners it had opened), and nothing
listens after it. The command runs as a subprocess, as a person or a CI job runs it."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

# `python -c` standing in for the kafka-emulator command; the prelude may block a module
# as an environment without it would (sys.modules[name] = None: find_spec finds nothing
# and importing it fails), so the extra can be "missing" in this environment.
COMMAND = "import sys\n{prelude}\nfrom emulator.cli import main\nsys.exit(main())"


def start(*args: str, block: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    prelude = "\n".join(f"sys.modules[{name!r}] = None" for name in block)
    env = {**os.environ, "KAFKA_EMULATOR_LOG_LEVEL": "INFO"}
    return subprocess.run([sys.executable, "-c", COMMAND.format(prelude=prelude), *args],
                          capture_output=True, text=True, timeout=60, env=env)


def assert_refused(r: subprocess.CompletedProcess, says: str) -> None:
    assert r.returncode != 0, (r.stdout, r.stderr)
    assert "kafka-emulator ready" not in r.stdout
    lines = r.stderr.splitlines()
    assert len(lines) == 1, f"stderr is not one line:\n{r.stderr}"
    assert lines[0].startswith("kafka-emulator: ") and says in lines[0], lines[0]


@pytest.fixture
def taken_port() -> Iterator[int]:
    """A port something else listens on."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen()
    try:
        yield s.getsockname()[1]
    finally:
        s.close()


@pytest.mark.parametrize("missing", ["fastavro", "jsonschema", "google.protobuf"])
def test_schema_registry_without_its_extra(missing: str) -> None:
    r = start("--port", "0", "--schema-registry-port", "0", block=(missing,))
    assert_refused(r, "pip install 'kafka-emulator[schema-registry]'")
    assert r.returncode == 2


def test_a_bad_fault_schedule_is_one_line_with_every_problem(tmp_path: Path) -> None:
    f = tmp_path / "faults.jsonl"
    f.write_text('not json\n{"at_ms": "soon", "op": "stop_broker", "broker": 2}\n')
    r = start("--port", "0", "--fault-schedule", str(f))
    assert_refused(r, "line 1: not JSON")
    assert "line 2: at_ms must be a non-negative integer" in r.stderr
    assert r.returncode == 2


def test_a_missing_fault_schedule(tmp_path: Path) -> None:
    assert_refused(start("--port", "0", "--fault-schedule", str(tmp_path / "nope.jsonl")),
                   "nope.jsonl")


def test_a_broker_port_in_use(taken_port: int) -> None:
    # Broker 1 on a free port, broker 2 on the taken one: broker 1's listener was open
    # when broker 2's failed.
    r = start("--brokers", "2", "--port", str(taken_port - 1))
    assert_refused(r, "cannot listen")
    assert r.returncode == 1


@pytest.mark.parametrize("option", ["--control-port", "--schema-registry-port"])
def test_a_port_in_use_after_the_brokers_listen(option: str, taken_port: int) -> None:
    """The control plane and the schema registry open after every broker's listener and
    its tasks have started: those are stopped, and the refusal is still one line."""
    r = start("--port", "0", option, str(taken_port))
    assert_refused(r, "cannot listen")
    assert r.returncode == 1


@pytest.mark.parametrize(("args", "says"), [
    (["--listeners", "FOO://127.0.0.1:0"], "--listeners: listener FOO has no security protocol"),
    (["--data-dir", "{file}"], "--data-dir: cannot create data directory"),
])
def test_a_bad_listener_or_data_dir(args: list[str], says: str, tmp_path: Path) -> None:
    """The refusals the domain raises (ListenerError, StorageError) map to their option."""
    file = tmp_path / "a-file"
    file.write_text("")
    r = start("--port", "0", *[a.format(file=file) for a in args])
    assert_refused(r, says)
    assert r.returncode == 2


@pytest.mark.parametrize(("config", "says"), [
    ("log.retention.ms=abc",
     "Invalid value abc for configuration log.retention.ms: Not a number of type LONG"),
    ("num.partitions=0",
     "Invalid value 0 for configuration num.partitions: Value must be at least 1"),
    ("compression.type=zip", "Invalid value zip for configuration compression.type: "
     "String must be one of: uncompressed, zstd, lz4, snappy, gzip, producer"),
    ("log.cleanup.policy=compact,remove", "Invalid value remove for configuration "
     "log.cleanup.policy: String must be one of: compact, delete"),
    # read by the security options before the cluster is made: still --config's refusal
    ("connections.max.reauth.ms=soon", "Invalid value soon for configuration "
     "connections.max.reauth.ms: Not a number of type LONG"),
])
def test_an_invalid_broker_config(config: str, says: str) -> None:
    """Kafka refuses to start on a value its ConfigDef refuses (not of the key's type, out
    of its range, none of its values), with that message (tests/test_kafka_validators.py,
    and its _oracle twin against Kafka's ConfigDef, hold the messages)."""
    r = start("--port", "0", "--config", config)
    assert_refused(r, f"kafka-emulator: --config: {says}")
    assert r.returncode == 2
