"""A ``kafka-emulator`` process for the benchmarks, started as a user would (its own
process, free ports) and always stopped: one place for the start-up line parsing and the
terminate-then-kill that bench/fuzz.py, bench/reliability.py and bench/hostile_stall.py
share."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

ROOT = Path(__file__).resolve().parent.parent


@contextmanager
def emulator_process(*args: str, log_level: str = "WARNING",
                     stderr: int | IO = subprocess.DEVNULL
                     ) -> Iterator[tuple[subprocess.Popen, list[tuple[str, int]]]]:
    """``python -m emulator --port 0`` with ``args``; yields the process and its brokers'
    (host, port), read from the ready line; terminated (killed after 30 s) on exit."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "emulator", "--port", "0", "--log-level",
                             log_level, *args], stdout=subprocess.PIPE, stderr=stderr,
                            text=True, env=env)
    try:
        assert proc.stdout is not None
        ready = proc.stdout.readline()
        if "kafka-emulator ready" not in ready:
            where = f"; its log: {stderr.name}" if hasattr(stderr, "name") else ""
            raise SystemExit(f"the emulator did not start{where}")
        servers = ready.split("bootstrap servers ")[1].split()[0].split(",")
        yield proc, [(h, int(p)) for h, p in (s.rsplit(":", 1) for s in servers)]
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
