"""Dataclass methods compiled on first use: the ``kafka-emulator`` command's start.

On Python 3.11 and 3.12 ``@dataclass`` writes each method it adds (``__init__``,
``__repr__``, ``__eq__``, ``__hash__``, the frozen ``__setattr__``/``__delattr__``, the
orderings) as source text and compiles it with its own ``exec``: about 580 methods for
the ~190 dataclasses a default start imports, ~300 M instructions, a third of the
process's start (valgrind, bench/start.py's figures in docs/scale.md). Before its ready
line the cluster calls about 25 of them.

Inside ``lazy_methods()`` that compilation waits: ``dataclasses._create_fn`` (the one
function that compiles them) hands back a ``LazyMethod`` holding the same text,
globals and locals. The first time the method is looked up on an instance (a call, a
comparison, ``hash()``, an assignment refused by a frozen class) the text is compiled
exactly as ``dataclasses`` would have (same text, namespaces, file name and compiler
flags) and the real function replaces the ``LazyMethod`` on its class, so every later
call is the plain function's, at the plain function's speed. Equality, hashing,
immutability, ``repr``, ``__match_args__``, slots and the fields are the dataclass's
own; ``inspect.signature`` of the class is computed from the parameters' text without
compiling, and the ``__doc__`` a dataclass without a docstring gets (its name and that
signature) is written from the same text directly (``_Inspect``). The string
annotations of the TypedDicts made meanwhile are compiled when resolved, not when made
(``_forward_source``).

Only the command uses it (emulator.cli.main), and only while it runs: a library user's
process keeps its ``dataclasses`` untouched. Python 3.13 builds a class's methods in one
``exec`` and has no ``_create_fn``: there ``lazy_methods()`` changes nothing.
"""

from __future__ import annotations

import abc
import builtins
import dataclasses
import inspect
import typing
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from types import MappingProxyType
from typing import Any

_FUNCTION = type(lambda: None)
_FUNCTION_ATTRIBUTES = frozenset(dir(_FUNCTION))
_NO_LOCALS: Mapping[str, Any] = MappingProxyType({})  # read only: shared


class LazyMethod:
    """A dataclass method not compiled yet; it compiles itself at its first use."""

    # No list of the parameters (their text is in ``_text``, see _params_of) and one
    # shared empty mapping for the methods without locals: ~540 of these wait for their
    # first use for as long as the command runs.
    __slots__ = ("__name__", "_globals", "_locals", "_real", "_text")

    def __init__(
        self, name: str, text: str, globals: dict[str, Any], locals: Mapping[str, Any]
    ) -> None:
        self.__name__ = name
        self._text = text
        self._globals = globals
        self._locals = locals
        self._real: Callable[..., Any] | None = None

    def compile(self) -> Callable[..., Any]:
        """The function ``dataclasses._create_fn`` would have returned. Compiled with
        ``dont_inherit``: this module's ``from __future__ import annotations`` must not
        turn the method's annotations into strings, as it would not in dataclasses.py."""
        real = self._real
        if real is None:
            code = compile(self._text, "<string>", "exec", dont_inherit=True)
            ns: dict[str, Any] = {}
            exec(code, self._globals, ns)  # noqa: S102 - dataclasses' own text
            real = self._real = ns["__create_fn__"](**self._locals)
        return real

    def __get__(self, obj: object, owner: type | None = None) -> Any:
        if obj is None:
            return self
        real = self.compile()
        # The class whose dict holds this method (a subclass's instance may be the first
        # to use it) gets the real function, named as dataclasses names it.
        for cls in type(obj).__mro__:
            if cls.__dict__.get(self.__name__) is self:
                real.__qualname__ = f"{cls.__qualname__}.{self.__name__}"
                type.__setattr__(cls, self.__name__, real)
                break
        return real.__get__(obj, owner)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        # Called unbound: through the class (Cls.__eq__(a, b)) or a wrapper holding it
        # (dataclasses' recursion-safe __repr__).
        return self.compile()(*args, **kwargs)

    def __getattribute__(self, name: str) -> Any:
        # What functools.wraps copies (dataclasses wraps __repr__) and what a function
        # says of itself before dataclasses names it: the values the uncompiled function
        # would have, without compiling it.
        if name == "__module__":
            return object.__getattribute__(self, "_globals").get("__name__")
        if name == "__doc__":
            return None
        if name == "__dict__":
            return {}
        if name == "__qualname__":
            return f"__create_fn__.<locals>.{object.__getattribute__(self, '__name__')}"
        if name == "__annotations__":
            locals = object.__getattribute__(self, "_locals")
            text = object.__getattribute__(self, "_text")
            own = object.__getattribute__(self, "__name__")
            if "_return_type" not in locals and ":" not in "".join(_params_of(text, own)):
                return {}  # __repr__, __eq__, __hash__...: no annotation to resolve
            sig = object.__getattribute__(self, "__signature__")
            notes = {
                p.name: p.annotation for p in sig.parameters.values() if p.annotation is not p.empty
            }
            if sig.return_annotation is not sig.empty:
                notes["return"] = sig.return_annotation
            return notes
        return object.__getattribute__(self, name)

    def __getattr__(self, name: str) -> Any:
        # The rest of what a function has (__code__, __defaults__, __globals__, ...): the
        # compiled one's; anything a function lacks (__wrapped__, probed by inspect) is
        # absent here too.
        if name not in _FUNCTION_ATTRIBUTES:
            raise AttributeError(name)
        return getattr(self.compile(), name)

    @property
    def __signature__(self) -> inspect.Signature:
        """The compiled function's signature, from its parameters' text: a dataclass
        without a docstring asks for it at once (its ``__doc__``), which must not cost
        the compilation this object defers."""
        try:
            return _signature(_params_of(self._text, self.__name__), self._globals, self._locals)
        except KeyError:  # a name this parser does not resolve: ask the real function
            return inspect.signature(self.compile())


