"""The process guard (client_tests/process_guard.py): a child started with
``preexec_fn=die_with_parent`` is gone once the process that started it is killed, so a
killed test run leaves no emulator or JVM behind; what a test started with
``process_guard.start`` and left running is killed by ``reap`` after it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from client_tests import process_guard
from emulator.testing import wait_for

# Not run with --target kafka: it starts no cluster: the guard of the tests' own child processes.
pytestmark = pytest.mark.emulator_only

ROOT = Path(__file__).resolve().parent.parent

# The test run: starts a long sleeper guarded as the fixtures start their children, says
# its pid, and waits to be killed (SIGKILL: no teardown, no atexit).
PARENT = textwrap.dedent("""
    import subprocess, sys, time
    from client_tests.process_guard import die_with_parent
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"],
                             preexec_fn=die_with_parent)
    print(child.pid, flush=True)
    time.sleep(120)
""")


def _alive(pid: int) -> bool:
    """Running or sleeping; a zombie (dead, not yet reaped by its new parent) is not."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    state = next(line for line in status.splitlines() if line.startswith("State:"))
    return state.split()[1] not in ("Z", "X")


def test_a_guarded_child_dies_with_the_process_that_started_it() -> None:
    parent = subprocess.Popen([sys.executable, "-c", PARENT], cwd=ROOT, text=True,
                              stdout=subprocess.PIPE)
    child = 0
    gone = False
    try:
        child = int(parent.stdout.readline())  # type: ignore[union-attr]
        assert _alive(child)
        parent.kill()
        parent.wait(10)
        wait_for(lambda: not _alive(child), "the guarded child gone with its parent",
                 timeout=10)
        gone = True
    finally:
        parent.kill()
        # Only a child not seen gone: pids wrap (pid_max is 32768 here), and a pid seen
        # gone may already be another test's process, a Kafka JVM beside this run.
        if child and not gone and _alive(child):
            os.kill(child, signal.SIGKILL)


def test_reap_kills_what_the_test_started_and_left_running() -> None:
    """What a test leaves running (it failed before stopping it) is gone once the
    conftest's autouse fixture reaps; a child that ended on its own is left as it was."""
    done = process_guard.start([sys.executable, "-c", "pass"])
    done.wait(30)
    left = process_guard.start([sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        assert left.poll() is None
        process_guard.reap()
        assert left.poll() is not None and done.returncode == 0
    finally:
        left.kill()
