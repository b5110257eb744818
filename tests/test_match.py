"""The match language (emulator.faults.match): what parses, what it means over names
with several values, and refusals that say where the predicate went wrong."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from emulator.faults.match import BoolOp, Compare, MatchError, Not, Truthy, parse

VALUES: dict[str, list[object]] = {
    "api": ["JoinGroup"], "client_id": ["consumer-b"], "partition": [0, 3],
    "generation_id": [2], "member_id": [""], "acks": [True], "none": [], "quoted": ["a'b"]}


def lookup(name: str) -> Sequence[object]:
    return VALUES.get(name, [])


@pytest.mark.parametrize(("text", "holds"), [
    ('api == "JoinGroup"', True),
    ("api == 'JoinGroup' and client_id in [\"consumer-a\", 'consumer-b']", True),
    ('api != "JoinGroup"', False),
    ("partition in [1, 2]", False),
    ("partition == 3", True),  # one of the values is enough
    ("partition != 3", False),  # != is not ==
    ("partition >= 3 and partition < 1", True),  # each comparison on its own value
    ("generation_id >= 2 and not member_id == \"x\"", True),
    ("generation_id > 2 or (api == \"Produce\")", False),
    ("member_id", False),  # a bare name: is one value truthy
    ("generation_id", True),
    ("none == null", True),  # a name reaching nothing equals null
    ("none == 1", False),
    ("acks == 1", False),  # a boolean is not an integer
    ("acks == true", True),
    ("api < 1", False),  # a text never compares with a number
    ("not not api == \"JoinGroup\"", True),
    ("a.b.c == -1 or client_id == 'consumer-\\'b'", False),
    ("quoted == 'a\\'b'", True),  # a backslash escapes the quote
    ("quoted == \"a'b\"", True),
    ("generation_id <= 2 and generation_id >= 2 and generation_id > 1", True),
    ("generation_id <= 1", False),
    ("generation_id > 2 or generation_id < 2", False),
    ('api < "K" and api <= "JoinGroup" and api >= "JoinGroup"', True),  # text order
    ('api < "JoinGroup" or api > "JoinGroup"', False),
    ("acks >= 1 or acks > 0", False),  # a boolean has no order with numbers
    ('acks == true and api == "JoinGroup"', True),  # a constant, then more
    ('  api == "JoinGroup"  \n', True),  # blanks around it
])
def test_predicates_mean_what_the_docs_say(text: str, holds: bool) -> None:
    assert parse(text)(lookup) is holds


@pytest.mark.parametrize(("text", "message"), [
    ("api ==", "expected a value (a quoted string, an integer, true, false or null), found "
     "the end"),
    ("api == and", "expected a value"),  # a keyword that is not a constant
    ("api == 1 true", "expected 'and', 'or' or the end, found 'true' at column 10"),
    ("api == JoinGroup", "found 'JoinGroup' at column 8"),
    ("(api == 1", "expected ')'"),
    ("api in [1", "expected ',' or ']'"),
    ("api in 1", "'[' after 'in'"),
    ("api == 1 client_id", "expected 'and', 'or' or the end"),
    ("api == 1 && x == 2 and y == 3", "cannot read '&& x == 2 an' at column 10"),
    ("and == 1", "expected a field name"),
    # only '(' opens a group, only ')' closes one, only 'not' negates
    ("[a == 1]", "expected a field name, 'not' or '(', found '[' at column 1"),
    ("(a == 1]", "expected ')', found ']' at column 8"),
    ("and a == 1", "expected a field name, 'not' or '(', found 'and' at column 1"),
    ("true a == 1", "found 'true' at column 1"),
    ("api in 1", "expected '[' after 'in', found '1' at column 8"),
    ("a in (1]", "expected '[' after 'in', found '(' at column 6"),
    ("a in [1)", "expected ',' or ']', found ')' at column 8"),
    ("", "non-empty"),
    ("x == 1 or " * 300 + "x == 1", "at most"),
])
def test_bad_predicates_are_refused_saying_where(text: str, message: str) -> None:
    with pytest.raises(MatchError, match=None) as e:
        parse(text)
    assert message in str(e.value)


def test_the_tree_is_what_was_written() -> None:
    assert parse("a == 1").tree == Compare("a", "==", (1,))
    assert parse("a or not b and c in [1, 'x']").tree == BoolOp("or", (
        Truthy("a"), BoolOp("and", (Not(Truthy("b")), Compare("c", "in", (1, "x"))))))


def test_names_lists_what_a_predicate_reads() -> None:
    p = parse('api == "Produce" and (topic in ["a"] or not request.acks)')
    assert p.names() == {"api", "topic", "request.acks"}
    assert p.text.startswith("api ==")