def _params_of(text: str, name: str) -> list[str]:
    """The parameters as ``_create_fn`` was given them, read back from the text it
    joined them into: dataclasses writes only names, ``*`` and ``name:_type_name=_dflt``
    there, never a comma or a parenthesis inside one (anything else fails in _signature,
    which then compiles)."""
    head = f"\n def {name}("
    start = text.index(head) + len(head)
    joined = text[start : text.index(")", start)]
    return joined.split(",") if joined else []


def _lookup(expr: str, globals: dict[str, Any], locals: Mapping[str, Any]) -> Any:
    """The value of a parameter's annotation or default: dataclasses only ever writes
    a name there (``_type_x``, ``_dflt_x``, ``_HAS_DEFAULT_FACTORY``, ``_return_type``)."""
    for scope in (locals, globals, vars(builtins)):
        if expr in scope:
            return scope[expr]
    raise KeyError(expr)


def _signature(
    params: list[str], globals: dict[str, Any], locals: Mapping[str, Any]
) -> inspect.Signature:
    out: list[inspect.Parameter] = []
    kind: inspect._ParameterKind = inspect.Parameter.POSITIONAL_OR_KEYWORD
    for param in params:
        if param == "*":
            kind = inspect.Parameter.KEYWORD_ONLY
            continue
        head, eq, default_expr = param.partition("=")
        name, colon, annotation_expr = head.partition(":")
        if not name.isidentifier() or (not colon and name != head):
            raise KeyError(param)
        out.append(
            inspect.Parameter(
                name,
                kind,
                default=_lookup(default_expr, globals, locals) if eq else inspect.Parameter.empty,
                annotation=(
                    _lookup(annotation_expr, globals, locals) if colon else inspect.Parameter.empty
                ),
            )
        )
    ret = locals.get("_return_type", inspect.Signature.empty)
    return inspect.Signature(out, return_annotation=ret)


def _lazy_create_fn(
    name: str,
    args: list[str],
    body: list[str],
    *,
    globals: dict[str, Any] | None = None,
    locals: dict[str, Any] | None = None,
    return_type: Any = dataclasses.MISSING,
) -> LazyMethod:
    """``dataclasses._create_fn`` (3.11, 3.12), the text built the same way, compiled
    later."""
    # A copy (the caller may reuse its dict for another method), or the shared empty one.
    kept: Mapping[str, Any] = dict(locals) if locals else _NO_LOCALS
    return_annotation = ""
    if return_type is not dataclasses.MISSING:
        kept = {**(locals or {}), "_return_type": return_type}
        return_annotation = "->_return_type"
    joined = ",".join(args)
    lines = "\n".join(f"  {b}" for b in body)
    text = f" def {name}({joined}){return_annotation}:\n{lines}"
    text = f"def __create_fn__({', '.join(kept)}):\n{text}\n return {name}"
    # globals=None: exec's default, the calling module's (dataclasses') own.
    return LazyMethod(name, text, vars(dataclasses) if globals is None else globals, kept)


