"""Topic-name regular expressions with Kafka's semantics: RE2/J, not Python's ``re``.

KIP-848 consumers subscribe with SubscribedTopicRegex, which Kafka's group coordinator
compiles with RE2/J (com.google.re2j, the Java port of RE2) and matches against whole
topic names (``matcher(name).matches()``). The two syntaxes differ where it matters:
RE2 has no lookaround, backreferences or possessive quantifiers (Kafka rejects such a
pattern with INVALID_REGULAR_EXPRESSION where Python would accept it), and RE2 has
``\\Q...\\E`` quoting, ``\\p{..}`` Unicode classes, ``[[:alpha:]]`` POSIX classes and
``\\z``, which Python's ``re`` reads differently or rejects. So patterns are compiled by
RE2 itself (the google-re2 binding), whose syntax RE2/J implements.
"""

from __future__ import annotations

import functools
import types
from typing import TYPE_CHECKING

from wire.errors import ErrorCode as E
from wire.errors import KafkaError

if TYPE_CHECKING:
    import re2
# RE2's error texts (its C++ ErrorCode strings) -> RE2/J's PatternSyntaxException
# descriptions, which Kafka puts in its message (checked against a real 4.4 broker for
# the first three).
_RE2J_DESCRIPTIONS = (
    ("missing )", "missing closing )"),
    ("invalid perl operator", "invalid or unsupported Perl syntax"),
    ("bad repetition operator", "invalid nested repetition operator"),
    ("missing ]", "missing closing ]"),
    ("unexpected )", "unexpected )"),
    ("invalid escape sequence", "invalid escape sequence"),
    ("invalid character class range", "invalid character class range"),
    ("invalid character class", "invalid character class"),
    ("no argument for repetition operator", "missing argument to repetition operator"),
    ("invalid repetition size", "invalid repeat count"),
    ("trailing \\", "trailing backslash at end of expression"),
    ("invalid UTF-8", "invalid UTF-8"),
    ("invalid named capture group", "invalid named capture"),
)


@functools.cache
def _re2() -> tuple[types.ModuleType, re2.Options]:
    """The binding and its options, imported at the first regex subscription: google-re2
    loads RE2 and abseil (~2.5 MB of a process's memory), which a cluster whose clients
    never subscribe by regex does not need (docs/scale.md, start-up)."""
    import re2

    options = re2.Options()
    options.log_errors = False  # the error goes back to the client, not to stderr
    return re2, options


def _description(error: re2.error) -> str:
    text = error.args[0] if error.args else ""
    text = text.decode(errors="replace") if isinstance(text, bytes) else str(text)
    for prefix, description in _RE2J_DESCRIPTIONS:
        if text.startswith(prefix):
            return description
    return text


@functools.lru_cache(maxsize=1024)
def compile_topic_regex(pattern: str) -> re2._Regexp:
    """The compiled pattern, or INVALID_REGULAR_EXPRESSION with Kafka's message."""
    binding, options = _re2()
    try:
        return binding.compile(pattern, options)
    except binding.error as e:
        raise KafkaError(E.INVALID_REGULAR_EXPRESSION,
                         f"SubscribedTopicRegex `{pattern}` is not a valid regular "
                         f"expression: {_description(e)}.") from e


def matches(pattern: str, topic: str) -> bool:
    """Does ``pattern`` match the whole topic name (RE2/J ``matches()``)?"""
    return compile_topic_regex(pattern).fullmatch(topic) is not None
