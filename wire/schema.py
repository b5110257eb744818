"""Declarative Kafka message schemas.

Each API is declared once, as data: its fields, the versions each field lives in,
nullable and tagged versions, and defaults. ``wire.codec`` compiles every
(message, version) pair into straight-line encode/decode functions, so this module
is the single source of truth for the byte layout (as Kafka's message JSON is for
Kafka's generated classes).

Decoded messages are plain ``dict`` objects keyed by snake_case field names; an
encoder reads the fields of its version and fills absent keys with the declared
default, so a handler can build one response dict and have it encoded at whatever
version the client asked for.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

INF = 1 << 15  # "no upper bound" in a version range
_UNSET: Any = object()  # "no default declared", so that ``default=None`` can mean null


def parse_versions(spec: str | None) -> tuple[int, int] | None:
    """Parse Kafka's version-range notation: "3+", "0-7", "5", "none"."""
    if spec is None or spec == "none" or spec == "":
        return None
    if spec.endswith("+"):
        return int(spec[:-1]), INF
    if "-" in spec:
        lo, hi = spec.split("-")
        return int(lo), int(hi)
    return int(spec), int(spec)


class Type:
    """A primitive wire type. ``fmt`` is the struct code for fixed-width ones."""

    def __init__(self, name: str, fmt: str | None = None, default: Any = None) -> None:
        self.name = name
        self.fmt = fmt
        self.default = default

    def __repr__(self) -> str:
        return self.name


INT8 = Type("int8", "b", 0)
INT16 = Type("int16", "h", 0)
INT32 = Type("int32", "i", 0)
INT64 = Type("int64", "q", 0)
UINT16 = Type("uint16", "H", 0)
UINT32 = Type("uint32", "I", 0)
FLOAT64 = Type("float64", "d", 0.0)
BOOL = Type("bool", "?", False)
UUID = Type("uuid", "16s", b"\x00" * 16)
STRING = Type("string", None, "")
BYTES = Type("bytes", None, b"")
RECORDS = Type("records", None, None)


@dataclass
class Array:
    """An array of a primitive type or of a Struct."""

    item: Any


class Field:
    """One field of a message or struct.

    ``versions`` is where the field exists, ``nullable`` where it may be null,
    ``tag``/``tagged`` make it a tagged field in those (flexible) versions.
    """

    def __init__(
        self,
        name: str,
        type_: Any,
        versions: str = "0+",
        *,
        nullable: str | None = None,
        tag: int | None = None,
        tagged: str | None = None,
        default: Any = _UNSET,
        fields: list[Field] | None = None,
    ) -> None:
        self.name = name
        if fields is not None:  # shorthand: Field("topics", Array, fields=[...])
            type_ = Array(Struct(fields)) if type_ is Array else Struct(fields)
        self.type = type_
        self.versions = parse_versions(versions)
        self.nullable = parse_versions(nullable)
        self.tag = tag
        self.tagged = parse_versions(tagged) if tag is not None else None
        if tag is not None and self.tagged is None:
            self.tagged = self.versions
        self._default = default

    def present(self, v: int) -> bool:
        return self.versions is not None and self.versions[0] <= v <= self.versions[1]

    def is_nullable(self, v: int) -> bool:
        return self.nullable is not None and self.nullable[0] <= v <= self.nullable[1]

    def is_tagged(self, v: int) -> bool:
        return self.tagged is not None and self.tagged[0] <= v <= self.tagged[1]

    @property
    def default(self) -> Any:
        """The value an encoder writes when the caller left the field out."""
        if self._default is not _UNSET:
            return self._default
        if isinstance(self.type, Array):
            return []  # Kafka: a nullable array defaults to empty unless declared "null"
        if isinstance(self.type, Struct):
            return {}
        if self.nullable is not None and self.type in (RECORDS, BYTES):
            return None
        return self.type.default


@dataclass
class Struct:
    """A nested structure: an ordered list of fields."""

    fields: list[Field]


@dataclass
class Message:
    """A request or response body for one API key."""

    name: str
    api_key: int
    versions: tuple[int, int]
    flexible: int | None  # first flexible version, None if never
    fields: list[Field]
    kind: str = "request"  # or "response"
    struct: Struct = field(init=False)

    def __post_init__(self) -> None:
        self.struct = Struct(self.fields)

    def is_flexible(self, v: int) -> bool:
        return self.flexible is not None and v >= self.flexible


def message(
    name: str, api_key: int, versions: str, flexible: str, fields: list[Field]
) -> Message:
    """Declare a message; ``versions`` like "0-13", ``flexible`` like "9+" or "none"."""
    rng = parse_versions(versions)
    assert rng is not None
    flex = parse_versions(flexible)
    kind = "response" if name.endswith("Response") else "request"
    return Message(name, api_key, rng, flex[0] if flex else None, fields, kind)
