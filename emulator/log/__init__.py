"""The log and ISR core: the Cython build (``_core``) when compiled, else the pure twin.

Set ``KAFKA_EMULATOR_PURE=1`` to force the pure-Python twin (CI runs the unit
suite both ways). The twins are ``pure.py`` (the log) and ``isr.py`` (follower
fetch state, high watermark and ISR membership).
"""

from __future__ import annotations

import os

IMPLEMENTATION = "pure"
if os.environ.get("KAFKA_EMULATOR_PURE", "") not in ("1", "true", "yes"):
    try:
        from emulator.log._core import (  # type: ignore[no-redef]
            UNDEFINED_EPOCH,
            FollowerState,
            Log,
            can_join_isr,
            isr_high_watermark,
            out_of_sync_replicas,
            update_fetch_state,
        )

        IMPLEMENTATION = "cython"
    except ImportError:
        pass
if IMPLEMENTATION == "pure":
    from emulator.log.isr import (
        FollowerState,
        can_join_isr,
        isr_high_watermark,
        out_of_sync_replicas,
        update_fetch_state,
    )
    from emulator.log.pure import UNDEFINED_EPOCH, Log

__all__ = [
    "IMPLEMENTATION", "UNDEFINED_EPOCH", "FollowerState", "Log", "can_join_isr",
    "isr_high_watermark", "out_of_sync_replicas", "update_fetch_state",
]
