"""Storage beside the in-memory logs: the ``--data-dir`` store (I/O lives here, never
in emulator/cluster or emulator/log; the server wires it in).

Its parts load when first named (``emulator.storage.DataDir``, or a module of the
package): a start without ``--data-dir`` needs only ``StorageError``, to name the
refusal, and not the store, its json or its file mapping (docs/scale.md, start-up).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from emulator.storage.disk import StorageError
    from emulator.storage.store import DataDir

__all__ = ["DataDir", "StorageError"]


def __getattr__(name: str) -> object:
    if name == "DataDir":
        from emulator.storage.store import DataDir

        return DataDir
    if name == "StorageError":
        from emulator.storage.disk import StorageError

        return StorageError
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
