"""The check that a typed shape of a wire message matches the wire's declaration, which
tests/test_coordinator_messages.py (the coordinators' shapes) and
tests/test_cluster_messages.py (the cluster's) each run over their list of shapes.

The domain takes a decoded request and gives a response as a ``TypedDict`` of exactly
the fields it reads or writes, so that mypy checks each field; the handler hands the
codec's dict over with a ``cast``. Nothing in mypy ties those shapes to the schema the
codec decodes by (wire/messages/): this check does. Every key of a shape must be a field
of its wire struct, of the matching type (an integer type is ``int``, an array a
``list``, a struct a nested shape), admitting None exactly where the wire declares the
field nullable in some version, and a field the domain may leave out (``NotRequired``)
only where the encoder has a default.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Callable, Sequence
from typing import NotRequired, Union, get_args, get_origin, get_type_hints, is_typeddict

import pytest

from wire.schema import (
    BOOL,
    BYTES,
    FLOAT64,
    INT8,
    INT16,
    INT32,
    INT64,
    STRING,
    UINT16,
    UINT32,
    UUID,
    Array,
    Field,
    Message,
    Struct,
    Type,
)

# (shape, message, the path of fields from the message to the shape's struct)
Shape = tuple[type, Message, tuple[str, ...]]

SCALARS: dict[Type, type] = {
    INT8: int,
    INT16: int,
    INT32: int,
    INT64: int,
    UINT16: int,
    UINT32: int,
    STRING: str,
    BOOL: bool,
    UUID: bytes,
    BYTES: bytes,
    FLOAT64: float,
}


def _field(struct: Struct | Message, name: str) -> Field:
    for f in struct.fields:
        if f.name == name:
            return f
    raise KeyError(name)


def struct_at(message: Message, path: tuple[str, ...]) -> Struct | Message:
    """The struct reached from ``message`` through the fields of ``path`` (arrays
    stepped into)."""
    struct: Struct | Message = message
    for name in path:
        t = _field(struct, name).type
        if isinstance(t, Array):
            t = t.item
        assert isinstance(t, Struct), f"{message.name}.{'.'.join(path)} is not a struct"
        struct = t
    return struct


def _split_optional(hint: object) -> tuple[object, bool]:
    """(the hint without None, whether it admitted None)."""
    if get_origin(hint) in (Union, types.UnionType):
        args = [a for a in get_args(hint) if a is not type(None)]
        assert len(args) == 1, f"a union of several types: {hint}"
        return args[0], len(args) < len(get_args(hint))
    return hint, False


def mismatches(shape: type, struct: Struct | Message, where: str, *, read: bool) -> list[str]:
    """What in ``shape`` (a TypedDict) the wire's ``struct`` does not declare so. A
    shape the coordinator ``read``s (a request) must admit None wherever the wire may
    carry it; one it writes may fill a nullable field always."""
    out: list[str] = []
    hints = get_type_hints(shape, include_extras=True)
    for name, hint in hints.items():
        at = f"{where}.{name}"
        try:
            f = _field(struct, name)
        except KeyError:
            out.append(f"{at}: no such field on the wire")
            continue
        if get_origin(hint) is NotRequired:
            (hint,) = get_args(hint)
            if f.versions is None:
                out.append(f"{at}: optional but never on the wire")
        base, optional = _split_optional(hint)
        if base is type(None):  # always null here (a field the coordinator never fills)
            base, optional = None, True
        if (optional or read) and optional != (f.nullable is not None):
            out.append(f"{at}: admits None {optional}, wire nullable {f.nullable}")
        if base is not None:
            out += _type_mismatches(base, f.type, at, read)
    return out


def _type_mismatches(hint: object, wire: object, at: str, read: bool) -> list[str]:
    if isinstance(wire, Array):
        if get_origin(hint) is not list:
            return [f"{at}: {hint} for an array"]
        return _type_mismatches(get_args(hint)[0], wire.item, f"{at}[]", read)
    if isinstance(wire, Struct):
        if not (isinstance(hint, type) and is_typeddict(hint)):
            return [f"{at}: {hint} for a struct"]
        return mismatches(hint, wire, at, read=read)
    expected = SCALARS.get(typing.cast(Type, wire))
    if hint is not expected:
        return [f"{at}: {hint} for {wire}"]
    return []


def shape_test(shapes: Sequence[Shape]) -> Callable[[type, Message, tuple[str, ...]], None]:
    """The test of a list of shapes, one case each (named shape-message), for a test
    module to take as its own: ``test_shape_matches_the_wire = shape_test(SHAPES)``."""

    @pytest.mark.parametrize(
        ("shape", "message", "path"),
        shapes,
        ids=[f"{s[0].__qualname__}-{s[1].name}" for s in shapes],
    )
    def test_shape_matches_the_wire(shape: type, message: Message, path: tuple[str, ...]) -> None:
        where = ".".join((message.name, *path))
        read = message.kind == "request"
        assert mismatches(shape, struct_at(message, path), where, read=read) == []

    return test_shape_matches_the_wire
