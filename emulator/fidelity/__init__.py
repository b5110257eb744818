"""How faithful to Kafka's timing the emulator is, and every known way it differs.

- modes.py: the modes ``fast``, ``kafka`` and ``adversarial``, :class:`Fidelity` (a
  cluster's mode and seed) and :func:`default_mode` (``$KAFKA_EMULATOR_FIDELITY``).
- differences.py: the table of differences from Kafka (:data:`DIFFERENCES`), from which
  docs/fidelity.md and docs/conformance.md's list are generated.

A leaf below the domain: the domain reads ``state.fidelity`` (a :class:`Fidelity`) to
choose its behaviour. Everything is re-exported here, so ``from emulator.fidelity import
...`` is the way in.
"""

from __future__ import annotations

from emulator.fidelity.differences import DIFFERENCES, NOT_YET, Difference, difference
from emulator.fidelity.modes import (
    ADVERSARIAL,
    ENV_VAR,
    FAST,
    FIDELITIES,
    KAFKA,
    Fidelity,
    default_mode,
)

__all__ = [
    "ADVERSARIAL", "DIFFERENCES", "ENV_VAR", "FAST", "FIDELITIES", "KAFKA", "NOT_YET",
    "Difference", "Fidelity", "default_mode", "difference",
]
