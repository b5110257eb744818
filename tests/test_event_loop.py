"""Which event loop the ``kafka-emulator`` command runs on, and that a client is served on
each: the standard library's by default (its start and idle memory are what a process of
its own is measured by), uvloop when ``--event-loop uvloop`` or KAFKA_EMULATOR_EVENT_LOOP
asks, and an in-process Cluster on uvloop unless the environment says otherwise
(emulator.runtime.new_event_loop says why)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import uvloop  # a default dependency wherever the emulator is installed
from confluent_kafka import Producer

from client_tests.process_guard import die_with_parent
from emulator.runtime import new_event_loop

ROOT = Path(__file__).resolve().parent.parent


def _serve_one(extra: list[str], env: dict[str, str]) -> str:
    """Start the command, produce one record with acks=all, stop it: its stderr."""
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "emulator.cli",
            "--port",
            "0",
            "--brokers",
            "1",
            "--log-level",
            "DEBUG",
            *extra,
        ],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), **env},
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=die_with_parent,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert "ready: bootstrap servers" in line, (line, proc.stderr.read() if proc.stderr else "")
        bootstrap = line.split("bootstrap servers ")[1].split()[0]
        p = Producer({"bootstrap.servers": bootstrap, "acks": "all"})
        acked: list[object] = []
        p.produce("loop-check", b"v", on_delivery=lambda err, msg: acked.append(err))
        p.flush(30)
        assert acked == [None]
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=30)
    return err


@pytest.mark.parametrize(
    ("extra", "env", "module"),
    [
        ([], {}, "asyncio"),
        (["--event-loop", "uvloop"], {}, "uvloop"),
        ([], {"KAFKA_EMULATOR_EVENT_LOOP": "uvloop"}, "uvloop"),
        (["--event-loop", "asyncio"], {"KAFKA_EMULATOR_EVENT_LOOP": "uvloop"}, "asyncio"),
    ],
)
def test_the_command_runs_on_the_loop_asked_for(
    extra: list[str], env: dict[str, str], module: str
) -> None:
    err = _serve_one(extra, {"KAFKA_EMULATOR_EVENT_LOOP": "", **env})
    lines = [ln for ln in err.splitlines() if "event loop: " in ln]
    assert len(lines) == 1 and lines[0].split("event loop: ")[1].startswith(module), lines
    if module == "asyncio":
        assert "uvloop" not in lines[0]


def test_a_bad_event_loop_is_refused_in_one_line() -> None:
    r = subprocess.run(
        [sys.executable, "-m", "emulator.cli", "--event-loop", "trio"],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 2 and "--event-loop" in r.stderr and "Traceback" not in r.stderr


def test_in_process_clusters_keep_uvloop_unless_told(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KAFKA_EMULATOR_EVENT_LOOP", raising=False)
    loop = new_event_loop()
    try:
        assert isinstance(loop, uvloop.Loop)
    finally:
        loop.close()
    monkeypatch.setenv("KAFKA_EMULATOR_EVENT_LOOP", "asyncio")
    loop = new_event_loop()
    try:
        assert not isinstance(loop, uvloop.Loop)
    finally:
        loop.close()
    monkeypatch.setenv("KAFKA_EMULATOR_EVENT_LOOP", "trio")
    with pytest.raises(ValueError, match="KAFKA_EMULATOR_EVENT_LOOP"):
        new_event_loop()


def test_a_bad_event_loop_variable_is_refused_in_one_line() -> None:
    r = subprocess.run(
        [sys.executable, "-m", "emulator.cli", "--port", "0"],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), "KAFKA_EMULATOR_EVENT_LOOP": "trio"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 2 and "--event-loop" in r.stderr and "trio" in r.stderr
    assert "Traceback" not in r.stderr and "ready" not in r.stdout
