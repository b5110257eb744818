"""The command line's shared parts: a parser whose usage errors are one line, and the
checked value types every ``kafka-emulator`` command uses (a bad value is exit 2 and
one line naming the option, never a traceback)."""

from __future__ import annotations

import argparse
from typing import NoReturn

from emulator.fidelity import FIDELITIES

# Brokers one process may run: each is a listener and a share of one event loop.
MAX_BROKERS = 1000


class UsageParser(argparse.ArgumentParser):
    """argparse, but a bad value is one line on stderr and exit 2, as a usage error
    should be: the full usage of every option would bury the one that is wrong."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _whole(text: str, low: int, high: int | None, what: str) -> int:
    value = whole(text)
    if value < low or (high is not None and value > high):
        upto = f" to {high}" if high is not None else " or more"
        raise argparse.ArgumentTypeError(f"{value} is not {what} ({low}{upto})")
    return value


def broker_count(text: str) -> int:
    return _whole(text, 1, MAX_BROKERS, "a broker count")


def port(text: str) -> int:
    return _whole(text, 0, 65535, "a port")


def whole(text: str) -> int:
    """Any integer, negative too (a seed)."""
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None


def fidelity(text: str) -> str:
    """fast, kafka or adversarial (docs/fidelity.md); checked here rather than by
    ``choices`` because argparse checks choices against given values only, and this
    option's default comes from KAFKA_EMULATOR_FIDELITY, which may be wrong too."""
    mode = text.strip()
    if mode not in FIDELITIES:
        raise argparse.ArgumentTypeError(f"{text!r} is not one of {', '.join(FIDELITIES)}")
    return mode


def adversary_scale(text: str) -> dict[str, float]:
    """--adversary-scale: ``KIND=FACTOR,...`` (emulator/faults/adversary.py parse_scale,
    imported only when the option is given: a plain start does not load the adversary)."""
    from emulator.faults.adversary import parse_scale

    try:
        return parse_scale(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def non_negative(text: str) -> int:
    return _whole(text, 0, None, "a count")


def seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"{text} is not a positive number of seconds")
    return value
