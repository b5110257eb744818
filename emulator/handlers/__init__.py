"""One module per API key; this registry drives dispatch and the ApiVersions response.

Each ``api_NNN_<name>.py`` module defines ``API_KEY``, ``VERSIONS`` (the range we
advertise, the newest Kafka release's where implemented; emulator/versions.py
clamps it to the release posed as), optionally ``ACCEPTED`` (the versions
actually served, for Produce which Kafka 4.x advertises from v0 but serves from
v3), and ``handle(ctx, request, version)``. What we advertise is exactly what
has a handler.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from emulator.handlers.authz import guard
from wire.messages import REQUESTS, RESPONSES


@dataclass(frozen=True)
class HandlerInfo:
    api_key: int
    versions: tuple[int, int]
    accepted: tuple[int, int]
    module: ModuleType


HANDLERS: dict[int, HandlerInfo] = {}


def _load() -> None:
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        if not info.name.startswith("api_"):
            continue
        mod: Any = importlib.import_module(f"{__name__}.{info.name}")  # a handler module
        if mod.API_KEY not in REQUESTS or mod.API_KEY not in RESPONSES:
            continue  # no schema declared: we could not decode it, so do not advertise it
        versions = tuple(mod.VERSIONS)
        accepted = tuple(getattr(mod, "ACCEPTED", versions))
        # ``handle`` runs behind the module's AUTHORIZE declarations (handlers/authz.py);
        # the bare function stays as ``unguarded_handle``.
        if not hasattr(mod, "unguarded_handle"):
            mod.unguarded_handle = mod.handle
            mod.handle = guard(mod.API_KEY, mod.handle, tuple(getattr(mod, "AUTHORIZE", ())))
        HANDLERS[mod.API_KEY] = HandlerInfo(mod.API_KEY, versions, accepted, mod)


_load()
