"""The pytest plugin's ``--kafka-emulator-shrink`` and ``--kafka-emulator-schedule``, as
a user's suite meets them: a child pytest whose adversarial test fails, shrunk at the
end of the session to the one fault that fails it, and the written schedule replayed.

The child test's own check is on the adversary's record (it fails whenever the broker
chosen by the seed has stale metadata), so which fault is the cause is known exactly
and the test of the plugin's machinery does not depend on a client's timing; the
shrinking of real wrong programs is client_tests/test_shrink_wrong_clients.py.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.emulator_only

CHILD = '''
import pytest
from confluent_kafka import Producer

@pytest.mark.kafka_fidelity("adversarial", seed=4)
def test_app(kafka_cluster):
    kafka_cluster.create_topic("t", 3, 3)
    p = Producer({"bootstrap.servers": kafka_cluster.bootstrap_servers,
                  "enable.idempotence": True, "client.id": "app", "linger.ms": 0})
    for i in range(20):
        p.produce("t", b"x", partition=i % 3)
        p.flush(10)
    kinds = [f.kind for f in kafka_cluster.adversary.record]
    assert "stale_metadata" not in kinds, "the application's check failed"
'''


def _pytest(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    env.pop("KAFKA_EMULATOR_FIDELITY", None)
    env.pop("PYTEST_ADDOPTS", None)
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q",
                           *args], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=500)


def test_shrink_option_reports_the_one_fault_and_its_schedule_replays(tmp_path: Path) -> None:
    (tmp_path / "test_child.py").write_text(textwrap.dedent(CHILD))
    proc = _pytest(tmp_path, "test_child.py", "--kafka-emulator-shrink",
                   "--kafka-emulator-shrink-runs", "1")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert "kafka-emulator shrink: test_child.py::test_app (seed 4)" in out, out
    shrunk = re.search(r"(\d+) faults shrunk to (\d+)", out)
    assert shrunk is not None, out
    assert int(shrunk[1]) > 1 and shrunk[2] == "1", out  # Produce faults went away
    assert "this fault fails the test:\n  1. stale_metadata: broker " in out, out
    written = re.search(r"written to (\S+\.json); replay: pytest", out)
    assert written is not None, out
    path = Path(written[1])
    schedule = json.loads(path.read_text())
    assert schedule["seed"] == 4 and [f["kind"] for f in schedule["adversary"]] == [
        "stale_metadata"]

    # Replayed on the test (its marker's seed and fidelity give way to the schedule's):
    # it fails again; with the adversary section emptied it passes.
    again = _pytest(tmp_path, "test_child.py", "--kafka-emulator-schedule", str(path))
    assert again.returncode == 1, again.stdout + again.stderr
    assert "the application's check failed" in again.stdout, again.stdout
    assert "kafka-emulator adversary (seed 4, " in again.stdout, again.stdout
    schedule["adversary"] = []
    empty = tmp_path / "empty.json"
    empty.write_text(json.dumps(schedule))
    clean = _pytest(tmp_path, "test_child.py", "--kafka-emulator-schedule", str(empty))
    assert clean.returncode == 0, clean.stdout + clean.stderr
    path.unlink()


def test_a_bad_schedule_file_is_refused_naming_its_problems(tmp_path: Path) -> None:
    (tmp_path / "test_child.py").write_text(textwrap.dedent(CHILD))
    (tmp_path / "bad.json").write_text('{"seed": 1, "adversary": [{"kind": "nope"}]}')
    proc = _pytest(tmp_path, "test_child.py", "--kafka-emulator-schedule", "bad.json")
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0 and "adversary[0]: missing" in out, out


def test_shrink_option_under_xdist_puts_the_result_in_the_failure_report(
        tmp_path: Path) -> None:
    """A pytest-xdist worker has no terminal summary of its own: the shrink runs in the
    worker and its result comes back as a section of the failed test's report."""
    (tmp_path / "test_child.py").write_text(textwrap.dedent(CHILD))
    proc = _pytest(tmp_path, "test_child.py", "-n", "1", "--kafka-emulator-shrink",
                   "--kafka-emulator-shrink-runs", "1")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert "kafka-emulator shrink (seed 4)" in out, out
    assert "this fault fails the test:\n  1. stale_metadata: broker " in out, out
    written = re.search(r"written to (\S+\.json); replay: pytest", out)
    assert written is not None, out
    Path(written[1]).unlink()
