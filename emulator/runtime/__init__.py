"""``emulator.Cluster``: a running emulated cluster, in-process.

Usable as a context manager from plain code (the event loop runs in a background
thread) and from asyncio code (it runs in the caller's loop)::

    with Cluster(brokers=3) as c:
        producer = Producer({"bootstrap.servers": c.bootstrap_servers})

    async with Cluster() as c:
        ...

Control calls (``stop_broker``, ``start_broker``, ``call``) are safe from any
thread: they run on the cluster's own loop.

Two modules by role: cluster.py is the cluster (what it is made of, its addresses,
starting and stopping it, its event loop); control.py its control-facing half (the
operations of emulator.control's table and the bridge onto the cluster's loop), which
``Cluster`` inherits.
"""

from emulator.runtime.cluster import ADVERSARY_SCALE_ENV, Cluster, new_event_loop, stop_serving
from emulator.runtime.control import ClusterControl

__all__ = ["ADVERSARY_SCALE_ENV", "Cluster", "ClusterControl", "new_event_loop", "stop_serving"]
