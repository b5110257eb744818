"""A Kafka protocol-compatible broker emulator: N virtual brokers in one process.

``emulator.Cluster`` runs one in-process; ``kafka-emulator`` runs one from the
command line. See README.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from emulator.runtime import Cluster

__all__ = ["Cluster"]
__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    """``emulator.Cluster`` on first use: importing the package (as ``kafka-emulator``,
    ``python -m emulator`` and every ``emulator.x`` import do) must not import the whole
    runtime, so that a command pays only for what it runs (docs/scale.md, start-up)."""
    if name == "Cluster":
        from emulator.runtime import Cluster

        return Cluster
    raise AttributeError(f"module 'emulator' has no attribute {name!r}")
