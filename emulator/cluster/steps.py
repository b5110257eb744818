"""Work in steps: large operations as generators that yield between bounded pieces.

A legal request can carry a lot of work (CreateTopics or CreatePartitions with 10,000
partitions take the better part of a second). Done in one go, that holds the event
loop and every other client waits. So the domain writes such an operation as a
generator: it does a bounded piece (``STEP_PARTITIONS`` partitions), yields, and returns
its result at the end. The server (emulator/server/purgatory.py) advances it a time slice
per loop turn and serves other requests between slices; in-process callers (tests,
tools, auto creation) run it to completion with ``drain``. No I/O, no clock here.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import TypeVar

T = TypeVar("T")

# A generator that yields None between pieces of work and returns a T.
Steps = Generator[None, None, T]

# Partitions built per step: about 1 ms of work on a slow machine (Partition objects,
# the controller's state machine transitions).
STEP_PARTITIONS = 32

# Below this many partitions an operation runs in one go (within a millisecond or
# two, like any request); from it on the server slices it.
SLICE_FROM_PARTITIONS = 256


def drain(steps: Steps[T]) -> T:
    """Run ``steps`` to the end and return its result."""
    try:
        while True:
            next(steps)
    except StopIteration as done:
        result: T = done.value
        return result


def finished(value: T) -> Steps[T]:
    """A Steps that yields nothing and returns ``value``."""
    return value
    yield  # pragma: no cover - makes this a generator
