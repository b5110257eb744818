"""The log and ISR core: the Cython build (``_core``) when compiled, else the pure twin.

Set ``KAFKA_EMULATOR_PURE=1`` to force the pure-Python twin (CI runs the unit
suite both ways). The twins are ``pure.py`` (the log), ``isr.py`` (follower
fetch state, high watermark and ISR membership) and ``scan.py`` (walking a batch's
records for the produce validator, ``validator.py``).
"""

from __future__ import annotations

import logging
import os

# Bumped whenever the twins' API changes; a compiled core built from an older
# _core.pyx (a checkout updated without `python setup.py build_ext --inplace`) is
# not used: the pure twin serves, with one warning saying how to rebuild.
CORE_API = 7

IMPLEMENTATION = "pure"
if os.environ.get("KAFKA_EMULATOR_PURE", "") not in ("1", "true", "yes"):
    try:
        from emulator.log import _core

        if getattr(_core, "CORE_API", 1) != CORE_API:
            logging.getLogger("kafka_emulator").warning(
                "emulator/log/_core was built from an older _core.pyx (API %s, need %s): "
                "using the pure-Python log; rebuild with `python setup.py build_ext "
                "--inplace` or `pip install -e .`", getattr(_core, "CORE_API", 1), CORE_API)
            raise ImportError("stale compiled core")
        from emulator.log._core import (
            UNDEFINED_EPOCH,
            FollowerState,
            Log,
            can_join_isr,
            isr_high_watermark,
            out_of_sync_replicas,
            scan_records,
            update_fetch_state,
        )

        IMPLEMENTATION = "cython"
    except ImportError:
        pass
# The batch header check of the produce validator: the compiled one where the build has
# it (a core built before it was added still serves, with wire.records' Python one).
from wire.records import validate_batch  # noqa: E402

if IMPLEMENTATION == "cython":
    validate_batch = getattr(_core, "validate_batch", validate_batch)
if IMPLEMENTATION == "pure":
    # The same API as the compiled core's (its stub, _core.pyi, types it for mypy).
    from emulator.log.isr import (  # type: ignore[assignment]
        FollowerState,
        can_join_isr,
        isr_high_watermark,
        out_of_sync_replicas,
        update_fetch_state,
    )
    from emulator.log.pure import UNDEFINED_EPOCH, Log  # type: ignore[assignment]
    from emulator.log.scan import scan_records

__all__ = [
    "CORE_API", "IMPLEMENTATION", "UNDEFINED_EPOCH", "FollowerState", "Log", "can_join_isr",
    "isr_high_watermark", "out_of_sync_replicas", "scan_records", "update_fetch_state",
    "validate_batch",
]
