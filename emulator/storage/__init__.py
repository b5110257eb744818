"""Storage beside the in-memory logs: the ``--data-dir`` store (I/O lives here, never
in emulator/cluster or emulator/log; the server wires it in)."""

from emulator.storage.disk import StorageError
from emulator.storage.store import DataDir

__all__ = ["DataDir", "StorageError"]