def _init_text(cls: type) -> str | None:
    """``str(inspect.signature(cls))`` for a class whose ``__init__`` waits, made from the
    parameters' text as inspect would print them (its bound form: without ``self``; a
    ``*`` before the first keyword-only one; ``name: annotation = default``); None where
    inspect might resolve the class another way (a metaclass, an own ``__new__``) or a
    name does not resolve: inspect answers those."""
    init = cls.__dict__.get("__init__")
    if type(init) is not LazyMethod or "__new__" in cls.__dict__:
        return None
    if type(cls) is not type and type(cls) is not abc.ABCMeta:
        return None
    globals, locals = init._globals, init._locals
    out: list[str] = []
    star = False
    try:
        for param in _params_of(init._text, "__init__")[1:]:
            if param == "*":
                star = True
                continue
            head, eq, default_expr = param.partition("=")
            name, colon, annotation_expr = head.partition(":")
            if not name.isidentifier() or (not colon and name != head):
                return None
            if star:
                out.append("*")
                star = False
            text = name
            if colon:
                text += ": " + inspect.formatannotation(_lookup(annotation_expr, globals, locals))
            if eq:
                text += (" = " if colon else "=") + repr(_lookup(default_expr, globals, locals))
            out.append(text)
    except KeyError:
        return None
    text = f"({', '.join(out)})"
    if "_return_type" in locals:
        text += " -> " + inspect.formatannotation(locals["_return_type"])
    return text


class _SignatureText:
    """What ``str()`` of a class's signature gives, made already (see _Inspect)."""

    __slots__ = ("_text",)

    def __init__(self, text: str) -> None:
        self._text = text

    def __str__(self) -> str:
        return self._text


class _Inspect:
    """The ``inspect`` that dataclasses sees inside ``lazy_methods()``. It asks one
    thing of it, ``str(inspect.signature(cls))``, for the ``__doc__`` of a class without
    a docstring (61 at a default start): for a class whose ``__init__`` waits, the text
    is made directly (_init_text) instead of inspect's Parameter and Signature objects,
    built, validated, bound and printed (2.6% of the start's instructions). Everything
    else, and every class _init_text declines, is inspect's own."""

    def __getattr__(self, name: str) -> Any:
        return getattr(inspect, name)

    @staticmethod
    def signature(obj: Any, *args: Any, **kwargs: Any) -> Any:
        if not args and not kwargs and isinstance(obj, type):
            text = _init_text(obj)
            if text is not None:
                return _SignatureText(text)
        return inspect.signature(obj, *args, **kwargs)


_INSPECT = _Inspect()


def _forward_source(source: str, filename: str, mode: str) -> str:
    """``compile`` as ``typing`` sees it inside ``lazy_methods()``: the source itself.
    ``typing.ForwardRef`` compiles each string annotation when it is made, the only
    ``compile`` of typing, and keeps the code only to ``eval`` it when the annotation is
    resolved (``typing.get_type_hints``), which a string does as well (the same mode,
    flags and namespaces): the ~260 fields of the message TypedDicts a start defines,
    all from ``from __future__ import annotations`` (so valid expressions), were 2% of
    the start's instructions, and the emulator resolves none of them."""
    del filename, mode
    return source


def supported() -> bool:
    """Whether this Python's dataclasses compile each method through ``_create_fn``
    with the parameters ``_lazy_create_fn`` takes (3.11, 3.12)."""
    fn = getattr(dataclasses, "_create_fn", None)
    if not isinstance(fn, _FUNCTION):
        return False
    params = list(inspect.signature(fn).parameters)
    return (
        params == ["name", "args", "body", "globals", "locals", "return_type"]
        and getattr(dataclasses, "inspect", None) is inspect
        and not hasattr(typing, "compile")
    )


@contextmanager
def lazy_methods() -> Iterator[bool]:
    """While inside, dataclasses get their generated methods as ``LazyMethod``s (yields
    whether they do: False on a Python whose dataclasses this does not know). The
    classes keep them after the block; they compile themselves whenever used."""
    if not supported():
        yield False
        return
    original = dataclasses._create_fn  # type: ignore[attr-defined]
    original_inspect = dataclasses.inspect  # type: ignore[attr-defined]
    dataclasses._create_fn = _lazy_create_fn  # type: ignore[attr-defined]
    dataclasses.inspect = _INSPECT  # type: ignore[attr-defined]
    typing.compile = _forward_source  # type: ignore[attr-defined]
    try:
        yield True
    finally:
        dataclasses._create_fn = original  # type: ignore[attr-defined]
        dataclasses.inspect = original_inspect  # type: ignore[attr-defined]
        del typing.compile  # type: ignore[attr-defined]
