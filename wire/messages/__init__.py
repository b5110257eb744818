"""Every message schema we speak, collected into one registry by API key.

Each module in this package declares its messages with ``wire.schema.message``;
``REQUESTS`` and ``RESPONSES`` map an API key to its compiled codec.
"""

from __future__ import annotations

import importlib
import pkgutil

from wire.codec import CompiledMessage
from wire.schema import Message

REQUESTS: dict[int, CompiledMessage] = {}
RESPONSES: dict[int, CompiledMessage] = {}
NAMES: dict[int, str] = {}


def _load() -> None:
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        mod = importlib.import_module(f"{__name__}.{info.name}")
        for value in vars(mod).values():
            if isinstance(value, Message):
                table = REQUESTS if value.kind == "request" else RESPONSES
                if value.api_key in table and table[value.api_key].msg is not value:
                    raise RuntimeError(f"two {value.kind}s for api key {value.api_key}")
                table[value.api_key] = CompiledMessage(value)
                if value.kind == "request":
                    NAMES[value.api_key] = value.name[: -len("Request")]


_load()
