"""One module per API key; this registry drives dispatch and the ApiVersions response.

Each ``api_NNN_<name>.py`` module defines ``API_KEY``, ``VERSIONS`` (the range we
advertise, the newest Kafka release's where implemented; emulator/versions.py
clamps it to the release posed as), optionally ``ACCEPTED`` (the versions
actually served, for Produce which Kafka 4.x advertises from v0 but serves from
v3), and ``handle(ctx, request, version)``. What we advertise is exactly what
has a handler.

A handler module is imported when its key is first served (``HandlerInfo.module``), not
when the registry is: ``_index.py`` holds each module's key and versions, which is all
ApiVersions needs (``write_index`` regenerates it: ``python3 scripts/registry_index.py``;
tests/test_registry_index.py fails while it is stale), so a start imports the handlers
its first clients use, not all of them (docs/scale.md, start-up). Should the package's
``api_*`` modules differ from the index's, every module is imported at once, as before
the index: slower, never wrong. A module's ``handle`` is put behind its ``AUTHORIZE``
guard when the registry first hands the module out (``HandlerInfo.module``, which
dispatch uses), and after the timers of the coordinators it names in ``COORDINATORS``
(``_on_time``: handlers tick nothing): a unit test importing a handler module directly
calls the bare handler until then.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from emulator.handlers.authz import guard
from emulator.handlers.base import Coordinator, RequestContext, advance_clocks
from wire.messages import REQUESTS, RESPONSES, source_modules


class HandlerInfo:
    """A served API key: its versions, and its module (imported on first use)."""

    __slots__ = ("_module", "accepted", "api_key", "module_name", "versions")

    def __init__(self, api_key: int, versions: tuple[int, int], accepted: tuple[int, int],
                 module: str | ModuleType) -> None:
        self.api_key = api_key
        self.versions = versions
        self.accepted = accepted
        self._module = _install(module) if isinstance(module, ModuleType) else None
        self.module_name = module if isinstance(module, str) else module.__name__

    @property
    def module(self) -> Any:  # a handler module (API_KEY, VERSIONS, handle, ...)
        mod = self._module
        if mod is None:
            mod = self._module = _install(importlib.import_module(self.module_name))
        return mod

    def __repr__(self) -> str:
        return (f"HandlerInfo(api_key={self.api_key}, versions={self.versions}, "
                f"accepted={self.accepted}, module={self.module_name!r})")


HANDLERS: dict[int, HandlerInfo] = {}


def _install(mod: Any) -> Any:
    """``handle`` runs behind the module's AUTHORIZE declarations (handlers/authz.py);
    the bare function stays as ``unguarded_handle``."""
    if not hasattr(mod, "unguarded_handle"):
        mod.unguarded_handle = mod.handle
        mod.handle = _on_time(guard(mod.API_KEY, mod.handle,
                                    tuple(getattr(mod, "AUTHORIZE", ()))),
                              tuple(getattr(mod, "COORDINATORS", ())))
    return mod


def _on_time(handle: Callable[..., Any], coordinators: tuple[Coordinator, ...]
             ) -> Callable[..., Any]:
    """``handle`` after the timers of the module's ``COORDINATORS`` (base.advance_clocks):
    the one place where a request brings the coordinators' time up to its own."""
    if not coordinators:
        return handle

    def on_time(ctx: RequestContext, req: dict, version: int) -> Any:
        advance_clocks(ctx.services, coordinators)
        return handle(ctx, req, version)

    on_time.__doc__ = handle.__doc__
    return on_time


def _module_names() -> set[str]:
    return {n for n in source_modules(__path__) if n.startswith("api_")}


def scan() -> dict[int, HandlerInfo]:
    """Every handler module imported: the registry as the modules declare it."""
    found: dict[int, HandlerInfo] = {}
    for name in sorted(_module_names()):
        mod: Any = importlib.import_module(f"{__name__}.{name}")  # a handler module
        if mod.API_KEY not in REQUESTS or mod.API_KEY not in RESPONSES:
            continue  # no schema declared: we could not decode it, so do not advertise it
        versions = tuple(mod.VERSIONS)
        accepted = tuple(getattr(mod, "ACCEPTED", versions))
        found[mod.API_KEY] = HandlerInfo(mod.API_KEY, versions, accepted, mod)
    return found


def index_source() -> str:
    """The text of ``_index.py`` for the modules as they are."""
    rows = "".join(f"    {k}: ({h.module_name.rsplit('.', 1)[1]!r}, {h.versions!r}, "
                   f"{h.accepted!r}),\n" for k, h in sorted(scan().items()))
    modules = "".join(f"    {m!r},\n" for m in sorted(_module_names()))
    return (
        '"""The handler modules\' keys and versions, what ApiVersions needs without\n'
        "importing them (generated by emulator.handlers.write_index: python3\n"
        'scripts/registry_index.py)."""\n\n'
        "# api key: (module, VERSIONS, ACCEPTED)\n"
        f"INDEX: dict[int, tuple[str, tuple[int, int], tuple[int, int]]] = {{\n{rows}}}\n\n"
        "# Every api_* module of the package (one without a wire schema is not in INDEX).\n"
        f"MODULES: frozenset[str] = frozenset({{\n{modules}}})\n")


def write_index() -> Path:
    path = Path(__file__).with_name("_index.py")
    path.write_text(index_source(), encoding="utf-8")
    return path


def _load() -> None:
    from emulator.handlers._index import INDEX, MODULES

    if _module_names() != MODULES:
        HANDLERS.update(scan())
        return
    for key, (module, versions, accepted) in INDEX.items():
        HANDLERS[key] = HandlerInfo(key, versions, accepted, f"{__name__}.{module}")


_load()
