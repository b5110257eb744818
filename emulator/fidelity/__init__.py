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

from typing import TYPE_CHECKING, Any

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

if TYPE_CHECKING:
    from emulator.fidelity.differences import DIFFERENCES, NOT_YET, Difference, difference

_DIFFERENCES_NAMES = frozenset({"DIFFERENCES", "NOT_YET", "Difference", "difference"})


def __getattr__(name: str) -> Any:
    """The table's names, imported on first use: the table (every difference's text, ~0.7
    MB of a process) is read by the docs generator, the tests and ``--fidelity kafka``'s
    configs, not by a cluster in the default mode (docs/scale.md, start-up)."""
    if name in _DIFFERENCES_NAMES:
        from emulator.fidelity import differences

        return getattr(differences, name)
    raise AttributeError(f"module 'emulator.fidelity' has no attribute {name!r}")
