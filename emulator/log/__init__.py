"""The log and ISR core: the Cython build (``_core``) when compiled, else the pure twin.

Set ``KAFKA_EMULATOR_PURE=1`` to force the pure-Python twin (CI runs the unit
suite both ways).
"""

from __future__ import annotations

import os

IMPLEMENTATION = "pure"
if os.environ.get("KAFKA_EMULATOR_PURE", "") not in ("1", "true", "yes"):
    try:
        from emulator.log._core import UNDEFINED_EPOCH, Log  # type: ignore[no-redef]

        IMPLEMENTATION = "cython"
    except ImportError:
        from emulator.log.pure import UNDEFINED_EPOCH, Log
else:
    from emulator.log.pure import UNDEFINED_EPOCH, Log

__all__ = ["IMPLEMENTATION", "Log", "UNDEFINED_EPOCH"]
