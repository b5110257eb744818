"""The command line as a newcomer meets it: every option of every subcommand says what
it is for, and a bad value is a usage error (exit 2, one line naming the option), never
a traceback. The commands run as subprocesses, as a person runs them."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys

import pytest

from emulator import cli
from emulator.tools import fault, reassign, top


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "emulator", *args], capture_output=True,
                          text=True, timeout=60, env={**os.environ, **(env or {})})


@pytest.mark.parametrize(("args", "option"), [
    (["--brokers", "0"], "--brokers"),
    (["--brokers", "-3"], "--brokers"),
    (["--brokers", "three"], "--brokers"),
    (["--port", "70000"], "--port"),
    (["--port", "-1"], "--port"),
    (["--port", "65534"], "--port"),  # brokers 2 and 3 would be past 65535
    (["--advertised-port", "x"], "--advertised-port"),
    (["--control-port", "-1"], "--control-port"),
    (["--seed", "1.5"], "--seed"),
    (["--config", "num.partitions"], "--config"),
    (["--sasl-user", "alice"], "--sasl-user"),
    (["--fidelity", "slow"], "--fidelity"),
    (["--adversary-scale", "kik=2"], "--adversary-scale"),
    (["--adversary-scale", "kick=-1"], "--adversary-scale"),
    (["fault", "--control", "http://127.0.0.1:1", "stop-broker", "two"], "broker"),
    (["fault", "--control", "http://127.0.0.1:1", "inject-error", "Produce", "X",
      "--count", "-1"], "--count"),
    (["top", "--control", "http://127.0.0.1:1", "--interval", "0"], "--interval"),
])
def test_a_bad_value_is_a_one_line_usage_error(args: list[str], option: str) -> None:
    r = run(*args)
    assert r.returncode == 2, r.stderr
    assert "Traceback" not in r.stderr and r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "error: argument" in lines[0] and option in lines[0], r.stderr


def test_a_bad_environment_variable_is_a_usage_error_too() -> None:
    r = run(env={"KAFKA_EMULATOR_BROKERS": "many"})
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.strip().splitlines() == [
        "kafka-emulator: error: argument --brokers: 'many' is not a whole number "
        "(see kafka-emulator --help)"]


def test_a_bad_fidelity_in_the_environment_is_a_usage_error() -> None:
    """KAFKA_EMULATOR_FIDELITY is the one-place default (docs/fidelity.md): a typo there
    must stop the command in one line, not start a fast cluster or raise."""
    r = run(env={"KAFKA_EMULATOR_FIDELITY": "slow"})
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.strip().splitlines() == [
        "kafka-emulator: error: argument --fidelity: 'slow' is not one of fast, kafka, "
        "adversarial (see kafka-emulator --help)"]


def _parsers() -> list[argparse.ArgumentParser]:
    out = [cli.build_parser(), reassign.cli.build_parser(), fault.build_parser()]
    for p in list(out):
        for action in p._actions:
            if isinstance(action, argparse._SubParsersAction):
                out.extend(action.choices.values())
    return out


def test_every_option_of_every_subcommand_has_help() -> None:
    parsers = _parsers() + [top.build_parser()]
    assert len(parsers) > 20  # the fault command's subcommands are in
    missing = [f"{p.prog} {'/'.join(a.option_strings) or a.dest}" for p in parsers
               for a in p._actions if not a.help]
    assert missing == []


def test_help_is_printed_for_each_command() -> None:
    for args in (["--help"], ["fault", "--help"], ["fault", "inject-error", "--help"],
                 ["top", "--help"]):
        r = run(*args)
        assert r.returncode == 0 and "usage:" in r.stdout, (args, r.stderr)
    assert "the emulator's log level" in run("--help").stdout
    r = run("reassign", "--help")
    assert r.returncode == 0 and "--reassignment-json-file" in r.stdout
    assert "start the reassignment" in r.stdout
