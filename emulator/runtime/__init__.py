"""The runtime: a whole emulated cluster run in a process, the layer above the server
(docs/architecture.md's layers: runtime < tools, plugin < CLI).

Two modules by role: cluster.py is ``Cluster`` itself (what it is made of, its
addresses, starting and stopping it, its event loop, how to use it); control.py its
control-facing half (the operations of emulator.control's table and the bridge onto the
cluster's loop), which ``Cluster`` inherits.

What this package exports is what the ways in above it need: ``Cluster`` (also
``emulator.Cluster``, imported on first use so that a command pays only for what it runs),
and for a command's own event loop (``kafka-emulator``, the official images' entry
point) ``new_event_loop``, ``event_loop_kind`` and ``stop_serving``; ``ADVERSARY_SCALE_ENV`` is the
environment variable of the adversary's scale, a copy of its own so that a cluster
starting in another fidelity never imports the adversary (tests/test_start_imports.py
holds the two equal).
"""

from emulator.runtime.cluster import (
    ADVERSARY_SCALE_ENV,
    EVENT_LOOPS,
    Cluster,
    event_loop_kind,
    new_event_loop,
    stop_serving,
)
from emulator.runtime.control import ClusterControl

__all__ = ["ADVERSARY_SCALE_ENV", "EVENT_LOOPS", "Cluster", "ClusterControl", "event_loop_kind",
           "new_event_loop", "stop_serving"]
