"""The process guard of the tests' child processes: a child dies with the test run.

Tests start emulators (``python -m emulator``), Kafka's JVMs and Kafka Connect as
processes of their own. If the test run is killed (a CI timeout, a Ctrl-C that does not
reach the teardown), its fixtures never stop them and they hold their ports and
directories for the next run. ``die_with_parent`` is passed as ``preexec_fn`` to
``subprocess.Popen``: in the child, before exec, it asks Linux (PR_SET_PDEATHSIG) to
SIGKILL the child when the thread that started it exits.
"""

from __future__ import annotations

import contextlib
import ctypes
import signal

PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    """In the child before exec: SIGKILL it when the process that started it dies.

    Where there is no glibc prctl (not Linux) the child simply outlives a killed run, as
    it would without the guard: nothing a test checks depends on it."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
