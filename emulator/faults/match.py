"""The match language: a small predicate over what a request is, for fault rules, barriers
and journal queries (docs/faults.md, "Fault rules"; docs/journal.md).

A test says which requests it means in one line instead of in code, the same line from
Python, HTTP, the command line or another language's client, so it is parsed here into
a tree and evaluated, never handed to ``eval``::

    api == "JoinGroup" and client_id in ["consumer-b", "consumer-c"]
    topic == "orders" and partition in [0, 1]
    generation_id >= 2 and not (member_id == "")

Grammar (keywords ``and``, ``or``, ``not``, ``in``, ``true``, ``false``, ``null``)::

    expr := or          or := and ("or" and)*       and := not ("and" not)*
    not  := "not" not | atom
    atom := "(" expr ")" | name OP value | name "in" "[" value ("," value)* "]" | name
    OP   := == | != | < | <= | > | >=
    name := identifier ("." identifier)*
    value:= "text" | 'text' | integer | true | false | null

What a name means is the caller's (``Lookup``): a rule's names are a request's key
fields and decoded fields (emulator.faults.facts), a journal query's the entry's. A
name may reach several values (a list in the request, a request naming two topics):
a comparison holds when one of them satisfies it; ``!=`` is ``not ==``; a bare name
holds when one of its values is truthy. Pure: no state, no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

Scalar = str | int | bool | None
# A name's values: every value the name reaches (empty when it reaches none).
Lookup = Callable[[str], Sequence[object]]

_TOKEN = re.compile(r"""
    \s*(?:
      (?P<num>-?\d+)
    | (?P<str>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')
    | (?P<op>==|!=|<=|>=|<|>)
    | (?P<punct>[()\[\],])
    | (?P<name>[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)
    )""", re.VERBOSE)
_KEYWORDS = {"and", "or", "not", "in", "true", "false", "null"}
_CONSTANTS: dict[str, Scalar] = {"true": True, "false": False, "null": None}
MAX_LENGTH = 2000  # a predicate is a line, not a program


class MatchError(ValueError):
    """A predicate that does not parse: the message says where and what was expected."""


@dataclass(frozen=True)
class Compare:
    name: str
    op: str  # == != < <= > >= in
    values: tuple[Scalar, ...]  # one value, or the list of ``in``


@dataclass(frozen=True)
class Truthy:
    name: str


@dataclass(frozen=True)
class Not:
    inner: Node


@dataclass(frozen=True)
class BoolOp:
    op: str  # and, or
    items: tuple[Node, ...]


Node = Compare | Truthy | Not | BoolOp


@dataclass(frozen=True)
class Predicate:
    """A parsed predicate: its text (as given, for views) and its tree."""

    text: str
    tree: Node

    def names(self) -> set[str]:
        """Every name the predicate reads (a caller may refuse names it cannot answer)."""
        out: set[str] = set()

        def walk(n: Node) -> None:
            if isinstance(n, Compare | Truthy):
                out.add(n.name)
            elif isinstance(n, Not):
                walk(n.inner)
            else:
                for i in n.items:
                    walk(i)

        walk(self.tree)
        return out

    def __call__(self, lookup: Lookup) -> bool:
        return _eval(self.tree, lookup)


def _unquote(text: str) -> str:
    body = text[1:-1]
    return re.sub(r"\\(.)", r"\1", body)


def _tokens(text: str) -> list[tuple[str, str, int]]:
    out: list[tuple[str, str, int]] = []
    pos = 0
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            start = len(text) - len(text[pos:].lstrip())
            raise MatchError(f"cannot read {text[start:start + 12]!r} at column {start + 1}")
        kind = m.lastgroup
        assert kind is not None
        value, column = m.group(kind), m.start(kind) + 1
        if kind == "name" and value in _KEYWORDS:
            kind = "kw"
        out.append((kind, value, column))
        pos = m.end()
    return out


class _Parser:
    def __init__(self, text: str) -> None:
        self.toks = _tokens(text)
        self.i = 0

    def peek(self) -> tuple[str, str, int] | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self, kind: str, value: str | None = None) -> tuple[str, str, int] | None:
        t = self.peek()
        if t is not None and t[0] == kind and (value is None or t[1] == value):
            self.i += 1
            return t
        return None

    def fail(self, expected: str) -> MatchError:
        t = self.peek()
        where = f"{t[1]!r} at column {t[2]}" if t else "the end"
        return MatchError(f"expected {expected}, found {where}")

    def expr(self) -> Node:
        items = [self.conj()]
        while self.take("kw", "or"):
            items.append(self.conj())
        return items[0] if len(items) == 1 else BoolOp("or", tuple(items))

    def conj(self) -> Node:
        items = [self.neg()]
        while self.take("kw", "and"):
            items.append(self.neg())
        return items[0] if len(items) == 1 else BoolOp("and", tuple(items))

    def neg(self) -> Node:
        if self.take("kw", "not"):
            return Not(self.neg())
        return self.atom()

    def atom(self) -> Node:
        if self.take("punct", "("):
            inner = self.expr()
            if not self.take("punct", ")"):
                raise self.fail("')'")
            return inner
        name = self.take("name")
        if name is None:
            raise self.fail("a field name, 'not' or '('")
        op = self.take("op")
        if op is not None:
            return Compare(name[1], op[1], (self.value(),))
        if self.take("kw", "in"):
            if not self.take("punct", "["):
                raise self.fail("'[' after 'in'")
            values = [self.value()]
            while self.take("punct", ","):
                values.append(self.value())
            if not self.take("punct", "]"):
                raise self.fail("',' or ']'")
            return Compare(name[1], "in", tuple(values))
        return Truthy(name[1])

    def value(self) -> Scalar:
        t = self.peek()
        if t is not None:
            kind, text, _ = t
            if kind == "num":
                self.i += 1
                return int(text)
            if kind == "str":
                self.i += 1
                return _unquote(text)
            if kind == "kw" and text in _CONSTANTS:
                self.i += 1
                return _CONSTANTS[text]
        raise self.fail("a value (a quoted string, an integer, true, false or null)")


def parse(text: str) -> Predicate:
    """Parse a predicate; MatchError says what is wrong and where."""
    if not isinstance(text, str) or not text.strip():
        raise MatchError("a predicate must be a non-empty string")
    if len(text) > MAX_LENGTH:
        raise MatchError(f"a predicate is at most {MAX_LENGTH} characters")
    p = _Parser(text)
    tree = p.expr()
    if p.peek() is not None:
        raise p.fail("'and', 'or' or the end")
    return Predicate(text, tree)


def _same(a: object, b: Scalar) -> bool:
    # bools are not integers here: `acks == 1` must not match a field holding True
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    return a == b


def _order(a: object, op: str, b: Scalar) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return False
    if isinstance(a, int) and isinstance(b, int):
        sign = (a > b) - (a < b)
    elif isinstance(a, str) and isinstance(b, str):
        sign = (a > b) - (a < b)
    else:
        return False  # a number and a text never compare
    return {"<": sign < 0, "<=": sign <= 0, ">": sign > 0, ">=": sign >= 0}[op]


def _eval(n: Node, lookup: Lookup) -> bool:
    if isinstance(n, BoolOp):
        if n.op == "and":
            return all(_eval(i, lookup) for i in n.items)
        return any(_eval(i, lookup) for i in n.items)
    if isinstance(n, Not):
        return not _eval(n.inner, lookup)
    values = lookup(n.name)
    if isinstance(n, Truthy):
        return any(bool(v) for v in values)
    if n.op == "==":
        return any(_same(v, n.values[0]) for v in values) or (
            n.values[0] is None and not values)
    if n.op == "!=":
        return not _eval(Compare(n.name, "==", n.values), lookup)
    if n.op == "in":
        return any(_same(v, w) for v in values for w in n.values)
    return any(_order(v, n.op, n.values[0]) for v in values)


__all__ = ["Lookup", "MatchError", "Predicate", "parse"]
