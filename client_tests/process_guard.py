"""The process guard of the tests' child processes: none outlives its test or the run.

Tests start emulators (``python -m emulator``), Kafka's JVMs and Kafka Connect as
processes of their own. Two things can leave one behind, holding its ports and
directories for the next run:

- the test run is killed (a CI timeout, a Ctrl-C that does not reach the teardown), so
  no fixture stops it: ``die_with_parent``, passed as ``preexec_fn`` to
  ``subprocess.Popen``, asks Linux in the child, before exec (PR_SET_PDEATHSIG), to
  SIGKILL the child when the thread that started it exits;
- a test fails before it stops what it started: ``start`` runs a test's child with that
  guard and remembers it, and client_tests/conftest.py's autouse fixture calls ``reap``
  after every test, pass or fail. A child that outlives one test (a module's Kafka
  cluster) is started with ``die_with_parent`` alone and stopped by its fixture.
"""

from __future__ import annotations

import contextlib
import ctypes
import signal
import subprocess
from typing import Any

PR_SET_PDEATHSIG = 1

_started: list[subprocess.Popen] = []  # the children of the test running now


def die_with_parent() -> None:
    """In the child before exec: SIGKILL it when the process that started it dies.

    Where there is no glibc prctl (not Linux) the child simply outlives a killed run, as
    it would without the guard: nothing a test checks depends on it."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def start(args: list[str], **popen: Any) -> subprocess.Popen:
    """``subprocess.Popen(args, **popen)`` guarded: it dies with the run, and ``reap``
    kills it after the test if it still runs."""
    proc = subprocess.Popen(args, preexec_fn=die_with_parent, **popen)
    _started.append(proc)
    return proc


def reap() -> None:
    """Kill (and wait for) every child ``start`` started that still runs."""
    while _started:
        proc = _started.pop()
        if proc.poll() is None:
            proc.kill()
            proc.wait(30)
