"""KIP-848 SubscribedTopicRegex with RE2/J's syntax and Kafka's error messages
(the messages of the first three checked against a real Kafka 4.4 broker)."""

from __future__ import annotations

import pytest

from emulator.coordinators.consumer.topic_regex import compile_topic_regex, matches
from wire.errors import ErrorCode as E
from wire.errors import KafkaError


@pytest.mark.parametrize(("pattern", "description"), [
    ("(", "missing closing )"),
    ("(?=x)", "invalid or unsupported Perl syntax"),
    ("a++", "invalid nested repetition operator"),
    ("(a)\\1", "invalid escape sequence"),  # no backreferences in RE2
    ("*", "missing argument to repetition operator"),
    ("a)", "unexpected )"),
])
def test_invalid_patterns_get_kafkas_code_and_message(pattern: str, description: str) -> None:
    with pytest.raises(KafkaError) as e:
        compile_topic_regex(pattern)
    assert e.value.code == E.INVALID_REGULAR_EXPRESSION
    assert e.value.message == (f"SubscribedTopicRegex `{pattern}` is not a valid regular "
                               f"expression: {description}.")


@pytest.mark.parametrize(("pattern", "topic", "expected"), [
    (r"\Qorders.v1\E", "orders.v1", True),   # RE2 literal quoting (Python: bad escape)
    (r"\Qorders.v1\E", "ordersXv1", False),
    (r"\p{Lu}+-events", "ABC-events", True),  # Unicode classes (Python: bad escape)
    (r"[[:digit:]]+", "2024", True),          # POSIX classes (Python: a character set)
    (r"[[:digit:]]+", ":", False),
    (r"logs-.*", "logs-a", True),
    (r"logs-.*", "xlogs-a", False),           # whole-name match, as matcher().matches()
    (r"logs", "logs-a", False),
])
def test_re2j_semantics(pattern: str, topic: str, expected: bool) -> None:
    assert matches(pattern, topic) is expected
