"""The modes: how faithful to Kafka's timing the emulator is, ``fast``, ``kafka`` or
``adversarial``.

``fast`` (the default) answers at once wherever Kafka would make a client wait (metadata
known everywhere the moment it changes, coordinators never loading, transactions complete
at once), because speed is why people use a test broker. ``kafka`` reproduces every
difference that could make a client test pass here and fail on Kafka, within the envelope
a real 4.4 cluster shows. ``adversarial`` (with a seed) makes the races Kafka permits
happen often and reproducibly. What each mode does, difference by difference, is the
table in emulator/fidelity/differences.py.

A user makes ``kafka`` their default in one place: the environment variable
``KAFKA_EMULATOR_FIDELITY`` (read by the CLI, :class:`emulator.runtime.Cluster`, the pytest
plugin and the container module) or the pytest ini option ``kafka_emulator_fidelity``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

FAST = "fast"
KAFKA = "kafka"
ADVERSARIAL = "adversarial"
FIDELITIES = (FAST, KAFKA, ADVERSARIAL)
ENV_VAR = "KAFKA_EMULATOR_FIDELITY"


def default_mode() -> str:
    """The mode a cluster gets when none is asked for: ``$KAFKA_EMULATOR_FIDELITY``, else
    ``fast``. A bad value is an error, not a silent ``fast``: a user who asked for Kafka's
    timing and got the fast one would trust greens they should not."""
    mode = os.environ.get(ENV_VAR, "").strip() or FAST
    if mode not in FIDELITIES:
        raise ValueError(f"{ENV_VAR}={mode!r}: expected one of {', '.join(FIDELITIES)}")
    return mode


@dataclass(frozen=True)
class Fidelity:
    """One cluster's fidelity: its mode and, for ``adversarial``, the seed that makes its
    faults replay in the same order against the same request sequence."""

    mode: str = FAST
    seed: int = 0

    def __post_init__(self) -> None:
        if self.mode not in FIDELITIES:
            raise ValueError(f"fidelity must be one of {FIDELITIES}, not {self.mode!r}")

    @property
    def fast(self) -> bool:
        return self.mode == FAST

    @property
    def kafka_timing(self) -> bool:
        """True in ``kafka`` and ``adversarial``: both keep Kafka's delays (adversarial
        adds its races on top)."""
        return self.mode != FAST

    @property
    def adversarial(self) -> bool:
        return self.mode == ADVERSARIAL
